//go:build linux

package nn

import (
	"math"
	"math/rand"
	"syscall"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/cpuisa"
	"gkconv/internal/runtime/opkernel"
)

// TestDepthwise3x3Stride2LastBlockMask runs the AVX-512 3x3 stride-2 plane
// kernel on a plane that ends at a page followed by an inaccessible one,
// with the scratch pool poisoned (every mask bit set). The kernel's last
// block of a row loads the columns after it with the mask of the block
// after the last; when that mask was not written (28 output columns: two
// blocks, masks for only those two), the stale bits made the last row read
// past the plane, into the guard page.
func TestDepthwise3x3Stride2LastBlockMask(t *testing.T) {
	defer cpuisa.Reset()
	if err := cpuisa.Force(cpuisa.AVX512); err != nil {
		t.Skipf("no AVX-512: %v", err)
	}
	const page = 4096
	const side = 56 // one plane 56x56 -> 28x28, 12544 bytes
	mem, err := syscall.Mmap(-1, 0, 5*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skipf("mmap: %v", err)
	}
	defer syscall.Munmap(mem)
	if err := syscall.Mprotect(mem[4*page:], syscall.PROT_NONE); err != nil {
		t.Skipf("mprotect: %v", err)
	}
	rng := rand.New(rand.NewSource(3))
	ref := randTensor(rng, 1, 1, side, side)
	x := &ir.Tensor{DType: ir.Float32, Shape: ref.Shape, Data: mem[4*page-len(ref.Data) : 4*page]}
	copy(x.Data, ref.Data)
	w, b := randTensor(rng, 1, 1, 3, 3), randTensor(rng, 1)
	for range 64 { // scratch buffers whose masks read as all lanes
		p := make([]float32, 1<<16)
		for i := range p {
			p[i] = math.Float32frombits(0xFFFFFFFF)
		}
		putF32(&p)
	}
	attrs := ir.Attrs{"group": ir.IntAttr(1), "strides": ir.IntsAttr(2, 2), "pads": ir.IntsAttr(1, 1, 1, 1)}
	node := &ir.Node{Name: "t", Op: "Conv2D", Attrs: attrs}
	y := ir.NewTensor(ir.Float32, []int64{1, 1, side / 2, side / 2})
	if err := conv(&opkernel.Ctx{Threads: 1}, node, []*ir.Tensor{x, w, b}, []*ir.Tensor{y}); err != nil {
		t.Fatal(err)
	}
	g, err := windowAttrs(node, x.Shape[2:], w.Shape[2:], false)
	if err != nil {
		t.Fatal(err)
	}
	x64, _ := ref.Float64s()
	w64, _ := w.Float64s()
	b64, _ := b.Float64s()
	want := make([]float64, y.NumElements())
	convDirect(&opkernel.Ctx{Threads: 1}, g, 1, 1, 1, 1, x64, w64, b64, want)
	for j, v := range want {
		if got := float64(y.F32()[j]); math.Abs(got-v) > 1e-5+1e-5*math.Abs(v) {
			t.Fatalf("element %d: got %g want %g", j, got, v)
		}
	}
}
