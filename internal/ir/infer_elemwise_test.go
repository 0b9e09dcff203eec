package ir

import "testing"

func TestEveryOpHasInfer(t *testing.T) {
	for _, op := range Ops() {
		if op.Name == OpGraphKernel {
			continue
		}
		if !HasInfer(op.Name) {
			t.Errorf("op %s has no shape function", op.Name)
		}
	}
}

func TestInferUnaryOps(t *testing.T) {
	var cases []inferCase
	for _, op := range Ops() {
		if !op.IsElemwise() || op.In.Max != 1 {
			continue
		}
		want := Float32
		switch op.Name {
		case "IsInf", "IsNan", "LogicalNot":
			want = Bool
		case "Cast", "Dropout", "Clip":
			continue // own tables
		}
		cases = append(cases,
			inferCase{name: "4d", op: op.Name, inputs: []*Value{tVal(Float32, 2, -1, 3, 1)}, want: []outWant{tOut(want, 2, -1, 3, 1)}},
			inferCase{name: "scalar", op: op.Name, inputs: []*Value{tVal(Float32)}, want: []outWant{tOut(want)}},
			inferCase{name: "unknown rank", op: op.Name, inputs: []*Value{tUnk(Float32)}, want: []outWant{tOutU(want)}},
			inferCase{name: "no input", op: op.Name, inputs: nil, err: "expects 1 inputs, got 0"},
			inferCase{name: "two inputs", op: op.Name, inputs: []*Value{tVal(Float32, 2), tVal(Float32, 2)}, err: "expects 1 inputs, got 2"},
		)
	}
	if len(cases) < 5*40 {
		t.Fatalf("only %d unary cases: op table changed?", len(cases))
	}
	runInferTable(t, cases)
}

func TestInferUnaryKeepsDimNames(t *testing.T) {
	x := &Value{Name: "x", DType: Float16, Shape: []int64{-1, 8}, DimNames: []string{"batch", ""}}
	n := &Node{Name: "relu", Op: "ReLU", Inputs: []*Value{x}, Outputs: []*Value{{Name: "y"}}, Attrs: Attrs{}}
	if err := InferNode(n); err != nil {
		t.Fatal(err)
	}
	y := n.Outputs[0]
	if y.DType != Float16 || !tSameShape(y.Shape, []int64{-1, 8}) || len(y.DimNames) != 2 || y.DimNames[0] != "batch" {
		t.Fatalf("got %v names %v", y, y.DimNames)
	}
	// The output must not alias the input's slices.
	y.Shape[1] = 99
	y.DimNames[0] = "z"
	if x.Shape[1] != 8 || x.DimNames[0] != "batch" {
		t.Fatal("output shares storage with the input")
	}
}

func TestInferElementwise(t *testing.T) {
	runInferTable(t, []inferCase{
		// Cast
		{name: "to int32", op: "Cast", inputs: []*Value{tVal(Float32, 2, 3)}, attrs: Attrs{"to": IntAttr(int64(Int32))}, want: []outWant{tOut(Int32, 2, 3)}},
		{name: "to bool unknown", op: "Cast", inputs: []*Value{tUnk(Float32)}, attrs: Attrs{"to": IntAttr(9)}, want: []outWant{tOutU(Bool)}},
		{name: "missing to", op: "Cast", inputs: []*Value{tVal(Float32, 2)}, err: "attribute to is missing"},
		{name: "bad to", op: "Cast", inputs: []*Value{tVal(Float32, 2)}, attrs: Attrs{"to": IntAttr(77)}, err: "not a known dtype"},
		// Dropout
		{name: "with mask", op: "Dropout", inputs: []*Value{tVal(Float32, 4, 5), tFloat(0.5)}, want: []outWant{tOut(Float32, 4, 5), tOut(Bool, 4, 5)}},
		{name: "y only", op: "Dropout", inputs: []*Value{tVal(Float16, 4)}, want: []outWant{tOut(Float16, 4)}},
		{name: "omitted mask", op: "Dropout", inputs: []*Value{tVal(Float16, 4), nil, nil}, want: []outWant{tOut(Float16, 4)}},
		{name: "three outputs", op: "Dropout", inputs: []*Value{tVal(Float16, 4)}, nout: 3, err: "expects 1 to 2 outputs, got 3"},
		// Clip
		{name: "min max", op: "Clip", inputs: []*Value{tVal(Float32, 1, 3), tFloat(0), tFloat(6)}, want: []outWant{tOut(Float32, 1, 3)}},
		{name: "max only", op: "Clip", inputs: []*Value{tVal(Float32, 1, 3), nil, tFloat(6)}, want: []outWant{tOut(Float32, 1, 3)}},
		{name: "vector bound", op: "Clip", inputs: []*Value{tVal(Float32, 3), tFloats(0, 1)}, err: "input 1 (c): bound must be a scalar"},
		{name: "four inputs", op: "Clip", inputs: []*Value{tVal(Float32, 3), tFloat(0), tFloat(1), tFloat(2)}, err: "expects 1 to 3 inputs, got 4"},

		// binary broadcasting
		{name: "same", op: "Add", inputs: []*Value{tVal(Float32, 2, 3), tVal(Float32, 2, 3)}, want: []outWant{tOut(Float32, 2, 3)}},
		{name: "broadcast", op: "Sub", inputs: []*Value{tVal(Float32, 8, 1, 6, 1), tVal(Float32, 7, 1, 5)}, want: []outWant{tOut(Float32, 8, 7, 6, 5)}},
		{name: "scalar", op: "Mul", inputs: []*Value{tVal(Int64, 4, 5), tVal(Int64)}, want: []outWant{tOut(Int64, 4, 5)}},
		{name: "unknown dims", op: "RealDiv", inputs: []*Value{tVal(Float32, -1, 1, 3), tVal(Float32, 5, -1)}, want: []outWant{tOut(Float32, -1, 5, 3)}},
		{name: "unknown vs 1", op: "Pow", inputs: []*Value{tVal(Float32, -1), tVal(Float32, 1)}, want: []outWant{tOut(Float32, -1)}},
		{name: "unknown rank", op: "Mod", inputs: []*Value{tUnk(Int32), tVal(Int32, 3)}, attrs: Attrs{"fmod": IntAttr(0)}, want: []outWant{tOutU(Int32)}},
		{name: "first dtype unknown", op: "SquaredDifference", inputs: []*Value{{Name: "a", Shape: []int64{2}}, tVal(Float32, 2)}, want: []outWant{tOut(Float32, 2)}},
		{name: "zero dim", op: "Add", inputs: []*Value{tVal(Float32, 0, 3), tVal(Float32, 1, 3)}, want: []outWant{tOut(Float32, 0, 3)}},
		{name: "incompatible", op: "Add", inputs: []*Value{tVal(Float32, 2, 3), tVal(Float32, 4, 3)}, err: "input 1 (in): shapes [2 3] and [4 3] cannot be broadcast"},
		{name: "one input", op: "Add", inputs: []*Value{tVal(Float32, 2)}, err: "expects 2 inputs, got 1"},
		{name: "missing first", op: "Add", inputs: []*Value{nil, tVal(Float32, 2)}, err: "required input 0 is missing"},
		{name: "bool", op: "Equal", inputs: []*Value{tVal(Int32, 3, 1), tVal(Int32, 4)}, want: []outWant{tOut(Bool, 3, 4)}},
		{name: "bool", op: "Greater", inputs: []*Value{tVal(Float32, 3), tVal(Float32)}, want: []outWant{tOut(Bool, 3)}},
		{name: "bool", op: "GreaterEqual", inputs: []*Value{tVal(Float32, 3), tVal(Float32, 3)}, want: []outWant{tOut(Bool, 3)}},
		{name: "bool", op: "Less", inputs: []*Value{tVal(Float32, 2, 1), tVal(Float32, 1, 2)}, want: []outWant{tOut(Bool, 2, 2)}},
		{name: "bool", op: "LessEqual", inputs: []*Value{tUnk(Float32), tVal(Float32, 1)}, want: []outWant{tOutU(Bool)}},
		{name: "bool", op: "LogicalAnd", inputs: []*Value{tVal(Bool, 2), tVal(Bool, 2)}, want: []outWant{tOut(Bool, 2)}},
		{name: "bool", op: "LogicalOr", inputs: []*Value{tVal(Bool, 2), tVal(Bool, 1)}, want: []outWant{tOut(Bool, 2)}},
		{name: "bool", op: "LogicalXor", inputs: []*Value{tVal(Bool, 2), tVal(Bool, 3)}, err: "cannot be broadcast"},

		// variadic
		{name: "three", op: "Maximum", inputs: []*Value{tVal(Float32, 3, 1), tVal(Float32, 4), tVal(Float32, 1, 1, 1)}, want: []outWant{tOut(Float32, 1, 3, 4)}},
		{name: "one", op: "Minimum", inputs: []*Value{tVal(Float32, 3)}, want: []outWant{tOut(Float32, 3)}},
		{name: "unknown rank", op: "AddN", inputs: []*Value{tVal(Float32, 3), tUnk(Float32)}, want: []outWant{tOutU(Float32)}},
		{name: "checks known despite unknown", op: "AddN", inputs: []*Value{tVal(Float32, 3), tUnk(Float32), tVal(Float32, 4)}, err: "input 2 (in)"},
		{name: "mean", op: "Mean", inputs: []*Value{tVal(Float64, 2, 2), tVal(Float64, 2, 2)}, want: []outWant{tOut(Float64, 2, 2)}},
		{name: "none", op: "Mean", inputs: nil, err: "expects at least 1 inputs"},
		{name: "nil in middle", op: "Maximum", inputs: []*Value{tVal(Float32, 3), nil, tVal(Float32, 3)}, err: "input 1 is missing"},

		// PReLU
		{name: "channel slope", op: "PReLU", inputs: []*Value{tVal(Float32, 1, 3, 4, 4), tVal(Float32, 3, 1, 1)}, want: []outWant{tOut(Float32, 1, 3, 4, 4)}},
		{name: "scalar slope", op: "PReLU", inputs: []*Value{tVal(Float32, 2, 5), tVal(Float32, 1)}, want: []outWant{tOut(Float32, 2, 5)}},
		{name: "bad slope", op: "PReLU", inputs: []*Value{tVal(Float32, 2, 5), tVal(Float32, 3)}, err: "does not broadcast to x"},
		{name: "slope rank", op: "PReLU", inputs: []*Value{tVal(Float32, 5), tVal(Float32, 1, 5)}, err: "higher rank"},

		// Select (Where)
		{name: "broadcast", op: "Select", inputs: []*Value{tVal(Bool, 2, 1), tVal(Int64, 1, 3), tVal(Int64)}, want: []outWant{tOut(Int64, 2, 3)}},
		{name: "cond dtype", op: "Select", inputs: []*Value{tVal(Float32, 2), tVal(Int64, 2), tVal(Int64, 2)}, err: "condition must be bool"},
		{name: "bad broadcast", op: "Select", inputs: []*Value{tVal(Bool, 2), tVal(Int64, 2), tVal(Int64, 3)}, err: "input 2"},

		// BiasAdd
		{name: "nchw", op: "BiasAdd", inputs: []*Value{tVal(Float32, 2, 3, 4, 4), tVal(Float32, 3)}, want: []outWant{tOut(Float32, 2, 3, 4, 4)}},
		{name: "nhwc", op: "BiasAdd", inputs: []*Value{tVal(Float32, 2, 4, 4, 3), tVal(Float32, 3)}, attrs: Attrs{"format": StringAttr("NHWC")}, want: []outWant{tOut(Float32, 2, 4, 4, 3)}},
		{name: "data_format", op: "BiasAdd", inputs: []*Value{tVal(Float32, 2, 4, 3), tVal(Float32, 3)}, attrs: Attrs{"data_format": StringAttr("NHWC")}, want: []outWant{tOut(Float32, 2, 4, 3)}},
		{name: "2d", op: "BiasAdd", inputs: []*Value{tVal(Float32, 5, 10), tVal(Float32, 10)}, want: []outWant{tOut(Float32, 5, 10)}},
		{name: "mismatch", op: "BiasAdd", inputs: []*Value{tVal(Float32, 2, 3, 4, 4), tVal(Float32, 4)}, err: "bias length 4 does not match channel dim 3"},
		{name: "bias rank", op: "BiasAdd", inputs: []*Value{tVal(Float32, 2, 3), tVal(Float32, 1, 3)}, err: "bias must be 1-D"},
		{name: "bad format", op: "BiasAdd", inputs: []*Value{tVal(Float32, 2, 3), tVal(Float32, 3)}, attrs: Attrs{"format": StringAttr("HWCN")}, err: "attribute format"},

		// BroadcastTo (Expand)
		{name: "const", op: "BroadcastTo", inputs: []*Value{tVal(Float32, 3, 1), tInts(2, 1, 6)}, want: []outWant{tOut(Float32, 2, 3, 6)}},
		{name: "shape smaller", op: "BroadcastTo", inputs: []*Value{tVal(Float32, 3, 4), tInts(1)}, want: []outWant{tOut(Float32, 3, 4)}},
		{name: "no data", op: "BroadcastTo", inputs: []*Value{tVal(Float32, 3, 1), tVec(3)}, want: []outWant{tOut(Float32, -1, 3, -1)}},
		{name: "no data no len", op: "BroadcastTo", inputs: []*Value{tVal(Float32, 3, 1), tUnk(Int64)}, want: []outWant{tOutU(Float32)}},
		{name: "incompatible", op: "BroadcastTo", inputs: []*Value{tVal(Float32, 3), tInts(4)}, err: "cannot be broadcast"},
		{name: "negative", op: "BroadcastTo", inputs: []*Value{tVal(Float32, 3), tInts(-1)}, err: "negative dim"},
	})
}

func TestInferDTypeAgreement(t *testing.T) {
	const msg = "inputs of different dtypes: input 0 (in) is float32, input 1 (in) is int64"
	f, i := tVal(Float32, 2, 3), tVal(Int64, 2, 3)
	var cases []inferCase
	for _, op := range []string{"Add", "Sub", "Mul", "RealDiv", "Mod", "Equal", "Less", "Greater", "MatMul"} {
		b := tVal(Int64, 3, 2)
		if op != "MatMul" {
			b = i
		}
		cases = append(cases, inferCase{name: "mixed", op: op, inputs: []*Value{f, b}, err: msg})
	}
	for _, op := range []string{"Maximum", "Minimum", "AddN", "Mean", "Concat"} {
		cases = append(cases, inferCase{name: "mixed", op: op, inputs: []*Value{f, i}, err: msg})
	}
	cases = append(cases,
		inferCase{name: "mixed", op: "Select", inputs: []*Value{tVal(Bool, 2, 3), f, i},
			err: "inputs of different dtypes: input 1 (in) is float32, input 2 (in) is int64"},
		// ONNX Pow types base and exponent separately.
		inferCase{name: "mixed", op: "Pow", inputs: []*Value{f, i}, want: []outWant{tOut(Float32, 2, 3)}},
		// An unknown dtype is not a disagreement.
		inferCase{name: "unknown dtype", op: "Add", inputs: []*Value{tVal(Undefined, 2, 3), i}, want: []outWant{tOut(Int64, 2, 3)}},
	)
	runInferTable(t, cases)
}
