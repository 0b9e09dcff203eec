package runtime

import (
	"slices"
	"testing"

	"gkconv/internal/ir"
)

// TestShapeMemo: the memoized runtime shape inference is reused only for
// nodes whose output types follow from their inputs' types and shapes:
// a Reshape fed a runtime shape, NonZero (its count is in the data) and a
// dynamic input's changing length all give fresh shapes on every run, while
// an elementwise node's inference is reused as long as its input shape
// stays the same.
func TestShapeMemo(t *testing.T) {
	x := input("x", ir.Float32, -1)
	shape := input("shape", ir.Int64, 2)
	g := ir.NewGraph("main")
	g.Inputs = []*ir.Value{x, shape}
	neg := g.AddNode("neg", "Neg", []*ir.Value{x}, "neg")
	reshaped := g.AddNode("reshape", "Reshape", []*ir.Value{neg.Outputs[0], shape}, "reshaped")
	nz := g.AddNode("nonzero", "NonZero", []*ir.Value{neg.Outputs[0]}, "nz")
	g.Outputs = []*ir.Value{reshaped.Outputs[0], nz.Outputs[0]}
	if err := ir.InferShapes(g); err != nil {
		t.Fatal(err)
	}
	s, err := NewSession(g, Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	vec := func(n, nonzero int) *ir.Tensor {
		v := make([]float32, n)
		for i := range nonzero {
			v[i] = float32(i + 1)
		}
		return ir.Float32Tensor([]int64{int64(n)}, v...)
	}
	cases := []struct {
		n, nonzero int
		shape      []int64
	}{
		{96, 10, []int64{8, 12}}, // 96 floats: over smallInputBytes, so NonZero's input is not in the key
		{96, 10, []int64{8, 12}}, // the same again: reused where allowed
		{96, 40, []int64{8, 12}}, // another count of non-zeros, same shapes
		{96, 40, []int64{4, 24}}, // another runtime shape for Reshape
		{48, 5, []int64{6, 8}},   // another input length
	}
	for i, c := range cases {
		out, err := s.Run([]*ir.Tensor{vec(c.n, c.nonzero), ir.Int64Tensor([]int64{2}, c.shape...)})
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		if !slices.Equal(out[0].Shape, c.shape) {
			t.Errorf("run %d: Reshape gave %v, want %v", i, out[0].Shape, c.shape)
		}
		if want := []int64{1, int64(c.nonzero)}; !slices.Equal(out[1].Shape, want) {
			t.Errorf("run %d: NonZero gave %v, want %v", i, out[1].Shape, want)
		}
		if got := out[0].F32(); len(got) != c.n || got[0] != -1 {
			t.Errorf("run %d: Reshape's data %v...", i, got[:min(len(got), 3)])
		}
		// Callers own their outputs' shapes: changing one must not reach the memo.
		out[0].Shape[0], out[1].Shape[0] = 99, 99
	}
	byName := map[string]int{}
	for i, n := range g.Nodes {
		byName[n.Name] = i
	}
	if m := s.memo[byName["neg"]]; !m.reusable {
		t.Error("Neg's inference (shape-only) was not memoized")
	}
	if m := s.memo[byName["nonzero"]]; m.reusable {
		t.Error("NonZero's inference (data-dependent) was memoized")
	}
	if m := s.memo[byName["reshape"]]; m.reusable && m.small[1] == nil {
		t.Error("Reshape's inference was memoized without its runtime shape in the key")
	}
}

// TestShapeMemoKey: a small runtime input's bytes are part of the key (in
// case an inference ever falls back to a default when a value is hidden),
// a large one's and a graph constant's are not.
func TestShapeMemoKey(t *testing.T) {
	g := ir.NewGraph("main")
	small := input("small", ir.Int64, 2)
	large := input("large", ir.Float32, 96)
	c := g.AddConst("c", ir.Int64Tensor([]int64{1}, 7))
	n := g.AddNode("n", "Identity", []*ir.Value{small, large, c}, "y")
	var m shapeMemo
	in := []*ir.Tensor{ir.Int64Tensor([]int64{2}, 1, 2), ir.NewTensor(ir.Float32, []int64{96}), c.Const}
	m.setKey(n, in)
	if !m.matches(n, in) {
		t.Fatal("the key does not match its own inputs")
	}
	big := ir.NewTensor(ir.Float32, []int64{96})
	big.F32()[5] = 1
	if !m.matches(n, []*ir.Tensor{ir.Int64Tensor([]int64{2}, 1, 2), big, c.Const}) {
		t.Error("a large input's values are in the key")
	}
	if m.matches(n, []*ir.Tensor{ir.Int64Tensor([]int64{2}, 1, 3), in[1], c.Const}) {
		t.Error("a small runtime input's values are not in the key")
	}
	if m.matches(n, []*ir.Tensor{in[0], ir.NewTensor(ir.Float32, []int64{95}), c.Const}) {
		t.Error("an input's shape is not in the key")
	}
	if m.matches(n, []*ir.Tensor{in[0], ir.NewTensor(ir.Float16, []int64{96}), c.Const}) {
		t.Error("an input's dtype is not in the key")
	}
}
