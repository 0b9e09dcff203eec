package fusion

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/testkit"
)

// TestConvBiasaddFusion: a Conv2D then an Add or BiasAdd of a per-channel
// constant becomes (is added to) the conv's bias; an Add that broadcasts or
// adds an input stays.
func TestConvBiasaddFusion(t *testing.T) {
	runConvAnfCases(t, []convAnfCase{
		{"biasadd_add", func(b *testkit.Graph) *ir.Graph {
			return b.Output(b.Node("add", "Add", nil, convIn(b, false), anfConst(b, 10, false, 1, 4, 1, 1)))
		}, "Conv2D", "ConvBiasaddFusion", 0},
		{"biasadd_onto_bias", func(b *testkit.Graph) *ir.Graph {
			return b.Output(b.Node("add", "BiasAdd", nil, convIn(b, true), anfConst(b, 10, false, 4)))
		}, "Conv2D", "ConvBiasaddFusion", 0},
		{"biasadd_broadcasting", func(b *testkit.Graph) *ir.Graph { // the Add makes the output bigger
			return b.Output(b.Node("add", "Add", nil, convIn(b, false), anfConst(b, 10, false, 2, 4, 1, 1)))
		}, "Conv2D,Add", "", 0},
		{"biasadd_input", func(b *testkit.Graph) *ir.Graph {
			return b.Output(b.Node("add", "Add", nil, convIn(b, false), b.Input("z", 1, 4, 1, 1)))
		}, "Conv2D,Add", "", 0},
	})
}

// TestConvFoldsDynamicShape: with dynamic batch and image dims (a model
// converted without --inputShape; only the channel count is known), the
// per-channel bias Add and the ReLU still fold into the conv with the same
// results, and a residual Add of an input of unknown shape (it may
// broadcast) stays.
func TestConvFoldsDynamicShape(t *testing.T) {
	build := func(residual bool) *ir.Graph {
		b := testkit.New(t, "dyn")
		x := b.Input("x", -1, 3, -1, -1)
		c := b.Node("conv", "Conv2D", convAttrs, x, anfConst(b, 1, false, 4, 3, 3, 3))
		y := b.Node("add", "Add", nil, c, anfConst(b, 10, false, 1, 4, 1, 1))
		if residual {
			y = b.Node("res", "Add", nil, y, b.Input("z", -1, 4, -1, -1))
		}
		return b.Output(b.Node("relu", "ReLU", nil, y))
	}
	for _, residual := range []bool{false, true} {
		g := build(residual)
		if s := g.Nodes[0].Outputs[0].Shape; len(s) != 4 || s[0] != -1 || s[1] != 4 || s[2] != -1 {
			t.Fatalf("conv output shape %v, want [-1 4 -1 -1]", s)
		}
		ref := testkit.CloneGraph(g)
		r := rand.New(rand.NewSource(7))
		in := map[string]*ir.Tensor{}
		for _, v := range g.Inputs {
			shape := []int64{2, v.Shape[1], 6, 6}
			if v.Name == "z" {
				shape = []int64{2, 4, 1, 1} // broadcast at run time: no residual input of the conv
			}
			x := ir.NewTensor(ir.Float32, shape)
			for i := range x.F32() {
				x.F32()[i] = float32(r.NormFloat64())
			}
			in[v.Name] = x
		}
		want := execute(t, ref, in)
		if _, _, err := RunAnf(g, AnfOptions{}); err != nil {
			t.Fatal(err)
		}
		wantOps := "Conv2D"
		if residual {
			wantOps = "Conv2D,Add,ReLU"
		}
		if got := strings.Join(topOps(g), ","); got != wantOps {
			t.Fatalf("residual %v: ops %s, want %s\n%s", residual, got, wantOps, dumpText(g))
		}
		got := execute(t, g, in)
		for j, w := range want[0].F32() {
			if d := math.Abs(float64(w - got[0].F32()[j])); d > 1e-5*(1+math.Abs(float64(w))) {
				t.Fatalf("residual %v: output[%d] fused %g, unfused %g", residual, j, got[0].F32()[j], w)
			}
		}
	}
}
