package mindir

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"gkconv/internal/ir"
	pb "gkconv/internal/mindir/mindirpb"
)

// An if in the form MindSpore's frontend writes, not only ours: Switch of a
// Partial (then, bound to x) and a bare function (else), called with y. It
// reads as one If capturing x and y, each branch's inputs in that order
// (the else branch gets an unused input for x).
func TestReadMindSporeIf(t *testing.T) {
	m := &pb.ModelProto{
		IrVersion: s("0.1.1"), ProducerName: s("MindSpore"), ModelVersion: s("2.5.0"),
		LittleEndian: proto.Bool(true), MindIrVersion: proto.Int64(1),
		Primitives: []*pb.PrimitiveProto{prim("Partial:1", "Partial"), prim("Switch:2", "Switch"), prim("Sub:3", "Sub"), prim("ReLU:4", "ReLU")},
		Graph: &pb.GraphProto{
			Name: s("g"),
			Input: []*pb.ValueInfoProto{
				{Name: s("g:c"), Tensor: []*pb.TensorProto{{DataType: proto.Int32(int32(pb.TensorProto_BOOL))}}},
				tensorInfo("g:x", pb.TensorProto_FLOAT, 2, 2), tensorInfo("g:y", pb.TensorProto_FLOAT, 2, 2),
			},
			Node: []*pb.NodeProto{
				{Name: s("g:p"), Output: []string{"g:p"}, OpType: s("REF::Partial:1"), Input: []string{"then_fn", "g:x"}},
				{Name: s("g:sw"), Output: []string{"g:sw"}, OpType: s("REF::Switch:2"), Input: []string{"g:c", "g:p", "else_fn"}},
				node("g:out", "REF::g:sw", "g:y"),
			},
			Output: []*pb.ValueInfoProto{tensorInfo("g:out", pb.TensorProto_FLOAT, 2, 2)},
		},
		Functions: []*pb.GraphProto{{
			Name:   s("then_fn"),
			Input:  []*pb.ValueInfoProto{tensorInfo("then_fn:a", pb.TensorProto_FLOAT, 2, 2), tensorInfo("then_fn:b", pb.TensorProto_FLOAT, 2, 2)},
			Node:   []*pb.NodeProto{node("then_fn:d", "REF::Sub:3", "then_fn:a", "then_fn:b")},
			Output: []*pb.ValueInfoProto{tensorInfo("then_fn:d", pb.TensorProto_FLOAT, 2, 2)},
		}, {
			Name:   s("else_fn"),
			Input:  []*pb.ValueInfoProto{tensorInfo("else_fn:b", pb.TensorProto_FLOAT, 2, 2)},
			Node:   []*pb.NodeProto{node("else_fn:r", "REF::ReLU:4", "else_fn:b")},
			Output: []*pb.ValueInfoProto{tensorInfo("else_fn:r", pb.TensorProto_FLOAT, 2, 2)},
		}},
	}
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	g, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Nodes) != 1 || g.Nodes[0].Op != "If" {
		t.Fatalf("nodes %v, want one If", g.Nodes)
	}
	n := g.Nodes[0]
	if n.Attrs.Int(ir.CapturedInputs, 0) != 2 || n.Inputs[1] != g.Inputs[1] || n.Inputs[2] != g.Inputs[2] {
		t.Fatalf("If inputs %v, want c, x, y", n.Inputs)
	}
	then, els := n.Attrs.Graph("then_branch"), n.Attrs.Graph("else_branch")
	if then.Nodes[0].Inputs[0] != then.Inputs[0] || then.Nodes[0].Inputs[1] != then.Inputs[1] {
		t.Errorf("then branch: Sub reads %v, inputs %v", then.Nodes[0].Inputs, then.Inputs)
	}
	if len(els.Inputs) != 2 || els.Nodes[0].Inputs[0] != els.Inputs[1] {
		t.Errorf("else branch: ReLU reads %v, inputs %v; want the second (y)", els.Nodes[0].Inputs, els.Inputs)
	}
	if err := ir.InferShapes(g); err != nil {
		t.Fatal(err)
	}
}

// A direct call of a function graph is inlined; a function that calls
// itself outside MindSpore's while-loop form is refused with a clear
// reason, not followed until the stack overflows.
func TestReadMindSporeCalls(t *testing.T) {
	model := func(fnBody []*pb.NodeProto) []byte {
		m := &pb.ModelProto{
			IrVersion: s("0.1.1"), ProducerName: s("MindSpore"), ModelVersion: s("2.7.2"),
			LittleEndian: proto.Bool(true), MindIrVersion: proto.Int64(3),
			Primitives: []*pb.PrimitiveProto{prim("ReLU:1", "ReLU")},
			Graph: &pb.GraphProto{
				Name:   s("g"),
				Input:  []*pb.ValueInfoProto{tensorInfo("g:x", pb.TensorProto_FLOAT, 2, 2)},
				Node:   []*pb.NodeProto{node("g:out", "REF::f", "g:x")},
				Output: []*pb.ValueInfoProto{tensorInfo("g:out", pb.TensorProto_FLOAT, 2, 2)},
			},
			Functions: []*pb.GraphProto{{
				Name:   s("f"),
				Input:  []*pb.ValueInfoProto{tensorInfo("f:a", pb.TensorProto_FLOAT, 2, 2)},
				Node:   fnBody,
				Output: []*pb.ValueInfoProto{tensorInfo("f:r", pb.TensorProto_FLOAT, 2, 2)},
			}},
		}
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	g, err := Parse(model([]*pb.NodeProto{node("f:r", "REF::ReLU:1", "f:a")}))
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Nodes) != 1 || g.Nodes[0].Op != "ReLU" || g.Nodes[0].Inputs[0] != g.Inputs[0] || g.Outputs[0] != g.Nodes[0].Outputs[0] {
		t.Fatalf("inlined call: nodes %v, outputs %v", g.Nodes, g.Outputs)
	}
	_, err = Parse(model([]*pb.NodeProto{node("f:r", "REF::f", "f:a")}))
	var ue *UnsupportedError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "recursive call of graph f") {
		t.Fatalf("self-recursion: want an UnsupportedError naming the recursion, got %v", err)
	}
}

// Builders of hand-written MindIR protobufs for the tests above (the
// validator's tests in internal/mindir/check have the same).

func s(v string) *string { return proto.String(v) }

func tensorInfo(name string, dt pb.TensorProto_DataType, dims ...int64) *pb.ValueInfoProto {
	return &pb.ValueInfoProto{Name: s(name), Tensor: []*pb.TensorProto{{DataType: proto.Int32(int32(dt)), Dims: dims}}}
}

func prim(name, op string, attrs ...*pb.AttributeProto) *pb.PrimitiveProto {
	return &pb.PrimitiveProto{Name: s(name), OpType: s(op), Attribute: attrs, PrimType: pb.PrimitiveProto_PRIMITIVE.Enum()}
}

// node is a CNode with a 2x2 float shape attribute.
func node(out, op string, inputs ...string) *pb.NodeProto {
	shape := &pb.AttributeProto{Name: s("shape"), Type: pb.AttributeProto_TENSORS.Enum(),
		Tensors: []*pb.TensorProto{{DataType: proto.Int32(int32(pb.TensorProto_FLOAT)), Dims: []int64{2, 2}}}}
	return &pb.NodeProto{Name: s(out), Output: []string{out}, OpType: s(op), Input: inputs,
		Attribute: []*pb.AttributeProto{shape}}
}
