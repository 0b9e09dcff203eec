package trust

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The cache provenance secret: made once, mode 0600 in a 0700 folder,
// the same on every later call, and refused (never silently replaced)
// when others can read it, when it is a symlink, or when it is damaged.
func TestLoadOrCreateSecret(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "conf", "gkconv", "kernel-cache.key")
	a, err := LoadOrCreateSecret(path)
	if err != nil || len(a) != secretBytes {
		t.Fatalf("first call: %x, %v", a, err)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("secret file %v, %v", info, err)
	}
	if d, _ := os.Stat(filepath.Dir(path)); d.Mode().Perm() != 0o700 {
		t.Errorf("secret folder mode %#o", d.Mode().Perm())
	}
	b, err := LoadOrCreateSecret(path)
	if err != nil || !bytes.Equal(a, b) {
		t.Fatalf("second call: %x, %v (first %x)", b, err, a)
	}

	os.Chmod(path, 0o644)
	if _, err := LoadOrCreateSecret(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a world-readable secret: %v", err)
	}
	os.Chmod(path, 0o600)

	link := filepath.Join(dir, "link.key")
	os.Symlink(path, link)
	if _, err := LoadOrCreateSecret(link); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("a symlink: %v", err)
	}

	bad := filepath.Join(dir, "bad.key")
	os.WriteFile(bad, []byte("short\n"), 0o600)
	if _, err := LoadOrCreateSecret(bad); err == nil {
		t.Error("a damaged secret was used")
	}
	if got, _ := os.ReadFile(bad); string(got) != "short\n" {
		t.Error("a damaged secret was replaced")
	}
}

// Runs creating the secret at once all get the same one, never a partial file.
func TestLoadOrCreateSecretConcurrent(t *testing.T) {
	for round := 0; round < 20; round++ {
		path := filepath.Join(t.TempDir(), "gkconv", "kernel-cache.key")
		const n = 8
		got := make([][]byte, n)
		errs := make([]error, n)
		done := make(chan int)
		for i := 0; i < n; i++ {
			go func(i int) { got[i], errs[i] = LoadOrCreateSecret(path); done <- i }(i)
		}
		for i := 0; i < n; i++ {
			<-done
		}
		for i := range got {
			if errs[i] != nil || !bytes.Equal(got[i], got[0]) {
				t.Fatalf("round %d, caller %d: %x, %v (caller 0: %x)", round, i, got[i], errs[i], got[0])
			}
		}
		if es, _ := os.ReadDir(filepath.Dir(path)); len(es) != 1 {
			t.Fatalf("round %d: %d files left in the key folder", round, len(es))
		}
	}
}
