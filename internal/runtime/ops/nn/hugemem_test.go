package nn

import (
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// hugeFloats gives zeroed, writable memory, 2 MiB aligned when it spans a
// huge page, and unmaps it once its owner is unreachable.
func TestHugeFloats(t *testing.T) {
	var mu sync.Mutex
	made := map[uintptr]bool{}
	var unmapped atomic.Int32
	defer func(f func([]byte) error) { munmapPacked = f }(munmapPacked)
	munmapPacked = func(m []byte) error {
		mu.Lock()
		if made[uintptr(unsafe.Pointer(&m[0]))] {
			unmapped.Add(1)
		}
		mu.Unlock()
		return syscall.Munmap(m)
	}
	for _, n := range []int{1, 1000, hugePageBytes / 4, hugePageBytes/4 + 3, 3 << 20} {
		owner := new(packedConvEntry) // not int: a tiny allocation may never be freed alone
		f := hugeFloats(owner, n)
		mu.Lock()
		made[uintptr(unsafe.Pointer(&f[0]))] = true
		mu.Unlock()
		if len(f) != n {
			t.Fatalf("n=%d: got %d floats", n, len(f))
		}
		if addr := uintptr(unsafe.Pointer(&f[0])); n*4 >= hugePageBytes && addr%hugePageBytes != 0 {
			t.Errorf("n=%d: address %#x is not 2 MiB aligned", n, addr)
		}
		for i := range f {
			if f[i] != 0 {
				t.Fatalf("n=%d: f[%d] = %v, want zeroed memory", n, i, f[i])
			}
			f[i] = float32(i)
		}
		if f[n-1] != float32(n-1) {
			t.Fatalf("n=%d: write lost", n)
		}
		runtime.KeepAlive(owner)
	}
	for deadline := time.Now().Add(5 * time.Second); unmapped.Load() < 5 && time.Now().Before(deadline); {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if got := unmapped.Load(); got != 5 {
		t.Errorf("%d of 5 mappings unmapped after their owners died", got)
	}
}
