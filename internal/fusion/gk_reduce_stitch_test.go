package fusion

import (
	"testing"

	"gkconv/internal/akgcfg"
	"gkconv/internal/ir"
	"gkconv/internal/testkit"
)

func TestStitchOnGPU(t *testing.T) {
	b := testkit.New(t, "test")
	x := b.Input("x", 64, 256)
	sum := b.Node("sum", "ReduceSum", ir.Attrs{"keepdims": ir.IntAttr(1)}, b.Node("e", "Exp", nil, x), b.Ints(1))
	y := b.Node("div", "RealDiv", nil, b.Node("abs", "Abs", nil, x), sum)
	g := b.Output(y)
	gpu := akgcfg.Backend{Device: akgcfg.GPU}
	checkEquivalent(t, g, "--opt_level=3", gpu, 1e-5)
	ks := kernels(g)
	if len(ks) != 1 || len(ks[0].Attrs.Strings(ir.GKStitch)) != 1 {
		t.Fatalf("want one stitched kernel: %v", kernelOps(g))
	}
}
