package nn

import (
	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
	"slices"
)

// matMul is numpy matmul (1-D operands promoted and their dim dropped, batch
// dims broadcast) with transpose_a/transpose_b swapping the last two dims of
// a rank >= 2 operand first.
func matMul(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := need(n, in, 2); err != nil {
		return err
	}
	a, b, y := in[0], in[1], out[0]
	if a.DType != b.DType || a.DType != y.DType {
		return errf(n, "dtype mismatch: %s x %s -> %s", a.DType, b.DType, y.DType)
	}
	if hasHalf(a) {
		return viaF32(ctx, n, in, out, matMul)
	}
	p, err := planMatMul(a.Shape, b.Shape, n.Attrs.Int("transpose_a", 0) != 0, n.Attrs.Int("transpose_b", 0) != 0)
	if err != nil {
		return errf(n, "%v", err)
	}
	if !slices.Equal(p.outShape, y.Shape) {
		return errf(n, "output shape %v, expected %v for %v x %v", y.Shape, p.outShape, a.Shape, b.Shape)
	}
	var bias *ir.Tensor // optional third input, added after the product
	if len(in) > 2 && in[2] != nil {
		bias = in[2]
		if bias.DType != y.DType || len(y.Shape) == 0 || bias.NumElements() != y.Shape[len(y.Shape)-1] {
			return errf(n, "bias %s %v does not hold one value per output column of %v", bias.DType, bias.Shape, y.Shape)
		}
		if y.DType != ir.Float32 && y.DType != ir.Float64 {
			return opkernel.Unsupportedf(n, "bias input with dtype %s (float only)", y.DType)
		}
	}
	act, err := matMulActivation(n)
	if err != nil {
		return err
	}
	if act != ir.ActNone && y.DType != ir.Float32 && y.DType != ir.Float64 {
		return opkernel.Unsupportedf(n, "activation_type with dtype %s (float only)", y.DType)
	}
	switch a.DType {
	case ir.Float32:
		runMatMul(ctx, p, a.F32(), b.F32(), y.F32(), sgemm)
	case ir.Float64:
		runMatMul(ctx, p, a.F64(), b.F64(), y.F64(), dgemm)
	case ir.Int32:
		runMatMul(ctx, p, a.I32(), b.I32(), y.I32(), gemmNaive[int32])
	case ir.Int64:
		runMatMul(ctx, p, a.I64(), b.I64(), y.I64(), gemmNaive[int64])
	case ir.Uint32:
		runMatMul(ctx, p, a.U32(), b.U32(), y.U32(), gemmNaive[uint32])
	case ir.Uint64:
		runMatMul(ctx, p, a.U64(), b.U64(), y.U64(), gemmNaive[uint64])
	case ir.Int8:
		runMatMul(ctx, p, a.I8(), b.I8(), y.I8(), gemmNaive[int8])
	case ir.Uint8:
		runMatMul(ctx, p, a.U8(), b.U8(), y.U8(), gemmNaive[uint8])
	case ir.Int16:
		runMatMul(ctx, p, a.I16(), b.I16(), y.I16(), gemmNaive[int16])
	case ir.Uint16:
		runMatMul(ctx, p, a.U16(), b.U16(), y.U16(), gemmNaive[uint16])
	default:
		return opkernel.Unsupportedf(n, "dtype %s", a.DType)
	}
	// Bias, then activation: MatMul, Add, ReLU (float32 and float64; other
	// dtypes are refused above), with the convolution epilogue's code.
	switch y.DType {
	case ir.Float32:
		if bias != nil {
			addRows(y.F32(), bias.F32())
		}
		epiRows(y.F32(), nil, 1, len(y.F32()), 0, act)
	case ir.Float64:
		if bias != nil {
			addRows(y.F64(), bias.F64())
		}
		epiSlice(y.F64(), nil, act)
	}
	return nil
}

// matMulActivation returns MatMul n's fused activation (ir.AttrActivation,
// set by anf_fusion.MatMulActivationFusion or read from a MindSpore
// MatMulFusion): none, RELU or RELU6, the two MindSpore Lite's MatMul
// kernels apply.
func matMulActivation(n *ir.Node) (int64, error) {
	act := n.Attrs.Int(ir.AttrActivation, ir.ActNone)
	if act != ir.ActNone && act != ir.ActReLU && act != ir.ActReLU6 {
		return 0, opkernel.Unsupportedf(n, "activation_type %d (MatMul applies none, RELU and RELU6)", act)
	}
	return act, nil
}

func addRows[T float32 | float64](y, b []T) {
	for r := 0; r+len(b) <= len(y); r += len(b) {
		row := y[r : r+len(b)]
		for j := range row {
			row[j] += b[j]
		}
	}
}

// matMulPlan is a matmul reduced to a loop of row-major GEMMs.
type matMulPlan struct {
	m, n, k        int
	transA, transB bool
	lda, ldb       int
	batch          int   // number of GEMMs
	aOff, bOff     []int // per-GEMM element offsets (nil: batch index * matrix size)
	aSize, bSize   int
	outShape       []int64
}

type gemmFunc[T any] func(transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int)

func planMatMul(as, bs []int64, transA, transB bool) (*matMulPlan, error) {
	if len(as) == 0 || len(bs) == 0 {
		return nil, errString("matmul of a scalar")
	}
	p := &matMulPlan{}
	a1, b1 := len(as) == 1, len(bs) == 1
	aS := append([]int64{}, as...)
	bS := append([]int64{}, bs...)
	if a1 {
		aS = []int64{1, as[0]}
		transA = false
	}
	if b1 {
		bS = []int64{bs[0], 1}
		transB = false
	}
	ra, rb := len(aS), len(bS)
	m, ka := aS[ra-2], aS[ra-1]
	if transA {
		m, ka = ka, m
	}
	kb, nn := bS[rb-2], bS[rb-1]
	if transB {
		kb, nn = nn, kb
	}
	if ka != kb {
		return nil, errString("inner dims differ: %v x %v", as, bs)
	}
	p.m, p.n, p.k = int(m), int(nn), int(ka)
	p.transA, p.transB = transA, transB
	p.lda, p.ldb = int(aS[ra-1]), int(bS[rb-1])
	p.aSize, p.bSize = int(aS[ra-2]*aS[ra-1]), int(bS[rb-2]*bS[rb-1])

	ab, bb := aS[:ra-2], bS[:rb-2]
	nb := max(len(ab), len(bb))
	batchShape := make([]int64, nb)
	for i := 0; i < nb; i++ {
		da, db := int64(1), int64(1)
		if j := i - (nb - len(ab)); j >= 0 {
			da = ab[j]
		}
		if j := i - (nb - len(bb)); j >= 0 {
			db = bb[j]
		}
		switch {
		case da == db || db == 1:
			batchShape[i] = da
		case da == 1:
			batchShape[i] = db
		default:
			return nil, errString("batch dims do not broadcast: %v x %v", as, bs)
		}
	}
	p.outShape = append([]int64{}, batchShape...)
	if !a1 {
		p.outShape = append(p.outShape, m)
	}
	if !b1 {
		p.outShape = append(p.outShape, nn)
	}
	p.batch = prod(batchShape)
	// B shared by every batch and A not transposed: fold A's batch into M,
	// one big GEMM (the common [B,S,K] x [K,N] case).
	if prod(bb) == 1 && !transA && p.batch > 1 && prod(ab) == p.batch {
		p.m *= p.batch
		p.batch = 1
		return p, nil
	}
	if slices.Equal(ab, batchShape) && slices.Equal(bb, batchShape) {
		return p, nil
	}
	p.aOff = broadcastOffsets(ab, batchShape, p.aSize)
	p.bOff = broadcastOffsets(bb, batchShape, p.bSize)
	return p, nil
}

// broadcastOffsets lists, for every index of batchShape in row-major order,
// the element offset of the matching matrix in an operand whose batch dims
// are src (right-aligned, size-1 dims broadcast).
func broadcastOffsets(src, batchShape []int64, matSize int) []int {
	nb := len(batchShape)
	strides := make([]int, nb)
	s := matSize
	for i := len(src) - 1; i >= 0; i-- {
		j := i + nb - len(src)
		if src[i] != 1 {
			strides[j] = s
		}
		s *= int(src[i])
	}
	total := prod(batchShape)
	offs := make([]int, total)
	idx := make([]int, nb)
	off := 0
	for t := 0; t < total; t++ {
		offs[t] = off
		for d := nb - 1; d >= 0; d-- {
			idx[d]++
			off += strides[d]
			if idx[d] < int(batchShape[d]) {
				break
			}
			off -= strides[d] * idx[d]
			idx[d] = 0
		}
	}
	return offs
}

// runMatMul runs the plan's GEMMs on ctx.Threads workers: whole GEMMs per
// worker when there are at least as many as workers (attention's per-head
// products), else each GEMM split (gemmOn).
func runMatMul[T number](ctx *opkernel.Ctx, p *matMulPlan, a, b, c []T, serial gemmFunc[T]) {
	mn := p.m * p.n
	one := func(t int, gemm gemmFunc[T]) {
		ao, bo := t*p.aSize, t*p.bSize
		if p.aOff != nil {
			ao, bo = p.aOff[t], p.bOff[t]
		}
		gemm(p.transA, p.transB, p.m, p.n, p.k, 1, a[ao:], p.lda, b[bo:], p.ldb, 0, c[t*mn:], p.n)
	}
	if ctx != nil && ctx.Threads > 1 && p.batch >= ctx.Threads {
		grain := max(1, int(minParallelFMAs/max(int64(p.m)*int64(p.n)*int64(max(p.k, 1)), 1)))
		opkernel.ParallelFor(ctx, p.batch, grain, func(t0, t1 int) {
			for t := t0; t < t1; t++ {
				one(t, serial)
			}
		})
		return
	}
	gemm := gemmOn(ctx, serial)
	for t := 0; t < p.batch; t++ {
		one(t, gemm)
	}
}

// gemmNaive is the integer GEMM (wrapping arithmetic, as ONNX integer MatMul).
func gemmNaive[T number](transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		for j := range row {
			row[j] *= beta
		}
		for p := 0; p < k; p++ {
			av := a[i*lda+p]
			if transA {
				av = a[p*lda+i]
			}
			av *= alpha
			if transB {
				for j := range row {
					row[j] += av * b[j*ldb+p]
				}
			} else {
				br := b[p*ldb : p*ldb+n]
				for j := range row {
					row[j] += av * br[j]
				}
			}
		}
	}
}
