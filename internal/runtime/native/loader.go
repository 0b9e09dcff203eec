//go:build cgo

package native

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>

// AkgCallBack as MindSpore Lite passes it; generated kernels ignore it, AKG
// kernels may call malloc/free through it.
typedef struct {
  void *parallel_launch_func;
  void *(*malloc_func)(size_t);
  void (*free_func)(void *);
  void *extend_data;
} gk_callback;

static gk_callback gk_cb = {0, malloc, free, 0};

static void *gk_cb_ptr(void) { return &gk_cb; }

static void *gk_open(const char *path, const char **err) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) *err = dlerror();
  return h;
}

static void *gk_sym(void *h, const char *name) { dlerror(); return dlsym(h, name); }

// One trampoline for every kernel: set the OpenMP team size on this thread
// (the ICV is per thread), then call.
static void gk_call(void *fn, void *setn, int threads, void **args) {
  if (setn) ((void (*)(int))setn)(threads);
  ((void (*)(void **))fn)(args);
}
*/
import "C"

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"unsafe"

	"gkconv/internal/trust"
)

// Kernel is one loaded kernel function.
type Kernel struct {
	Symbol string
	fn     unsafe.Pointer
	setn   unsafe.Pointer
}

type lib struct {
	once   sync.Once
	handle unsafe.Pointer
	err    error
}

var libs sync.Map // sha256 hex -> *lib

// Available reports whether this build can load kernels (cgo).
const Available = true

// Load verifies so against wantSHA (hex sha256), loads it once per process
// per hash, and resolves symbol.
func Load(so []byte, wantSHA, symbol string) (*Kernel, error) {
	sum := sha256.Sum256(so)
	got := hex.EncodeToString(sum[:])
	if wantSHA == "" {
		return nil, fmt.Errorf("kernel %s: no recorded sha256, refusing to load an unverified object", symbol)
	}
	if got != wantSHA {
		return nil, fmt.Errorf("kernel %s: sha256 of the embedded object is %s but the model records %s: the model is corrupt or was modified", symbol, got, wantSHA)
	}
	v, _ := libs.LoadOrStore(got, &lib{})
	l := v.(*lib)
	l.once.Do(func() { l.handle, l.err = open(so, got) })
	if l.err != nil {
		return nil, fmt.Errorf("kernel %s: %w", symbol, l.err)
	}
	cs := C.CString(symbol)
	defer C.free(unsafe.Pointer(cs))
	fn := C.gk_sym(l.handle, cs)
	if fn == nil {
		return nil, fmt.Errorf("kernel %s: symbol not found in the embedded object", symbol)
	}
	cn := C.CString("gk_set_num_threads")
	defer C.free(unsafe.Pointer(cn))
	return &Kernel{Symbol: symbol, fn: fn, setn: C.gk_sym(l.handle, cn)}, nil
}

// open writes the object into a private (0700) temporary directory, loads it
// with RTLD_NOW|RTLD_LOCAL and removes the file again (the mapping stays).
// Directories that refuse executable mappings (noexec /tmp) are skipped.
func open(so []byte, sha string) (unsafe.Pointer, error) {
	var dirs []string
	if d := os.Getenv("GKCONV_KERNEL_RUNDIR"); d != "" {
		dirs = append(dirs, d)
	}
	dirs = append(dirs, os.TempDir())
	if d, err := os.UserCacheDir(); err == nil {
		dirs = append(dirs, filepath.Join(d, "gkconv", "run"))
	}
	var lastErr error
	for _, base := range dirs {
		if err := os.MkdirAll(base, 0o700); err != nil {
			lastErr = err
			continue
		}
		dir, err := trust.MkdirTemp(base, "gkconv-kernel-")
		if err != nil {
			lastErr = err
			continue
		}
		path := filepath.Join(dir, sha[:16]+".so")
		h, err := func() (unsafe.Pointer, error) {
			defer os.RemoveAll(dir)
			if err := os.WriteFile(path, so, 0o500); err != nil {
				return nil, err
			}
			cp := C.CString(path)
			defer C.free(unsafe.Pointer(cp))
			var cerr *C.char
			h := C.gk_open(cp, &cerr)
			if h == nil {
				return nil, fmt.Errorf("dlopen: %s", C.GoString(cerr))
			}
			return h, nil
		}()
		if err == nil {
			return h, nil
		}
		lastErr = err
	}
	return nil, fmt.Errorf("cannot load the embedded object: %v", lastErr)
}

// Call runs the kernel on threads OpenMP threads with bufs = inputs then
// outputs (each the tensor's bytes; the kernel knows the shapes).
func (k *Kernel) Call(threads int, bufs [][]byte) {
	args := make([]unsafe.Pointer, len(bufs)+1)
	args[0] = C.gk_cb_ptr()
	var pin runtime.Pinner
	for i, b := range bufs {
		if len(b) > 0 {
			p := unsafe.Pointer(&b[0])
			pin.Pin(p)
			args[i+1] = p
		}
	}
	C.gk_call(k.fn, k.setn, C.int(threads), (*unsafe.Pointer)(unsafe.Pointer(&args[0])))
	pin.Unpin()
	runtime.KeepAlive(bufs)
}
