package fusion

import (
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/testkit"
)

// TestConvScaleFusion: a Conv2D then a Mul by a per-channel (or scalar)
// constant, with or without a per-channel Add after it, folds into the conv;
// a scale that is not constant or varies along another axis stays.
func TestConvScaleFusion(t *testing.T) {
	runConvAnfCases(t, []convAnfCase{
		{"scale_mul_add", func(b *testkit.Graph) *ir.Graph {
			m := b.Node("mul", "Mul", nil, convIn(b, true), anfConst(b, 7, false, 1, 4, 1, 1))
			return b.Output(b.Node("add", "Add", nil, anfConst(b, 8, false, 4, 1, 1), m))
		}, "Conv2D", "ConvScaleFusion", 0},
		{"scale_mul_only_scalar", func(b *testkit.Graph) *ir.Graph {
			return b.Output(b.Node("mul", "Mul", nil, convIn(b, false), b.Scalar(0.5)))
		}, "Conv2D", "ConvScaleFusion", 0},
		{"scale_not_const", func(b *testkit.Graph) *ir.Graph {
			return b.Output(b.Node("mul", "Mul", nil, convIn(b, true), b.Input("s", 1, 4, 1, 1)))
		}, "Conv2D,Mul", "", 0},
		{"scale_spatial", func(b *testkit.Graph) *ir.Graph { // varies along W, not the channels
			return b.Output(b.Node("mul", "Mul", nil, convIn(b, true), anfConst(b, 9, false, 6)))
		}, "Conv2D,Mul", "", 0},
		{"scale_mul_add_input", func(b *testkit.Graph) *ir.Graph { // the Mul folds, the Add becomes the residual
			m := b.Node("mul", "Mul", nil, convIn(b, true), anfConst(b, 7, false, 4, 1, 1))
			return b.Output(b.Node("add", "Add", nil, m, b.Input("z", 1, 4, 6, 6)))
		}, "Conv2D", "ConvScaleFusion", 0},
	})
}
