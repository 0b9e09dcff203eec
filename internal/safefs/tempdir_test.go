package safefs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestRemoveOrphanTempDirs: a folder left by a killed run (its pid gone) is
// removed by the next run's first MkdirTemp; a live writer's, a young one,
// another pattern's and our own are kept.
func TestRemoveOrphanTempDirs(t *testing.T) {
	base := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no `true` to get a finished pid:", err)
	}
	deadPid := strconv.Itoa(dead.Process.Pid)
	old := time.Now().Add(-time.Hour)
	mk := func(name string, mtime time.Time) string {
		p := filepath.Join(base, name)
		if err := os.MkdirAll(filepath.Join(p, "sub"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "sub", "kernel.c"), []byte("int x;"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return p
	}
	orphan := mk("gkconv-cc-"+deadPid+"-123456", old)
	young := mk("gkconv-cc-"+deadPid+"-654321", time.Now())
	live := mk("gkconv-ptx-1-99", old) // pid 1 is alive
	ours := mk("gkconv-cc-"+strconv.Itoa(os.Getpid())+"-7", old)
	other := mk("gkconv-kernels-"+deadPid, old) // the kernel cache: not a work folder
	foreign := mk("gcc-"+deadPid+"-1", old)

	p, err := MkdirTemp(base, "gkconv-cc-")
	if err != nil {
		t.Fatal(err)
	}
	if want := "gkconv-cc-" + strconv.Itoa(os.Getpid()) + "-"; filepath.Base(p)[:len(want)] != want {
		t.Errorf("MkdirTemp made %s, want a name starting %s", p, want)
	}
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Errorf("orphan %s was not removed (%v)", orphan, err)
	}
	for _, keep := range []string{young, live, ours, other, foreign, p} {
		if _, err := os.Stat(keep); err != nil {
			t.Errorf("%s was removed: %v", keep, err)
		}
	}
	if _, err := MkdirTemp(base, "cc-"); err == nil {
		t.Error("a prefix without gkconv- was accepted")
	}
}

func TestTempDirPid(t *testing.T) {
	for name, want := range map[string]int{
		"gkconv-cc-12-345":     12,
		"gkconv-ptxas-7-1":     7,
		"gkconv-cc-12":         0,
		"gkconv-cc-x-1":        0,
		"gkconv-kernels-1000":  0,
		"gkconv-c1-12-3":       0,
		"gkconv-cc-12-3a":      0,
		"gkconv-cc-0-3":        0,
		"gkconv-cc--1-3":       0,
		".gkconv-tmp-00-cc-1-": 0,
	} {
		if got := tempDirPid(name); got != want {
			t.Errorf("tempDirPid(%q) = %d, want %d", name, got, want)
		}
	}
}
