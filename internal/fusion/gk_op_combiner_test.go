package fusion

import (
	"slices"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/testkit"
)

func TestOpCombinerLevel3(t *testing.T) {
	b := testkit.New(t, "test")
	x := b.Input("x", 2, 4)
	y1 := b.Node("mm1", "MatMul", nil, x, b.Weights(4, 3))
	y2 := b.Node("mm2", "MatMul", nil, x, b.Weights(4, 5))
	g := b.Output(y1, y2)
	// At level 3 on CPU the combined constant weight is then marked for
	// packing at load (and runs packed in checkEquivalent).
	checkEquivalent(t, g, "--opt_level=3", cpuBE, 1e-6)
	if got := topOps(g); !slices.Equal(got, []string{"MatMul", "Split"}) || !ir.PackBMarked(g.Nodes[0]) {
		t.Errorf("ops %v, attrs %v", got, g.Nodes[0].Attrs)
	}
}
