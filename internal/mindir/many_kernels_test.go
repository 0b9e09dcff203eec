package mindir

import (
	"fmt"
	"testing"

	"gkconv/internal/ir"
)

// TestManyGraphKernels: a model with more fused kernels than the nesting
// limit reads back. Reading a kernel body once left the reader one level
// deeper, so the 65th kernel of a flat model (efficientnet_b0 at O2) was
// refused as "graph kernels nested too deeply".
func TestManyGraphKernels(t *testing.T) {
	const kernels = 3 * maxDepth
	g := ir.NewGraph("main")
	x := &ir.Value{Name: "x", DType: ir.Float32, Shape: []int64{2, 4}}
	g.Inputs = []*ir.Value{x}
	prev := x
	for i := range kernels {
		body := ir.NewGraph(fmt.Sprintf("body%d", i))
		a := &ir.Value{Name: "a", DType: ir.Float32, Shape: []int64{2, 4}}
		body.Inputs = []*ir.Value{a}
		r := body.AddNode("relu", "ReLU", []*ir.Value{a}, "r")
		neg := body.AddNode("neg", "Neg", []*ir.Value{r.Outputs[0]}, "y")
		body.Outputs = []*ir.Value{neg.Outputs[0]}
		k := g.AddNode(fmt.Sprintf("fused%d", i), ir.OpGraphKernel, []*ir.Value{prev}, fmt.Sprintf("k%d", i))
		k.Outputs[0].DType, k.Outputs[0].Shape = ir.Float32, []int64{2, 4}
		k.Attrs = ir.Attrs{"kernel_name": ir.StringAttr(fmt.Sprintf("Fused_ReLU_Neg_%d_kernel", i)), "process": ir.StringAttr("cpu")}
		k.Body = body
		prev = k.Outputs[0]
	}
	g.Outputs = []*ir.Value{prev}
	back, err := Parse(writeBytes(t, g, WriteOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, node := range back.Nodes {
		if node.Op == ir.OpGraphKernel {
			if node.Body == nil || len(node.Body.Nodes) != 2 {
				t.Fatalf("kernel %s read back without its body", node.Name)
			}
			n++
		}
	}
	if n != kernels {
		t.Errorf("%d graph kernels read back, want %d", n, kernels)
	}
}
