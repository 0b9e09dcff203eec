package ir

import (
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// File mappings the model readers registered. ReleaseMapped drops the
// resident pages of a constant inside one, so a pass that replaces weights
// by transformed copies (packing, column slicing) keeps about one copy
// resident instead of the mapped original plus the copy. The dropped pages
// are clean file pages: if the original is read again, the kernel reads it
// back from the file. Memory outside a registered mapping is never touched
// (MADV_DONTNEED on heap memory would zero it).
var mappings struct {
	sync.Mutex
	spans [][2]uintptr // [start, end)
}

// RegisterMapping records b as a read-only file mapping. Call
// UnregisterMapping(b) before unmapping it.
func RegisterMapping(b []byte) {
	if len(b) == 0 {
		return
	}
	s := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	mappings.Lock()
	mappings.spans = append(mappings.spans, [2]uintptr{s, s + uintptr(len(b))})
	mappings.Unlock()
}

// UnregisterMapping forgets a mapping registered with RegisterMapping.
func UnregisterMapping(b []byte) {
	if len(b) == 0 {
		return
	}
	s := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	mappings.Lock()
	defer mappings.Unlock()
	for i, sp := range mappings.spans {
		if sp[0] == s {
			mappings.spans = append(mappings.spans[:i], mappings.spans[i+1:]...)
			return
		}
	}
}

// ReleaseMapped drops the whole pages of b that lie in a registered file
// mapping from this process's resident memory and returns how many bytes
// that covered; b stays valid and readable.
func ReleaseMapped(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	page := uintptr(os.Getpagesize())
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	hi := lo + uintptr(len(b))
	mappings.Lock()
	defer mappings.Unlock()
	for _, sp := range mappings.spans {
		if lo < sp[0] || hi > sp[1] {
			continue
		}
		start := ((lo+page-1)&^(page-1) - lo) // offsets of the whole pages in b
		end := (hi&^(page-1) - lo)
		if hi&^(page-1) <= lo || end <= start {
			return 0
		}
		if syscall.Madvise(b[start:end], syscall.MADV_DONTNEED) != nil {
			return 0
		}
		return int(end - start)
	}
	return 0
}
