package fusion

import (
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/testkit"
)

// TestConvActivationFusion: a Conv2D then ReLU6, Clip(0, 6) or Clip(0)
// becomes the conv's activation_type RELU6/RELU; another Clip, or a conv with
// a second reader, stays.
func TestConvActivationFusion(t *testing.T) {
	runConvAnfCases(t, []convAnfCase{
		{"relu6", func(b *testkit.Graph) *ir.Graph { return b.Output(b.Node("r", "ReLU6", nil, convIn(b, true))) }, "Conv2D", "ConvActivationFusion", ir.ActReLU6},
		{"clip_0_6", func(b *testkit.Graph) *ir.Graph {
			return b.Output(b.Node("clip", "Clip", nil, convIn(b, true), b.Scalar(0), b.Scalar(6)))
		}, "Conv2D", "ConvActivationFusion", ir.ActReLU6},
		{"clip_0", func(b *testkit.Graph) *ir.Graph {
			return b.Output(b.Node("clip", "Clip", nil, convIn(b, true), b.Scalar(0)))
		}, "Conv2D", "ConvActivationFusion", ir.ActReLU},
		{"clip_0_5", func(b *testkit.Graph) *ir.Graph { // no MindSpore conv activation is this
			return b.Output(b.Node("clip", "Clip", nil, convIn(b, true), b.Scalar(0), b.Scalar(5)))
		}, "Conv2D,Clip", "", 0},
		{"relu_shared", func(b *testkit.Graph) *ir.Graph {
			c := convIn(b, true)
			return b.Output(anfReLU(b, c), b.Node("neg", "Neg", nil, c))
		}, "Conv2D,ReLU,Neg", "", 0},
	})
}
