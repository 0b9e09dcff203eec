package mindir

import (
	"bytes"
	"fmt"
	"gkconv/internal/repotest"
	"reflect"
	"testing"

	"gkconv/internal/ir"
)

func sharedDir(t testing.TB, rel string) string { return repotest.SharedDir(t, rel) }

// graphDiff describes the first difference between two graphs, or "".
func graphDiff(a, b *ir.Graph) string {
	if a.Name != b.Name {
		return fmt.Sprintf("name %q vs %q", a.Name, b.Name)
	}
	if !reflect.DeepEqual(a.Meta, b.Meta) {
		return fmt.Sprintf("meta %v vs %v", a.Meta, b.Meta)
	}
	if d := valuesDiff("input", a.Inputs, b.Inputs); d != "" {
		return d
	}
	if d := valuesDiff("output", a.Outputs, b.Outputs); d != "" {
		return d
	}
	if d := valuesDiff("const", a.Consts, b.Consts); d != "" {
		return d
	}
	if len(a.Nodes) != len(b.Nodes) {
		return fmt.Sprintf("%d nodes vs %d", len(a.Nodes), len(b.Nodes))
	}
	for i, x := range a.Nodes {
		y := b.Nodes[i]
		if x.Name != y.Name || x.Op != y.Op {
			return fmt.Sprintf("node %d: %s vs %s", i, x, y)
		}
		if !reflect.DeepEqual(x.Provenance, y.Provenance) {
			return fmt.Sprintf("node %s provenance %q vs %q", x, x.Provenance, y.Provenance)
		}
		if d := valuesDiff("node "+x.Name+" input", x.Inputs, y.Inputs); d != "" {
			return d
		}
		if d := valuesDiff("node "+x.Name+" output", x.Outputs, y.Outputs); d != "" {
			return d
		}
		if d := attrsDiff(x.Attrs, y.Attrs); d != "" {
			return "node " + x.Name + ": " + d
		}
		if (x.Body == nil) != (y.Body == nil) {
			return "node " + x.Name + ": body presence differs"
		}
		if x.Body != nil {
			if d := graphDiff(x.Body, y.Body); d != "" {
				return "node " + x.Name + " body: " + d
			}
		}
	}
	return ""
}

func valuesDiff(what string, a, b []*ir.Value) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%s count %d vs %d", what, len(a), len(b))
	}
	for i := range a {
		x, y := a[i], b[i]
		if (x == nil) != (y == nil) {
			return fmt.Sprintf("%s %d: nil vs non-nil", what, i)
		}
		if x == nil {
			continue
		}
		if x.Name != y.Name || x.DType != y.DType || !reflect.DeepEqual(x.Shape, y.Shape) || !sameStrings(x.DimNames, y.DimNames) {
			return fmt.Sprintf("%s %d: %v%q vs %v%q", what, i, x, x.DimNames, y, y.DimNames)
		}
		if (x.Const == nil) != (y.Const == nil) {
			return fmt.Sprintf("%s %s: const presence differs", what, x.Name)
		}
		if x.Const != nil && !tensorEqual(x.Const, y.Const) {
			return fmt.Sprintf("%s %s: const %s vs %s", what, x.Name, x.Const.Summary(4), y.Const.Summary(4))
		}
	}
	return ""
}

func sameStrings(a, b []string) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}

func tensorEqual(a, b *ir.Tensor) bool {
	return a.DType == b.DType && reflect.DeepEqual(normShape(a.Shape), normShape(b.Shape)) &&
		bytes.Equal(a.Data, b.Data) && sameStrings(a.Strings, b.Strings)
}

func normShape(s []int64) []int64 {
	if len(s) == 0 {
		return []int64{}
	}
	return s
}

// attrsDiff ignores ir.SourcePrimitive: a hint the reader sets for the
// writer (which primitive form to write), not part of the node's meaning.
func attrsDiff(a, b ir.Attrs) string {
	a, b = withoutHint(a), withoutHint(b)
	if len(a) != len(b) {
		return fmt.Sprintf("attrs %v vs %v", a.Keys(), b.Keys())
	}
	for k, x := range a {
		y, ok := b[k]
		if !ok {
			return "attr " + k + " missing"
		}
		if x.Kind != y.Kind {
			return fmt.Sprintf("attr %s kind %d vs %d", k, x.Kind, y.Kind)
		}
		same := true
		switch x.Kind {
		case ir.AttrInt:
			same = x.I == y.I
		case ir.AttrFloat:
			same = x.F == y.F
		case ir.AttrString:
			same = x.S == y.S
		case ir.AttrBytes:
			same = bytes.Equal(x.B, y.B)
		case ir.AttrInts:
			same = len(x.Ints) == len(y.Ints) && (len(x.Ints) == 0 || reflect.DeepEqual(x.Ints, y.Ints))
		case ir.AttrFloats:
			same = len(x.Floats) == len(y.Floats) && (len(x.Floats) == 0 || reflect.DeepEqual(x.Floats, y.Floats))
		case ir.AttrStrings:
			same = sameStrings(x.Strings, y.Strings)
		case ir.AttrTensor:
			same = tensorEqual(x.T, y.T)
		case ir.AttrGraph:
			if d := graphDiff(x.G, y.G); d != "" {
				return "attr " + k + " graph: " + d
			}
		}
		if !same {
			return fmt.Sprintf("attr %s: %#v vs %#v", k, x, y)
		}
	}
	return ""
}

func writeBytes(t testing.TB, g *ir.Graph, opts WriteOptions) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, g, opts); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return buf.Bytes()
}

// kernelGraph is a small graph with a GraphKernel node whose Body is a
// subgraph, with every attribute kind.
func kernelGraph() *ir.Graph { return kernelGraphN(10000) }

// kernelGraphN is kernelGraph with a soLen-byte kernel binary attribute.
func kernelGraphN(soLen int) *ir.Graph {
	g := ir.NewGraph("main")
	g.Meta["source"] = "unit test"
	x := &ir.Value{Name: "x", DType: ir.Float32, Shape: []int64{-1, 4}, DimNames: []string{"batch", ""}}
	g.Inputs = append(g.Inputs, x)
	w := g.AddConst("w", ir.Float32Tensor([]int64{4}, 1.5, -2.25, 65504, 1e-3))
	idx := g.AddConst("idx", ir.Int64Tensor([]int64{2}, 7, -9))

	body := ir.NewGraph("fused_body")
	a := &ir.Value{Name: "a", DType: ir.Float32, Shape: []int64{-1, 4}}
	b := &ir.Value{Name: "b", DType: ir.Float32, Shape: []int64{4}}
	body.Inputs = []*ir.Value{a, b}
	two := body.AddConst("two", ir.Float32Tensor([]int64{}, 2))
	add := body.AddNode("add", "Add", []*ir.Value{a, b}, "s")
	mul := body.AddNode("mul", "Mul", []*ir.Value{add.Outputs[0], two}, "y")
	body.Outputs = []*ir.Value{mul.Outputs[0]}

	so := make([]byte, soLen) // 10000 is streamed: longer than streamBytesAttr
	for i := range so {
		so[i] = byte(i * 7)
	}
	k := g.AddNode("fused1", "GraphKernel", []*ir.Value{x, w}, "k_out")
	k.Outputs[0].DType, k.Outputs[0].Shape = ir.Float32, []int64{-1, 4}
	// One GraphKernel attribute of every kind and place of the schema
	// (ir/graphkernel.go).
	k.Attrs = ir.Attrs{
		"kernel_name":    ir.StringAttr("Fused_Add_Mul_123_kernel"),
		"process":        ir.StringAttr("cpu"),
		"kernel_so":      ir.BytesAttr(so),
		"kernel_info":    ir.BytesAttr([]byte{0, 1, 2, 255}),
		"outputs_shape":  ir.StringAttr("2,-1,4,"),
		"GridDimX":       ir.IntAttr(-3),
		"input_names":    ir.StringsAttr("p", "", "q"),
		"buffer_stitch":  ir.StringsAttr(),
		"kernel_ascendc": ir.BytesAttr([]byte{}),
	}
	k.Body = body
	k.Provenance = []string{"add_node", "mul_node"}
	r := g.AddNode("relu", "ReLU", []*ir.Value{k.Outputs[0]}, "y")
	r.Outputs[0].DType = ir.Float32 // rank unknown
	ga := g.AddNode("gather", "Gather", []*ir.Value{r.Outputs[0], idx, nil}, "z")
	// Gather with a nil input is written as Custom(type "gkconv.Gather"):
	// attributes of every kind go through that path.
	ga.Attrs = ir.Attrs{
		"axis":       ir.IntAttr(1),
		"scale":      ir.FloatAttr(0.1),
		"dims":       ir.IntsAttr(1, -2, 3),
		"weights":    ir.FloatsAttr(0.5, 1e-300),
		"names":      ir.StringsAttr("p", "", "q"),
		"empty_ints": ir.IntsAttr(),
		"raw":        ir.BytesAttr([]byte{0, 1, 2, 255}),
	}
	g.Outputs = []*ir.Value{ga.Outputs[0], r.Outputs[0]}
	return g
}

func withoutHint(a ir.Attrs) ir.Attrs {
	if !a.Has(ir.SourcePrimitive) {
		return a
	}
	out := ir.Attrs{}
	for k, v := range a {
		if k != ir.SourcePrimitive {
			out[k] = v
		}
	}
	return out
}
