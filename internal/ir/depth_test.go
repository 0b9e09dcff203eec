package ir

import (
	"errors"
	"fmt"
	"testing"
)

// depthChain is a graph of If nodes nested depth bodies deep (then_branch
// the next level, else_branch an Identity), each capturing c and x, built
// without recursion; with kernel the deepest body holds a graph kernel.
func depthChain(depth int, kernel bool) *Graph {
	vals := func() (*Value, *Value) {
		return &Value{Name: "c", DType: Bool, Shape: []int64{}}, &Value{Name: "x", DType: Float32, Shape: []int64{2}}
	}
	leaf := func(name string) *Graph {
		g := NewGraph(name)
		c, x := vals()
		g.Inputs = []*Value{c, x}
		g.Outputs = g.AddNode("id", "Identity", []*Value{x}, "y").Outputs
		return g
	}
	var inner *Graph
	for k := depth; k >= 0; k-- {
		if k == depth {
			inner = leaf(fmt.Sprintf("body_%d", k))
			if kernel {
				body := leaf("fused_body")
				kn := inner.AddNode("fused", OpGraphKernel, []*Value{inner.Outputs[0]}, "k")
				kn.Body = body
				inner.Outputs = kn.Outputs
			}
			continue
		}
		g := NewGraph(fmt.Sprintf("body_%d", k))
		c, x := vals()
		g.Inputs = []*Value{c, x}
		n := g.AddNode(fmt.Sprintf("if_%d", k), "If", []*Value{c, c, x}, "y")
		n.Attrs = Attrs{"then_branch": GraphAttr(inner), "else_branch": GraphAttr(leaf("else")), CapturedInputs: IntAttr(2)}
		g.Outputs = n.Outputs
		inner = g
	}
	return inner
}

// TestCheckGraphDepth: control-flow bodies up to MaxGraphDepth deep and a
// graph kernel's body one below pass; one control-flow level more is
// refused naming the node and attribute, as is a kernel's body two below.
func TestCheckGraphDepth(t *testing.T) {
	for _, c := range []struct {
		depth  int
		kernel bool
		want   string
	}{
		{MaxGraphDepth, false, ""},
		{MaxGraphDepth, true, ""},
		{MaxGraphDepth + 1, false, "graphs nested more than 64 deep (node if_64 attribute else_branch)"},
		{MaxGraphDepth + 1, true, "graphs nested more than 64 deep (node if_64 attribute else_branch)"},
		{10_000, false, "graphs nested more than 64 deep (node if_64 attribute else_branch)"},
	} {
		err := CheckGraphDepth(depthChain(c.depth, c.kernel))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("depth %d, kernel %v: err %q, want %q", c.depth, c.kernel, got, c.want)
		}
	}
	// A kernel whose body holds a kernel, in the deepest body: that inner
	// body is two levels below the limit.
	g := depthChain(MaxGraphDepth, true)
	deepest := g
	for range MaxGraphDepth {
		deepest = deepest.Nodes[0].Attrs.Graph("then_branch")
	}
	kb := deepest.Nodes[len(deepest.Nodes)-1].Body
	kn := kb.AddNode("inner", OpGraphKernel, []*Value{kb.Outputs[0]}, "k2")
	kn.Body = NewGraph("inner_body")
	want := "graphs nested more than 64 deep (node inner body)"
	if err := CheckGraphDepth(g); err == nil || err.Error() != want {
		t.Errorf("kernel in a kernel at the limit: err %v, want %q", err, want)
	}
}

// TestInferShapesDepth: shape inference, which recurses into bodies, takes
// a chain at the limit and refuses a deeper one with the depth error
// before recursing (10,000 levels are not walked).
func TestInferShapesDepth(t *testing.T) {
	g := depthChain(MaxGraphDepth, false)
	if err := InferShapes(g); err != nil {
		t.Fatalf("%.500s", err)
	}
	if s := g.Outputs[0].Shape; len(s) != 1 || s[0] != 2 || g.Outputs[0].DType != Float32 {
		t.Errorf("output %v %v, want float32 [2]", g.Outputs[0].DType, s)
	}
	for _, depth := range []int{MaxGraphDepth + 1, 10_000} {
		err := InferShapes(depthChain(depth, false))
		var de *DepthError
		if !errors.As(err, &de) || len(err.Error()) > 200 {
			t.Errorf("depth %d: err %.300q, want the short depth error", depth, err)
		}
	}
}
