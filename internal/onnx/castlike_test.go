package onnx

import (
	"testing"

	"gkconv/internal/ir"
	ob "gkconv/internal/onnx/onnxbuild"
)

// TestCastLikeUnknownTarget: a CastLike whose target's element type is not
// known when reading stays a CastLike node (cast at run time) instead of
// making the model unsupported.
func TestCastLikeUnknownTarget(t *testing.T) {
	m := ob.New("g", 21).Input("x", ob.Float, 2).Input("t", 0, 1).Output("y", 0, 2)
	m.Node("cl", "CastLike", strs("x", "t"), strs("y"))
	g := mustGraph(t, m)
	wantOps(t, g, "CastLike")
	if n := g.Nodes[0]; len(n.Inputs) != 2 || n.Inputs[1].Name != "t" || n.Outputs[0].DType != ir.Undefined {
		t.Errorf("castlike %v -> %v", n.Inputs, n.Outputs)
	}
}
