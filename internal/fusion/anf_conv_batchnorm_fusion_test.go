package fusion

import (
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/testkit"
)

// TestConvBatchNormFusion: a Conv2D then an inference BatchNorm with constant
// parameters folds into the conv's weights and bias (also with the bias Add
// before it, the per-channel Mul after it and a ReLU last: every fold of the
// chain); a conv read by another node or that is a graph output, or a
// BatchNorm with a parameter that is not constant, stays.
func TestConvBatchNormFusion(t *testing.T) {
	runConvAnfCases(t, []convAnfCase{
		{"bn", func(b *testkit.Graph) *ir.Graph { return b.Output(anfBN(b, convIn(b, true), nil)) }, "Conv2D", "ConvBatchNormFusion", 0},
		{"bn_nobias_relu", func(b *testkit.Graph) *ir.Graph { return b.Output(anfReLU(b, anfBN(b, convIn(b, false), nil))) }, "Conv2D", "ConvBatchNormFusion", ir.ActReLU},
		{"bn_shared_conv", func(b *testkit.Graph) *ir.Graph {
			c := convIn(b, true)
			return b.Output(anfBN(b, c, nil), b.Node("neg", "Neg", nil, c))
		}, "Conv2D,BatchNorm,Neg", "", 0},
		{"bn_conv_is_output", func(b *testkit.Graph) *ir.Graph {
			c := convIn(b, true)
			return b.Output(anfBN(b, c, nil), c)
		}, "Conv2D,BatchNorm", "", 0},
		{"bn_mean_not_const", func(b *testkit.Graph) *ir.Graph {
			c := convIn(b, true)
			return b.Output(anfBN(b, c, b.Input("mean", 4)))
		}, "Conv2D,BatchNorm", "", 0},
		{"bias_bn_scale_relu", func(b *testkit.Graph) *ir.Graph {
			a := b.Node("add", "Add", nil, convIn(b, false), anfConst(b, 10, false, 4, 1, 1))
			m := b.Node("mul", "Mul", nil, anfBN(b, a, nil), anfConst(b, 11, false, 4, 1, 1))
			return b.Output(anfReLU(b, m))
		}, "Conv2D", "ConvBatchNormFusion", ir.ActReLU},
	})
}
