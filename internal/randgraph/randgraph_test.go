package randgraph

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/onnx"
)

// TestModelDeterministic: a seed always gives the same bytes and steps, and
// different seeds give different models.
func TestModelDeterministic(t *testing.T) {
	seen := map[string]int64{}
	for seed := int64(1); seed <= 50; seed++ {
		m1, i1 := Model(seed)
		m2, i2 := Model(seed)
		b1, err1 := m1.Bytes()
		b2, err2 := m2.Bytes()
		if err1 != nil || err2 != nil {
			t.Fatalf("seed %d: %v %v", seed, err1, err2)
		}
		if !bytes.Equal(b1, b2) || !slices.Equal(i1.Steps, i2.Steps) || i1.Fusible != i2.Fusible {
			t.Errorf("seed %d: two builds differ", seed)
		}
		if prev, ok := seen[string(b1)]; ok {
			t.Errorf("seeds %d and %d give the same model", prev, seed)
		}
		seen[string(b1)] = seed
	}
}

// TestModelValid: every model parses, its one input is Info.Input, every
// declared output shape is what shape inference gives, and every step's
// value is computed or consumed (no dead step).
func TestModelValid(t *testing.T) {
	for seed := int64(1); seed <= 300; seed++ {
		m, info := Model(seed)
		data, err := m.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		g, err := onnx.Parse(data, "", onnx.Options{Name: fmt.Sprintf("seed %d", seed)})
		if err != nil {
			t.Fatalf("seed %d: %v\n  %s", seed, err, info.Describe())
		}
		if len(info.Steps) == 0 || len(info.Steps) > 15 { // a Slice step may add its rest
			t.Errorf("seed %d: %d steps", seed, len(info.Steps))
		}
		in := g.Graph.Inputs
		if len(in) != 1 || in[0].Name != info.Input.Name || in[0].DType != ir.Float32 || !slices.Equal(in[0].Shape, info.Input.Shape) {
			t.Errorf("seed %d: inputs %v, want %s%v", seed, in, info.Input.Name, info.Input.Shape)
		}
		if len(g.Graph.Outputs) == 0 {
			t.Errorf("seed %d: no outputs", seed)
		}
		declared := m.Graph().Output
		if len(declared) != len(g.Graph.Outputs) {
			t.Fatalf("seed %d: %d outputs declared, %d built", seed, len(declared), len(g.Graph.Outputs))
		}
		for i, o := range g.Graph.Outputs {
			var want []int64
			for _, d := range declared[i].GetType().GetTensorType().GetShape().GetDim() {
				want = append(want, d.GetDimValue())
			}
			if o.DType != ir.Float32 || !slices.Equal(o.Shape, want) {
				t.Errorf("seed %d: output %s is %s%v, declared %v", seed, o.Name, o.DType, o.Shape, want)
			}
		}
		read := map[*ir.Value]bool{}
		for _, o := range g.Graph.Outputs {
			read[o] = true
		}
		for _, n := range g.Graph.Nodes {
			for _, v := range n.Inputs {
				read[v] = true
			}
		}
		for _, n := range g.Graph.Nodes {
			for _, o := range n.Outputs {
				if o != nil && !read[o] {
					t.Errorf("seed %d: %s of node %s is dead", seed, o.Name, n.Name)
				}
			}
		}
		g.Close()
	}
}

// TestFloat64Body: the widened body of a small graph computes in float64
// without touching the original, and ScaledError measures against the
// tensor's scale.
func TestFloat64Body(t *testing.T) {
	g := ir.NewGraph("b")
	x := &ir.Value{Name: "x", DType: ir.Float32, Shape: []int64{2, 3}}
	g.Inputs = []*ir.Value{x}
	c := g.AddConst("c", ir.Float32Tensor([]int64{3}, 1, 2, 3))
	axes := g.AddConst("axes", ir.Int64Tensor([]int64{1}, -1))
	add := g.AddNode("add", "Add", []*ir.Value{x, c}, "s")
	red := g.AddNode("sum", "ReduceSum", []*ir.Value{add.Outputs[0], axes}, "r")
	g.Outputs = []*ir.Value{red.Outputs[0], add.Outputs[0]}
	for _, n := range g.Nodes {
		if err := ir.InferNode(n); err != nil {
			t.Fatal(err)
		}
	}
	w := Float64Body(g)
	if x.DType != ir.Float32 || c.Const.DType != ir.Float32 || add.Outputs[0].DType != ir.Float32 {
		t.Fatal("the original body was modified")
	}
	if w.Inputs[0].DType != ir.Float64 || w.Nodes[0].Inputs[1].Const.DType != ir.Float64 ||
		!slices.Equal(w.Nodes[0].Inputs[1].Const.F64(), []float64{1, 2, 3}) {
		t.Errorf("inputs/constants not widened: %v %v", w.Inputs[0], w.Nodes[0].Inputs[1].Const)
	}
	if w.Nodes[1].Inputs[1].Const.DType != ir.Int64 {
		t.Errorf("integer axes widened")
	}
	if w.Nodes[1].Inputs[0] != w.Nodes[0].Outputs[0] || w.Nodes[0].Outputs[0].Producer != w.Nodes[0] ||
		w.Outputs[0] != w.Nodes[1].Outputs[0] || w.Outputs[1] != w.Nodes[0].Outputs[0] {
		t.Errorf("widened body is not wired as the original")
	}
	for _, v := range []*ir.Value{w.Outputs[0], w.Outputs[1]} {
		if v.DType != ir.Float64 {
			t.Errorf("%s is %s", v.Name, v.DType)
		}
	}
	in := Float64Tensors([]*ir.Tensor{ir.Float32Tensor([]int64{2}, 0.5, -1), ir.Int64Tensor([]int64{1}, 7)})
	if in[0].DType != ir.Float64 || !slices.Equal(in[0].F64(), []float64{0.5, -1}) || in[1].DType != ir.Int64 {
		t.Errorf("Float64Tensors: %v", in)
	}
	want := ir.Float32Tensor([]int64{3}, 10, 0.01, -2)
	got := ir.Float32Tensor([]int64{3}, 10, 0.02, -2.2)
	// Element 1 is judged against 0.1*10 = 1, element 2 against 2.
	if e := ScaledError(got, want); e < 0.0999 || e > 0.1001 {
		t.Errorf("ScaledError = %g, want 0.1", e)
	}
}
