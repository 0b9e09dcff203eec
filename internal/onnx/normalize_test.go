package onnx

import (
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"gkconv/internal/ir"
	ob "gkconv/internal/onnx/onnxbuild"
	"gkconv/internal/onnx/onnxpb"
)

func TestReduceAxesAttrBecomesInput(t *testing.T) {
	for _, tc := range []struct {
		op    string
		opset int64
	}{{"ReduceMean", 13}, {"ReduceMax", 17}, {"ReduceSum", 11}} {
		m := ob.New("g", tc.opset).Input("x", ob.Float, 2, 3, 4).Output("y", ob.Float, 2, 4)
		m.Node("r", tc.op, strs("x"), strs("y"), ob.Ints("axes", 1), ob.Int("keepdims", 0))
		g := mustGraph(t, m)
		wantOps(t, g, tc.op)
		n := g.Nodes[0]
		if got := constInts(t, n.Input(1)); !slices.Equal(got, i64(1)) {
			t.Errorf("%s axes input = %v", tc.op, got)
		}
		if n.Attrs.Has("axes") || n.Attrs.Int("keepdims", 1) != 0 {
			t.Errorf("%s attrs = %v", tc.op, n.Attrs)
		}
	}
	// The new form passes through; no axes at all means reduce all.
	m := ob.New("g", 18).Input("x", ob.Float, 2, 3).Output("y", ob.Float, 1, 1)
	m.Node("r", "ReduceMean", strs("x"), strs("y"))
	g := mustGraph(t, m)
	if len(g.Nodes[0].Inputs) != 1 {
		t.Errorf("reduce-all got inputs %v", g.Nodes[0].Inputs)
	}
}

func TestSplitAttrAndNumOutputs(t *testing.T) {
	m := ob.New("g", 11).Input("x", ob.Float, 2, 6).Output("a", ob.Float, 2, 2).Output("b", ob.Float, 2, 4)
	m.Node("s", "Split", strs("x"), strs("a", "b"), ob.Int("axis", 1), ob.Ints("split", 2, 4))
	g := mustGraph(t, m)
	n := g.Nodes[0]
	if got := constInts(t, n.Input(1)); !slices.Equal(got, i64(2, 4)) || n.Attrs.Has("split") {
		t.Errorf("split = %v attrs %v", got, n.Attrs)
	}
	m = ob.New("g", 13).Input("x", ob.Float, 2, 6).Output("a", ob.Float, 2, 2).Output("b", ob.Float, 2, 2).Output("c", ob.Float, 2, 2)
	m.Node("s", "Split", strs("x"), strs("a", "b", "c"), ob.Int("axis", 1))
	g = mustGraph(t, m)
	if g.Nodes[0].Attrs.Int("num_outputs", 0) != 3 {
		t.Errorf("num_outputs not set: %v", g.Nodes[0].Attrs)
	}
}

func TestSqueezeUnsqueezeAxes(t *testing.T) {
	m := ob.New("g", 11).Input("x", ob.Float, 1, 3).Output("y", ob.Float, 1, 1, 3)
	m.Node("sq", "Squeeze", strs("x"), strs("s"), ob.Ints("axes", 0))
	m.Node("us", "Unsqueeze", strs("s"), strs("y"), ob.Ints("axes", 0, 1))
	g := mustGraph(t, m)
	wantOps(t, g, "Squeeze", "Unsqueeze")
	if got := constInts(t, g.Nodes[0].Input(1)); !slices.Equal(got, i64(0)) {
		t.Errorf("squeeze axes %v", got)
	}
	if got := constInts(t, g.Nodes[1].Input(1)); !slices.Equal(got, i64(0, 1)) {
		t.Errorf("unsqueeze axes %v", got)
	}
}

func TestClipAttrs(t *testing.T) {
	m := ob.New("g", 6).Input("x", ob.Float, 4).Output("y", ob.Float, 4)
	m.Node("c", "Clip", strs("x"), strs("y"), ob.Float32Attr("min", 0), ob.Float32Attr("max", 6))
	m.Node("c2", "Clip", strs("x"), strs("z"), ob.Float32Attr("max", 1))
	m.Output("z", ob.Float, 4)
	g := mustGraph(t, m)
	n := g.Nodes[0]
	if lo, hi := constFloats(t, n.Input(1)), constFloats(t, n.Input(2)); lo[0] != 0 || hi[0] != 6 || n.Input(1).DType != ir.Float32 {
		t.Errorf("clip bounds %v %v", lo, hi)
	}
	n = g.Nodes[1]
	if n.Input(1) != nil || constFloats(t, n.Input(2))[0] != 1 {
		t.Errorf("clip max only: %v", n.Inputs)
	}
	if len(n.Attrs) != 0 {
		t.Errorf("attrs left: %v", n.Attrs)
	}
}

func TestPadAttrs(t *testing.T) {
	m := ob.New("g", 2).Input("x", ob.Float, 2, 2).Output("y", ob.Float, 4, 4)
	m.Node("p", "Pad", strs("x"), strs("y"), ob.Ints("pads", 1, 1, 1, 1), ob.Float32Attr("value", 1.5), ob.String("mode", "constant"))
	g := mustGraph(t, m)
	n := g.Nodes[0]
	if got := constInts(t, n.Input(1)); !slices.Equal(got, i64(1, 1, 1, 1)) {
		t.Errorf("pads %v", got)
	}
	if got := constFloats(t, n.Input(2)); got[0] != 1.5 {
		t.Errorf("value %v", got)
	}
	if n.Attrs.String("mode", "") != "constant" || n.Attrs.Has("pads") || n.Attrs.Has("value") {
		t.Errorf("attrs %v", n.Attrs)
	}
}

func TestSliceAndTopKAttrs(t *testing.T) {
	m := ob.New("g", 9).Input("x", ob.Float, 4, 6).Output("y", ob.Float, 2, 6).Output("v", ob.Float, 4, 2).Output("i", ob.Int64, 4, 2)
	m.Node("s", "Slice", strs("x"), strs("y"), ob.Ints("starts", 1), ob.Ints("ends", 3), ob.Ints("axes", 0))
	m.Node("k", "TopK", strs("x"), strs("v", "i"), ob.Int("k", 2), ob.Int("axis", 1))
	g := mustGraph(t, m)
	s := g.Nodes[0]
	if !slices.Equal(constInts(t, s.Input(1)), i64(1)) || !slices.Equal(constInts(t, s.Input(2)), i64(3)) || !slices.Equal(constInts(t, s.Input(3)), i64(0)) {
		t.Errorf("slice inputs %v", s.Inputs)
	}
	k := g.Nodes[1]
	if !slices.Equal(constInts(t, k.Input(1)), i64(2)) || k.Attrs.Has("k") || k.Attrs.Int("axis", 0) != 1 {
		t.Errorf("topk %v %v", k.Inputs, k.Attrs)
	}
}

func TestUpsampleAndResize10(t *testing.T) {
	m := ob.New("g", 7).Input("x", ob.Float, 1, 1, 2, 2).Output("y", ob.Float, 1, 1, 4, 4)
	m.Node("u", "Upsample", strs("x"), strs("y"), ob.Floats("scales", 1, 1, 2, 2))
	g := mustGraph(t, m)
	wantOps(t, g, "Resize")
	n := g.Nodes[0]
	if len(n.Inputs) != 3 || n.Inputs[1] != nil || !slices.Equal(constFloats(t, n.Inputs[2]), []float64{1, 1, 2, 2}) {
		t.Fatalf("inputs %v", n.Inputs)
	}
	if n.Attrs.String("mode", "") != "nearest" || n.Attrs.String("coordinate_transformation_mode", "") != "asymmetric" || n.Attrs.String("nearest_mode", "") != "floor" {
		t.Errorf("attrs %v", n.Attrs)
	}

	m = ob.New("g", 10).Input("x", ob.Float, 1, 1, 4, 4).Output("y", ob.Float, 1, 1, 2, 2)
	m.Init(ob.Float32s("s", i64(4), []float32{1, 1, 0.5, 0.5}))
	m.Node("r", "Resize", strs("x", "s"), strs("y"), ob.String("mode", "nearest"))
	n = mustGraph(t, m).Nodes[0]
	if n.Inputs[1] != nil || n.Inputs[2].Name != "s" || n.Attrs.String("nearest_mode", "") != "ceil" {
		t.Errorf("resize10 %v %v", n.Inputs, n.Attrs)
	}

	// Opset 11: empty roi and scales mean absent.
	m = ob.New("g", 11).Input("x", ob.Float, 1, 1, 4, 4).Output("y", ob.Float, 1, 1, 2, 2)
	m.Init(ob.Float32s("roi", i64(0), nil), ob.Float32s("sc", i64(0), nil), ob.Int64s("sz", i64(4), i64(1, 1, 2, 2)))
	m.Node("r", "Resize", strs("x", "roi", "sc", "sz"), strs("y"), ob.String("mode", "linear"))
	n = mustGraph(t, m).Nodes[0]
	if n.Inputs[1] != nil || n.Inputs[2] != nil || n.Inputs[3].Name != "sz" {
		t.Errorf("resize11 %v", n.Inputs)
	}
}

func TestBatchNormOldAttrs(t *testing.T) {
	m := ob.New("g", 7).Input("x", ob.Float, 1, 2, 3, 3).Output("y", ob.Float, 1, 2, 3, 3)
	for _, name := range []string{"s", "b", "mean", "var"} {
		m.Init(ob.Float32s(name, i64(2), []float32{1, 2}))
	}
	m.Node("bn", "BatchNormalization", strs("x", "s", "b", "mean", "var"), strs("y", "rm", "rv", "sm", "sv"),
		ob.Int("spatial", 1), ob.Int("is_test", 1), ob.Float32Attr("epsilon", 1e-3), ob.Ints("consumed_inputs", 0, 0, 0, 1, 1))
	g := mustGraph(t, m)
	n := g.Nodes[0]
	if n.Op != "BatchNorm" || len(n.Outputs) != 1 || len(n.Attrs) != 1 || n.Attrs.Float("epsilon", 0) != float64(float32(1e-3)) {
		t.Errorf("bn %v outputs %d attrs %v", n, len(n.Outputs), n.Attrs)
	}
	// Training outputs in use cannot be converted.
	m.Output("rm", ob.Float, 2)
	if _, err := parseModel(t, m, Options{}); !isUnsupported(err) {
		t.Errorf("training outputs used: err %v", err)
	}
}

func isUnsupported(err error) bool {
	_, ok := err.(*UnsupportedError)
	return ok
}

func TestSoftmaxLegacy(t *testing.T) {
	// axis=1 of a rank-3 input: coerce to 2-D (Hardmax likewise).
	for _, op := range []string{"Hardmax", "Softmax"} {
		m := ob.New("g", 11).Input("x", ob.Float, 2, 3, 4).Output("y", ob.Float, 2, 3, 4)
		m.Node("sm", op, strs("x"), strs("y"))
		wantOps(t, mustGraph(t, m), "Flatten", op, "Reshape")
	}
	m := ob.New("g", 11).Input("x", ob.Float, 2, 3, 4).Output("y", ob.Float, 2, 3, 4)
	m.Node("sm", "Softmax", strs("x"), strs("y"))
	g := mustGraph(t, m)
	if g.Nodes[0].Attrs.Int("axis", 0) != 1 || g.Nodes[1].Attrs.Int("axis", 0) != -1 {
		t.Errorf("attrs %v %v", g.Nodes[0].Attrs, g.Nodes[1].Attrs)
	}
	if got := constInts(t, g.Nodes[2].Input(1)); !slices.Equal(got, i64(2, 3, 4)) {
		t.Errorf("reshape to %v", got)
	}
	if g.Outputs[0].Name != "y" || g.Nodes[0].Name != "sm" || g.Nodes[2].Provenance[0] != "sm" {
		t.Errorf("names: out %s nodes %s %v", g.Outputs[0].Name, g.Nodes[0].Name, g.Nodes[2].Provenance)
	}
	// axis is the last one: same as the new semantics.
	m = ob.New("g", 11).Input("x", ob.Float, 2, 3, 4).Output("y", ob.Float, 2, 3, 4)
	m.Node("sm", "LogSoftmax", strs("x"), strs("y"), ob.Int("axis", -1))
	g = mustGraph(t, m)
	wantOps(t, g, "LogSoftmax")
	// dynamic dims: the shape comes from Shape(x).
	m = ob.New("g", 11).Input("x", ob.Float, "N", 3, 4).Output("y", ob.Float, "N", 3, 4)
	m.Node("sm", "Softmax", strs("x"), strs("y"))
	wantOps(t, mustGraph(t, m), "Flatten", "Softmax", "Shape", "Reshape")
	// opset 13: untouched.
	m = ob.New("g", 13).Input("x", ob.Float, 2, 3, 4).Output("y", ob.Float, 2, 3, 4)
	m.Node("sm", "Softmax", strs("x"), strs("y"), ob.Int("axis", 1))
	g = mustGraph(t, m)
	wantOps(t, g, "Softmax")
	if g.Nodes[0].Attrs.Int("axis", 0) != 1 {
		t.Errorf("opset 13 axis changed")
	}
}

func TestDropoutRatio(t *testing.T) {
	m := ob.New("g", 10).Input("x", ob.Float, 4).Output("y", ob.Float, 4)
	m.Node("d", "Dropout", strs("x"), strs("y"), ob.Float32Attr("ratio", 0.25))
	n := mustGraph(t, m).Nodes[0]
	if n.Op != "Dropout" || constFloats(t, n.Input(1))[0] != 0.25 || n.Attrs.Has("ratio") {
		t.Errorf("dropout %v %v", n.Inputs, n.Attrs)
	}
}

func TestGemm(t *testing.T) {
	w := ob.Fill("w", i64(4, 3), 1)
	bias := ob.Float32s("bias", i64(3), []float32{1, 2, 3})
	// Plain Gemm with a 1-D bias: MatMul + BiasAdd.
	m := ob.New("g", 13).Input("x", ob.Float, 2, 4).Output("y", ob.Float, 2, 3).Init(w, bias)
	m.Node("fc", "Gemm", strs("x", "w", "bias"), strs("y"))
	g := mustGraph(t, m)
	wantOps(t, g, "MatMul", "BiasAdd")
	if g.Nodes[1].Attrs.String("format", "") != "NCHW" || g.Nodes[1].Input(1).Name != "bias" {
		t.Errorf("biasadd %v", g.Nodes[1].Attrs)
	}
	for _, n := range g.Nodes {
		if !slices.Equal(n.Provenance, strs("fc")) {
			t.Errorf("provenance %v", n.Provenance)
		}
	}
	// alpha, beta, transB, 2-D C.
	wt := ob.Fill("wt", i64(3, 4), 1)
	c2 := ob.Fill("c2", i64(2, 3), 2)
	m = ob.New("g", 13).Input("x", ob.Float, 2, 4).Output("y", ob.Float, 2, 3).Init(wt, c2)
	m.Node("fc", "Gemm", strs("x", "wt", "c2"), strs("y"), ob.Float32Attr("alpha", 2), ob.Float32Attr("beta", 0.5), ob.Int("transB", 1))
	g = mustGraph(t, m)
	wantOps(t, g, "MatMul", "Mul", "Add")
	if g.Nodes[0].Attrs.Int("transpose_b", 0) != 1 || g.Nodes[0].Attrs.Int("transpose_a", 1) != 0 {
		t.Errorf("matmul attrs %v", g.Nodes[0].Attrs)
	}
	if constFloats(t, g.Nodes[1].Input(1))[0] != 2 {
		t.Errorf("alpha")
	}
	if got := constFloats(t, g.Nodes[2].Input(1)); got[0] != 1 || len(got) != 6 {
		t.Errorf("beta*C = %v", got)
	}
	if g.Outputs[0] != g.Nodes[2].Outputs[0] {
		t.Errorf("output not the Add")
	}
	// C computed at run time, beta != 1.
	m = ob.New("g", 13).Input("x", ob.Float, 2, 4).Input("c", ob.Float, 2, 3).Output("y", ob.Float, 2, 3).Init(w)
	m.Node("fc", "Gemm", strs("x", "w", "c"), strs("y"), ob.Float32Attr("beta", 3))
	wantOps(t, mustGraph(t, m), "MatMul", "Mul", "Add")
	// No C.
	m = ob.New("g", 13).Input("x", ob.Float, 2, 4).Output("y", ob.Float, 2, 3).Init(w)
	m.Node("fc", "Gemm", strs("x", "w"), strs("y"))
	wantOps(t, mustGraph(t, m), "MatMul")
}

func TestConstantNodes(t *testing.T) {
	m := ob.New("g", 13).Input("x", ob.Float, 2, 2).Output("y", ob.Float, 2, 2)
	m.Node("", "Constant", nil, strs("w"), ob.Tensor("value", ob.Float32s("", i64(2, 2), []float32{1, 2, 3, 4})))
	m.Node("", "Constant", nil, strs("f"), ob.Float32Attr("value_float", 2.5))
	m.Node("", "Constant", nil, strs("fs"), ob.Floats("value_floats", 1, 2))
	m.Node("", "Constant", nil, strs("i"), ob.Int("value_int", 7))
	m.Node("", "Constant", nil, strs("is"), ob.Ints("value_ints", 3, 4, 5))
	m.Node("", "Constant", nil, strs("s"), ob.String("value_string", "hi"))
	m.Node("", "Constant", nil, strs("ss"), ob.Strings("value_strings", "a", "b"))
	m.Node("mm", "MatMul", strs("x", "w"), strs("y"))
	g := mustGraph(t, m)
	wantOps(t, g, "MatMul")
	byName := map[string]*ir.Value{}
	for _, c := range g.Consts {
		byName[c.Name] = c
	}
	if got := constFloats(t, byName["w"]); !slices.Equal(got, []float64{1, 2, 3, 4}) || g.Nodes[0].Input(1) != byName["w"] {
		t.Errorf("value tensor %v", got)
	}
	if v := byName["f"]; v.DType != ir.Float32 || len(v.Shape) != 0 || constFloats(t, v)[0] != 2.5 {
		t.Errorf("value_float %v", v)
	}
	if v := byName["fs"]; !slices.Equal(v.Shape, i64(2)) {
		t.Errorf("value_floats %v", v)
	}
	if v := byName["i"]; v.DType != ir.Int64 || constInts(t, v)[0] != 7 {
		t.Errorf("value_int %v", v)
	}
	if v := byName["is"]; !slices.Equal(constInts(t, v), i64(3, 4, 5)) {
		t.Errorf("value_ints %v", v)
	}
	if v := byName["s"]; v.DType != ir.String || v.Const.Strings[0] != "hi" {
		t.Errorf("value_string %v", v)
	}
	if v := byName["ss"]; !slices.Equal(v.Const.Strings, strs("a", "b")) {
		t.Errorf("value_strings %v", v)
	}
	// A Constant with the wrong attribute type is an error naming the node.
	m = ob.New("g", 13).Output("y", ob.Float)
	m.Node("c0", "Constant", nil, strs("y"), ob.Int("value_float", 1))
	if _, err := parseModel(t, m, Options{}); err == nil || !contains(err.Error(), "c0", "value_float") {
		t.Errorf("wrong attr type: %v", err)
	}
}

func TestIdentityRemoved(t *testing.T) {
	m := ob.New("g", 13).Input("x", ob.Float, 2).Output("y", ob.Float, 2)
	m.Node("id1", "Identity", strs("x"), strs("a"))
	m.Node("r", "Relu", strs("a"), strs("b"))
	m.Node("id2", "Identity", strs("b"), strs("y"))
	g := mustGraph(t, m)
	wantOps(t, g, "ReLU", "Identity")
	if g.Nodes[0].Input(0) != g.Inputs[0] || g.Outputs[0].Name != "y" {
		t.Errorf("rewiring: %v -> %v", g.Nodes[0].Inputs, g.Outputs)
	}
}

func TestVariadicAndRenames(t *testing.T) {
	m := ob.New("g", 13).Input("a", ob.Float, 2).Input("b", ob.Float, 2).Input("c", ob.Float, 1).
		Output("mx", ob.Float, 2).Output("s", ob.Float, 2).Output("mn", ob.Float, 2).Output("me", ob.Float, 2)
	m.Node("", "Max", strs("a", "b", "c"), strs("mx"))
	m.Node("", "Sum", strs("a", "b", "c"), strs("s"))
	m.Node("", "Min", strs("a", "b"), strs("mn"))
	m.Node("", "Mean", strs("a", "b", "c"), strs("me"))
	g := mustGraph(t, m)
	wantOps(t, g, "Maximum", "AddN", "Minimum", "Mean")
	if len(g.Nodes[0].Inputs) != 3 || len(g.Nodes[1].Inputs) != 3 {
		t.Errorf("variadic inputs lost")
	}
	// Unnamed nodes are named <op>_<index>, which is also their provenance.
	if g.Nodes[1].Name != "Sum_1" || !slices.Equal(g.Nodes[1].Provenance, strs("Sum_1")) {
		t.Errorf("name %s provenance %v", g.Nodes[1].Name, g.Nodes[1].Provenance)
	}
}

func TestCastAndLegacyForms(t *testing.T) {
	m := ob.New("g", 1).Input("x", ob.Int64, 2).Output("y", ob.Float, 2)
	m.Node("c", "Cast", strs("x"), strs("y"), ob.String("to", "FLOAT"))
	g := mustGraph(t, m)
	if a := g.Nodes[0].Attrs["to"]; a.Kind != ir.AttrInt || a.I != 1 {
		t.Errorf("to = %#v", a)
	}
	// Reshape-1 shape attribute, Concat-1 default axis.
	m = ob.New("g", 4).Input("x", ob.Float, 2, 3).Output("y", ob.Float, 6).Output("z", ob.Float, 2, 6)
	m.Node("r", "Reshape", strs("x"), strs("y"), ob.Ints("shape", 6))
	m.Node("cc", "Concat", strs("x", "x"), strs("z"))
	g = mustGraph(t, m)
	if !slices.Equal(constInts(t, g.Nodes[0].Input(1)), i64(6)) || g.Nodes[1].Attrs.Int("axis", -9) != 1 {
		t.Errorf("reshape/concat legacy: %v %v", g.Nodes[0].Inputs, g.Nodes[1].Attrs)
	}
}

func TestLegacyBroadcast(t *testing.T) {
	m := ob.New("g", 6).Input("x", ob.Float, 2, 3, 4, 5).Output("y", ob.Float, 2, 3, 4, 5).Output("z", ob.Float, 2, 3, 4, 5)
	m.Init(ob.Float32s("b", i64(3), []float32{1, 2, 3}))
	m.Input("v", ob.Float, 3, 4)
	m.Node("add", "Add", strs("x", "b"), strs("y"), ob.Int("broadcast", 1), ob.Int("axis", 1))
	m.Node("mul", "Mul", strs("x", "v"), strs("z"), ob.Int("broadcast", 1), ob.Int("axis", 1))
	g := mustGraph(t, m)
	wantOps(t, g, "Add", "Unsqueeze", "Mul")
	if b := g.Nodes[0].Input(1); !slices.Equal(b.Shape, i64(3, 1, 1)) || !slices.Equal(b.Const.Shape, i64(3, 1, 1)) {
		t.Errorf("const b reshaped to %v", b.Shape)
	}
	if len(g.Nodes[0].Attrs) != 0 {
		t.Errorf("attrs left %v", g.Nodes[0].Attrs)
	}
	if got := constInts(t, g.Nodes[1].Input(1)); !slices.Equal(got, i64(2)) {
		t.Errorf("unsqueeze axes %v", got)
	}
}

func TestInputsShapesAndMeta(t *testing.T) {
	m := ob.New("g", 13).Input("x", ob.Float, "N", 3).Input("w", ob.Float, 3, 3).Output("y", ob.Float, "N", 3)
	m.Init(ob.Fill("w", i64(3, 3), 1)) // an initializer listed as an input too
	m.Node("mm", "MatMul", strs("x", "w"), strs("y"))
	model, err := parseModel(t, m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := model.Graph
	if len(g.Inputs) != 1 || !slices.Equal(g.Inputs[0].Shape, i64(-1, 3)) || !slices.Equal(g.Inputs[0].DimNames, strs("N", "")) {
		t.Fatalf("inputs %v dimnames %v", g.Inputs, g.Inputs[0].DimNames)
	}
	if g.Meta["onnx.opset"] != "13" || g.Meta["onnx.ir_version"] != "8" || g.Meta["producer_name"] != "gkconv-onnxbuild" || g.Meta["producer_version"] != "1" {
		t.Errorf("meta %v", g.Meta)
	}
	model, err = parseModel(t, m, Options{InputShapes: map[string][]int64{"x": {5, 3}}})
	if err != nil {
		t.Fatal(err)
	}
	if in := model.Graph.Inputs[0]; !slices.Equal(in.Shape, i64(5, 3)) || in.DimNames != nil {
		t.Errorf("fixed input %v %v", in.Shape, in.DimNames)
	}
	for _, tc := range []struct {
		shapes map[string][]int64
		want   []string
	}{
		{map[string][]int64{"nope": {1, 3}}, strs("nope", "inputs are: x")},
		{map[string][]int64{"x": {1, 3, 1}}, strs("rank")},
		{map[string][]int64{"x": {2, 4}}, strs("dim 1 is fixed to 3")},
	} {
		if _, err := parseModel(t, m, Options{InputShapes: tc.shapes}); err == nil || !contains(err.Error(), tc.want...) {
			t.Errorf("%v: err %v", tc.shapes, err)
		}
	}
}

func TestUnsortedNodesAndDuplicateNames(t *testing.T) {
	m := ob.New("g", 13).Input("x", ob.Float, 2).Output("y", ob.Float, 2)
	m.Node("n", "Relu", strs("a"), strs("y"))
	m.Node("n", "Neg", strs("x"), strs("a"))
	g := mustGraph(t, m)
	wantOps(t, g, "Neg", "ReLU")
	if g.Nodes[0].Name == g.Nodes[1].Name {
		t.Errorf("duplicate IR node names %s", g.Nodes[0].Name)
	}
	m = ob.New("g", 13).Input("x", ob.Float, 2).Output("y", ob.Float, 2)
	m.Node("a", "Relu", strs("b"), strs("y"))
	m.Node("b", "Add", strs("x", "y"), strs("b"))
	if _, err := parseModel(t, m, Options{}); err == nil || !contains(err.Error(), "cycle") {
		t.Errorf("cycle: %v", err)
	}
}

func TestTypedTensorData(t *testing.T) {
	m := ob.New("g", 13).Output("a", ob.Float).Output("b", ob.Float16).Output("c", ob.Int64).Output("d", ob.Double).Output("e", ob.Bool)
	m.Init(
		&onnxpb.TensorProto{Name: proto.String("a"), DataType: proto.Int32(ob.Float), Dims: i64(2), FloatData: []float32{1.5, -2}},
		&onnxpb.TensorProto{Name: proto.String("b"), DataType: proto.Int32(ob.Float16), Dims: i64(2), Int32Data: []int32{0x3c00, 0xc000}},
		&onnxpb.TensorProto{Name: proto.String("c"), DataType: proto.Int32(ob.Int64), Dims: i64(1), Int64Data: []int64{-7}},
		&onnxpb.TensorProto{Name: proto.String("d"), DataType: proto.Int32(ob.Double), DoubleData: []float64{0.25}},
		&onnxpb.TensorProto{Name: proto.String("e"), DataType: proto.Int32(ob.Bool), Dims: i64(2), Int32Data: []int32{1, 0}},
	)
	g := mustGraph(t, m)
	want := [][]float64{{1.5, -2}, {1, -2}, {-7}, {0.25}, {1, 0}}
	for i, v := range g.Consts {
		if got := constFloats(t, v); !slices.Equal(got, want[i]) {
			t.Errorf("%s = %v, want %v", v.Name, got, want[i])
		}
	}
	// A count that does not match the dims is an error naming the tensor.
	m = ob.New("g", 13).Output("a", ob.Float)
	m.Init(&onnxpb.TensorProto{Name: proto.String("a"), DataType: proto.Int32(ob.Float), Dims: i64(3), FloatData: []float32{1}})
	if _, err := parseModel(t, m, Options{}); err == nil || !contains(err.Error(), "initializer a", "float_data") {
		t.Errorf("bad count: %v", err)
	}
}

func TestGlobalPoolAndCastLike(t *testing.T) {
	m := ob.New("g", 13).Input("x", ob.Float, 1, 8, 5, 5).Input("i", ob.Int64, 1).
		Output("a", ob.Float, 1, 8, 1, 1).Output("b", ob.Float, 1, 8, 1, 1).Output("c", ob.Int64, 1, 8, 5, 5)
	m.Node("gap", "GlobalAveragePool", strs("x"), strs("a"))
	m.Node("gmp", "GlobalMaxPool", strs("x"), strs("b"))
	m.Node("cl", "CastLike", strs("x", "i"), strs("c"))
	g := mustGraph(t, m)
	wantOps(t, g, "GlobalAveragePool", "ReduceMax", "Cast")
	if n := g.Nodes[0]; len(n.Inputs) != 1 || len(n.Attrs) != 0 || !slices.Equal(n.Outputs[0].Shape, i64(1, 8, 1, 1)) {
		t.Errorf("%s: %v %v %v", n, n.Inputs, n.Attrs, n.Outputs[0].Shape)
	}
	for _, n := range g.Nodes[1:2] {
		if !slices.Equal(constInts(t, n.Input(1)), i64(2, 3)) || n.Attrs.Int("keepdims", 0) != 1 {
			t.Errorf("%s: %v %v", n, n.Inputs, n.Attrs)
		}
	}
	if n := g.Nodes[2]; len(n.Inputs) != 1 || n.Attrs.Int("to", 0) != int64(ir.Int64) {
		t.Errorf("castlike %v %v", n.Inputs, n.Attrs)
	}
}

// TestMicrosoftQLinearLookupOps: the QOperator contrib ops onnxruntime
// computes as 256-entry tables become DequantizeLinear -> op ->
// QuantizeLinear (QLinearConcat: one DequantizeLinear per input).
func TestMicrosoftQLinearLookupOps(t *testing.T) {
	m := ob.New("g", 13).Input("x", ob.Uint8, 1, 2, 2).Output("y", ob.Uint8, 1, 4, 2).Import("com.microsoft", 1)
	m.Init(ob.Scalar("s", 0.05), ob.Scalar("s2", 0.004), ob.Raw("z", ob.Uint8, nil, []byte{128}), ob.Raw("z0", ob.Uint8, nil, []byte{0}))
	m.Node("sig", "QLinearSigmoid", strs("x", "s", "z", "s2", "z0"), strs("a")).Domain = proto.String("com.microsoft")
	m.Node("lrelu", "QLinearLeakyRelu", strs("x", "s", "z", "s", "z"), strs("b"), ob.Float32Attr("alpha", 0.1)).Domain = proto.String("com.microsoft")
	m.Node("cat", "QLinearConcat", strs("s2", "z0", "a", "s2", "z0", "b", "s", "z"), strs("y"), ob.Int("axis", 1)).Domain = proto.String("com.microsoft")
	g := mustGraph(t, m)
	wantOps(t, g, "DequantizeLinear", "Sigmoid", "QuantizeLinear", "DequantizeLinear", "LeakyReLU", "QuantizeLinear",
		"DequantizeLinear", "DequantizeLinear", "Concat", "QuantizeLinear")
	for _, n := range g.Nodes {
		if n.Op == "LeakyReLU" && n.Attrs.Float("alpha", 0) != float64(float32(0.1)) {
			t.Errorf("alpha %v", n.Attrs)
		}
	}
}
