package cache

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"gkconv/internal/safefs"
)

// fakeSO is a stand-in shared object: an ELF magic and the key.
func fakeSO(key string) []byte { return append([]byte("\x7fELF\x02\x01\x01"), key...) }

func isFakeSO(b []byte) bool { return bytes.HasPrefix(b, []byte("\x7fELF")) }

func testKey(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

type counter struct{ n atomic.Int64 }

func (c *counter) build(key string) func() ([]byte, error) {
	return func() ([]byte, error) {
		c.n.Add(1)
		return fakeSO(key), nil
	}
}

func TestCacheChecksEveryHit(t *testing.T) {
	dir := t.TempDir()
	c := &Cache{Dir: dir, Ext: ".so", Valid: isFakeSO}
	key := testKey("kernel source")
	var builds counter
	fetch := func(wantHit bool) {
		t.Helper()
		b, hit, err := c.Fetch(key, builds.build(key))
		if err != nil {
			t.Fatal(err)
		}
		if hit != wantHit {
			t.Fatalf("hit = %v, want %v", hit, wantHit)
		}
		if !bytes.Equal(b, fakeSO(key)) {
			t.Fatalf("Fetch returned %q", b)
		}
	}
	fetch(false)
	entry := filepath.Join(dir, key[:2], key+".so")
	sidecar := entry + ".sha256"
	sum := sha256.Sum256(fakeSO(key))
	if b, err := os.ReadFile(sidecar); err != nil || string(b) != hex.EncodeToString(sum[:])+"  "+key+".so\n" {
		t.Fatalf("sidecar %q, %v", b, err)
	}
	fetch(true)

	good := fakeSO(key)
	garbage := make([]byte, 300)
	rand.Read(garbage)
	garbageSum := sha256.Sum256(garbage)
	damage := []struct {
		name string
		do   func()
	}{
		{"300-byte garbage .so planted", func() { os.WriteFile(entry, garbage, 0o644) }},
		{"truncated entry", func() { os.WriteFile(entry, good[:len(good)-3], 0o644) }},
		{"empty entry", func() { os.WriteFile(entry, nil, 0o644) }},
		{"wrong sidecar", func() { os.WriteFile(sidecar, []byte(testKey("x")+"  "+key+".so\n"), 0o644) }},
		{"sidecar of another entry name", func() { os.WriteFile(sidecar, []byte(hex.EncodeToString(sum[:])+"  other.so\n"), 0o644) }},
		{"malformed sidecar", func() { os.WriteFile(sidecar, []byte("hello"), 0o644) }},
		{"no sidecar", func() { os.Remove(sidecar) }},
		{"no entry", func() { os.Remove(entry) }},
		// a consistent pair that is not a shared object: Valid still checks
		{"garbage with a matching sidecar", func() {
			os.WriteFile(entry, garbage, 0o644)
			os.WriteFile(sidecar, []byte(hex.EncodeToString(garbageSum[:])+"  "+key+".so\n"), 0o644)
		}},
		{"entry writable by others", func() { os.Chmod(entry, 0o666) }},
		{"entry is a symlink", func() {
			other := filepath.Join(t.TempDir(), "x.so")
			os.WriteFile(other, good, 0o644)
			os.Remove(entry)
			os.Symlink(other, entry)
		}},
		{"entry is a folder", func() { os.Remove(entry); os.Mkdir(entry, 0o755) }},
	}
	for _, d := range damage {
		t.Run(d.name, func(t *testing.T) {
			before := builds.n.Load()
			d.do()
			if d.name == "entry is a folder" {
				// cannot be overwritten by a rename: the built artifact is
				// used uncached (one warning), never the folder
				b, hit, err := c.Fetch(key, builds.build(key))
				if err != nil || hit || !bytes.Equal(b, fakeSO(key)) {
					t.Fatalf("entry is a folder: %q hit=%v err=%v", b, hit, err)
				}
				if info, err := os.Lstat(entry); err != nil || !info.IsDir() {
					t.Fatal("the folder at the entry's path was replaced")
				}
				os.Remove(entry)
			}
			fetch(false)
			if builds.n.Load() == before {
				t.Fatal("not rebuilt")
			}
			info, err := os.Lstat(entry)
			if err != nil || !info.Mode().IsRegular() || info.Mode().Perm() != 0o644 {
				t.Fatalf("entry after the rebuild: %v, %v", info, err)
			}
			if b, _ := os.ReadFile(entry); !bytes.Equal(b, good) {
				t.Fatalf("entry not overwritten: %q", b)
			}
			fetch(true) // repaired
		})
	}
	// nothing temporary is left in the cache
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && (safefs.IsTempName(info.Name()) || strings.HasPrefix(info.Name(), ".tmp")) {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
	if _, _, err := c.Fetch("../../etc", builds.build("x")); err == nil {
		t.Error("a key with a path in it was accepted")
	}
}

func TestCacheConcurrentFetch(t *testing.T) {
	dir := t.TempDir()
	key := testKey("shared kernel")
	var builds counter
	slow := func() ([]byte, error) {
		time.Sleep(20 * time.Millisecond)
		return builds.build(key)()
	}
	const n = 16
	var wg sync.WaitGroup
	results := make([][]byte, n)
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			// separate Cache values over one folder, as separate builders have
			c := &Cache{Dir: dir, Ext: ".so", Valid: isFakeSO}
			results[i], _, errs[i] = c.Fetch(key, slow)
		}(i)
	}
	wg.Wait()
	for i := range results {
		if errs[i] != nil || !bytes.Equal(results[i], fakeSO(key)) {
			t.Fatalf("goroutine %d: %q, %v", i, results[i], errs[i])
		}
	}
	if got := builds.n.Load(); got != 1 {
		t.Errorf("%d builds for one key, want 1", got)
	}
	es, _ := os.ReadDir(filepath.Join(dir, key[:2]))
	if len(es) != 3 {
		t.Errorf("entry folder holds %d files, want the entry, its sidecar and its provenance record", len(es))
	}
}

func TestCacheDirRefusedWhenOthersCanWrite(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir()) // the private fallback cache goes here
	// tmp is a fresh folder that only we can change (t.TempDir's mode
	// follows the umask).
	tmp := func(t *testing.T) string {
		d := t.TempDir()
		os.Chmod(d, 0o700)
		return d
	}

	check := func(t *testing.T, dir string, wantOwn bool, wantMsg string) {
		t.Helper()
		use, warning, err := CheckDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		real, _ := filepath.EvalSymlinks(dir)
		if own := use == real; own != wantOwn {
			t.Fatalf("CheckDir(%s) = %s (warning %q); want own folder %v", dir, use, warning, wantOwn)
		}
		if wantOwn {
			if warning != "" {
				t.Fatalf("warning %q", warning)
			}
			return
		}
		if !strings.Contains(warning, wantMsg) || !strings.Contains(warning, "private cache") {
			t.Fatalf("warning %q, want one containing %q", warning, wantMsg)
		}
		if info, err := os.Lstat(use); err != nil || info.Mode().Perm() != 0o700 {
			t.Fatalf("private cache %s: %v, %v", use, info, err)
		}
		// Fetch through the unsafe folder stores in the private one
		key := testKey(dir)
		c := &Cache{Dir: dir, Ext: ".so", Valid: isFakeSO}
		if _, _, err := c.Fetch(key, (&counter{}).build(key)); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, key[:2])); err == nil {
			t.Fatal("an entry was written into the refused folder")
		}
		if _, err := os.Stat(filepath.Join(use, key[:2], key+".so")); err != nil {
			t.Fatal("entry not in the private cache:", err)
		}
	}
	mk := func(t *testing.T, mode os.FileMode) string {
		d := filepath.Join(tmp(t), "cache")
		os.Mkdir(d, 0o700)
		if err := os.Chmod(d, mode); err != nil {
			t.Fatal(err)
		}
		return d
	}
	t.Run("private", func(t *testing.T) { check(t, mk(t, 0o700), true, "") })
	t.Run("0755", func(t *testing.T) { check(t, mk(t, 0o755), true, "") })
	t.Run("created", func(t *testing.T) {
		d := filepath.Join(tmp(t), "a", "b", "cache")
		old := syscall.Umask(0o002) // a group-writable umask must not make our own folders unsafe
		check(t, d, true, "")
		syscall.Umask(old)
		if info, _ := os.Stat(d); info.Mode().Perm() != 0o755 {
			t.Errorf("created with mode %v", info.Mode())
		}
	})
	t.Run("world-writable", func(t *testing.T) {
		check(t, mk(t, 0o777), false, "writable by group or others without the sticky bit")
	})
	t.Run("group-writable", func(t *testing.T) { check(t, mk(t, 0o775), false, "writable by group or others") })
	t.Run("sticky", func(t *testing.T) { check(t, mk(t, 0o777|os.ModeSticky), true, "") })
	t.Run("parent world-writable", func(t *testing.T) {
		p := mk(t, 0o777)
		d := filepath.Join(p, "cache")
		os.Mkdir(d, 0o755)
		check(t, d, false, "writable by group or others")
	})
	t.Run("symlink to a world-writable folder", func(t *testing.T) {
		target := mk(t, 0o777)
		link := filepath.Join(tmp(t), "link")
		os.Symlink(target, link)
		check(t, link, false, "writable by group or others")
	})
	t.Run("owned by another user", func(t *testing.T) {
		if os.Getuid() != 0 {
			t.Skip("needs root to give a folder to another user")
		}
		d := mk(t, 0o755)
		if err := os.Chown(d, 4242, 4242); err != nil {
			t.Fatal(err)
		}
		check(t, d, false, "owned by another user (uid 4242)")
	})
	t.Run("planted subfolder in a sticky cache", func(t *testing.T) {
		if os.Getuid() != 0 {
			t.Skip("needs root to give a folder to another user")
		}
		d := mk(t, 0o777|os.ModeSticky)
		key := testKey("planted")
		sub := filepath.Join(d, key[:2])
		os.Mkdir(sub, 0o755)
		so := fakeSO("evil")
		sum := sha256.Sum256(so)
		os.WriteFile(filepath.Join(sub, key+".so"), so, 0o644)
		os.WriteFile(filepath.Join(sub, key+".so.sha256"), []byte(hex.EncodeToString(sum[:])+"  "+key+".so\n"), 0o644)
		os.Chown(sub, 4242, 4242)
		c := &Cache{Dir: d, Ext: ".so", Valid: isFakeSO}
		b, hit, err := c.Fetch(key, (&counter{}).build(key))
		if hit || bytes.Equal(b, so) {
			t.Fatalf("the planted entry was returned (hit %v, err %v)", hit, err)
		}
		// Another user's folder is neither read nor written: the kernel is
		// built and used uncached (issue 32 D4: one unsafe shard no longer
		// fails the conversion).
		if err != nil || !bytes.Equal(b, fakeSO(key)) {
			t.Fatalf("fetch with another user's shard: %q, %v; want the built artifact", b, err)
		}
		if got, _ := os.ReadFile(filepath.Join(sub, key+".so")); !bytes.Equal(got, so) {
			t.Errorf("the other user's folder was written")
		}
	})
	t.Run("ResolveDir", func(t *testing.T) {
		d := mk(t, 0o777)
		use, err := ResolveDir(d)
		if err != nil || use == d {
			t.Fatalf("ResolveDir = %s, %v", use, err)
		}
		t.Setenv("GKCONV_KERNEL_CACHE", d)
		if _, w, _ := ResolveDirChecked(""); w == "" {
			t.Fatal("no warning for an unsafe $GKCONV_KERNEL_CACHE")
		}
	})
}

// Issue 32 D4: one entry folder (shard) that is unsafe (group-writable)
// does not fail the conversion: its kernels are built and used uncached;
// a top-level folder that is unsafe already falls back to a private one.
func TestUnsafeShardSkipped(t *testing.T) {
	dir := t.TempDir()
	c := &Cache{Dir: dir, Ext: ".so", Valid: isFakeSO}
	key := testKey("shard test")
	shard := filepath.Join(dir, key[:2])
	if err := os.Mkdir(shard, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shard, 0o775); err != nil {
		t.Fatal(err)
	}
	var builds counter
	for i := 0; i < 2; i++ {
		b, hit, err := c.Fetch(key, builds.build(key))
		if err != nil || hit || !bytes.Equal(b, fakeSO(key)) {
			t.Fatalf("fetch %d: %q hit=%v err=%v; want the built artifact", i, b, hit, err)
		}
	}
	if n := builds.n.Load(); n != 2 {
		t.Errorf("built %d times, want 2 (nothing cached in the unsafe shard)", n)
	}
	if _, err := os.Stat(filepath.Join(shard, key+".so")); err == nil {
		t.Errorf("an entry was stored in the unsafe shard")
	}
}
