//go:build linux

package safefs

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// bothModes runs f with the unnamed (O_TMPFILE) path where supported and
// with the named-temp-file fallback forced.
func bothModes(t *testing.T, f func(t *testing.T)) {
	t.Run("unnamed", func(t *testing.T) {
		if !UnnamedTempSupported(t.TempDir()) {
			t.Skip("O_TMPFILE is not supported on the temp dir's filesystem")
		}
		f(t)
	})
	t.Run("named", func(t *testing.T) {
		forceNamed = true
		defer func() { forceNamed = false }()
		f(t)
	})
}

func TestWriteFileAtomic(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "model.mindir")
		old := syscall.Umask(0o077)
		defer syscall.Umask(old)
		// new file
		if err := WriteBytesAtomic(path, []byte("first"), 0o644); err != nil {
			t.Fatal(err)
		}
		// replaced
		if err := WriteBytesAtomic(path, []byte("second"), 0o644); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(path); string(b) != "second" {
			t.Fatalf("content %q", b)
		}
		if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
			t.Errorf("mode %v, want 0644 whatever the umask", st.Mode())
		}
		// a failed write leaves the old file and nothing else
		err := WriteFileAtomic(path, 0o644, func(w io.Writer) error {
			w.Write([]byte("partial"))
			return errors.New("encoder failed")
		})
		if err == nil || err.Error() != "encoder failed" {
			t.Fatalf("error %v", err)
		}
		if b, _ := os.ReadFile(path); string(b) != "second" {
			t.Fatalf("content after a failed write %q", b)
		}
		if names := listDir(t, dir); !slices.Equal(names, []string{"model.mindir"}) {
			t.Fatalf("folder holds %v", names)
		}
		// the writer gets the *os.File (mindir relies on file offsets)
		WriteFileAtomic(filepath.Join(dir, "f"), 0o600, func(w io.Writer) error {
			if _, ok := w.(*os.File); !ok {
				t.Errorf("writer is %T", w)
			}
			return nil
		})
		// while being written: nothing named in the folder with O_TMPFILE, a
		// temporary file of our pattern without
		WriteFileAtomic(filepath.Join(dir, "g"), 0o644, func(w io.Writer) error {
			names := listDir(t, dir)
			named := slices.ContainsFunc(names, IsTempName)
			if forceNamed != named || len(names) != 2+btoi(named) {
				t.Errorf("named mode %v: the folder holds %v while writing", forceNamed, names)
			}
			return nil
		})
		// a folder that does not exist: an error, no panic
		if err := WriteBytesAtomic(filepath.Join(dir, "missing", "x"), nil, 0o644); err == nil {
			t.Error("no error for a missing folder")
		}
	})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestIsTempName(t *testing.T) {
	for name, want := range map[string]bool{
		".gkconv-tmp-0123456789abcdef-model.mindir": true,
		".gkconv-tmp-0123456789abcdef":              true,
		".gkconv-tmp-0123456789ABCDEF-x":            false,
		".gkconv-tmp-0123456789abcde-x":             false,
		".gkconv-tmp-0123456789abcdefx":             false,
		".tmp-model.mindir-123":                     false,
		".model.mindir.tmp123":                      false,
		"model.mindir":                              false,
	} {
		if IsTempName(name) != want {
			t.Errorf("IsTempName(%q) = %v", name, !want)
		}
	}
}

// TestStaleTempsCleanup: the next write into a folder removes our old,
// unlocked temporary files and nothing else.
func TestStaleTempsCleanup(t *testing.T) {
	forceNamed = true
	defer func() { forceNamed = false }()
	dir := t.TempDir()
	old := time.Now().Add(-2 * StaleAge)
	mk := func(name string, age time.Time) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, age, age)
		return p
	}
	stale := mk(TempPrefix+"00112233445566aa-model.mindir", old)
	stale2 := mk(TempPrefix+"00112233445566ab", old)
	fresh := mk(TempPrefix+"00112233445566ac-model.mindir", time.Now())
	locked := mk(TempPrefix+"00112233445566ad-model.mindir", old)
	others := []string{
		mk(".tmp-model.mindir-123", old),            // another tool's (or an old gkconv's) pattern
		mk(".model.mindir.tmp456", old),             //
		mk(".gkconv-tmp-notours-model.mindir", old), // prefix only
		mk("model.mindir", old),
		mk("notes.txt", old),
	}
	os.Mkdir(filepath.Join(dir, TempPrefix+"00112233445566ae"), 0o755) // a folder of the pattern
	// a live writer holds the lock of one
	lf, err := os.Open(locked)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if err := WriteBytesAtomic(filepath.Join(dir, "out.mindir"), []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{stale, stale2} {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("stale temp file %s not removed", filepath.Base(p))
		}
	}
	for _, p := range append([]string{fresh, locked, filepath.Join(dir, TempPrefix+"00112233445566ae")}, others...) {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s removed: %v", filepath.Base(p), err)
		}
	}
	// once the lock is gone, a later cleanup removes it
	lf.Close()
	removed, err := RemoveStaleTemps(dir, StaleAge)
	if err != nil || !slices.Equal(removed, []string{locked}) {
		t.Errorf("RemoveStaleTemps = %v, %v; want [%s]", removed, err, locked)
	}
}

const envCrashDest = "GKCONV_TRUST_TEST_CRASH_DEST"

// TestCrashHelper is the child of TestCrashLeavesNothing: it starts writing
// the file named by the environment and never finishes.
func TestCrashHelper(t *testing.T) {
	dest := os.Getenv(envCrashDest)
	if dest == "" {
		t.Skip("helper process for TestCrashLeavesNothing")
	}
	WriteFileAtomic(dest, 0o644, func(w io.Writer) error {
		w.Write(make([]byte, 1<<20))
		fmt.Println("WRITING")
		for {
			time.Sleep(time.Hour)
		}
	})
}

// crashWrite runs TestCrashHelper writing dest, kills it with SIGKILL in
// the middle of the write and waits for it.
func crashWrite(t *testing.T, dest string, env ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashHelper$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), envCrashDest+"="+dest), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan bool)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "WRITING" {
				ready <- true
				io.Copy(io.Discard, out)
				return
			}
		}
		ready <- false
	}()
	select {
	case ok := <-ready:
		if !ok {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("helper exited before writing")
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("helper did not start writing")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("helper ended with %v, want SIGKILL", err)
	}
}

// TestCrashLeavesNothing: a writer killed with SIGKILL mid-write leaves no
// file with O_TMPFILE; with the named fallback it leaves one temporary
// file of our pattern, which the next run's cleanup removes once stale.
func TestCrashLeavesNothing(t *testing.T) {
	if os.Getenv(envCrashDest) != "" {
		t.Skip("in the helper")
	}
	t.Run("unnamed", func(t *testing.T) {
		dir := t.TempDir()
		if !UnnamedTempSupported(dir) {
			t.Skip("O_TMPFILE is not supported on the temp dir's filesystem")
		}
		crashWrite(t, filepath.Join(dir, "model.mindir"))
		if names := listDir(t, dir); len(names) != 0 {
			t.Fatalf("a killed writer left %v", names)
		}
		// the same over an existing file: it is left as it was
		os.WriteFile(filepath.Join(dir, "model.mindir"), []byte("old"), 0o644)
		crashWrite(t, filepath.Join(dir, "model.mindir"))
		if names := listDir(t, dir); !slices.Equal(names, []string{"model.mindir"}) {
			t.Fatalf("a killed writer left %v", names)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "model.mindir")); string(b) != "old" {
			t.Fatalf("destination changed to %q", b)
		}
	})
	t.Run("named", func(t *testing.T) {
		dir := t.TempDir()
		crashWrite(t, filepath.Join(dir, "model.mindir"), EnvNoTmpfile+"=1")
		names := listDir(t, dir)
		if len(names) != 1 || !IsTempName(names[0]) || !strings.HasSuffix(names[0], "-model.mindir") {
			t.Fatalf("after a crash with named temp files the folder holds %v", names)
		}
		leftover := filepath.Join(dir, names[0])
		if removed, _ := RemoveStaleTemps(dir, StaleAge); len(removed) != 0 {
			t.Fatalf("a fresh leftover was removed: %v", removed)
		}
		old := time.Now().Add(-2 * StaleAge)
		os.Chtimes(leftover, old, old)
		if removed, err := RemoveStaleTemps(dir, StaleAge); err != nil || !slices.Equal(removed, []string{leftover}) {
			t.Fatalf("RemoveStaleTemps = %v, %v", removed, err)
		}
		if names := listDir(t, dir); len(names) != 0 {
			t.Fatalf("folder holds %v", names)
		}
	})
}
