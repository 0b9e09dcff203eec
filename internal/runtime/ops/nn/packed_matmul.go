package nn

// MatMuls marked pack_b (ir.AttrPackB, set by postprocess.matmul_pack_b):
// at session preparation (model load) the constant B is packed once into the
// panels of ir.PackB, the mapped original's pages are dropped, and the node
// runs on the packed-B SGEMM of packed_gemm.c. Files keep B in MindSpore's
// layout; the packed copy lives as long as the session.

/*
#cgo CFLAGS: -O3 -std=gnu11
#include "packed_gemm.h"
*/
import "C"

import (
	"runtime"
	"sync/atomic"
	"syscall"
	"unsafe"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

func init() { opkernel.RegisterPreparer("MatMul", prepareMatMul) }

// packedWeight is a MatMul's constant B[k, n] packed in panels of nr columns.
type packedWeight struct {
	src      *ir.Tensor // the constant B it was packed from
	data     []float32  // ir.PackB layout, PackedLen(k, n, nr) floats
	k, n, nr int
}

type packKey struct {
	b      *ir.Tensor
	transB bool
}

// prepareMatMul packs B of a MatMul marked pack_b that ir.PackableMatMul
// accepts (one packed copy per session for every MatMul reading the same B
// the same way) and returns the Func that runs it on the packed copy. Other
// MatMuls keep matMul.
func prepareMatMul(p *opkernel.Prep, n *ir.Node) (opkernel.Func, error) {
	if !ir.PackBMarked(n) {
		return nil, nil
	}
	k, nn, transB, ok := ir.PackableMatMul(n)
	if !ok {
		return nil, nil
	}
	b := n.Inputs[1].Const
	pw := p.Once(packKey{b, transB}, func() any {
		w := newPackedWeight(b, k, nn, transB)
		// The packed copy is what runs from now on: drop the original's pages
		// when it lies in the model file's mapping (they are read back from
		// the file if another node reads it).
		ir.ReleaseMapped(b.Data)
		p.Weights++
		p.WeightBytes += int64(len(w.data)) * 4
		return w
	}).(*packedWeight)
	return func(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
		if len(in) < 2 || in[1] != pw.src { // not the B packed at load
			return matMul(ctx, n, in, out)
		}
		return matMulPacked(ctx, n, pw, in, out)
	}, nil
}

// newPackedWeight packs b (B [k, n], or [n, k] with transB) in panels of
// ir.PackNR columns into an anonymous mapping, unmapped by a cleanup once the
// packedWeight is unreachable: outside the Go heap, hundreds of MiB of
// weights neither raise the GC's heap goal (which would let garbage grow by
// as much) nor get scanned. The Go heap is the fallback.
func newPackedWeight(b *ir.Tensor, k, n int, transB bool) *packedWeight {
	w := &packedWeight{src: b, k: k, n: n, nr: ir.PackNR}
	w.data = hugeFloats(w, ir.PackedLen(k, n, ir.PackNR))
	ir.PackBInto(w.data, b.F32()[:k*n], k, n, ir.PackNR, transB)
	return w
}

// munmapPacked frees a packed weight's mapping (a variable for tests).
var munmapPacked = syscall.Munmap

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

// matMulPacked runs MatMul node n (inputs A, B, optional bias; attr
// transpose_a) with B replaced by its packed copy pw.
func matMulPacked(ctx *opkernel.Ctx, n *ir.Node, pw *packedWeight, in, out []*ir.Tensor) error {
	if err := need(n, in, 2); err != nil {
		return err
	}
	a, y := in[0], out[0]
	k, nn, nr := pw.k, pw.n, pw.nr
	var bias []float32 // optional third input: a folded bias Add
	if len(in) > 2 && in[2] != nil {
		bt := in[2]
		if bt.DType != ir.Float32 || bt.NumElements() != int64(nn) {
			return errf(n, "bias must be float32 with n=%d elements, got %s %v", nn, bt.DType, bt.Shape)
		}
		bias = bt.F32()
	}
	if a.DType != ir.Float32 || y.DType != ir.Float32 {
		return opkernel.Unsupportedf(n, "dtypes %s -> %s with packed B (float32 only)", a.DType, y.DType)
	}
	act, err := matMulActivation(n)
	if err != nil {
		return err
	}
	if k < 0 || nn < 0 || nr < 1 || len(pw.data) != ir.PackedLen(k, nn, nr) {
		return errf(n, "packed B of %d floats does not hold k=%d n=%d nr=%d", len(pw.data), k, nn, nr)
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
	av, bv, yv := a.F32(), pw.data, y.F32()
	if m == 0 || nn == 0 || batch == 0 {
		return nil
	}
	if k == 0 { // empty product: zeros (+ bias), activated
		clear(yv[:batch*m*nn])
		if bias != nil {
			for r := 0; r < batch*m; r++ {
				copy(yv[r*nn:(r+1)*nn], bias)
			}
		}
		epiRows(yv, nil, 1, batch*m*nn, 0, act)
		return nil
	}
	for t := 0; t < batch; t++ {
		if err := packedGEMM(ctx, m, nn, k, av[t*k*m:], lda, transA, bv, nr, bias, act, yv[t*m*nn:]); err != nil {
			return errf(n, "%v", err)
		}
	}
	runtime.KeepAlive(pw) // its cleanup unmaps bv
	return nil
}

// packedGEMM computes c[m, n] = act(op(a) * B (+ bias)) from packed B, split over
// ctx.Threads by rows when each thread gets two 12-row slivers, else by
// panels of B or, when there are too few panels, by rows.
func packedGEMM(ctx *opkernel.Ctx, m, n, k int, a []float32, lda int, transA bool, bp []float32, nr int, bias []float32, act int64, c []float32) error {
	panels := (n + nr - 1) / nr
	threads := ctx.NumThreads()
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
			(*C.float)(unsafe.Pointer(&bp[0])), C.int(nr), biasp, C.int(act), (*C.float)(unsafe.Pointer(&c[i0*n])), C.int(n), C.int(p0), C.int(p1))
		if rc != 0 {
			fail.Store(true)
		}
	}
	work := m * k * nr // multiply-adds per panel
	switch {
	case threads <= 1 || m*n*k < 2*minParallelFMAs:
		call(0, m, 0, panels)
	case m >= 24*threads:
		// At least two 12-row slivers per thread: one even share of the rows
		// each. Each thread packs only its own rows of A (split by panels,
		// every chunk packed all of A) and writes whole rows of C, which the
		// row-wise kernels after a transformer's MatMuls (bias + residual +
		// LayerNorm, GELU) then read from their own core's cache. Both
		// threads read all of B, at about the same time, from the shared
		// L3. Measurements: docs/performance.md#packed-matmul-row-split.
		opkernel.ParallelFor(ctx, threads, 1, func(t0, t1 int) { call(t0*m/threads, t1*m/threads, 0, panels) })
	case panels >= 32*threads:
		// Many panels and few rows (fewer than 24 per thread: an lm_head or
		// FFN over a short sequence): shared chunks of at least 8 panels,
		// so a worker that starts late does not hold the caller up for half
		// of B, while the A packing that each chunk redoes stays small next
		// to its 8 panels of GEMM.
		opkernel.ParallelForShared(ctx, panels, max(8, minParallelFMAs/max(work, 1)), func(p0, p1 int) { call(0, m, p0, p1) })
	case panels >= 2*threads || m < 24:
		opkernel.ParallelFor(ctx, panels, max(1, minParallelFMAs/max(work, 1)), func(p0, p1 int) { call(0, m, p0, p1) })
	default: // few, tall panels: split rows in multiples of the 12-row micro-kernel
		blocks := (m + 11) / 12
		opkernel.ParallelFor(ctx, blocks, 1, func(b0, b1 int) { call(b0*12, min(b1*12, m), 0, panels) })
	}
	if fail.Load() {
		return errString("packed GEMM: out of memory for the packed A buffer")
	}
	return nil
}
