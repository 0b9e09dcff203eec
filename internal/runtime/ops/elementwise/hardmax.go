package elementwise

import (
	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// CumProd (ONNX opset 26; cumOp in softmax.go), Hardmax, Shrink and Swish.

// Shrink and Swish are scalar float functions run by unary (unary.go
// registers every floatUnary entry); this runs before any init.
var _ = func() bool {
	floatUnary["Shrink"] = func(a ir.Attrs) func(float64) float64 {
		bias, lambd := a.Float("bias", 0), a.Float("lambd", 0.5)
		return func(x float64) float64 {
			switch {
			case x < -lambd:
				return x + bias
			case x > lambd:
				return x - bias
			}
			return 0
		}
	}
	floatUnary["Swish"] = func(a ir.Attrs) func(float64) float64 {
		alpha := a.Float("alpha", 1)
		return func(x float64) float64 { return x * sigmoid64(alpha*x) }
	}
	return true
}()

func init() {
	opkernel.Register("CumProd", cumOp(true))
	opkernel.Register("Hardmax", hardmax)
}

// hardmax is ONNX Hardmax (opset 13): 1 at the first maximum along axis,
// 0 elsewhere; a NaN counts as the maximum (numpy's argmax).
func hardmax(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if done, err := sameAsInput(ctx, n, in, out, hardmax); done || err != nil {
		return err
	}
	x, y := in[0], out[0]
	shape := x.Shape
	if len(shape) == 0 {
		shape = []int64{1}
	}
	axis, err := normAxis(n, n.Attrs.Int("axis", -1), len(shape))
	if err != nil {
		return err
	}
	outer, k, inner := split3(shape, axis)
	switch x.DType {
	case ir.Float32:
		hardmaxT(ctx, y.F32(), x.F32(), outer, k, inner)
	case ir.Float64:
		hardmaxT(ctx, y.F64(), x.F64(), outer, k, inner)
	default:
		return opkernel.Unsupportedf(n, "dtype %s", x.DType)
	}
	return nil
}

func hardmaxT[T float](ctx *opkernel.Ctx, d, s []T, outer, k, inner int) {
	opkernel.ParallelFor(ctx, outer*inner, max(1, grain/max(k, 1)), func(lo, hi int) {
		for oi := lo; oi < hi; oi++ {
			base := (oi/inner)*k*inner + oi%inner
			best := 0
			for i := 1; i < k; i++ {
				b, e := s[base+best*inner], s[base+i*inner]
				if b == b && (e > b || e != e) { // b not NaN; e larger or NaN
					best = i
				}
			}
			for i := 0; i < k; i++ {
				d[base+i*inner] = 0
			}
			if k > 0 {
				d[base+best*inner] = 1
			}
		}
	})
}
