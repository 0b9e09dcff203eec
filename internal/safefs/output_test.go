package safefs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// Nothing but a regular file is ever replaced: a FIFO, a character device
// and this process's descriptors are written to as they are, a link to a
// regular file keeps being a link, and directories, dangling links and
// missing folders are refused (issue 32 D2: --reportFile=/dev/stdout run as
// root replaced the system's /dev/stdout link with a regular file).
func TestWriteOutputNeverReplacesNonRegular(t *testing.T) {
	dir := t.TempDir()

	// A FIFO: the data arrives at its reader, the FIFO stays a FIFO.
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- "open: " + err.Error()
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- string(b)
	}()
	if err := WriteOutputBytes(fifo, []byte("through the fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "through the fifo" {
		t.Errorf("FIFO reader got %q", s)
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", st.Mode(), err)
	}

	// A character device: as root a private node of /dev/null's device
	// (major 1, minor 3), so a regression cannot replace the machine's.
	null := "/dev/null"
	if os.Geteuid() == 0 {
		null = filepath.Join(dir, "null")
		if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
			t.Fatalf("mknod: %v", err)
		}
	}
	if err := WriteOutputBytes(null, []byte("x"), 0o644); err != nil {
		if errors.Is(err, fs.ErrPermission) {
			t.Logf("%s: %v (a nodev mount): the device case is not checked here", null, err)
		} else {
			t.Fatal(err)
		}
	}
	if st, err := os.Lstat(null); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("%s is no longer a character device: %v %v", null, st.Mode(), err)
	}

	// One of this process's descriptors, by its /proc/self/fd name and
	// through a link to it (as /dev/stdout is).
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "stdout")
	if err := os.Symlink("/proc/self/fd/"+strconv.Itoa(int(w.Fd())), link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/proc/self/fd/" + strconv.Itoa(int(w.Fd())), link} {
		if err := WriteOutputBytes(p, []byte("ab"), 0o644); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	w.Close()
	if b, _ := io.ReadAll(r); string(b) != "abab" {
		t.Errorf("pipe got %q, want abab", b)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link to the descriptor was replaced: %v %v", st.Mode(), err)
	}

	// A link to a regular file: the target is replaced, the link stays.
	real := filepath.Join(dir, "real.json")
	os.WriteFile(real, []byte("old"), 0o644)
	ln := filepath.Join(dir, "report.json")
	os.Symlink(real, ln)
	if err := WriteOutputBytes(ln, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(real); string(b) != "new" {
		t.Errorf("target holds %q", b)
	}
	if st, _ := os.Lstat(ln); st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link to a regular file was replaced by a file")
	}

	// Refused: a directory, a dangling link, a missing folder.
	dangling := filepath.Join(dir, "dangling")
	os.Symlink(filepath.Join(dir, "nothing"), dangling)
	for _, p := range []string{dir, dangling, filepath.Join(dir, "no", "such", "x")} {
		if err := WriteOutputBytes(p, []byte("x"), 0o644); err == nil {
			t.Errorf("%s: written, want an error", p)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "nothing")); err == nil {
		t.Errorf("a dangling link's target was created")
	}
}
