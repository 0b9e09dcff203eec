package cache

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMain keeps the cache provenance secret of the tests in a folder of
// their own, not in the user's configuration folder.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "gkconv-kernels-test-")
	if err != nil {
		panic(err)
	}
	os.Setenv(ProvenanceKeyEnv, filepath.Join(dir, "kernel-cache.key"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
