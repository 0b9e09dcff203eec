package cache

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"

	"gkconv/internal/safefs"
)

// The content-addressed kernel cache and its worker pool, shared by every
// builder that compiles (CPU shared objects, CUDA PTX). An artifact is
// stored under the hex sha256 of everything that determines it (source,
// compiler identity, flags), so a warm cache runs no compiler, and several
// converters may share one cache directory.

// Stats count what one Builder did.
type Stats struct {
	Kernels   int // GraphKernel nodes built
	Unique    int // distinct sources
	Compiled  int // compiler runs (cache misses)
	CacheHits int // local and remote hits
	// The remote cache's work (Counts): verified hits, uploads, and
	// failed requests or rejected entries, with their warnings.
	RemoteHits, RemotePuts, RemoteErrors int
	Warnings                             []string
	// OnProgress, when set, is called as each distinct source is done
	// (from the compiling goroutines, one call at a time) with the sources
	// done so far, their total and the cache hits among them.
	OnProgress func(done, total, hits int)
}

// Cache is one kind of artifact in the cache directory Dir, stored as
// <Dir>/<Sub>/<key[:2]>/<key><Ext>, with its sha256 beside it in
// <key><Ext>.sha256 (sha256sum's format).
//
// A hit is returned only when the entry and its sidecar are regular files
// that only the current user (or root) can change, in folders that only
// they can change, the entry's sha256 equals the sidecar's, Valid accepts
// it and its provenance record (<key><Ext>.prov, provenance.go) says this
// user's converter stored it; anything else (a missing, corrupt, truncated, planted or
// replaced entry, a missing or wrong sidecar) is rebuilt and overwritten.
// Dir itself is checked once per process (CheckDir): a folder others
// can write is replaced by a private cache, with a warning.
//
// Dir may also be an http:// or https:// URL: a remote cache with the
// same layout, with a local folder in front (see remote.go and
// ResolveDir); its entries pass the same sha256 and Valid checks.
type Cache struct {
	Dir, Sub, Ext string
	// Valid tells a usable cached artifact from a damaged one (which is
	// rebuilt); a structural check on top of the recorded hash. Nil
	// accepts any artifact whose hash matches.
	Valid func([]byte) bool
	// Counts, when set, receives the remote cache's hits, uploads and
	// errors.
	Counts *Counts
}

const (
	sumExt         = ".sha256"
	maxCacheEntry  = 1 << 30 // bytes of one cached artifact
	maxSidecarSize = 4 << 10
)

// unusableShards: the entry folders Fetch could not store into (warned once).
var unusableShards sync.Map

// keyLocks serialise Fetch of one entry within the process, so concurrent
// builders wanting the same artifact build it once.
var keyLocks sync.Map // entry path -> *sync.Mutex

// Fetch returns the artifact stored under key (lower-case hex, at least
// two digits), or builds it (build returns the artifact bytes, checked) and
// stores it; hit reports a cache hit. The store goes through crash-safe
// atomic writes (safefs.WriteFileAtomic): concurrent converters may race
// harmlessly and readers never see a partial file.
//
// With a remote cache (Dir a URL), a local miss asks the remote; a
// verified remote entry is stored locally and is a hit; a built artifact
// is also uploaded. Remote problems never make Fetch fail.
func (c *Cache) Fetch(key string, build func() ([]byte, error)) (data []byte, hit bool, err error) {
	if !isHexKey(key) {
		return nil, false, fmt.Errorf("kernel cache: bad key %q", key)
	}
	root, err := ResolveDir(c.Dir)
	if err != nil {
		return nil, false, err
	}
	var rem *remote
	if base, ok := remoteBase(c.Dir); ok {
		if rem, err = remoteFor(base); err != nil {
			return nil, false, err
		}
	}
	name := key + c.Ext
	path := filepath.Join(root, c.Sub, key[:2], name)
	rel := strings.TrimPrefix(c.Sub+"/"+key[:2]+"/"+name, "/")
	mu, _ := keyLocks.LoadOrStore(path, new(sync.Mutex))
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	if b, err := c.load(root, path); err == nil {
		return b, true, nil
	}
	if rem != nil {
		if b, sig, err := rem.get(rel, name, c.Valid, c.Counts); b != nil && err == nil {
			if c.Counts != nil {
				c.Counts.RemoteHits.Add(1)
			}
			if err := c.store(root, path, b, sig); err != nil {
				slog.Debug("kernel cache: remote hit not stored locally", "entry", path, "err", err)
			}
			return b, true, nil
		}
	}
	b, err := build()
	if err != nil {
		return nil, false, err
	}
	if err := c.store(root, path, b, nil); err != nil {
		// An entry folder that cannot be used (group-writable, not a
		// folder, ...) costs the caching of its kernels, not the run: the
		// artifact is built and used, one warning per folder.
		if _, seen := unusableShards.LoadOrStore(filepath.Dir(path), true); !seen {
			slog.Warn("kernel cache: folder not used, its kernels are compiled but not cached", "folder", filepath.Dir(path), "reason", err.Error())
		}
		return b, false, nil
	}
	if rem != nil {
		rem.put(rel, b, c.Counts)
	}
	return b, false, nil
}

func isHexKey(k string) bool {
	if len(k) < 2 {
		return false
	}
	for _, c := range []byte(k) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// load returns the entry at path if it passes every check (see Cache and
// provenance.go).
func (c *Cache) load(root, path string) ([]byte, error) {
	if err := safefs.CheckSafeDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	want, err := readSidecar(path)
	if err != nil {
		return nil, err
	}
	b, err := readTrusted(path, maxCacheEntry)
	if err != nil {
		return nil, err
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != want {
		return nil, errors.New("sha256 differs from the recorded one")
	}
	if c.Valid != nil && !c.Valid(b) {
		return nil, errors.New("not a valid artifact")
	}
	if err := checkProvenance(root, path, want, b); err != nil {
		return nil, err
	}
	return b, nil
}

// readTrusted reads a regular file that only the current user or root can
// change, of at most limit bytes, without following a symlink at path.
func readTrusted(path string, limit int64) ([]byte, error) {
	linfo, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if err := safefs.CheckSafeFile(linfo); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !os.SameFile(linfo, info) {
		return nil, errors.New("replaced while being read")
	}
	if info.Size() > limit {
		return nil, fmt.Errorf("%d bytes (limit %d)", info.Size(), limit)
	}
	b := make([]byte, info.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, err
	}
	return b, nil
}

// readSidecar returns the hex sha256 recorded for the entry at path.
func readSidecar(path string) (string, error) {
	b, err := readTrusted(path+sumExt, maxSidecarSize)
	if err != nil {
		return "", err
	}
	f := strings.Fields(string(b))
	if len(f) != 2 || len(f[0]) != 64 || !isHexKey(f[0]) || f[1] != filepath.Base(path) {
		return "", errors.New("malformed sha256 sidecar")
	}
	return f[0], nil
}

// store writes the entry, then its sidecar, the remote signature sig (nil
// for an entry compiled here) and last its provenance record; a reader in
// between sees a mismatch and rebuilds.
func (c *Cache) store(root, path string, b []byte, sig []byte) error {
	dir := filepath.Dir(path)
	if err := mkdirAll(dir); err != nil {
		return err
	}
	if err := safefs.CheckSafeDir(dir); err != nil {
		return err
	}
	sum := sha256.Sum256(b)
	hexSum := hex.EncodeToString(sum[:])
	os.Remove(path + provExt) // the old record must not vouch for the new bytes meanwhile
	if err := WriteAtomic(path, b); err != nil {
		return err
	}
	if err := WriteAtomic(path+sumExt, []byte(hexSum+"  "+filepath.Base(path)+"\n")); err != nil {
		return err
	}
	origin := originHere
	if sig != nil {
		origin = originFar
		if err := WriteAtomic(path+sigExt, sig); err != nil {
			return err
		}
	} else {
		os.Remove(path + sigExt)
	}
	return WriteAtomic(path+provExt, provenanceRecord(root, origin, filepath.Base(path), hexSum))
}

// mkdirAll creates dir and its missing parents with mode 0755 whatever the
// umask (a group-writable cache folder would be refused on the next run).
func mkdirAll(dir string) error {
	if info, err := os.Stat(dir); err == nil {
		if !info.IsDir() {
			return fmt.Errorf("%s is not a folder", dir)
		}
		return nil
	}
	if parent := filepath.Dir(dir); parent != dir {
		if err := mkdirAll(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil // made by a concurrent writer
		}
		return err
	}
	return os.Chmod(dir, 0o755)
}

// CompileAll runs compile on sources 0..n-1 with a pool of jobs workers
// (default min(8, NumCPU)), counting cache hits and compiler runs in st.
// compile returns the artifact and whether it was a cache hit.
func CompileAll(n, jobs int, st *Stats, compile func(i int) ([]byte, bool, error)) ([][]byte, error) {
	if jobs <= 0 {
		jobs = min(8, goruntime.NumCPU())
	}
	jobs = min(jobs, n)
	out := make([][]byte, n)
	errs := make([]error, n)
	var hits, runs atomic.Int64
	var progressMu sync.Mutex
	done := 0
	report := func() {
		if st.OnProgress == nil {
			return
		}
		progressMu.Lock()
		defer progressMu.Unlock()
		done++
		st.OnProgress(done, n, st.CacheHits+int(hits.Load()))
	}
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				b, hit, err := compile(i)
				out[i], errs[i] = b, err
				if err == nil {
					if hit {
						hits.Add(1)
					} else {
						runs.Add(1)
					}
				}
				report()
			}
		}()
	}
	for i := 0; i < n; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	st.CacheHits += int(hits.Load())
	st.Compiled += int(runs.Load())
	return out, errors.Join(errs...)
}

// DefaultDir is $GKCONV_KERNEL_CACHE (a folder or a remote cache's
// URL), else os.UserCacheDir()/gkconv/kernels.
func DefaultDir() (string, error) {
	if d := os.Getenv("GKCONV_KERNEL_CACHE"); d != "" {
		return d, nil
	}
	return userCacheDir()
}

// userCacheDir is os.UserCacheDir()/gkconv/kernels.
func userCacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no kernel cache directory (set GKCONV_KERNEL_CACHE): %w", err)
	}
	return filepath.Join(d, "gkconv", "kernels"), nil
}

// ResolveDir is the kernel cache folder to use for dir ("" for the
// default, DefaultDir), checked by CheckDir; a warning is logged
// (slog, once per folder and process) when a private cache replaces it.
// For a remote cache (an http:// or https:// URL) it is the local folder in
// front of it: $GKCONV_KERNEL_CACHE_LOCAL, else os.UserCacheDir()/gkconv/kernels.
func ResolveDir(dir string) (string, error) {
	use, warning, err := ResolveDirChecked(dir)
	if warning != "" {
		if _, done := warned.LoadOrStore(dir, true); !done {
			slog.Warn(warning)
		}
	}
	return use, err
}

var warned sync.Map // folder -> true: its warning was logged

// ResolveDirChecked is ResolveDir returning the warning instead
// of logging it, for a caller that reports warnings itself.
func ResolveDirChecked(dir string) (use, warning string, err error) {
	if dir == "" {
		if dir, err = DefaultDir(); err != nil {
			return "", "", err
		}
	}
	if IsRemote(dir) {
		if dir = os.Getenv(RemoteLocalEnv); dir == "" {
			if dir, err = userCacheDir(); err != nil {
				return "", "", err
			}
		}
		if IsRemote(dir) {
			return "", "", fmt.Errorf("%s=%s: want a local folder", RemoteLocalEnv, redactURL(dir))
		}
	}
	return CheckDir(dir)
}

// UsesRemote reports whether the cache setting dir ("" for the default,
// $GKCONV_KERNEL_CACHE) is a remote cache.
func UsesRemote(dir string) bool {
	_, ok := remoteBase(dir)
	return ok
}

// remoteBase is the remote cache URL that dir ("" for the default) names,
// if it names one.
func remoteBase(dir string) (string, bool) {
	if dir == "" {
		dir = os.Getenv("GKCONV_KERNEL_CACHE")
	}
	return dir, IsRemote(dir)
}

type checkedDir struct {
	use, warning string
	err          error
}

var checkedDirs sync.Map // folder as given -> *checkedDir

// CheckDir returns the folder to use as the kernel cache for dir
// (created, mode 0755, when missing). It is dir itself when only the
// current user or root can change it (safefs.CheckSafeDir: dir and every
// folder above owned by them and not writable by group or others without
// the sticky bit). Otherwise anyone who can write there could plant a
// kernel, so it is a private cache instead ($TMPDIR/gkconv-kernels-<uid>,
// mode 0700, or a fresh temporary folder when that one is not safe), and
// warning says why. The answer is computed once per folder and process.
func CheckDir(dir string) (use, warning string, err error) {
	if v, ok := checkedDirs.Load(dir); ok {
		c := v.(*checkedDir)
		return c.use, c.warning, c.err
	}
	c := &checkedDir{}
	abs, err := filepath.Abs(dir)
	if err == nil {
		err = mkdirAll(abs)
	}
	if err == nil {
		err = safefs.CheckSafeDir(abs)
		if err == nil {
			if c.use, err = filepath.EvalSymlinks(abs); err != nil {
				c.use = abs
			}
		} else {
			priv, perr := privateCacheDir()
			if perr != nil {
				c.err = fmt.Errorf("kernel cache %s: %v, and no private cache instead: %w", dir, err, perr)
			} else {
				c.use = priv
				c.warning = fmt.Sprintf("kernel cache %s not used: %v; anyone who can write there could plant a kernel; using the private cache %s instead", dir, err, priv)
			}
		}
	} else {
		c.err = fmt.Errorf("kernel cache %s: %w", dir, err)
	}
	v, _ := checkedDirs.LoadOrStore(dir, c)
	c = v.(*checkedDir)
	return c.use, c.warning, c.err
}

// privateCacheDir is $TMPDIR/gkconv-kernels-<uid> (mode 0700, reused by
// later runs) when it is safe, else a fresh temporary folder.
func privateCacheDir() (string, error) {
	p := filepath.Join(os.TempDir(), fmt.Sprintf("gkconv-kernels-%d", os.Getuid()))
	if err := os.Mkdir(p, 0o700); err == nil || errors.Is(err, fs.ErrExist) {
		if info, err := os.Lstat(p); err == nil && info.IsDir() && info.Mode().Perm()&0o077 == 0 && safefs.CheckSafeDir(p) == nil {
			return p, nil
		}
	}
	p, err := os.MkdirTemp("", "gkconv-kernels-")
	if err != nil {
		return "", err
	}
	if err := safefs.CheckSafeDir(p); err != nil {
		return "", err
	}
	return p, nil
}

// WriteAtomic writes data to path (creating its folder) crash-safely: an
// unnamed O_TMPFILE file linked into place, or a named temporary file that
// a later run removes if this one dies (safefs.WriteFileAtomic). Readers
// never see a partial file.
func WriteAtomic(path string, data []byte) error {
	if err := mkdirAll(filepath.Dir(path)); err != nil {
		return err
	}
	return safefs.WriteBytesAtomic(path, data, 0o644)
}

// Evict removes from the local cache folder of setting dir every entry
// whose recorded sha256 is sum (with its sidecar), so an object that failed
// the kernel self-check is compiled again instead of being reused, in this
// run and later ones. It returns how many entries it removed. Rare (a
// self-check failure), so a walk of the folder is fine.
func Evict(dir, sum string) (int, error) {
	if len(sum) != 64 || !isHexKey(sum) {
		return 0, fmt.Errorf("kernel cache: bad sha256 %q", sum)
	}
	root, err := ResolveDir(dir)
	if err != nil {
		return 0, err
	}
	n := 0
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, sumExt) || d.Type()&os.ModeSymlink != 0 {
			return nil
		}
		b, err := readTrusted(p, maxSidecarSize)
		if err != nil || !strings.HasPrefix(string(b), sum+" ") {
			return nil
		}
		entry := strings.TrimSuffix(p, sumExt)
		if err := os.Remove(entry); err == nil || errors.Is(err, os.ErrNotExist) {
			os.Remove(p)
			os.Remove(entry + provExt)
			os.Remove(entry + sigExt)
			n++
		}
		return nil
	})
	return n, err
}
