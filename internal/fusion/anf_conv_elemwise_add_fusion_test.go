package fusion

import (
	"strings"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/testkit"
)

// TestConvElemwiseAddFusionBlacklisted: fusion_blacklists switches the pass
// off (TestConvElemwiseAddFusion has the cases of the pass itself).
func TestConvElemwiseAddFusionBlacklisted(t *testing.T) {
	b := testkit.New(t, "g")
	g := b.Output(b.Node("relu", "ReLU", nil, b.Node("add", "Add", nil, convIn(b, true), b.Input("z", 1, 4, 6, 6))))
	res, warns := runAnfChecked(t, g, AnfOptions{Blacklist: []string{"ConvElemwiseAddFusion"}})
	if got := strings.Join(topOps(g), ","); got != "Conv2D,Add,ReLU" || len(warns) != 0 {
		t.Fatalf("ops %s, warnings %q", got, warns)
	}
	if r := anfRecord(res, "ConvElemwiseAddFusion"); r.Ran || !strings.Contains(r.Note, "fusion_blacklists") {
		t.Errorf("record %+v", r)
	}
}

// TestConvElemwiseAddFusion: a Conv2D then an Add of a same-shaped tensor
// (then ReLU, ReLU6 or Clip(0, 6)) becomes one Conv2D with a residual input;
// an Add that broadcasts, a conv with a second reader or an activation of its
// own, or Add(y, y) stays.
func TestConvElemwiseAddFusion(t *testing.T) {
	runConvAnfCases(t, []convAnfCase{
		{"add_relu", func(b *testkit.Graph) *ir.Graph {
			return b.Output(anfReLU(b, b.Node("add", "Add", nil, convIn(b, true), anfResidual(b))))
		}, "Conv2D", "ConvElemwiseAddFusion", ir.ActReLU},
		{"residual_first_nobias", func(b *testkit.Graph) *ir.Graph {
			return b.Output(b.Node("add", "Add", nil, anfResidual(b), convIn(b, false)))
		}, "Conv2D", "ConvElemwiseAddFusion", ir.ActNone},
		{"add_relu6", func(b *testkit.Graph) *ir.Graph {
			return b.Output(b.Node("r6", "ReLU6", nil, b.Node("add", "Add", nil, convIn(b, true), anfResidual(b))))
		}, "Conv2D", "ConvElemwiseAddFusion", ir.ActReLU6},
		{"add_clip_0_6", func(b *testkit.Graph) *ir.Graph {
			a := b.Node("add", "Add", nil, convIn(b, true), anfResidual(b))
			return b.Output(b.Node("clip", "Clip", nil, a, b.Scalar(0), b.Scalar(6)))
		}, "Conv2D", "ConvElemwiseAddFusion", ir.ActReLU6},
		{"add_sigmoid", func(b *testkit.Graph) *ir.Graph { // the Add folds, the Sigmoid stays
			return b.Output(b.Node("s", "Sigmoid", nil, b.Node("add", "Add", nil, convIn(b, true), anfResidual(b))))
		}, "Conv2D,Sigmoid", "ConvElemwiseAddFusion", ir.ActNone},
		{"add_is_output", func(b *testkit.Graph) *ir.Graph { // the ReLU stays: the sum is an output too
			a := b.Node("add", "Add", nil, convIn(b, true), anfResidual(b))
			return b.Output(anfReLU(b, a), a)
		}, "Conv2D,ReLU", "ConvElemwiseAddFusion", ir.ActNone},
		{"two_convs", func(b *testkit.Graph) *ir.Graph { // downsampling block: one conv takes the other as residual
			return b.Output(anfReLU(b, b.Node("add", "Add", nil, convIn(b, true), anfShortcut(b))))
		}, "Conv2D,Conv2D", "ConvElemwiseAddFusion", ir.ActReLU},
		{"residual_after_conv", func(b *testkit.Graph) *ir.Graph { // z is computed after the conv: the conv moves
			c := convIn(b, true)
			zz := b.Node("neg", "Neg", nil, anfResidual(b))
			return b.Output(anfReLU(b, b.Node("add", "Add", nil, c, zz)))
		}, "Neg,Conv2D", "ConvElemwiseAddFusion", ir.ActReLU},
		{"broadcast", func(b *testkit.Graph) *ir.Graph {
			return b.Output(b.Node("add", "Add", nil, convIn(b, true), b.Input("z", 1, 4, 1, 6)))
		}, "Conv2D,Add", "", ir.ActNone},
		{"conv_shared", func(b *testkit.Graph) *ir.Graph {
			c := convIn(b, true)
			return b.Output(b.Node("add", "Add", nil, c, anfResidual(b)), b.Node("neg", "Neg", nil, c))
		}, "Conv2D,Add,Neg", "", ir.ActNone},
		{"conv_is_output", func(b *testkit.Graph) *ir.Graph {
			c := convIn(b, true)
			return b.Output(b.Node("add", "Add", nil, c, anfResidual(b)), c)
		}, "Conv2D,Add", "", ir.ActNone},
		{"conv_has_activation", func(b *testkit.Graph) *ir.Graph { // ReLU then Add: the ReLU folds, the Add stays
			return b.Output(b.Node("add", "Add", nil, anfReLU(b, convIn(b, true)), anfResidual(b)))
		}, "Conv2D,Add", "ConvActivationFusion", ir.ActReLU},
		{"add_self", func(b *testkit.Graph) *ir.Graph {
			c := convIn(b, true)
			return b.Output(b.Node("add", "Add", nil, c, c))
		}, "Conv2D,Add", "", ir.ActNone},
	})
}
