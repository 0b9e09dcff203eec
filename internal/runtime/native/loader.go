//go:build cgo

package native

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

// AkgCallBack as MindSpore Lite passes it. Kernels built by this
// repository hand their parallel loops to parallel_launch_func (see
// internal/kernels/cpu/tasks.go); AKG kernels may also call malloc/free
// through it.
typedef int (*gk_lambda)(int task_id, int num_task, void *cdata);
typedef struct {
  int (*parallel_launch_func)(gk_lambda f, void *cdata, int num_task);
  void *(*malloc_func)(size_t);
  void (*free_func)(void *);
  void *extend_data;
} gk_callback;

// gkconvParallelLaunch (launch.go) runs the tasks on the launcher that
// extend_data names.
extern int gkconvParallelLaunch(uintptr_t launcher, void *f, void *cdata);

// gk_launch is parallel_launch_func: extend_data is found as MindSpore
// Lite's launcher finds it, two pointers on from the environment's first
// member (which points at malloc_func).
static int gk_launch(gk_lambda f, void *cdata, int num_task) {
  (void)num_task;
  void *ext = ((void ***)cdata)[0][2];
  return gkconvParallelLaunch((uintptr_t)ext, (void *)f, cdata);
}

// gk_run_task_go runs task id of n (for launch.go, whose preamble can
// only declare it).
int gk_run_task_go(void *f, int id, int n, void *cdata) { return ((gk_lambda)f)(id, n, cdata); }

static void *gk_open(const char *path, const char **err) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) *err = dlerror();
  return h;
}

static void *gk_sym(void *h, const char *name) { dlerror(); return dlsym(h, name); }

// One trampoline for every kernel: set the OpenMP team size on this thread
// (the ICV is per thread) for kernels built with OpenMP, give the others a
// callback whose launcher is the Go one (launcher 0: none, every loop runs
// here as one task), then call.
static void gk_call(void *fn, void *setn, int threads, uintptr_t launcher, void **args) {
  gk_callback cb = {launcher ? gk_launch : 0, malloc, free, (void *)launcher};
  if (setn) ((void (*)(int))setn)(threads);
  args[0] = &cb;
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
	"runtime/cgo"
	"sync"
	"unsafe"

	"gkconv/internal/safefs"
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
		dir, err := safefs.MkdirTemp(base, "gkconv-kernel-")
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

// Call runs the kernel with bufs = inputs then outputs (each the tensor's
// bytes; the kernel knows the shapes) on up to threads threads: its
// parallel loops as tasks on goroutines (CallOn with a nil launcher), or,
// for kernels built with OpenMP by earlier versions, on an OpenMP team of
// that size.
func (k *Kernel) Call(threads int, bufs [][]byte) { k.CallOn(threads, nil, bufs) }

// OpenMP reports whether the kernel was built with OpenMP (by an earlier
// version of the generator): it runs its parallel loops on its own team of
// threads instead of the launcher's.
func (k *Kernel) OpenMP() bool { return k.setn != nil }

// CallOn is Call with the kernel's tasks run by launch (nil: one goroutine
// per task).
func (k *Kernel) CallOn(threads int, launch Launch, bufs [][]byte) {
	args := make([]unsafe.Pointer, len(bufs)+1)
	var pin runtime.Pinner
	for i, b := range bufs {
		if len(b) > 0 {
			p := unsafe.Pointer(&b[0])
			pin.Pin(p)
			args[i+1] = p
		}
	}
	var h cgo.Handle
	if threads > 1 && k.setn == nil {
		if launch == nil {
			launch = goLaunch
		}
		h = cgo.NewHandle(&launcher{launch: launch, threads: threads})
	}
	C.gk_call(k.fn, k.setn, C.int(threads), C.uintptr_t(h), (*unsafe.Pointer)(unsafe.Pointer(&args[0])))
	if h != 0 {
		h.Delete()
	}
	pin.Unpin()
	runtime.KeepAlive(bufs)
}
