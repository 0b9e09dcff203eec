package main

import (
	"os"
	"path/filepath"
	"testing"

	"gkconv/internal/repotest"
)

// The in-process end-to-end tests (ONNX backend suite, fused and random
// graphs) live beside the driver in internal/convert; the tests here run the
// built binary: flags, output lines, exit codes, files.

// kernelCache is shared by the tests so each kernel compiles once.
var kernelCache = filepath.Join(os.TempDir(), "gkconv-test-kernel-cache")

func repoRoot(t testing.TB) string { return repotest.RepoRoot(t) }

func sharedDir(t testing.TB) string { return repotest.SharedDir(t, "") }

func writeConfig(t *testing.T, body string) string {
	p := filepath.Join(t.TempDir(), "akg.cfg")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
