package mindir

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFIFORefused: a FIFO given as input is refused at once (opening it for
// reading would block until a writer comes).
func TestFIFORefused(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := Open(p)
		_, err2 := checkFile(p)
		if err == nil || err2 == nil {
			done <- errors.New("accepted")
			return
		}
		if !strings.Contains(err.Error(), "not a regular file") || !strings.Contains(err2.Error(), "not a regular file") {
			done <- errors.Join(err, err2)
			return
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reading a FIFO blocked")
	}
}
