package fusion

import (
	"math"
	"strings"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/testkit"
)

// TestMatMulActivationFusion: MatMul (+ its folded bias) then ReLU, ReLU6,
// Clip(0) or Clip(0, 6) becomes one MatMul with activation_type RELU/RELU6,
// checked against the unfused graph on the runtime; a MatMul read by
// another node too, or that is a graph output, keeps its activation op.
func TestMatMulActivationFusion(t *testing.T) {
	clip := func(b *testkit.Graph, v *ir.Value, hi bool) *ir.Value {
		ins := []*ir.Value{v, b.Scalar(0)}
		if hi {
			ins = append(ins, b.Scalar(6))
		}
		return b.Node("clip", "Clip", nil, ins...)
	}
	for _, c := range []struct {
		name  string
		build func(b *testkit.Graph, mm *ir.Value) *ir.Graph
		ops   string
		act   int64
	}{
		{"relu", func(b *testkit.Graph, mm *ir.Value) *ir.Graph { return b.Output(b.Node("r", "ReLU", nil, mm)) }, "MatMul", ir.ActReLU},
		{"relu6", func(b *testkit.Graph, mm *ir.Value) *ir.Graph { return b.Output(b.Node("r", "ReLU6", nil, mm)) }, "MatMul", ir.ActReLU6},
		{"clip0", func(b *testkit.Graph, mm *ir.Value) *ir.Graph { return b.Output(clip(b, mm, false)) }, "MatMul", ir.ActReLU},
		{"clip06", func(b *testkit.Graph, mm *ir.Value) *ir.Graph { return b.Output(clip(b, mm, true)) }, "MatMul", ir.ActReLU6},
		{"bias+relu", func(b *testkit.Graph, mm *ir.Value) *ir.Graph {
			return b.Output(b.Node("r", "ReLU", nil, b.Node("add", "Add", nil, mm, b.Weights(8))))
		}, "MatMul", ir.ActReLU},
		{"relu then bias Add", func(b *testkit.Graph, mm *ir.Value) *ir.Graph {
			return b.Output(b.Node("add", "Add", nil, b.Node("r", "ReLU", nil, mm), b.Weights(8)))
		}, "MatMul,Add", ir.ActReLU},
		{"two readers", func(b *testkit.Graph, mm *ir.Value) *ir.Graph {
			return b.Output(b.Node("r", "ReLU", nil, mm), b.Node("n", "Neg", nil, mm))
		}, "MatMul,ReLU,Neg", ir.ActNone},
		{"graph output", func(b *testkit.Graph, mm *ir.Value) *ir.Graph { return b.Output(b.Node("r", "ReLU", nil, mm), mm) }, "MatMul,ReLU", ir.ActNone},
		{"clip 1..6", func(b *testkit.Graph, mm *ir.Value) *ir.Graph {
			return b.Output(b.Node("clip", "Clip", nil, mm, b.Scalar(1), b.Scalar(6)))
		}, "MatMul,Clip", ir.ActNone},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := testkit.New(t, "g")
			w := b.Weights(16, 8)
			for i := range w.Const.F32() {
				w.Const.F32()[i] *= 4 // outputs past 6 and below 0
			}
			g := c.build(b, b.Node("mm", "MatMul", nil, b.Input("x", 5, 16), w))
			res, _ := runAnfChecked(t, g, AnfOptions{})
			if got := strings.Join(topOps(g), ","); got != c.ops {
				t.Fatalf("ops %s, want %s\n%s", got, c.ops, dumpText(g))
			}
			if a := g.Nodes[0].Attrs.Int(ir.AttrActivation, ir.ActNone); a != c.act {
				t.Fatalf("activation_type %d, want %d", a, c.act)
			}
			if r := anfRecord(res, "MatMulActivationFusion"); r.Changed != (c.act != ir.ActNone) {
				t.Errorf("record %+v", r)
			}
		})
	}
	// The graph-kernel stage's bias fold (level 2) and MatMul combining
	// (graph_kernel_op_combiner, level 3) must leave a MatMul with an
	// activation alone: an Add after it comes after the activation, and
	// MatMuls sharing A combined into one would share it.
	for _, level := range []string{"2", "3"} {
		b := testkit.New(t, "g")
		x := b.Input("x", 5, 16)
		r := b.Node("r", "ReLU", nil, b.Node("mm", "MatMul", nil, x, b.Weights(16, 8)))
		g := b.Output(b.Node("add", "Add", nil, r, b.Weights(8)), b.Node("mm2", "MatMul", nil, x, b.Weights(16, 8)))
		ref := testkit.CloneGraph(g)
		in := randInputs(g, 4)
		want := execute(t, ref, in)
		if _, _, err := RunAnf(g, AnfOptions{}); err != nil {
			t.Fatal(err)
		}
		run(t, g, "--opt_level="+level, cpuBE)
		got := execute(t, g, in)
		for i := range want {
			for j, w := range want[i].F32() {
				if d := math.Abs(float64(w - got[i].F32()[j])); d > 1e-5*(1+math.Abs(float64(w))) {
					t.Fatalf("opt_level %s, output %d[%d]: fused %g, unfused %g\n%s", level, i, j, got[i].F32()[j], w, dumpText(g))
				}
			}
		}
	}
}
