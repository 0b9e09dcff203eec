package nn

// PackedMatMul: a MatMul whose constant B was packed into panels at
// conversion time (pass postprocess.matmul_pack_b, layout in
// internal/ir/packed_layout.go), run by the packed-B SGEMM of packed_gemm.c.

/*
#cgo CFLAGS: -O3 -std=gnu11
#include "packed_gemm.h"
*/
import "C"

import (
	"sync/atomic"
	"unsafe"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/kernel"
)

func init() { kernel.Register(ir.OpPackedMatMul, packedMatMul) }

// PackB packs a constant B[k, n] (or, with transB, B^T stored [n, k]) for
// PackedMatMul; see ir.PackB.
func PackB(b []float32, k, n, nr int, transB bool) []float32 { return ir.PackB(b, k, n, nr, transB) }

// setPackedISA forces the packed GEMM's code path ("portable", "avx2",
// "avx512f"; "" = best) for tests; false when the CPU lacks it (the best path
// is then in use).
func setPackedISA(name string) bool {
	want := map[string]C.int{"portable": 1, "avx2": 2, "avx512f": 3}[name]
	return C.packed_sgemm_set_isa(want) != 0
}

// minParallelFMAs is the work (multiply-adds) below which a thread is not
// worth starting.
const minParallelFMAs = 1 << 18

func packedMatMul(ctx *kernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := need(n, in, 2); err != nil {
		return err
	}
	a, bp, y := in[0], in[1], out[0]
	var bias []float32 // optional third input: a folded bias Add
	if len(in) > 2 && in[2] != nil {
		bt := in[2]
		if bt.DType != ir.Float32 || bt.NumElements() != n.Attrs.Int("n", -1) {
			return errf(n, "bias must be float32 with n=%d elements, got %s %v", n.Attrs.Int("n", -1), bt.DType, bt.Shape)
		}
		bias = bt.F32()
	}
	if a.DType != ir.Float32 || bp.DType != ir.Float32 || y.DType != ir.Float32 {
		return kernel.Unsupportedf(n, "dtypes %s x %s -> %s (float32 only)", a.DType, bp.DType, y.DType)
	}
	k, nn, nr := int(n.Attrs.Int("k", -1)), int(n.Attrs.Int("n", -1)), int(n.Attrs.Int("nr", -1))
	if k < 0 || nn < 0 || nr < 1 {
		return errf(n, "attrs k, n (>= 0) and nr (>= 1) are required, got k=%d n=%d nr=%d", k, nn, nr)
	}
	if len(bp.Shape) != 1 || int(bp.NumElements()) != ir.PackedLen(k, nn, nr) {
		return errf(n, "packed B %v does not hold k=%d n=%d nr=%d (%d floats)", bp.Shape, k, nn, nr, ir.PackedLen(k, nn, nr))
	}
	r := len(a.Shape)
	if r == 0 {
		return errf(n, "A must have rank >= 1, got a scalar")
	}
	transA := n.Attrs.Int("transpose_a", 0) != 0 && r >= 2
	var batch, m, lda int
	if transA { // A is [..., k, m]: one GEMM per batch matrix
		if int(a.Shape[r-2]) != k {
			return errf(n, "A %v (transpose_a) gives K=%d, packed B has k=%d", a.Shape, a.Shape[r-2], k)
		}
		batch, m = prod(a.Shape[:r-2]), int(a.Shape[r-1])
		lda = m
	} else { // A is [..., k]: every leading dim folds into M
		if int(a.Shape[r-1]) != k {
			return errf(n, "A %v gives K=%d, packed B has k=%d", a.Shape, a.Shape[r-1], k)
		}
		batch, m, lda = 1, prod(a.Shape[:r-1]), k
	}
	if int(y.NumElements()) != batch*m*nn {
		return errf(n, "output %v, expected %d elements for A %v and n=%d", y.Shape, batch*m*nn, a.Shape, nn)
	}
	av, bv, yv := a.F32(), bp.F32(), y.F32()
	if m == 0 || nn == 0 || batch == 0 {
		return nil
	}
	if k == 0 { // empty product: zeros (+ bias)
		clear(yv[:batch*m*nn])
		if bias != nil {
			for r := 0; r < batch*m; r++ {
				copy(yv[r*nn:(r+1)*nn], bias)
			}
		}
		return nil
	}
	for t := 0; t < batch; t++ {
		if err := packedGEMM(ctx, m, nn, k, av[t*k*m:], lda, transA, bv, nr, bias, yv[t*m*nn:]); err != nil {
			return errf(n, "%v", err)
		}
	}
	return nil
}

// packedGEMM computes c[m, n] = op(a) * B (+ bias) from packed B, split over
// ctx.Threads by panels of B or, when there are too few panels, by rows.
func packedGEMM(ctx *kernel.Ctx, m, n, k int, a []float32, lda int, transA bool, bp []float32, nr int, bias, c []float32) error {
	panels := (n + nr - 1) / nr
	threads := 1
	if ctx != nil {
		threads = ctx.Threads
	}
	ta := C.int(0)
	if transA {
		ta = 1
	}
	var fail atomic.Bool
	var biasp *C.float
	if bias != nil {
		biasp = (*C.float)(unsafe.Pointer(&bias[0]))
	}
	call := func(i0, i1, p0, p1 int) {
		ao := i0 * lda
		if transA {
			ao = i0
		}
		rc := C.packed_sgemm(C.int(i1-i0), C.int(n), C.int(k), (*C.float)(unsafe.Pointer(&a[ao])), C.int(lda), ta,
			(*C.float)(unsafe.Pointer(&bp[0])), C.int(nr), biasp, (*C.float)(unsafe.Pointer(&c[i0*n])), C.int(n), C.int(p0), C.int(p1))
		if rc != 0 {
			fail.Store(true)
		}
	}
	work := m * k * nr // multiply-adds per panel
	switch {
	case threads <= 1 || m*n*k < 2*minParallelFMAs:
		call(0, m, 0, panels)
	case panels >= 2*threads || m < 24:
		kernel.ParallelFor(ctx, panels, max(1, minParallelFMAs/max(work, 1)), func(p0, p1 int) { call(0, m, p0, p1) })
	default: // few, tall panels: split rows in multiples of the 12-row micro-kernel
		blocks := (m + 11) / 12
		kernel.ParallelFor(ctx, blocks, 1, func(b0, b1 int) { call(b0*12, min(b1*12, m), 0, panels) })
	}
	if fail.Load() {
		return errString("packed GEMM: out of memory for the packed A buffer")
	}
	return nil
}
