package elementwise

import (
	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
	"slices"
)

func softmaxOp(logsm bool) opkernel.Func {
	return func(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
		if done, err := sameAsInput(ctx, n, in, out, softmaxOp(logsm)); done || err != nil {
			return err
		}
		x, y := in[0], out[0]
		rank := len(x.Shape)
		if rank == 0 {
			// Softmax of a single element is 1 (log: 0).
			v := 1.0
			if logsm {
				v = 0
			}
			if x.DType.IsFloat() {
				y.PutFloat(0, v)
				return nil
			}
			return opkernel.Unsupportedf(n, "dtype %s", x.DType)
		}
		axis, err := normAxis(n, n.Attrs.Int("axis", -1), rank)
		if err != nil {
			return err
		}
		outer, k, inner := split3(x.Shape, axis)
		if outer*k*inner == 0 {
			return nil
		}
		switch x.DType {
		case ir.Float32:
			d, s := y.F32(), x.F32()
			if inner == 1 {
				opkernel.ParallelFor(ctx, outer, max(1, grain/(4*k)), func(lo, hi int) {
					f32SoftmaxRows(d[lo*k:hi*k], s[lo*k:hi*k], hi-lo, k, logsm)
				})
				return nil
			}
			softmaxGeneric(ctx, d, s, outer, k, inner, logsm)
		case ir.Float64:
			softmaxGeneric(ctx, y.F64(), x.F64(), outer, k, inner, logsm)
		default:
			return opkernel.Unsupportedf(n, "dtype %s", x.DType)
		}
		return nil
	}
}

func softmaxGeneric[T float](ctx *opkernel.Ctx, d, s []T, outer, k, inner int, logsm bool) {
	opkernel.ParallelFor(ctx, outer*inner, max(1, grain/(4*k)), func(lo, hi int) {
		for oi := lo; oi < hi; oi++ {
			base := (oi/inner)*k*inner + oi%inner
			softmaxStrided(d[base:], s[base:], k, inner, logsm)
		}
	})
}

// cumOp is ONNX CumSum (prod false) or CumProd (prod true): the running
// sums or products along axis (input 1); exclusive starts from 0 (1),
// reverse scans from the end.
func cumOp(prod bool) opkernel.Func {
	var f opkernel.Func
	f = func(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
		if err := checkArity(n, in, out, 2, 2, 1); err != nil {
			return err
		}
		x, y := in[0], out[0]
		if x.DType != y.DType || !slices.Equal(x.Shape, y.Shape) {
			return nodeErr(n, "input %s does not match output %s", x, y)
		}
		ax, err := in[1].Int64s()
		if err != nil || len(ax) != 1 {
			return nodeErr(n, "axis must be one integer, got %s", in[1])
		}
		if opkernel.IsHalf(x.DType) {
			w, flush := halfOut(y)
			if err := f(ctx, n, []*ir.Tensor{opkernel.HalfToF32(x), in[1]}, []*ir.Tensor{w}); err != nil {
				return err
			}
			flush()
			return nil
		}
		rank := max(len(x.Shape), 1)
		shape := x.Shape
		if len(shape) == 0 {
			shape = []int64{1}
		}
		axis, err := normAxis(n, ax[0], rank)
		if err != nil {
			return err
		}
		outer, k, inner := split3(shape, axis)
		sc := scan{outer: outer, k: k, inner: inner, excl: n.Attrs.Int("exclusive", 0) != 0,
			rev: n.Attrs.Int("reverse", 0) != 0, prod: prod}
		switch x.DType {
		case ir.Float32:
			cumScanT(sc, y.F32(), x.F32())
		case ir.Float64:
			cumScanT(sc, y.F64(), x.F64())
		case ir.Int8:
			cumScanT(sc, y.I8(), x.I8())
		case ir.Int16:
			cumScanT(sc, y.I16(), x.I16())
		case ir.Int32:
			cumScanT(sc, y.I32(), x.I32())
		case ir.Int64:
			cumScanT(sc, y.I64(), x.I64())
		case ir.Uint8:
			cumScanT(sc, y.U8(), x.U8())
		case ir.Uint16:
			cumScanT(sc, y.U16(), x.U16())
		case ir.Uint32:
			cumScanT(sc, y.U32(), x.U32())
		case ir.Uint64:
			cumScanT(sc, y.U64(), x.U64())
		default:
			return opkernel.Unsupportedf(n, "dtype %s", x.DType)
		}
		return nil
	}
	return f
}

// scan is the layout and mode of a scan over the middle dim of
// [outer, k, inner].
type scan struct {
	outer, k, inner int
	excl, rev, prod bool
}

// cumScanT scans the middle dim of [outer, k, inner]; the running sums
// (products) of one outer slice advance together over inner, which keeps
// access contiguous.
func cumScanT[T number](sc scan, d, s []T) {
	acc := make([]T, sc.inner)
	for o := 0; o < sc.outer; o++ {
		for j := range acc {
			acc[j] = 0
			if sc.prod {
				acc[j] = 1
			}
		}
		for step := 0; step < sc.k; step++ {
			i := step
			if sc.rev {
				i = sc.k - 1 - step
			}
			off := (o*sc.k + i) * sc.inner
			src, dst := s[off:off+sc.inner], d[off:off+sc.inner]
			if sc.excl {
				copy(dst, acc)
			}
			if sc.prod {
				for j, v := range src {
					acc[j] *= v
				}
			} else {
				for j, v := range src {
					acc[j] += v
				}
			}
			if !sc.excl {
				copy(dst, acc)
			}
		}
	}
}

func init() {
	opkernel.Register("Softmax", softmaxOp(false))
	opkernel.Register("LogSoftmax", softmaxOp(true))
	opkernel.Register("CumSum", cumOp(false))
}

// sameAsInput is the prologue of the one-input ops whose output has the
// input's dtype and shape (Softmax, LogSoftmax, Hardmax): it checks that,
// and runs a float16/bfloat16 input through f in float32 (done is then
// true: f has written the output).
func sameAsInput(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor, f opkernel.Func) (done bool, err error) {
	if err := checkArity(n, in, out, 1, 1, 1); err != nil {
		return true, err
	}
	x, y := in[0], out[0]
	if x.DType != y.DType || !slices.Equal(x.Shape, y.Shape) {
		return true, nodeErr(n, "input %s does not match output %s", x, y)
	}
	if !opkernel.IsHalf(x.DType) {
		return false, nil
	}
	w, flush := halfOut(y)
	if err := f(ctx, n, []*ir.Tensor{opkernel.HalfToF32(x)}, []*ir.Tensor{w}); err != nil {
		return true, err
	}
	flush()
	return true, nil
}
