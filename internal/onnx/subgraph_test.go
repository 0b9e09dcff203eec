package onnx

import (
	"slices"
	"strings"
	"testing"

	"gkconv/internal/ir"
	ob "gkconv/internal/onnx/onnxbuild"
)

// A value of the main graph read two bodies deep (an If inside a Loop's
// body) is captured at each level: the Loop takes it as a trailing input,
// its body passes it on to the If, whose branches read it; an outer
// initializer is copied into the body instead; loop-carried shapes that
// change per iteration are inferred unknown.
func TestNestedOuterScope(t *testing.T) {
	then := ob.New("then", 17).Output("t_out", ob.Float, 2)
	then.Node("mul", "Mul", strs("acc", "w"), strs("t_out")) // acc: Loop body, w: main graph
	els := ob.New("else", 17).Output("e_out", ob.Float, 2)
	els.Node("add", "Add", strs("acc", "bias"), strs("e_out")) // bias: main initializer
	body := ob.New("body", 17).Input("i", ob.Int64).Input("c", ob.Bool).Input("acc", ob.Float, 2).Input("grow", ob.Float, -1).
		Output("c_out", ob.Bool).Output("acc_out", ob.Float, 2).Output("grow_out", ob.Float, -1)
	body.Node("keep", "Identity", strs("c"), strs("c_out"))
	body.Node("if", "If", strs("flag"), strs("acc_out"), ob.Graph("then_branch", then.Graph()), ob.Graph("else_branch", els.Graph()))
	body.Node("cat", "Concat", strs("grow", "acc_out"), strs("grow_out"), ob.Int("axis", 0))
	m := ob.New("g", 17).Input("x", ob.Float, 2).Input("w", ob.Float, 2).Input("flag", ob.Bool).Input("g0", ob.Float, 1).
		Output("y", ob.Float, 2).Output("grown", ob.Float, -1).
		Init(ob.Float32s("bias", []int64{2}, []float32{1, 2}), ob.Int64s("M", nil, []int64{3}))
	m.Node("loop", "Loop", strs("M", "", "x", "g0"), strs("y", "grown"), ob.Graph("body", body.Graph()))
	g := mustGraph(t, m)
	if err := ir.InferShapes(g); err != nil {
		t.Fatal(err)
	}
	loop := g.Nodes[0]
	var names []string
	for _, v := range loop.Inputs[4:] {
		names = append(names, v.Name)
	}
	if loop.Attrs.Int(ir.CapturedInputs, 0) != 2 || !slices.Equal(names, []string{"flag", "w"}) {
		t.Errorf("Loop captures %v (captured_inputs=%d), want flag and w", names, loop.Attrs.Int(ir.CapturedInputs, 0))
	}
	lb := loop.Attrs.Graph("body")
	var inner *ir.Node
	for _, n := range lb.Nodes {
		if n.Op == "If" {
			inner = n
		}
	}
	if inner == nil || inner.Attrs.Int(ir.CapturedInputs, 0) != 2 || inner.Inputs[1] != lb.Inputs[2] || inner.Inputs[2] != lb.Inputs[5] {
		t.Fatalf("inner If %v: want acc and w (the body's inputs) captured", inner)
	}
	eb := inner.Attrs.Graph("else_branch")
	if len(eb.Consts) != 1 || eb.Consts[0].Name != "bias" {
		t.Errorf("else branch consts %v, want bias copied in", eb.Consts)
	}
	if s := loop.Outputs[1].Shape; !slices.Equal(s, []int64{-1}) {
		t.Errorf("grown: shape %v, want [-1] (it grows each iteration)", s)
	}
	if s := loop.Outputs[0].Shape; !slices.Equal(s, []int64{2}) {
		t.Errorf("y: shape %v, want [2]", s)
	}
}

// Loop bodies must match the node: the errors name the node and reason.
func TestLoopBodyMismatch(t *testing.T) {
	body := ob.New("body", 17).Input("i", ob.Int64).Input("c", ob.Bool).Output("c_out", ob.Bool)
	body.Node("keep", "Identity", strs("c"), strs("c_out"))
	m := ob.New("g", 17).Input("x", ob.Float, 2).Output("y", ob.Float, 2).Init(ob.Int64s("M", nil, []int64{3}))
	m.Node("the_loop", "Loop", strs("M", "", "x"), strs("y"), ob.Graph("body", body.Graph()))
	_, err := parseModel(t, m, Options{Name: "m.onnx"})
	if err == nil || !strings.Contains(err.Error(), "m.onnx: node the_loop (Loop): body has 2 inputs, want 2 + 1 loop-carried") {
		t.Errorf("err = %v", err)
	}
}
