package mindir

import (
	"bytes"
	"strings"
	"testing"

	"gkconv/internal/ir"
)

// TestMatMulActivationRoundTrip: a MatMul with MatMulActivationFusion's
// RELU or RELU6 (with and without its bias, from an ONNX or a MindSpore
// core file) is written as MatMulFusion with that activation_type, passes
// the checker, and reads back as the same MatMul; another activation is
// refused with the node's name rather than written as something MindSpore
// computes differently. An integer MatMul keeps its ReLU as a node.
func TestMatMulActivationRoundTrip(t *testing.T) {
	for _, act := range []int64{ir.ActReLU, ir.ActReLU6} {
		for _, withBias := range []bool{false, true} {
			for _, core := range []bool{false, true} {
				b := newNNGraph(t)
				ins := []*ir.Value{b.in("x", ir.Float32, 3, 4), b.floats("w", 1, 4, 5)}
				if withBias {
					ins = append(ins, b.floats("bias", 2, 5))
				}
				g := b.node("MatMul", ir.Attrs{ir.AttrActivation: ir.IntAttr(act)}, 1, ins...)
				if core {
					g.Nodes[0].Attrs[ir.SourcePrimitive] = ir.StringAttr("MatMul")
				}
				data, mp := writeChecked(t, g, "matmul_act.mindir")
				if got, ok := activationTypes(mp)["MatMulFusion"]; !ok || got != act {
					t.Fatalf("act %d bias %v core %v: no MatMulFusion with activation_type %d", act, withBias, core, act)
				}
				back, err := Parse(data)
				if err != nil {
					t.Fatal(err)
				}
				if len(back.Nodes) != 1 || back.Nodes[0].Op != "MatMul" || back.Nodes[0].Attrs.Int(ir.AttrActivation, 0) != act ||
					len(back.Nodes[0].Inputs) != len(ins) {
					t.Fatalf("act %d bias %v core %v: read back %v", act, withBias, core, back.Nodes)
				}
			}
		}
	}
	// An integer MatMulFusion with RELU reads back as MatMul then ReLU.
	b := newNNGraph(t)
	wi := ir.NewTensor(ir.Int32, []int64{4, 5})
	g := b.node("MatMul", ir.Attrs{ir.AttrActivation: ir.IntAttr(ir.ActReLU)}, 1, b.in("x", ir.Int32, 3, 4), b.c("w", wi))
	back, err := Parse(writeBytes(t, g, WriteOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Nodes) != 2 || back.Nodes[0].Op != "MatMul" || back.Nodes[0].Attrs.Has(ir.AttrActivation) || back.Nodes[1].Op != "ReLU" {
		t.Fatalf("int32 MatMul with RELU read back as %v", back.Nodes)
	}
	b = newNNGraph(t)
	g = b.node("MatMul", ir.Attrs{ir.AttrActivation: ir.IntAttr(ir.ActSigmoid)}, 1, b.in("x", ir.Float32, 3, 4), b.floats("w", 1, 4, 5))
	var buf bytes.Buffer
	if err := Write(&buf, g, WriteOptions{}); err == nil || !strings.Contains(err.Error(), "activation_type 2") {
		t.Fatalf("MatMul with SIGMOID: %v", err)
	}
}
