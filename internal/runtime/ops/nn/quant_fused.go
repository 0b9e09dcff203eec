package nn

// The dequantizing chain of onnxruntime's quantize_dynamic models,
// ConvInteger -> Cast(to float) -> Mul(x_scale * w_scale) -> Add(bias)
// [-> Relu], as one kernel: the integer sums of the ConvInteger, then per
// value y = (float)acc * scale, then + bias, then the Relu, each rounded as
// the separate op rounds it (no fused multiply-add), so the output is the
// chain's bit for bit. The runtime binds it at load time (runtime's
// quantchain.go); the model file keeps the plain ops.

/*
#include "qgemm.h"
*/
import "C"

import (
	"unsafe"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// qepi is a gk_qepi in Go memory (see qgemm.h): scale and bias with one
// value, one per row or one per column.
type qepi struct {
	scale        []float32
	smode, bmode int // C.GK_QEPI_*
	bias         []float32
	relu         int // gk_qepi's
	// the requantizing form (gk_qepi's qout): y's bytes, the int32 sums'
	// buffer they mirror index for index, the int32 bias per row (nil:
	// none), y's zero point, range and signedness
	qout          []byte
	cbase         []int32
	qbias         []int32
	qzp, qlo, qhi int
	qsigned       bool
}

// qargs are the requantizing fields of e for a call whose first row is row
// r0 of e's rows (all zero unless e requantizes).
func (e *qepi) qargs(r0 int) (qo *C.uint8_t, qc *C.int32_t, qb *C.int32_t, qz, qlo, qhi, qs C.int) {
	if e == nil || e.qout == nil {
		return nil, nil, nil, 0, 0, 0, 0
	}
	qo, qc = (*C.uint8_t)(unsafe.Pointer(&e.qout[0])), (*C.int32_t)(unsafe.Pointer(&e.cbase[0]))
	if e.qbias != nil {
		qb = (*C.int32_t)(unsafe.Pointer(&e.qbias[r0]))
	}
	return qo, qc, qb, C.int(e.qzp), C.int(e.qlo), C.int(e.qhi), cbool(e.qsigned)
}

// args are the C arguments of e for a call whose first row is row r0 of
// e's rows (has_e 0 when e is nil).
func (e *qepi) args(r0 int) (has C.int, s *C.float, sm C.int, b *C.float, bm C.int, relu C.int) {
	if e == nil {
		return 0, nil, 0, nil, 0, 0
	}
	so := 0
	if e.smode == C.GK_QEPI_PER_ROW {
		so = r0
	}
	s = (*C.float)(unsafe.Pointer(&e.scale[so]))
	if e.bmode != C.GK_QEPI_NONE {
		bo := 0
		if e.bmode == C.GK_QEPI_PER_ROW {
			bo = r0
		}
		b = (*C.float)(unsafe.Pointer(&e.bias[bo]))
	}
	return 1, s, C.int(e.smode), b, C.int(e.bmode), C.int(e.relu)
}

// rows is e for the rows from r0 on (nil stays nil).
func (e *qepi) rows(r0 int) *qepi {
	if e == nil || r0 == 0 {
		return e
	}
	f := *e
	if f.smode == C.GK_QEPI_PER_ROW {
		f.scale = f.scale[r0:]
	}
	if f.bmode == C.GK_QEPI_PER_ROW {
		f.bias = f.bias[r0:]
	}
	if f.qbias != nil {
		f.qbias = f.qbias[r0:]
	}
	return &f
}

// ChannelBroadcast says how a tensor of shape s broadcasts against an
// output of rank rank whose dim 1 has ch channels: as one value (every dim
// 1), as one value per channel (every dim 1 but the one aligned with dim 1,
// which is ch), or otherwise (ok false): the shapes the fused chain takes.
func ChannelBroadcast(s []int64, rank int, ch int64) (perChannel, ok bool) {
	if len(s) > rank {
		return false, false
	}
	for i, d := range s {
		at := rank - len(s) + i // the output dim this one aligns with
		switch {
		case d == 1:
		case at == 1 && d == ch:
			perChannel = true
		default:
			return false, false
		}
	}
	return perChannel, true
}

// ColumnBroadcast is ChannelBroadcast for a MatMul's output: one value, or
// one per column (only the last dim, n, other than 1).
func ColumnBroadcast(s []int64, rank int, n int64) (perColumn, ok bool) {
	if len(s) > rank {
		return false, false
	}
	for i, d := range s {
		switch {
		case d == 1:
		case i == len(s)-1 && d == n:
			perColumn = true
		default:
			return false, false
		}
	}
	return perColumn, true
}

// chainValues reads a float32 tensor broadcast per channel or column (as
// shape says) or per tensor, with its gk_qepi mode (per, when one value
// per channel or column).
func chainValues(n *ir.Node, t *ir.Tensor, rank int, ch int64, shape func([]int64, int, int64) (bool, bool), per int, what string) ([]float32, int, error) {
	if t.DType != ir.Float32 {
		return nil, 0, errf(n, "%s dtype %s (float32)", what, t.DType)
	}
	each, ok := shape(t.Shape, rank, ch)
	if !ok {
		return nil, 0, errf(n, "%s shape %v is neither one value nor one per channel of %d", what, t.Shape, ch)
	}
	if each {
		return t.F32(), per, nil
	}
	return t.F32()[:1], C.GK_QEPI_SCALAR, nil
}

// chainEpilogue reads a fused chain's scale factors and bias (inputs
// ChainScaleA, ChainScaleB, ChainBias) into its epilogue.
func chainEpilogue(n *ir.Node, in []*ir.Tensor, rank int, ch int64, shape func([]int64, int, int64) (bool, bool), per, relu int) (*qepi, error) {
	e := &qepi{relu: relu, bmode: C.GK_QEPI_NONE}
	sa, sam, err := chainValues(n, in[ChainScaleA], rank, ch, shape, per, "scale")
	if err != nil {
		return nil, err
	}
	e.scale, e.smode = sa, sam
	if t := in[ChainScaleB]; t != nil {
		sb, sbm, err := chainValues(n, t, rank, ch, shape, per, "scale")
		if err != nil {
			return nil, err
		}
		// the kernel's own Mul of the two factors, as the Mul op
		// broadcasts them
		prod := make([]float32, max(len(sa), len(sb)))
		for i := range prod {
			prod[i] = sa[min(i, len(sa)-1)] * sb[min(i, len(sb)-1)]
		}
		e.scale, e.smode = prod, max(sam, sbm)
	}
	if t := in[ChainBias]; t != nil {
		b, bm, err := chainValues(n, t, rank, ch, shape, per, "bias")
		if err != nil {
			return nil, err
		}
		e.bias, e.bmode = b, bm
	}
	return e, nil
}

// Fused-chain node inputs: the ConvInteger's four (absent ones nil), then
// the scale factor(s) and the bias.
const (
	ChainScaleA = 4 // the Mul's other operand (or the first factor of it)
	ChainScaleB = 5 // a second factor (x_scale * w_scale in the kernel), or nil
	ChainBias   = 6 // the Add's other operand, or nil (no Add)
	ChainInputs = 7
)

// PrepareConvIntegerChain binds the fused chain: n has a ConvInteger's
// attributes and ChainInputs inputs, its one output is the chain's float32
// result; relu is the last step (gk_qepi's relu: 0 none, 1 the ReLU op,
// 2 a fused kernel's Maximum(x, 0)). The constant weight is packed once, as for
// ConvInteger.
func PrepareConvIntegerChain(p *opkernel.Prep, n *ir.Node, relu int) (opkernel.Func, error) {
	var pa *qpackedA
	var pw *ir.Tensor
	if wv := n.Input(1); wv != nil && wv.Const != nil && len(wv.Const.Shape) >= 3 && (wv.Const.DType == ir.Uint8 || wv.Const.DType == ir.Int8) {
		pw = wv.Const
		pa = packedConvWeight(p, pw)
	}
	return func(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
		if len(in) != ChainInputs || len(out) != 1 {
			return errf(n, "fused chain: %d inputs, %d outputs", len(in), len(out))
		}
		y := out[0]
		if y.DType != ir.Float32 {
			return errf(n, "fused chain: output dtype %s", y.DType)
		}
		if in[1] == nil || len(in[1].Shape) < 1 {
			return errf(n, "fused chain: no weight")
		}
		e, err := chainEpilogue(n, in, len(y.Shape), in[1].Shape[0], ChannelBroadcast, C.GK_QEPI_PER_ROW, relu)
		if err != nil {
			return err
		}
		cin := in[:4]
		w := pa
		if in[1] != pw {
			w = nil
		}
		return qconv(ctx, n, cin, out, false, w, e)
	}, nil
}

// PrepareMatMulIntegerChain is PrepareConvIntegerChain for a MatMulInteger
// (inputs A, B, a_zero_point?, b_zero_point?, then the chain's): scale and
// bias per tensor or per column of B; a constant 2-D B is packed once.
func PrepareMatMulIntegerChain(p *opkernel.Prep, n *ir.Node, relu int) (opkernel.Func, error) {
	var pb *qpackedB
	var cb *ir.Tensor
	if bv := n.Input(1); bv != nil && bv.Const != nil && len(bv.Const.Shape) == 2 && (bv.Const.DType == ir.Uint8 || bv.Const.DType == ir.Int8) {
		cb = bv.Const
		pb = packedMatMulB(p, cb)
	}
	return func(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
		if len(in) != ChainInputs || len(out) != 1 {
			return errf(n, "fused chain: %d inputs, %d outputs", len(in), len(out))
		}
		y := out[0]
		if y.DType != ir.Float32 || len(y.Shape) < 2 || in[1] == nil || len(in[1].Shape) != 2 {
			return errf(n, "fused chain: output %s %v, b %v", y.DType, y.Shape, in[1])
		}
		e, err := chainEpilogue(n, in, len(y.Shape), in[1].Shape[1], ColumnBroadcast, C.GK_QEPI_PER_COL, relu)
		if err != nil {
			return err
		}
		b := pb
		if in[1] != cb {
			b = nil
		}
		return qmatmulEpi(ctx, n, in[:4], out, 1, b, e)
	}, nil
}
