package mindir

import (
	"testing"

	"gkconv/internal/ir"
)

// TestConvResidualRoundTrip: a Conv2D with a residual input is written as
// Conv2DFusion (NO_ACTIVATION) then AddFusion with the conv's
// activation_type, passes the checker, and reads back as the same one
// Conv2D; a 3-D conv (written as Custom) too; an unmarked Conv2D + Add
// stays two nodes.
func TestConvResidualRoundTrip(t *testing.T) {
	type tc struct {
		name string
		act  int64
		bias bool
		dims []int64 // x's shape
	}
	for _, c := range []tc{
		{"relu_bias", ir.ActReLU, true, []int64{1, 2, 3, 3}},
		{"relu6_nobias", ir.ActReLU6, false, []int64{1, 2, 3, 3}},
		{"none", ir.ActNone, true, []int64{1, 2, 3, 3}},
		{"conv3d", ir.ActReLU, true, []int64{1, 2, 3, 3, 3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newNNGraph(t)
			wShape := append([]int64{4, 2}, make([]int64, len(c.dims)-2)...)
			for i := 2; i < len(wShape); i++ {
				wShape[i] = 1
			}
			outShape := append([]int64{1, 4}, c.dims[2:]...)
			x, z := b.in("x", ir.Float32, c.dims...), b.in("z", ir.Float32, outShape...)
			var bias *ir.Value
			if c.bias {
				bias = b.floats("b", 2, 4)
			}
			attrs := ir.Attrs{}
			if c.act != ir.ActNone {
				attrs[ir.AttrActivation] = ir.IntAttr(c.act)
			}
			g := b.node("Conv2D", attrs, 1, x, b.floats("w", 1, wShape...), bias, z)
			data, mp := writeChecked(t, g, "conv_residual.mindir")
			acts := activationTypes(mp)
			if acts["AddFusion"] != c.act || (len(c.dims) == 4 && acts["Conv2DFusion"] != msActNone) {
				t.Fatalf("activation types %v", acts)
			}
			back, err := Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			if len(back.Nodes) != 1 {
				t.Fatalf("read back %d nodes: %v", len(back.Nodes), back.Nodes)
			}
			n := back.Nodes[0]
			if n.Op != "Conv2D" || n.Attrs.Int(ir.AttrActivation, 0) != c.act || len(n.Inputs) != 4 ||
				ir.ConvResidual(n) == nil || ir.ConvResidual(n).Name != "z" || (n.Inputs[2] != nil) != c.bias {
				t.Fatalf("read back %v %v inputs %v", n, n.Attrs, n.Inputs)
			}
			if n.Outputs[0].Name != "y0" || len(n.Provenance) != 1 || n.Provenance[0] != "src_Conv2D" {
				t.Fatalf("output %s, provenance %v", n.Outputs[0].Name, n.Provenance)
			}
		})
	}
	// Conv2D then a plain Add: no mark, two nodes back.
	b := newNNGraph(t)
	b.node("Conv2D", nil, 1, b.in("x", ir.Float32, 1, 2, 3, 3), b.floats("w", 1, 4, 2, 1, 1))
	g := b.g
	conv := g.Outputs[0]
	g.Outputs = nil
	add := g.AddNode("add", "Add", []*ir.Value{conv, b.in("z", ir.Float32, 1, 4, 3, 3)}, "s")
	if err := ir.InferNode(add); err != nil {
		t.Fatal(err)
	}
	g.Outputs = add.Outputs
	back, err := Parse(writeBytes(t, g, WriteOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Nodes) != 2 {
		t.Fatalf("unmarked pair read back as %v", back.Nodes)
	}
}
