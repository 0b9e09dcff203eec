package elementwise

import (
	"math"
	"slices"

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
// 0 elsewhere.
func hardmax(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := checkArity(n, in, out, 1, 1, 1); err != nil {
		return err
	}
	x, y := in[0], out[0]
	if x.DType != y.DType || !slices.Equal(x.Shape, y.Shape) || !x.DType.IsFloat() {
		return opkernel.Unsupportedf(n, "input %s, output %s", x, y)
	}
	shape := x.Shape
	if len(shape) == 0 {
		shape = []int64{1}
	}
	axis, err := normAxis(n, n.Attrs.Int("axis", -1), len(shape))
	if err != nil {
		return err
	}
	outer, k, inner := split3(shape, axis)
	v, err := x.Float64s()
	if err != nil {
		return nodeErr(n, "%v", err)
	}
	for o := 0; o < outer; o++ {
		for j := 0; j < inner; j++ {
			base := o*k*inner + j
			best := -1
			bv := math.Inf(-1)
			for i := 0; i < k; i++ {
				if e := v[base+i*inner]; best < 0 || e > bv || (math.IsNaN(e) && !math.IsNaN(bv)) {
					best, bv = i, e
				}
			}
			for i := 0; i < k; i++ {
				one := 0.0
				if i == best {
					one = 1
				}
				y.PutFloat(base+i*inner, one)
			}
		}
	}
	return nil
}
