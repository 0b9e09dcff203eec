package ir

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestInferNeverPanics throws random, often invalid, nodes at every shape
// function: they must return an error or a result, never panic, always set
// the output dtype when every input dtype is known, and never produce a dim
// below -1.
func TestInferNeverPanics(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	dims := []int64{-1, 0, 1, 2, 3, 4}
	randShape := func() []int64 {
		s := make([]int64, rng.IntN(5))
		for i := range s {
			s[i] = dims[rng.IntN(len(dims))]
		}
		return s
	}
	randInts := func() []int64 {
		v := make([]int64, rng.IntN(5))
		for i := range v {
			v[i] = int64(rng.IntN(9)) - 3
		}
		return v
	}
	randValue := func() *Value {
		switch rng.IntN(9) {
		case 0:
			return nil
		case 1:
			return tUnk(Float32)
		case 2:
			return tInts(randInts()...)
		case 3:
			return tInt(int64(rng.IntN(7)) - 2)
		case 4:
			return tFloats(float32(rng.IntN(4)), 0.5)
		case 5:
			// Corrupt constant: shape claims more data than it holds.
			return &Value{Name: "bad", DType: Int64, Shape: []int64{4}, Const: &Tensor{DType: Int64, Shape: []int64{4}, Data: make([]byte, 8)}}
		case 6:
			return tVal(Bool, randShape()...)
		case 7:
			return tVal(Int64, randShape()...)
		default:
			return tVal(Float32, randShape()...)
		}
	}
	intsAttr := func() Attr { return IntsAttr(randInts()...) }
	attrPool := []func(a Attrs){
		func(a Attrs) { a["axis"] = IntAttr(int64(rng.IntN(9)) - 4) },
		func(a Attrs) { a["keepdims"] = IntAttr(int64(rng.IntN(2))) },
		func(a Attrs) { a["perm"] = intsAttr() },
		func(a Attrs) { a["kernel_shape"] = intsAttr() },
		func(a Attrs) { a["strides"] = intsAttr() },
		func(a Attrs) { a["pads"] = intsAttr() },
		func(a Attrs) { a["dilations"] = intsAttr() },
		func(a Attrs) { a["output_shape"] = intsAttr() },
		func(a Attrs) { a["output_padding"] = intsAttr() },
		func(a Attrs) { a["axes"] = intsAttr() },
		func(a Attrs) { a["group"] = IntAttr(int64(rng.IntN(4)) - 1) },
		func(a Attrs) { a["blocksize"] = IntAttr(int64(rng.IntN(4)) - 1) },
		func(a Attrs) { a["to"] = IntAttr(int64(rng.IntN(20)) - 1) },
		func(a Attrs) { a["ceil_mode"] = IntAttr(1) },
		func(a Attrs) { a["allowzero"] = IntAttr(1) },
		func(a Attrs) { a["num_outputs"] = IntAttr(int64(rng.IntN(4))) },
		func(a Attrs) { a["start"] = IntAttr(int64(rng.IntN(9)) - 4) },
		func(a Attrs) { a["end"] = IntAttr(int64(rng.IntN(9)) - 4) },
		func(a Attrs) { a["auto_pad"] = StringAttr([]string{"SAME_UPPER", "VALID", "NOTSET", "x"}[rng.IntN(4)]) },
		func(a Attrs) {
			a["keep_aspect_ratio_policy"] = StringAttr([]string{"not_larger", "not_smaller"}[rng.IntN(2)])
		},
		func(a Attrs) { a["coordinate_transformation_mode"] = StringAttr("tf_crop_and_resize") },
		func(a Attrs) { a["value"] = TensorAttr(NewTensor(Int32, []int64{int64(rng.IntN(2))})) },
		func(a Attrs) {
			a["equation"] = StringAttr([]string{"ij,jk->ik", "...i", "ii", "i...j->", "ab,b", "", "->", "a.b"}[rng.IntN(8)])
		},
	}
	for _, op := range Ops() {
		if op.Name == OpGraphKernel {
			continue
		}
		for iter := 0; iter < 400; iter++ {
			n := &Node{Name: "fuzz", Op: op.Name, Attrs: Attrs{}}
			for i := rng.IntN(6); i > 0; i-- {
				n.Inputs = append(n.Inputs, randValue())
			}
			for i := rng.IntN(4); i > 0; i-- {
				attrPool[rng.IntN(len(attrPool))](n.Attrs)
			}
			for i := rng.IntN(4); i > 0; i-- {
				n.Outputs = append(n.Outputs, &Value{Name: fmt.Sprint("o", i)})
			}
			desc := fmt.Sprintf("%s inputs %v attrs %v outputs %d", op.Name, n.Inputs, n.Attrs, len(n.Outputs))
			err := func() (err error) {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("panic on %s: %v", desc, r)
					}
				}()
				return InferNode(n)
			}()
			if err != nil {
				continue
			}
			allTyped := true
			for _, in := range n.Inputs {
				if in != nil && in.DType == Undefined {
					allTyped = false
				}
			}
			for i, out := range n.Outputs {
				if allTyped && out.DType == Undefined {
					t.Errorf("%s: output %d has no dtype", desc, i)
				}
				for _, d := range out.Shape {
					if d < -1 {
						t.Errorf("%s: output %d has dim %d (shape %v)", desc, i, d, out.Shape)
					}
				}
			}
		}
	}
}

// TestInferGraph runs InferShapes over a small graph and checks that
// failures of several nodes are all reported with node names.
func TestInferGraph(t *testing.T) {
	g := NewGraph("g")
	x := &Value{Name: "x", DType: Float32, Shape: []int64{-1, 3, 8, 8}, DimNames: []string{"N", "", "", ""}}
	g.Inputs = []*Value{x}
	w := g.AddConst("w", NewTensor(Float32, []int64{4, 3, 3, 3}))
	shape := g.AddConst("shape", Int64Tensor([]int64{2}, 0, -1))
	conv := g.AddNode("conv", "Conv2D", []*Value{x, w}, "c")
	conv.Attrs["pads"] = IntsAttr(1, 1, 1, 1)
	relu := g.AddNode("relu", "ReLU", []*Value{conv.Outputs[0]}, "r")
	flat := g.AddNode("flat", "Reshape", []*Value{relu.Outputs[0], shape}, "f")
	g.Outputs = []*Value{flat.Outputs[0]}
	if err := InferShapes(g); err != nil {
		t.Fatal(err)
	}
	if got := flat.Outputs[0]; got.DType != Float32 || !tSameShape(got.Shape, []int64{-1, -1}) {
		t.Fatalf("reshape output %v", got)
	}
	if got := relu.Outputs[0]; !tSameShape(got.Shape, []int64{-1, 4, 8, 8}) {
		t.Fatalf("relu output %v", got)
	}

	bad := NewGraph("bad")
	a := g.AddNode("add", "Add", []*Value{tVal(Float32, 2), tVal(Float32, 3)}, "a")
	m := g.AddNode("mm", "MatMul", []*Value{tVal(Float32, 2, 3), tVal(Float32, 4, 5)}, "m")
	bad.Nodes = []*Node{a, m}
	err := InferShapes(bad)
	if err == nil {
		t.Fatal("want errors")
	}
	for _, want := range []string{"node add (Add)", "node mm (MatMul)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}
