package nn

import (
	"runtime"
	"syscall"
	"unsafe"
)

// Packed weights live outside the Go heap in anonymous mappings backed by
// 2 MiB pages where the kernel allows it. Every inference streams all of a
// model's weights (tens to hundreds of MiB) through the GEMMs once; with
// 4 KiB pages that is one TLB miss per 4 KiB of weights, and in a virtual
// machine each miss walks two page tables. gpt_small's 512 x 8192 lm_head
// weight (16 MiB) ran at 67 GFLOP/s from 4 KiB pages in the model.
// Transparent huge pages are commonly set to "madvise" (Debian, Ubuntu), so
// the mapping asks for them with MADV_HUGEPAGE; where THP is off the call
// fails harmlessly and the mapping keeps 4 KiB pages.

const hugePageBytes = 2 << 20

// madvHugepage is MADV_HUGEPAGE (Linux), absent from package syscall.
const madvHugepage = 14

// hugeFloats is a []float32 of n elements in its own anonymous mapping,
// 2 MiB aligned when at least one huge page long, unmapped by a cleanup when
// owner becomes unreachable. It falls back to the Go heap when mmap fails.
func hugeFloats[T any](owner *T, n int) []float32 {
	size := n * 4
	if size == 0 {
		return make([]float32, n)
	}
	extra := 0
	if size >= hugePageBytes {
		extra = hugePageBytes
	}
	mem, err := syscall.Mmap(-1, 0, size+extra, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return make([]float32, n)
	}
	if extra > 0 {
		// Trim to a 2 MiB aligned range: a huge page must be aligned.
		base := uintptr(unsafe.Pointer(unsafe.SliceData(mem)))
		off := int((hugePageBytes - base%hugePageBytes) % hugePageBytes)
		if off > 0 {
			_ = syscall.Munmap(mem[:off])
		}
		if tail := mem[off+size:]; len(tail) > 0 {
			_ = syscall.Munmap(tail)
		}
		mem = mem[off : off+size : off+size]
		_ = syscall.Madvise(mem, madvHugepage)
	}
	unmap := munmapPacked // read now: a cleanup runs on another goroutine, later
	runtime.AddCleanup(owner, func(m []byte) { _ = unmap(m) }, mem)
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(mem))), n)
}
