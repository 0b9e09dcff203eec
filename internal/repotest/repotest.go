// Package repotest locates the repository and the test material beside it
// (../shared) for tests. It imports nothing of the project, so every
// package's tests can use it.
package repotest

import (
	"os"
	"path/filepath"
	"testing"
)

// RepoRoot walks up from the working directory to the folder holding go.mod.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("repository root (go.mod) not found above the test folder")
		}
		dir = parent
	}
}

// SharedDir returns <repo>/../shared/<rel>, skipping the test when it is
// absent (a fresh clone has no ../shared beside it).
func SharedDir(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(RepoRoot(t), "..", "shared", filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		t.Skipf("test material %s is absent (../shared is not checked out beside the repo): skipping", p)
	}
	return p
}
