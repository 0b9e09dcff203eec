package fusion

import (
	"slices"
	"strings"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/testkit"
)

func TestFusionPatternFlags(t *testing.T) {
	cases := []struct {
		flags   string
		kernels int
	}{
		{"--opt_level=2", 1},
		{"--opt_level=2 --disable_fusion_pattern=elemwise_fwd", 1}, // elemwise_broadcast_* still fuse
		{"--opt_level=2 --disable_fusion_pattern=elemwise", 0},     // substring: every elemwise pattern
		{"--opt_level=2 --enable_fusion_pattern_only=reduce_fwd", 0},
		{"--opt_level=2 --enable_fusion_pattern_only=elemwise_broadcast_bwd_depth", 1},
	}
	for _, c := range cases {
		g := myNet(t)
		run(t, g, c.flags, cpuBE)
		if n := len(kernels(g)); n != c.kernels {
			t.Errorf("%s: %d kernels, want %d: %v", c.flags, n, c.kernels, topOps(g))
		}
	}
}

// reduceChain: five elementwise ops (also a graph output) feeding a ReduceSum.
func reduceChain(t *testing.T) *ir.Graph {
	b := testkit.New(t, "test")
	x := b.Input("x", 4, 8)
	v := x
	for i, op := range []string{"Exp", "Neg", "Abs", "Sqrt", "Exp"} {
		v = b.Node("e"+string(rune('0'+i)), op, nil, v)
	}
	r := b.Node("sum", "ReduceSum", ir.Attrs{"keepdims": ir.IntAttr(0)}, v, b.Ints(1))
	return b.Output(r, v)
}

func TestReduceFuseDepth(t *testing.T) {
	g := reduceChain(t)
	checkEquivalent(t, g, "--opt_level=2", cpuBE, 1e-6)
	if ops := kernelOps(g); len(ops) != 1 || ops[0] != "Exp,Neg,Abs,Sqrt,Exp,ReduceSum" {
		t.Errorf("default depth: %v", ops)
	}
	g = reduceChain(t)
	run(t, g, "--opt_level=2 --reduce_fuse_depth=3", cpuBE)
	if ops := kernelOps(g); len(ops) != 1 || ops[0] != "Exp,Neg,Abs,Sqrt,Exp" || !slices.Contains(topOps(g), "ReduceSum") {
		t.Errorf("reduce_fuse_depth=3: %v %v", topOps(g), ops)
	}
}

func TestShapeOpsInKernel(t *testing.T) {
	// A Reshape between elementwise ops is fused by the reshape pattern.
	b := testkit.New(t, "test")
	x := b.Input("x", 4, 6)
	e := b.Node("exp", "Exp", nil, x)
	r := b.Node("rs", "Reshape", nil, e, b.Ints(2, 12))
	g := b.Output(b.Node("mul", "Mul", nil, r, b.Scalar(2)))
	checkEquivalent(t, g, "--opt_level=2", cpuBE, 0)
	if got := strings.Join(kernelOps(g), "|"); got != "Exp,Reshape,Mul" {
		t.Errorf("kernels %s\n%s", got, dumpText(g))
	}
}
