package ir

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestReleaseMapped(t *testing.T) {
	page := os.Getpagesize()
	want := make([]byte, 5*page)
	for i := range want {
		want[i] = byte(i*7 + 1)
	}
	path := filepath.Join(t.TempDir(), "w.bin")
	if err := os.WriteFile(path, want, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := syscall.Mmap(int(f.Fd()), 0, len(want), syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(m)
	heap := append([]byte{}, want...)
	if n := ReleaseMapped(heap); n != 0 {
		t.Fatalf("released %d bytes of heap memory", n)
	}
	if n := ReleaseMapped(m[10 : 4*page+3]); n != 0 {
		t.Fatalf("released %d bytes of an unregistered mapping", n)
	}
	RegisterMapping(m)
	if n := ReleaseMapped(m[10 : 4*page+3]); n != 3*page { // whole pages 1..3 only
		t.Fatalf("released %d bytes, want %d", n, 3*page)
	}
	if n := ReleaseMapped(m[10:20]); n != 0 {
		t.Fatalf("released %d bytes of a part of one page", n)
	}
	for i := range want { // the dropped pages read back from the file
		if m[i] != want[i] || heap[i] != want[i] {
			t.Fatalf("byte %d changed", i)
		}
	}
	UnregisterMapping(m)
	if n := ReleaseMapped(m); n != 0 {
		t.Fatalf("released %d bytes after UnregisterMapping", n)
	}
}
