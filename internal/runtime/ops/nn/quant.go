package nn

// The 8-bit integer ops: MatMulInteger, QLinearMatMul, ConvInteger and
// QLinearConv (ONNX semantics). All run on gk_qgemm (qgemm.c): exact int32
// accumulation of (a - a_zero_point) * (b - b_zero_point) on AVX-512 VNNI
// (vpdpbusd), AVX2 (int16 vpmaddwd) or portable C, following cpuisa's
// level; the QLinear ops requantize with y = saturate(round_half_even(acc *
// a_scale*b_scale/y_scale) + y_zero_point), the multiplier in float32, as
// onnxruntime. Convolutions unfold x (im2col, padded with x's zero point)
// and multiply the weights [M, C/group * k] by the columns. Constant B
// (MatMul) is packed once at model load.

/*
#cgo CFLAGS: -O3 -std=gnu11 -I${SRCDIR}/../../cpuisa
#cgo LDFLAGS: -lm
#include "qgemm.h"
#include <stdlib.h>

// gk_qgemm_e is gk_qgemm with the epilogue's fields as arguments (Go memory
// may not hold the Go pointers a gk_qepi would).
static void gk_qgemm_e(int M, int K, int N, const uint8_t *a, int asigned, int lda, const int32_t *za,
                       const int8_t *bp, const int32_t *colsum, const int32_t *zb, int s0, int s1, int32_t *c,
                       int ldc, const uint8_t *apk, const int32_t *arow, int has_e, const float *es, int esm,
                       const float *eb, int ebm, int erelu, uint8_t *qo, const int32_t *qc, const int32_t *qb, int qz,
                       int qlo, int qhi, int qs, const int8_t *ssa, const int32_t *sroff, const int32_t *srk,
                       const int16_t *srv) {
    gk_qepi e = {es, esm, eb, ebm, erelu, qo, qc, qb, qz, qlo, qhi, qs};
    gk_qsplit sp = {ssa, sroff, srk, srv};
    gk_qgemm(M, K, N, a, asigned, lda, za, bp, colsum, zb, s0, s1, c, ldc, apk, arow, has_e ? &e : NULL,
             ssa ? &sp : NULL);
}

static void gk_qdw_conv_e(const uint8_t *x, int xsigned, const uint8_t *w, int wsigned, const int32_t *wz, int xz,
                          const int *geo, int c0, int c1, int32_t *yacc, int has_e, const float *es, int esm,
                          const float *eb, int ebm, int erelu, uint8_t *qo, const int32_t *qc, const int32_t *qb,
                          int qz, int qlo, int qhi, int qs) {
    gk_qepi e = {es, esm, eb, ebm, erelu, qo, qc, qb, qz, qlo, qhi, qs};
    // the requantizing form writes bytes (yacc: the scratch they count in);
    // the float one writes float32 over yacc's memory
    const int fl = has_e && !qo;
    gk_qdw_conv_epi(x, xsigned, w, wsigned, wz, xz, geo, c0, c1, fl ? NULL : yacc, has_e ? &e : NULL,
                    fl ? (float *)yacc : NULL);
}
*/
import "C"

import (
	"fmt"
	"slices"
	"unsafe"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

func init() {
	opkernel.Register("MatMulInteger", matMulInteger)
	opkernel.Register("QLinearMatMul", qlinearMatMul)
	opkernel.Register("ConvInteger", convInteger)
	opkernel.Register("QLinearConv", qlinearConv)
	opkernel.RegisterPreparer("MatMulInteger", func(p *opkernel.Prep, n *ir.Node) (opkernel.Func, error) {
		return prepareQMatMul(p, n, 1, matMulInteger)
	})
	opkernel.RegisterPreparer("QLinearMatMul", func(p *opkernel.Prep, n *ir.Node) (opkernel.Func, error) {
		return prepareQMatMul(p, n, 3, qlinearMatMul)
	})
	opkernel.RegisterPreparer("ConvInteger", func(p *opkernel.Prep, n *ir.Node) (opkernel.Func, error) {
		return prepareQConv(p, n, 1, false)
	})
	opkernel.RegisterPreparer("QLinearConv", func(p *opkernel.Prep, n *ir.Node) (opkernel.Func, error) {
		return prepareQConv(p, n, 3, true)
	})
}

// QGEMMKernel names the integer GEMM's code path at the current ISA level:
// avx512vnni, avx2 or portable.
func QGEMMKernel() string { return C.GoString(C.gk_qgemm_kernel_name()) }

// allowInt8AMX turns the AMX tile path of the integer GEMM off (false) or
// lets it be probed again (true): the tests' way to check the VNNI kernel
// on an AMX machine.
func allowInt8AMX(allow bool) { C.gk_qgemm_amx_allow(cbool(allow)) }

// qpackedB is a B [k, n] operand packed for gk_qgemm.
type qpackedB struct {
	k, n   int
	signed bool
	data   []int8
	colsum []int32
}

func packQB(b []byte, signed bool, k, n, ldb int) *qpackedB {
	p := &qpackedB{k: k, n: n, signed: signed, colsum: make([]int32, max(n, 1))}
	p.data = make([]int8, max(int(C.gk_qgemm_packed_size(C.int(k), C.int(n))), 1))
	if k > 0 && n > 0 {
		sg := 0
		if signed {
			sg = 1
		}
		C.gk_qgemm_pack_b((*C.uint8_t)(unsafe.Pointer(&b[0])), C.int(sg), C.int(k), C.int(n), C.int(ldb),
			(*C.int8_t)(unsafe.Pointer(&p.data[0])), (*C.int32_t)(unsafe.Pointer(&p.colsum[0])))
	}
	return p
}

// qpackedA is an A [m, k] operand packed once for gk_qgemm (a constant
// convolution weight), and on the AVX2 level its split for the vpmaddubsw
// tiles (gk_qgemm_split_a; sa nil when it has too many residuals).
type qpackedA struct {
	data   []uint8
	rowsum []int32
	sa     []int8
	roff   []int32
	rk     []int32
	rv     []int16
	dir    *qdirectW
}

// qdirectW is a 1-D or 2-D convolution weight [M, cg, kernel...] reordered
// and split once for the direct AVX2 convolution (gk_qconv_direct_split).
type qdirectW struct {
	kp           int
	sa           []int8
	rowsum, roff []int32
	rk           []int32
	rv           []int16
}

// newDirectW splits w for gk_qconv_avx2_rows, or returns nil (another ISA
// level, a 3-D kernel, or too many residuals: the GEMM path then).
func newDirectW(w *ir.Tensor) *qdirectW {
	if C.gk_qconv_avx2_ok() == 0 || len(w.Shape) < 3 || len(w.Shape) > 4 || w.Shape[0] <= 0 || w.Shape[1] <= 0 {
		return nil
	}
	m, cg := int(w.Shape[0]), int(w.Shape[1])
	kv := int(w.NumElements()) / (m * cg)
	if kv <= 0 {
		return nil
	}
	kp := kv * ((cg + 3) / 4) * 4
	limit := m*kp/8 + 1
	d := &qdirectW{kp: kp, sa: make([]int8, m*kp), rowsum: make([]int32, m), roff: make([]int32, m+1)}
	rk, rv := make([]int32, limit), make([]int16, limit)
	got := int(C.gk_qconv_direct_split((*C.uint8_t)(unsafe.Pointer(&w.Data[0])), cbool(w.DType == ir.Int8), C.int(m),
		C.int(cg), C.int(kv), (*C.int8_t)(unsafe.Pointer(&d.sa[0])), (*C.int32_t)(unsafe.Pointer(&d.rowsum[0])),
		(*C.int32_t)(unsafe.Pointer(&d.roff[0])), (*C.int32_t)(unsafe.Pointer(&rk[0])), (*C.int16_t)(unsafe.Pointer(&rv[0])),
		C.int(limit)))
	if got < 0 {
		return nil
	}
	n := max(got, 1)
	d.rk, d.rv = slices.Clip(rk[:n]), slices.Clip(rv[:n])
	return d
}

// split returns gk_qgemm_e's split arguments for rows from r0 (nils: none).
func (p *qpackedA) split(r0, k int) (*C.int8_t, *C.int32_t, *C.int32_t, *C.int16_t) {
	if p == nil || p.sa == nil {
		return nil, nil, nil, nil
	}
	kp := (k + 3) &^ 3
	return (*C.int8_t)(unsafe.Pointer(&p.sa[r0*kp])), (*C.int32_t)(unsafe.Pointer(&p.roff[r0])),
		(*C.int32_t)(unsafe.Pointer(&p.rk[0])), (*C.int16_t)(unsafe.Pointer(&p.rv[0]))
}

func packQA(a []byte, signed bool, m, k int) *qpackedA {
	kp := (k + 3) &^ 3
	p := &qpackedA{data: make([]uint8, max(m*kp, 1)), rowsum: make([]int32, max(m, 1))}
	if m > 0 && k > 0 {
		sg := 0
		if signed {
			sg = 1
		}
		C.gk_qgemm_pack_a((*C.uint8_t)(unsafe.Pointer(&a[0])), C.int(sg), C.int(m), C.int(k), C.int(k),
			(*C.uint8_t)(unsafe.Pointer(&p.data[0])), (*C.int32_t)(unsafe.Pointer(&p.rowsum[0])))
		if C.gk_qgemm_wants_split() != 0 {
			// residuals past 1 in 8 values: the widened path instead
			limit := m*kp/8 + 1
			sa, roff := make([]int8, m*kp), make([]int32, m+1)
			rk, rv := make([]int32, limit), make([]int16, limit)
			got := int(C.gk_qgemm_split_a((*C.uint8_t)(unsafe.Pointer(&p.data[0])), C.int(m), C.int(k),
				(*C.int8_t)(unsafe.Pointer(&sa[0])), (*C.int32_t)(unsafe.Pointer(&roff[0])),
				(*C.int32_t)(unsafe.Pointer(&rk[0])), (*C.int16_t)(unsafe.Pointer(&rv[0])), C.int(limit)))
			if got >= 0 {
				n := max(got, 1)
				p.sa, p.roff, p.rk, p.rv = sa, roff, slices.Clip(rk[:n]), slices.Clip(rv[:n])
			}
		}
	}
	return p
}

// rows is the packed A of rows [r0, ...) of a k-column matrix.
func (p *qpackedA) rows(r0, k int) *qpackedA {
	kp := (k + 3) &^ 3
	q := &qpackedA{data: p.data[r0*kp:], rowsum: p.rowsum[r0:]}
	if p.sa != nil {
		q.sa, q.roff, q.rk, q.rv = p.sa[r0*kp:], p.roff[r0:], p.rk, p.rv
	}
	return q
}

// qgemm computes c[i][j] (row stride ldc) = sum_k (a[i][k] - za[i]) *
// (b[k][j] - zb[j]) for the m rows of a (row stride lda) and the packed b;
// zb holds b's zero points as given (n values).
// pa, when not nil, is a packed once (packQA; a is then not read).
// epi, when not nil, turns each tile into float32 in place (c then holds
// float32 bits; its per-row values are numbered from a's first row).
func qgemm(ctx *opkernel.Ctx, m int, a []byte, aSigned bool, lda int, za []int32, pa *qpackedA, b *qpackedB, zb []int32, c []int32, ldc int, epi *qepi) {
	k, n := b.k, b.n
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		for i := 0; i < m; i++ {
			clear(c[i*ldc : i*ldc+n])
		}
		return
	}
	zbs := zb
	if !b.signed { // packed as b - 128
		zbs = make([]int32, n)
		for j := range zbs {
			zbs[j] = zb[j] - 128
		}
	}
	sa := 0
	if aSigned {
		sa = 1
	}
	const rowBlock = 64
	strips := (n + C.QG_NR - 1) / C.QG_NR
	rowChunks := (m + rowBlock - 1) / rowBlock
	threads := ctx.NumThreads()
	// split the strips too when there are fewer row blocks than workers
	stripChunks := 1
	if rowChunks < 2*threads && int64(m)*int64(n)*int64(k) >= minParallelFMAs {
		stripChunks = min(strips, (2*threads+rowChunks-1)/rowChunks)
	}
	work := int64(m) * int64(n) * int64(k)
	grain := 1
	if work < minParallelFMAs {
		grain = rowChunks * stripChunks
	}
	opkernel.ParallelFor(ctx, rowChunks*stripChunks, grain, func(s, e int) {
		for u := s; u < e; u++ {
			rc, sc := u/stripChunks, u%stripChunks
			i0 := rc * rowBlock
			rows := min(rowBlock, m-i0)
			s0, s1 := sc*strips/stripChunks, (sc+1)*strips/stripChunks
			if s0 == s1 {
				continue
			}
			var ap *C.uint8_t
			var ar *C.int32_t
			var ar0 *C.uint8_t
			if pa != nil {
				kp := (k + 3) &^ 3
				ap, ar = (*C.uint8_t)(unsafe.Pointer(&pa.data[i0*kp])), (*C.int32_t)(unsafe.Pointer(&pa.rowsum[i0]))
			} else {
				ar0 = (*C.uint8_t)(unsafe.Pointer(&a[i0*lda]))
			}
			he, es, esm, eb, ebm, er := epi.args(i0)
			qo, qc, qb, qz, qlo, qhi, qs := epi.qargs(i0)
			ssa, sro, srk, srv := pa.split(i0, k)
			C.gk_qgemm_e(C.int(rows), C.int(k), C.int(n), ar0, C.int(sa), C.int(lda),
				(*C.int32_t)(unsafe.Pointer(&za[i0])), (*C.int8_t)(unsafe.Pointer(&b.data[0])),
				(*C.int32_t)(unsafe.Pointer(&b.colsum[0])), (*C.int32_t)(unsafe.Pointer(&zbs[0])), C.int(s0), C.int(s1),
				(*C.int32_t)(unsafe.Pointer(&c[i0*ldc])), C.int(ldc), ap, ar, he, es, esm, eb, ebm, er, qo, qc, qb, qz, qlo, qhi, qs,
				ssa, sro, srk, srv)
		}
	})
}

// zeroPoints reads an optional zero-point tensor as int32s (nil: none).
func zeroPoints(t *ir.Tensor) ([]int32, error) {
	if t == nil || t.NumElements() == 0 {
		return nil, nil
	}
	switch t.DType {
	case ir.Uint8:
		out := make([]int32, len(t.Data))
		for i, v := range t.Data {
			out[i] = int32(v)
		}
		return out, nil
	case ir.Int8:
		out := make([]int32, len(t.Data))
		for i, v := range t.I8() {
			out[i] = int32(v)
		}
		return out, nil
	}
	return nil, fmt.Errorf("zero point dtype %s (uint8 or int8)", t.DType)
}

// spread returns the per-index values of zp for count indices of which a
// matrix has per: one value (per tensor), per values (repeated), or count.
func spread(zp []int32, per, count int) ([]int32, bool) {
	out := make([]int32, count)
	switch {
	case len(zp) == 0:
	case len(zp) == 1:
		for i := range out {
			out[i] = zp[0]
		}
	case per > 0 && len(zp) == per && count%per == 0:
		for i := range out {
			out[i] = zp[i%per]
		}
	case len(zp) == count:
		copy(out, zp)
	default:
		return nil, false
	}
	return out, true
}

// int8Signed says whether an 8-bit operand is int8 (false: uint8).
func int8Signed(n *ir.Node, t *ir.Tensor, what string) (bool, error) {
	switch t.DType {
	case ir.Uint8:
		return false, nil
	case ir.Int8:
		return true, nil
	}
	return false, opkernel.Unsupportedf(n, "%s dtype %s (uint8 or int8)", what, t.DType)
}

type qpackKey struct{ b *ir.Tensor }

// packedMatMulB is a constant 2-D B packed once per session.
func packedMatMulB(p *opkernel.Prep, b *ir.Tensor) *qpackedB {
	k, nn := int(b.Shape[0]), int(b.Shape[1])
	return p.Once(qpackKey{b}, func() any {
		w := packQB(b.Data, b.DType == ir.Int8, k, nn, nn)
		p.Weights++
		p.WeightBytes += int64(len(w.data))
		return w
	}).(*qpackedB)
}

// prepareQMatMul packs a constant 2-D B (input bi) once per session.
func prepareQMatMul(p *opkernel.Prep, n *ir.Node, bi int, run opkernel.Func) (opkernel.Func, error) {
	bv := n.Input(bi)
	if bv == nil || bv.Const == nil || len(bv.Const.Shape) != 2 || (bv.Const.DType != ir.Uint8 && bv.Const.DType != ir.Int8) {
		return nil, nil
	}
	b := bv.Const
	pb := packedMatMulB(p, b)
	return func(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
		if len(in) <= bi || in[bi] != b {
			return run(ctx, n, in, out)
		}
		return qmatmul(ctx, n, in, out, bi, pb)
	}, nil
}

func matMulInteger(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	return qmatmul(ctx, n, in, out, 1, nil)
}

func qlinearMatMul(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	return qmatmul(ctx, n, in, out, 3, nil)
}

// qmatmul runs MatMulInteger (bi = 1: A, B, a_zero_point?, b_zero_point?)
// or QLinearMatMul (bi = 3: a, a_scale, a_zero_point, b, b_scale,
// b_zero_point, y_scale, y_zero_point); pb is B packed at load, or nil.
func qmatmul(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor, bi int, pb *qpackedB) error {
	return qmatmulEpi(ctx, n, in, out, bi, pb, nil)
}

// qmatmulEpi is qmatmul; epi, for a MatMulInteger only, makes y float32:
// epi's dequantizing epilogue of the sums (per-column values by column of
// B).
func qmatmulEpi(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor, bi int, pb *qpackedB, epi *qepi) error {
	if err := need(n, in, bi+1); err != nil {
		return err
	}
	qlinear := bi == 3
	a, b, y := in[0], in[bi], out[0]
	azpT, bzpT := input(in, 2), input(in, 3)
	if qlinear {
		if err := need(n, in, 8); err != nil {
			return err
		}
		bzpT = in[5]
	}
	aSigned, err := int8Signed(n, a, "a")
	if err != nil {
		return err
	}
	bSigned, err := int8Signed(n, b, "b")
	if err != nil {
		return err
	}
	p, err := planMatMul(a.Shape, b.Shape, false, false)
	if err != nil {
		return errf(n, "%v", err)
	}
	if !slices.Equal(p.outShape, y.Shape) {
		return errf(n, "output %v, expected %v", y.Shape, p.outShape)
	}
	azp, err := zeroPoints(azpT)
	if err != nil {
		return errf(n, "%v", err)
	}
	bzp, err := zeroPoints(bzpT)
	if err != nil {
		return errf(n, "%v", err)
	}
	// per-row zero points over every row of A, per-column over every column of B
	aRows := int(a.NumElements()) / max(p.lda, 1)
	if len(a.Shape) == 1 {
		aRows = 1
	}
	bMats := int(b.NumElements()) / max(p.bSize, 1)
	za, ok := spread(azp, rowsOf(a), aRows)
	if !ok {
		return errf(n, "a_zero_point has %d elements for a %v", len(azp), a.Shape)
	}
	zb, ok := spread(bzp, p.n, bMats*p.n)
	if !ok {
		return errf(n, "b_zero_point has %d elements for b %v", len(bzp), b.Shape)
	}
	mn := p.m * p.n
	acc := slice[int32](y)
	if qlinear { // int32 accumulators from the scratch pool
		sp := getF32(int(y.NumElements()))
		defer putF32(sp)
		acc = unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(*sp))), len(*sp))
	}
	for t := 0; t < p.batch; t++ {
		ao, bo := t*p.aSize, t*p.bSize
		if p.aOff != nil {
			ao, bo = p.aOff[t], p.bOff[t]
		}
		pbt := pb
		if pbt == nil {
			pbt = packQB(b.Data[bo:], bSigned, p.k, p.n, p.ldb)
		}
		bm := bo / max(p.bSize, 1)
		qgemm(ctx, p.m, a.Data[ao:], aSigned, p.lda, za[ao/max(p.lda, 1):], nil, pbt, zb[bm*p.n:(bm+1)*p.n], acc[t*mn:], p.n, epi)
	}
	if !qlinear {
		return nil
	}
	mult, perCol, err := qlinearMultipliers(n, in[1], in[4], in[6], p.n)
	if err != nil {
		return err
	}
	yzp, ySigned, err := outputQuant(n, in[7], y)
	if err != nil {
		return err
	}
	rows := len(acc) / max(p.n, 1)
	opkernel.ParallelFor(ctx, rows, max(1, 4096/max(p.n, 1)), func(s, e int) {
		for r := s; r < e; r++ {
			requant(acc[r*p.n:(r+1)*p.n], mult, perCol, yzp, ySigned, y.Data[r*p.n:])
		}
	})
	return nil
}

// outputQuant reads y_zero_point (one value) and y's signedness.
func outputQuant(n *ir.Node, zp, y *ir.Tensor) (int32, bool, error) {
	v, err := zeroPoints(zp)
	if err != nil || len(v) != 1 {
		return 0, false, errf(n, "y_zero_point must be one uint8 or int8 value")
	}
	signed, err := int8Signed(n, y, "y")
	return v[0], signed, err
}

// rowsOf is the row count of one matrix of a (1 for a vector).
func rowsOf(a *ir.Tensor) int {
	if len(a.Shape) < 2 {
		return 1
	}
	return int(a.Shape[len(a.Shape)-2])
}

// scalars reads a float32 or float16 scale tensor as float32s.
func scalars(t *ir.Tensor) ([]float32, error) {
	switch {
	case t.DType == ir.Float32:
		return t.F32(), nil
	case opkernel.IsHalf(t.DType):
		return opkernel.HalfToF32(t).F32(), nil
	}
	return nil, fmt.Errorf("scale dtype %s", t.DType)
}

// qlinearMultipliers is a_scale * b_scale[j] / y_scale in float32, per
// column (or output channel) when b_scale has cols values.
func qlinearMultipliers(n *ir.Node, as, bs, ys *ir.Tensor, cols int) ([]float32, bool, error) {
	a, err := scalars(as)
	if err != nil {
		return nil, false, errf(n, "%v", err)
	}
	b, err := scalars(bs)
	if err != nil {
		return nil, false, errf(n, "%v", err)
	}
	y, err := scalars(ys)
	if err != nil {
		return nil, false, errf(n, "%v", err)
	}
	if len(a) != 1 || len(y) != 1 || (len(b) != 1 && len(b) != cols) {
		return nil, false, opkernel.Unsupportedf(n, "scales with %d, %d and %d values (per tensor, or b per column)", len(a), len(b), len(y))
	}
	m := make([]float32, len(b))
	for j, v := range b {
		m[j] = a[0] * v / y[0]
	}
	return m, len(b) > 1, nil
}

// requant writes y[j] = saturate(round_half_even(acc[j] * mult) + zp).
// requantBias is requant (one multiplier) of acc + bias.
func requantBias(acc []int32, bias int32, mult []float32, zp int32, signed bool, y []byte) {
	if len(acc) == 0 {
		return
	}
	sg, lo, hi := 0, 0, 255
	if signed {
		sg, lo, hi = 1, -128, 127
	}
	C.gk_requant_b((*C.int32_t)(unsafe.Pointer(&acc[0])), C.int32_t(bias), C.int(len(acc)), (*C.float)(unsafe.Pointer(&mult[0])), 0,
		C.int32_t(zp), C.int(lo), C.int(hi), (*C.uint8_t)(unsafe.Pointer(&y[0])), C.int(sg))
}

func requant(acc []int32, mult []float32, perCol bool, zp int32, signed bool, y []byte) {
	if len(acc) == 0 {
		return
	}
	pc, sg, lo, hi := 0, 0, 0, 255
	if perCol {
		pc = 1
	}
	if signed {
		sg, lo, hi = 1, -128, 127
	}
	C.gk_requant((*C.int32_t)(unsafe.Pointer(&acc[0])), C.int(len(acc)), (*C.float)(unsafe.Pointer(&mult[0])), C.int(pc),
		C.int32_t(zp), C.int(lo), C.int(hi), (*C.uint8_t)(unsafe.Pointer(&y[0])), C.int(sg))
}

func convInteger(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	return qconv(ctx, n, in, out, false, nil, nil)
}

func qlinearConv(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	return qconv(ctx, n, in, out, true, nil, nil)
}

type qpackAKey struct{ w *ir.Tensor }

// packedConvWeight is the constant convolution weight w [M, ...] packed
// once per session as the A operand of the convolution GEMM.
func packedConvWeight(p *opkernel.Prep, w *ir.Tensor) *qpackedA {
	m := int(w.Shape[0])
	k := int(w.NumElements()) / max(m, 1)
	return p.Once(qpackAKey{w}, func() any {
		a := packQA(w.Data, w.DType == ir.Int8, m, k)
		a.dir = newDirectW(w)
		p.Weights++
		p.WeightBytes += int64(len(a.data))
		return a
	}).(*qpackedA)
}

// cbool is b as a C flag.
func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// prepareQConv packs a constant weight (input wi) once per session as the
// A operand of the convolution GEMM.
func prepareQConv(p *opkernel.Prep, n *ir.Node, wi int, qlinear bool) (opkernel.Func, error) {
	wv := n.Input(wi)
	if wv == nil || wv.Const == nil || len(wv.Const.Shape) < 3 || (wv.Const.DType != ir.Uint8 && wv.Const.DType != ir.Int8) {
		return nil, nil
	}
	w := wv.Const
	pa := packedConvWeight(p, w)
	return func(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
		if len(in) <= wi || in[wi] != w {
			return qconv(ctx, n, in, out, qlinear, nil, nil)
		}
		return qconv(ctx, n, in, out, qlinear, pa, nil)
	}, nil
}

// qconv runs ConvInteger (x, w, x_zero_point?, w_zero_point?) or
// QLinearConv (x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale,
// y_zero_point, B?); pa is w packed at load, or nil. epi, for a ConvInteger
// only, makes y float32: epi's dequantizing epilogue of the sums (rows are
// output channels).
func qconv(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor, qlinear bool, pa *qpackedA, epi *qepi) error {
	wi, xzi, wzi := 1, 2, 3
	if qlinear {
		if err := need(n, in, 8); err != nil {
			return err
		}
		wi, xzi, wzi = 3, 2, 5
	} else if err := need(n, in, 2); err != nil {
		return err
	}
	x, w, y := in[0], in[wi], out[0]
	xSigned, err := int8Signed(n, x, "x")
	if err != nil {
		return err
	}
	wSigned, err := int8Signed(n, w, "w")
	if err != nil {
		return err
	}
	nb, c, m, group, g, err := convGeometry(n, x, w)
	if err != nil {
		return err
	}
	if err := g.checkOut(n, y, nb, m); err != nil {
		return err
	}
	xzp, err := zeroPoints(input(in, xzi))
	if err != nil || len(xzp) > 1 {
		return errf(n, "x_zero_point must be one uint8 or int8 value")
	}
	wzpv, err := zeroPoints(input(in, wzi))
	if err != nil {
		return errf(n, "%v", err)
	}
	wzp, ok := spread(wzpv, m, m)
	if !ok {
		return errf(n, "w_zero_point has %d values for %d output channels", len(wzpv), m)
	}
	xz := int32(0)
	if len(xzp) == 1 {
		xz = xzp[0]
	}
	cg, mg := c/group, m/group
	kk, ov, iv := cg*g.kVol(), g.outVol(), g.inVol()
	acc := slice[int32](y)
	if qlinear { // int32 accumulators from the scratch pool
		sp := getF32(int(y.NumElements()))
		defer putF32(sp)
		acc = unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(*sp))), len(*sp))
	}
	var geo [18]C.int
	for i := 0; i < 3; i++ {
		geo[i], geo[3+i], geo[6+i], geo[9+i], geo[12+i], geo[15+i] = C.int(g.in[i]), C.int(g.k[i]), C.int(g.s[i]), C.int(g.pb[i]), C.int(g.d[i]), C.int(g.out[i])
	}
	xsg := cbool(xSigned)
	depthwise := cg == 1 && mg == 1
	// a QLinearConv requantizes in its kernels' tile (or depthwise row)
	// epilogue
	finish := qlinear
	if qlinear && kk > 0 && ov > 0 {
		if epi, err = requantEpilogue(n, in, y, acc, m); err != nil {
			return err
		}
		finish = false
	}
	vnniDW := qlinear && depthwise && ov > qdwVNNIMinPlane && epi != nil && qdwVNNI(&geo, w, wSigned, wzp, m)
	if !vnniDW && depthwise && kk > 0 && ov > 0 && kk <= 256 && g.rank == 2 && ov <= dwFloatMaxPlane && (qlinear || epi == nil) {
		return qdwFloat(ctx, n, in, y, qlinear, x, xSigned, xz, w, wSigned, wzp, g, nb, c, m, group, iv, ov, acc)
	}
	if depthwise && kk > 0 && ov > 0 {
		// depthwise: a GEMM of one row per channel is mostly packing; the
		// window sums directly give the same integers
		wsg := cbool(wSigned)
		he, es, esm, eb, ebm, er := epi.args(0)
		qo, qc, qb, qz, qlo, qhi, qs := epi.qargs(0)
		for bi := 0; bi < nb; bi++ {
			xb, yb := x.Data[bi*c*iv:], acc[bi*m*ov:]
			opkernel.ParallelFor(ctx, m, 1, func(s, e int) {
				C.gk_qdw_conv_e((*C.uint8_t)(unsafe.Pointer(&xb[0])), xsg, (*C.uint8_t)(unsafe.Pointer(&w.Data[0])), wsg,
					(*C.int32_t)(unsafe.Pointer(&wzp[0])), C.int(xz), &geo[0], C.int(s), C.int(e), (*C.int32_t)(unsafe.Pointer(&yb[0])),
					he, es, esm, eb, ebm, er, qo, qc, qb, qz, qlo, qhi, qs)
			})
		}
		return qconvEpilogue(ctx, n, in, y, acc, finish, nb, m, ov)
	}
	if kk > 0 && g.rank <= 2 && g.out[2] >= 16 && C.gk_qconv_vnni_ok() != 0 && C.gk_qgemm_amx_ok() != 0 && kk < amxMinK {
		qconvDirectVNNI(ctx, x.Data, xSigned, w.Data, wSigned, wzp, xz, &geo, nb, c, m, group, iv, ov, acc, epi)
		return qconvEpilogue(ctx, n, in, y, acc, finish, nb, m, ov)
	}
	if kk > 0 && g.rank <= 2 && pa != nil && pa.dir != nil {
		qconvDirectAVX2(ctx, x.Data, xSigned, wSigned, wzp, xz, pa.dir, &geo, nb, c, m, group, iv, ov, acc, epi)
		return qconvEpilogue(ctx, n, in, y, acc, finish, nb, m, ov)
	}
	if kk > 0 && ov >= 2*qconvBlock {
		qconvBlocked(ctx, x.Data, xSigned, w.Data, wSigned, wzp, xz, pa, &geo, nb, c, m, group, kk, iv, ov, acc, epi)
		return qconvEpilogue(ctx, n, in, y, acc, finish, nb, m, ov)
	}
	zbs := make([]int32, ov)
	for i := range zbs {
		zbs[i] = xz
	}
	// the unfolded input and its column sums from the scratch pool: a fresh
	// megabyte per call was a quarter of a small conv's time in the GC
	psize := max(int(C.gk_qgemm_packed_size(C.int(kk), C.int(ov))), 1)
	scratch := getF32((psize+3)/4 + max(ov, 1))
	defer putF32(scratch)
	// gk_qconv_pack writes every byte of its strips (tail lanes and K padding
	// included) and every column sum, so the lent buffer needs no clearing
	raw := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(*scratch))), 4*len(*scratch))
	pb := &qpackedB{k: kk, n: ov, signed: xSigned,
		data:   unsafe.Slice((*int8)(unsafe.Pointer(&raw[0])), psize),
		colsum: unsafe.Slice((*int32)(unsafe.Pointer(&raw[4*((psize+3)/4)])), max(ov, 1))}
	strips := (ov + C.QG_NR - 1) / C.QG_NR
	threads := ctx.NumThreads()
	for bi := 0; bi < nb; bi++ {
		for gi := 0; gi < group; gi++ {
			xg := x.Data[(bi*c+gi*cg)*iv:]
			if kk == 0 || ov == 0 {
				continue
			}
			// unfold x straight into the packed layout (every byte), by strips of positions
			opkernel.ParallelFor(ctx, strips, max(1, strips/(4*threads)), func(s, e int) {
				C.gk_qconv_pack((*C.uint8_t)(unsafe.Pointer(&xg[0])), xsg, C.int(cg), &geo[0], C.uint8_t(byte(xz)),
					C.int(s*C.QG_NR), C.int(min(e*C.QG_NR, ov)), (*C.int8_t)(unsafe.Pointer(&pb.data[0])), (*C.int32_t)(unsafe.Pointer(&pb.colsum[0])))
			})
			// weights [mg, kk] are A; the columns are B
			var pag *qpackedA
			if pa != nil {
				pag = pa.rows(gi*mg, kk)
			}
			qgemm(ctx, mg, w.Data[gi*mg*kk:], wSigned, kk, wzp[gi*mg:], pag, pb, zbs, acc[(bi*m+gi*mg)*ov:], ov, epi.rows(gi*mg))
		}
	}
	return qconvEpilogue(ctx, n, in, y, acc, finish, nb, m, ov)
}

// amxMinK is the depth (input channels x window) from which a convolution
// runs as unfold-and-GEMM on AMX tiles rather than the direct VNNI kernel
// (Sapphire Rapids, 1 thread: resnet18_bn's int8 model 15.6 -> 11.4 ms;
// at K 16-64, mobilenet_v2_bn's shallow 1x1 convolutions, the tiles' 64-deep
// k steps are mostly padding and the direct kernel stays faster). Without
// AMX the direct VNNI kernel never runs: against unfold-and-GEMM on 4x64
// VNNI tiles it was slower on every convolution of resnet18_bn's and
// mobilenet_v2_bn's int8 models (AMD EPYC with AVX-512 VNNI, 1 thread:
// resnet18_bn 16.9 -> 9.0 ms, a 1x1 on 28x28 0.128 -> 0.024 ms).
const amxMinK = 128

// qconvBlock is the output positions unfolded and multiplied at once by
// qconvBlocked: 256 columns of a 360-deep unfold are 92 KB, which stay in
// L2 between the unfold and the GEMM (unfolding the whole plane first wrote
// 1.8 MB for unet_synth_dynq's 40-channel 3x3 conv on 64x80 and read it
// back from memory).
const qconvBlock = 256

// qconvBlocked is the unfold-and-GEMM convolution by blocks of qconvBlock
// output positions: each block is unfolded into a worker's buffer and
// multiplied by all the group's weights right away; blocks run in
// parallel.
func qconvBlocked(ctx *opkernel.Ctx, x []byte, xSigned bool, w []byte, wSigned bool, wzp []int32, xz int32, pa *qpackedA,
	geo *[18]C.int, nb, c, m, group, kk, iv, ov int, acc []int32, epi *qepi) {
	cg, mg := c/group, m/group
	xsg, wsg := cbool(xSigned), cbool(wSigned)
	// packed uint8 columns are b - 128: their zero point too
	zb := xz
	if !xSigned {
		zb -= 128
	}
	zbs := make([]int32, qconvBlock)
	for i := range zbs {
		zbs[i] = zb
	}
	blocks := (ov + qconvBlock - 1) / qconvBlock
	psize := int(C.gk_qgemm_packed_size(C.int(kk), C.int(qconvBlock)))
	for bi := 0; bi < nb; bi++ {
		for gi := 0; gi < group; gi++ {
			xg := x[(bi*c+gi*cg)*iv:]
			var ap *C.uint8_t
			var ar *C.int32_t
			var a0 *C.uint8_t
			var pag *qpackedA
			if pa != nil {
				pag = pa.rows(gi*mg, kk)
				ap, ar = (*C.uint8_t)(unsafe.Pointer(&pag.data[0])), (*C.int32_t)(unsafe.Pointer(&pag.rowsum[0]))
			} else {
				a0 = (*C.uint8_t)(unsafe.Pointer(&w[gi*mg*kk]))
			}
			he, es, esm, eb, ebm, er := epi.rows(gi * mg).args(0)
			qo, qc, qb, qz, qlo, qhi, qs := epi.rows(gi * mg).qargs(0)
			cg0 := acc[(bi*m+gi*mg)*ov:]
			ssa, sro, srk, srv := pag.split(0, kk)
			opkernel.ParallelFor(ctx, blocks, 1, func(s, e int) {
				scratch := getF32((psize+3)/4 + qconvBlock)
				defer putF32(scratch)
				raw := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(*scratch))), 4*len(*scratch))
				bp := (*C.int8_t)(unsafe.Pointer(&raw[0]))
				cs := (*C.int32_t)(unsafe.Pointer(&raw[4*((psize+3)/4)]))
				for blk := s; blk < e; blk++ {
					p0, p1 := blk*qconvBlock, min(ov, (blk+1)*qconvBlock)
					C.gk_qconv_pack_local((*C.uint8_t)(unsafe.Pointer(&xg[0])), xsg, C.int(cg), &geo[0], C.uint8_t(byte(xz)),
						C.int(p0), C.int(p1), bp, cs)
					nc := p1 - p0
					C.gk_qgemm_e(C.int(mg), C.int(kk), C.int(nc), a0, wsg, C.int(kk),
						(*C.int32_t)(unsafe.Pointer(&wzp[gi*mg])), bp, cs, (*C.int32_t)(unsafe.Pointer(&zbs[0])),
						0, C.int((nc+C.QG_NR-1)/C.QG_NR), (*C.int32_t)(unsafe.Pointer(&cg0[p0])), C.int(ov), ap, ar,
						he, es, esm, eb, ebm, er, qo, qc, qb, qz, qlo, qhi, qs, ssa, sro, srk, srv)
				}
			})
		}
	}
}

// requantEpilogue is a QLinearConv's requantization as the kernels' tile
// epilogue (gk_qepi's qout form): acc + B, times x_scale*w_scale/y_scale
// per output channel, rounded half to even, plus y_zero_point, saturated;
// the bytes go to y at the sums' indices in acc.
func requantEpilogue(n *ir.Node, in []*ir.Tensor, y *ir.Tensor, acc []int32, m int) (*qepi, error) {
	e := &qepi{bmode: C.GK_QEPI_NONE, qout: y.Data, cbase: acc}
	if bt := input(in, 8); bt != nil && bt.NumElements() > 0 {
		if bt.DType != ir.Int32 || bt.NumElements() != int64(m) {
			return nil, errf(n, "B must be int32 with %d values, got %s %v", m, bt.DType, bt.Shape)
		}
		e.qbias = bt.I32()
	}
	mult, perCh, err := qlinearMultipliers(n, in[1], in[4], in[6], m)
	if err != nil {
		return nil, err
	}
	e.scale, e.smode = mult, C.GK_QEPI_SCALAR
	if perCh {
		e.smode = C.GK_QEPI_PER_ROW
	}
	yzp, ySigned, err := outputQuant(n, in[7], y)
	if err != nil {
		return nil, err
	}
	e.qzp, e.qsigned, e.qlo, e.qhi = int(yzp), ySigned, 0, 255
	if ySigned {
		e.qlo, e.qhi = -128, 127
	}
	return e, nil
}
