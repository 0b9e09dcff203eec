package mindir

import (
	"testing"

	pb "gkconv/internal/mindir/mindirpb"

	"google.golang.org/protobuf/proto"

	"gkconv/internal/ir"
)

// TestConvActivationRoundTrip: a Conv2D with a fused activation is written
// as Conv2DFusion with that activation_type, passes the checker, and reads
// back as the same Conv2D; a 3-D conv (no MindSpore primitive) keeps the
// attribute through its Custom node; a core Conv2D form is not used for it.
func TestConvActivationRoundTrip(t *testing.T) {
	for _, act := range []int64{ir.ActReLU, ir.ActReLU6} {
		b := newNNGraph(t)
		g := b.node("Conv2D", ir.Attrs{"kernel_shape": ir.IntsAttr(1, 1), "pads": ir.IntsAttr(0, 0, 0, 0), ir.AttrActivation: ir.IntAttr(act)}, 1,
			b.in("x", ir.Float32, 1, 2, 3, 3), b.floats("w", 1, 2, 2, 1, 1))
		g.Nodes[0].Attrs[ir.SourcePrimitive] = ir.StringAttr("Conv2D") // as read from a MindSpore core file
		data, mp := writeChecked(t, g, "conv_act.mindir")
		if got, ok := activationTypes(mp)["Conv2DFusion"]; !ok || got != act {
			t.Fatalf("no Conv2DFusion with activation_type %d", act)
		}
		back, err := Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		if len(back.Nodes) != 1 || back.Nodes[0].Op != "Conv2D" || back.Nodes[0].Attrs.Int(ir.AttrActivation, 0) != act {
			t.Fatalf("read back %v", back.Nodes)
		}
	}
	b := newNNGraph(t)
	g := b.node("Conv2D", ir.Attrs{ir.AttrActivation: ir.IntAttr(ir.ActReLU)}, 1,
		b.in("x", ir.Float32, 1, 2, 3, 3, 3), b.floats("w", 1, 2, 2, 1, 1, 1))
	data := writeBytes(t, g, WriteOptions{})
	if rep, err := checkBytes(data, "conv3d.mindir"); err != nil || !rep.OK() {
		t.Fatalf("check: %v %+v", err, rep)
	}
	back, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Nodes) != 1 || back.Nodes[0].Attrs.Int(ir.AttrActivation, 0) != ir.ActReLU {
		t.Fatalf("3-D conv read back %v", back.Nodes)
	}
}

// writeChecked writes g, checks the file with checkBytes and returns it and
// its decoded form.
func writeChecked(t *testing.T, g *ir.Graph, name string) ([]byte, *pb.ModelProto) {
	t.Helper()
	data := writeBytes(t, g, WriteOptions{})
	rep, err := checkBytes(data, name)
	if err != nil || !rep.OK() {
		t.Fatalf("check: %v %+v", err, rep)
	}
	var mp pb.ModelProto
	if err := proto.Unmarshal(data, &mp); err != nil {
		t.Fatal(err)
	}
	return data, &mp
}

// activationTypes maps each primitive op type in mp to its activation_type
// attribute (the last such primitive's, where there are several).
func activationTypes(mp *pb.ModelProto) map[string]int64 {
	acts := map[string]int64{}
	for _, p := range mp.Primitives {
		for _, a := range p.Attribute {
			if a.GetName() == "activation_type" {
				acts[p.GetOpType()] = a.GetI()
			}
		}
	}
	return acts
}
