package fusion

import (
	"strings"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/testkit"
)

// TestConvElemwiseAddFusion: Conv2D + Add of a same-shaped tensor (+ ReLU,
// ReLU6, Clip) becomes one Conv2D with the residual input, executed and
// compared with the graph before (runAnfChecked); the forms it must leave
// alone stay.
func TestConvElemwiseAddFusion(t *testing.T) {
	z := func(b *testkit.Graph) *ir.Value { return b.Input("z", 1, 4, 6, 6) }
	relu := func(b *testkit.Graph, v *ir.Value) *ir.Value { return b.Node("relu", "ReLU", nil, v) }
	// a second conv of its own input (the shortcut conv of a downsampling block)
	shortcut := func(b *testkit.Graph) *ir.Value {
		return b.Node("conv_sc", "Conv2D", ir.Attrs{"kernel_shape": ir.IntsAttr(1, 1)}, b.Input("x2", 1, 2, 6, 6),
			anfConst(b, 20, false, 4, 2, 1, 1), anfConst(b, 21, false, 4))
	}
	cases := []struct {
		name  string
		build func(b *testkit.Graph) *ir.Graph
		ops   string // top-level ops after
		fused bool   // ConvElemwiseAddFusion changed the graph
		act   int64  // the first node's activation_type after
	}{
		{"add_relu", func(b *testkit.Graph) *ir.Graph {
			return b.Output(relu(b, b.Node("add", "Add", nil, convIn(b, true), z(b))))
		}, "Conv2D", true, ir.ActReLU},
		{"residual_first_nobias", func(b *testkit.Graph) *ir.Graph {
			return b.Output(b.Node("add", "Add", nil, z(b), convIn(b, false)))
		}, "Conv2D", true, ir.ActNone},
		{"add_relu6", func(b *testkit.Graph) *ir.Graph {
			return b.Output(b.Node("r6", "ReLU6", nil, b.Node("add", "Add", nil, convIn(b, true), z(b))))
		}, "Conv2D", true, ir.ActReLU6},
		{"add_clip_0_6", func(b *testkit.Graph) *ir.Graph {
			a := b.Node("add", "Add", nil, convIn(b, true), z(b))
			return b.Output(b.Node("clip", "Clip", nil, a, b.Scalar(0), b.Scalar(6)))
		}, "Conv2D", true, ir.ActReLU6},
		{"add_sigmoid", func(b *testkit.Graph) *ir.Graph { // the Add folds, the Sigmoid stays
			return b.Output(b.Node("s", "Sigmoid", nil, b.Node("add", "Add", nil, convIn(b, true), z(b))))
		}, "Conv2D,Sigmoid", true, ir.ActNone},
		{"add_is_output", func(b *testkit.Graph) *ir.Graph { // the ReLU stays: the sum is an output too
			a := b.Node("add", "Add", nil, convIn(b, true), z(b))
			return b.Output(relu(b, a), a)
		}, "Conv2D,ReLU", true, ir.ActNone},
		{"two_convs", func(b *testkit.Graph) *ir.Graph { // downsampling block: one conv takes the other as residual
			return b.Output(relu(b, b.Node("add", "Add", nil, convIn(b, true), shortcut(b))))
		}, "Conv2D,Conv2D", true, ir.ActReLU},
		{"residual_after_conv", func(b *testkit.Graph) *ir.Graph { // z is computed after the conv: the conv moves
			c := convIn(b, true)
			zz := b.Node("neg", "Neg", nil, z(b))
			return b.Output(relu(b, b.Node("add", "Add", nil, c, zz)))
		}, "Neg,Conv2D", true, ir.ActReLU},
		{"broadcast", func(b *testkit.Graph) *ir.Graph {
			return b.Output(b.Node("add", "Add", nil, convIn(b, true), b.Input("z", 1, 4, 1, 6)))
		}, "Conv2D,Add", false, ir.ActNone},
		{"conv_shared", func(b *testkit.Graph) *ir.Graph {
			c := convIn(b, true)
			return b.Output(b.Node("add", "Add", nil, c, z(b)), b.Node("neg", "Neg", nil, c))
		}, "Conv2D,Add,Neg", false, ir.ActNone},
		{"conv_is_output", func(b *testkit.Graph) *ir.Graph {
			c := convIn(b, true)
			return b.Output(b.Node("add", "Add", nil, c, z(b)), c)
		}, "Conv2D,Add", false, ir.ActNone},
		{"conv_has_activation", func(b *testkit.Graph) *ir.Graph { // ReLU then Add: the ReLU folds, the Add stays
			return b.Output(b.Node("add", "Add", nil, relu(b, convIn(b, true)), z(b)))
		}, "Conv2D,Add", false, ir.ActReLU},
		{"add_self", func(b *testkit.Graph) *ir.Graph {
			c := convIn(b, true)
			return b.Output(b.Node("add", "Add", nil, c, c))
		}, "Conv2D,Add", false, ir.ActNone},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := c.build(testkit.New(t, c.name))
			res, _ := runAnfChecked(t, g, AnfOptions{})
			if got := strings.Join(topOps(g), ","); got != c.ops {
				t.Fatalf("ops %s, want %s\n%s", got, c.ops, dumpText(g))
			}
			if r := anfRecord(res, "ConvElemwiseAddFusion"); r.Changed != c.fused {
				t.Fatalf("ConvElemwiseAddFusion changed %v, want %v: %+v", r.Changed, c.fused, r)
			}
			var conv *ir.Node
			for _, n := range g.Nodes {
				if n.Op == "Conv2D" && (conv == nil || ir.ConvResidual(n) != nil) {
					conv = n
				}
			}
			if a := conv.Attrs.Int(ir.AttrActivation, 0); a != c.act {
				t.Errorf("activation_type %d, want %d", a, c.act)
			}
			if z := ir.ConvResidual(conv); (z != nil) != c.fused || (z != nil && len(conv.Inputs) != 4) {
				t.Errorf("residual %v, inputs %d", z, len(conv.Inputs))
			}
		})
	}
}

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
