package mindir

import (
	"fmt"
	"testing"

	"gkconv/internal/ir"
)

// TestConvEpilogueActivationRoundTrip: a Conv2D with activation_type
// SIGMOID, TANH, HSWISH or SWISH (which MindSpore Lite's conv kernels do not
// apply) is written as Conv2DFusion (NO_ACTIVATION), the residual's
// AddFusion (NO_ACTIVATION) when it has one, then an Activation with that
// type; it passes the checker and reads back as the same one Conv2D.
func TestConvEpilogueActivationRoundTrip(t *testing.T) {
	for _, act := range []int64{ir.ActSigmoid, ir.ActTanh, ir.ActHSwish, ir.ActSwish} {
		for _, resid := range []bool{false, true} {
			for _, bias := range []bool{false, true} {
				t.Run(fmt.Sprintf("act%d/residual=%v/bias=%v", act, resid, bias), func(t *testing.T) {
					b := newNNGraph(t)
					x := b.in("x", ir.Float32, 1, 2, 3, 3)
					var bv, z *ir.Value
					if bias {
						bv = b.floats("b", 2, 4)
					}
					ins := []*ir.Value{x, b.floats("w", 1, 4, 2, 1, 1), bv}
					if resid {
						z = b.in("z", ir.Float32, 1, 4, 3, 3)
						ins = append(ins, z)
					} else if !bias {
						ins = ins[:2]
					}
					g := b.node("Conv2D", ir.Attrs{ir.AttrActivation: ir.IntAttr(act)}, 1, ins...)
					data, mp := writeChecked(t, g, "conv_activation.mindir")
					acts := activationTypes(mp)
					want := map[string]int64{"Conv2DFusion": msActNone, "Activation": act}
					if resid {
						want["AddFusion"] = msActNone
					}
					if fmt.Sprint(acts) != fmt.Sprint(want) {
						t.Fatalf("activation types %v, want %v", acts, want)
					}
					back, err := Parse(data)
					if err != nil {
						t.Fatal(err)
					}
					if len(back.Nodes) != 1 {
						t.Fatalf("read back %d nodes: %v", len(back.Nodes), back.Nodes)
					}
					n := back.Nodes[0]
					if n.Op != "Conv2D" || n.Attrs.Int(ir.AttrActivation, 0) != act || (ir.ConvResidual(n) != nil) != resid ||
						(n.Input(2) != nil) != bias {
						t.Fatalf("read back %v %v inputs %v", n, n.Attrs, n.Inputs)
					}
					if n.Outputs[0].Name != "y0" || len(n.Provenance) != 1 || n.Provenance[0] != "src_Conv2D" {
						t.Fatalf("output %s, provenance %v", n.Outputs[0].Name, n.Provenance)
					}
				})
			}
		}
	}
	// An unmarked Conv2DFusion + Activation(SIGMOID) stays two nodes.
	b := newNNGraph(t)
	b.node("Conv2D", nil, 1, b.in("x", ir.Float32, 1, 2, 3, 3), b.floats("w", 1, 4, 2, 1, 1))
	g := b.g
	conv := g.Outputs[0]
	g.Outputs = nil
	s := g.AddNode("s", "Sigmoid", []*ir.Value{conv}, "s")
	if err := ir.InferNode(s); err != nil {
		t.Fatal(err)
	}
	g.Outputs = s.Outputs
	back, err := Parse(writeBytes(t, g, WriteOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Nodes) != 2 {
		t.Fatalf("unmarked pair read back as %v", back.Nodes)
	}
}
