package mindir

import (
	"bytes"
	"gkconv/internal/repotest"
	"testing"

	"gkconv/internal/ir"
)

func sharedDir(t testing.TB, rel string) string { return repotest.SharedDir(t, rel) }

// normShape: a nil shape and [] alike.
func normShape(s []int64) []int64 {
	if len(s) == 0 {
		return []int64{}
	}
	return s
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
