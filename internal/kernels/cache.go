package kernels

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"sync"
	"sync/atomic"
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
	CacheHits int
}

// Cache is one kind of artifact in the cache directory Dir, stored as
// <Dir>/<Sub>/<key[:2]>/<key><Ext>.
type Cache struct {
	Dir, Sub, Ext string
	// Valid tells a usable cached artifact from a damaged one (which is
	// rebuilt).
	Valid func([]byte) bool
}

func (c *Cache) path(key string) string {
	return filepath.Join(c.Dir, c.Sub, key[:2], key+c.Ext)
}

// Fetch returns the artifact stored under key, or builds it (build returns
// the artifact bytes, checked) and stores it; hit reports a cache hit. The
// store goes through a temporary file and a rename: concurrent converters
// may race harmlessly and readers never see a partial file.
func (c *Cache) Fetch(key string, build func() ([]byte, error)) (data []byte, hit bool, err error) {
	path := c.path(key)
	if b, err := os.ReadFile(path); err == nil && c.Valid(b) {
		return b, true, nil
	}
	b, err := build()
	if err != nil {
		return nil, false, err
	}
	if err := WriteAtomic(path, b); err != nil {
		return nil, false, fmt.Errorf("kernel cache %s: %w", c.Dir, err)
	}
	return b, false, nil
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

// DefaultCacheDir is $GKCONV_KERNEL_CACHE, else os.UserCacheDir()/gkconv/kernels.
func DefaultCacheDir() (string, error) {
	if d := os.Getenv("GKCONV_KERNEL_CACHE"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no kernel cache directory (set GKCONV_KERNEL_CACHE): %w", err)
	}
	return filepath.Join(d, "gkconv", "kernels"), nil
}

// ResolveCacheDir is dir, or the default kernel cache when dir is empty.
func ResolveCacheDir(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	return DefaultCacheDir()
}

// WriteAtomic writes data to path through a temporary file and a rename, so
// readers never see a partial file.
func WriteAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	name := f.Name()
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(name)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(name)
		return err
	}
	if err := os.Chmod(name, 0o644); err != nil {
		os.Remove(name)
		return err
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return err
	}
	return nil
}
