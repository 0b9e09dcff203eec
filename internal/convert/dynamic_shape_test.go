package convert

import (
	"strings"
	"testing"

	"gkconv/internal/ir"
)

// TestWarnDynamicShapes: a graph input with unknown dims gets one warning
// that names it, counts the nodes left out of graph kernel fusion and shows
// the --inputShape that fixes it; a static graph gets none.
func TestWarnDynamicShapes(t *testing.T) {
	build := func(shape ...int64) *ir.Graph {
		x := &ir.Value{Name: "x", DType: ir.Float32, Shape: shape}
		g := &ir.Graph{Name: "g", Inputs: []*ir.Value{x}}
		y := &ir.Value{Name: "y"}
		n := &ir.Node{Name: "relu", Op: "ReLU", Inputs: []*ir.Value{x}, Outputs: []*ir.Value{y}}
		y.Producer = n
		g.Nodes = []*ir.Node{n}
		g.Outputs = []*ir.Value{y}
		if err := ir.InferNode(n); err != nil {
			t.Fatal(err)
		}
		return g
	}
	rep := newReport()
	warnDynamicShapes(build(-1, 3, -1, -1), rep)
	if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], `--inputShape="x:?,3,?,?"`) ||
		!strings.Contains(rep.Warnings[0], "1 of 1 nodes") {
		t.Fatalf("warnings %q", rep.Warnings)
	}
	rep = newReport()
	warnDynamicShapes(build(1, 3, 8, 8), rep)
	if len(rep.Warnings) != 0 {
		t.Fatalf("static graph: warnings %q", rep.Warnings)
	}
}
