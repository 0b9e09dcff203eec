package fusion

import (
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/testkit"
)

// TestConvSwishActivationFusion: a Conv2D then Sigmoid, Tanh, HSwish or SiLU
// (Mul(y, Sigmoid(y)), either order; also after a folded BatchNorm;
// converter_lite fuses RELU and RELU6 only) becomes the conv's
// activation_type; an intermediate with another reader or that is a graph
// output keeps the chain.
func TestConvSwishActivationFusion(t *testing.T) {
	runConvAnfCases(t, []convAnfCase{
		{"sigmoid", func(b *testkit.Graph) *ir.Graph {
			return b.Output(b.Node("s", "Sigmoid", nil, convIn(b, true)))
		}, "Conv2D", "ConvSwishActivationFusion", ir.ActSigmoid},
		{"tanh", func(b *testkit.Graph) *ir.Graph {
			return b.Output(b.Node("t", "Tanh", nil, convIn(b, false)))
		}, "Conv2D", "ConvSwishActivationFusion", ir.ActTanh},
		{"hswish", func(b *testkit.Graph) *ir.Graph {
			return b.Output(b.Node("h", "HSwish", nil, convIn(b, true)))
		}, "Conv2D", "ConvSwishActivationFusion", ir.ActHSwish},
		{"silu", func(b *testkit.Graph) *ir.Graph {
			c := convIn(b, true)
			return b.Output(b.Node("m", "Mul", nil, c, b.Node("s", "Sigmoid", nil, c)))
		}, "Conv2D", "ConvSwishActivationFusion", ir.ActSwish},
		{"silu_sigmoid_first", func(b *testkit.Graph) *ir.Graph {
			c := convIn(b, true)
			return b.Output(b.Node("m", "Mul", nil, b.Node("s", "Sigmoid", nil, c), c))
		}, "Conv2D", "ConvSwishActivationFusion", ir.ActSwish},
		{"silu_bn", func(b *testkit.Graph) *ir.Graph { // BatchNorm folds first, then the SiLU
			c := anfBN(b, convIn(b, false), nil)
			return b.Output(b.Node("m", "Mul", nil, c, b.Node("s", "Sigmoid", nil, c)))
		}, "Conv2D", "ConvBatchNormFusion", ir.ActSwish},
		{"silu_sigmoid_shared", func(b *testkit.Graph) *ir.Graph { // the Sigmoid has another reader
			c := convIn(b, true)
			s := b.Node("s", "Sigmoid", nil, c)
			return b.Output(b.Node("m", "Mul", nil, c, s), b.Node("neg", "Neg", nil, s))
		}, "Conv2D,Sigmoid,Mul,Neg", "", 0},
		{"silu_sigmoid_output", func(b *testkit.Graph) *ir.Graph { // the Sigmoid's output is a graph output
			c := convIn(b, true)
			s := b.Node("s", "Sigmoid", nil, c)
			return b.Output(b.Node("m", "Mul", nil, c, s), s)
		}, "Conv2D,Sigmoid,Mul", "", 0},
		{"silu_conv_shared", func(b *testkit.Graph) *ir.Graph { // a third reader of the conv
			c := convIn(b, true)
			return b.Output(b.Node("m", "Mul", nil, c, b.Node("s", "Sigmoid", nil, c)), b.Node("neg", "Neg", nil, c))
		}, "Conv2D,Sigmoid,Mul,Neg", "", 0},
		{"silu_conv_output", func(b *testkit.Graph) *ir.Graph {
			c := convIn(b, true)
			return b.Output(b.Node("m", "Mul", nil, c, b.Node("s", "Sigmoid", nil, c)), c)
		}, "Conv2D,Sigmoid,Mul", "", 0},
		{"sigmoid_conv_output", func(b *testkit.Graph) *ir.Graph {
			c := convIn(b, true)
			return b.Output(b.Node("s", "Sigmoid", nil, c), c)
		}, "Conv2D,Sigmoid", "", 0},
		{"mul_sigmoid_of_other", func(b *testkit.Graph) *ir.Graph { // Mul(y, Sigmoid(y)) needs the same y
			c := convIn(b, true)
			return b.Output(b.Node("m", "Mul", nil, c, b.Node("s", "Sigmoid", nil, anfResidual(b))))
		}, "Conv2D,Sigmoid,Mul", "", 0},
	})
}
