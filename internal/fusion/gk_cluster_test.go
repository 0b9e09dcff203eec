package fusion

import (
	"slices"
	"strings"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/testkit"
)

func TestClusterFlags(t *testing.T) {
	g := myNet(t)
	run(t, g, "--opt_level=2 --disable_cluster_ops=Add", cpuBE)
	if !slices.Equal(topOps(g), []string{"Mul", "Add"}) {
		t.Errorf("disable_cluster_ops=Add: %v", topOps(g))
	}

	chain := func() *ir.Graph {
		b := testkit.New(t, "test")
		x := b.Input("x", 4, 4)
		e := b.Node("erf", "Erf", nil, x)
		m := b.Node("m1", "Mul", nil, e, b.Scalar(2))
		return b.Output(b.Node("a1", "Add", nil, m, b.Scalar(1)))
	}
	// Erf is clustered whole on CPU (the kernel computes onnxruntime's erf);
	// disable_cluster_ops=Erf leaves it out.
	const noErfExpand = "--opt_level=2 --disable_expand_ops=Erf"
	g = chain()
	checkEquivalent(t, g, noErfExpand, cpuBE, 0)
	if !slices.Equal(kernelOps(g), []string{"Erf,Mul,Add"}) {
		t.Errorf("default: %v", kernelOps(g))
	}
	g = chain()
	run(t, g, noErfExpand+" --disable_cluster_ops=Erf", cpuBE)
	if !slices.Equal(topOps(g), []string{"Erf", ir.OpGraphKernel}) {
		t.Errorf("disable_cluster_ops=Erf: %v", topOps(g))
	}
	g = chain()
	run(t, g, noErfExpand+" --enable_cluster_ops_only=Erf,Mul", cpuBE)
	if !slices.Equal(kernelOps(g), []string{"Erf,Mul"}) || !slices.Equal(topOps(g), []string{ir.OpGraphKernel, "Add"}) {
		t.Errorf("enable_cluster_ops_only=Erf,Mul: %v %v", topOps(g), kernelOps(g))
	}
}

func TestCompositeOpLimitSize(t *testing.T) {
	mk := func() *ir.Graph {
		b := testkit.New(t, "test")
		v := b.Input("x", 4, 4)
		for i := 0; i < 6; i++ {
			op := "Mul"
			if i%2 == 1 {
				op = "Add"
			}
			v = b.Node("n"+string(rune('0'+i)), op, nil, v, b.Scalar(float32(i+1)))
		}
		return b.Output(v)
	}
	g := mk()
	run(t, g, "--opt_level=2", cpuBE)
	if len(kernels(g)) != 1 {
		t.Fatalf("default: %v", kernelOps(g))
	}
	g = mk()
	checkEquivalent(t, g, "--opt_level=2 --composite_op_limit_size=3", cpuBE, 0)
	ks := kernels(g)
	if len(ks) < 2 {
		t.Fatalf("limit 3: %v", kernelOps(g))
	}
	for _, k := range ks {
		if len(k.Body.Nodes) > 3 {
			t.Errorf("kernel of %d ops over the limit", len(k.Body.Nodes))
		}
	}
}

// A diamond where fusing Exp with Add would enclose the MatMul in a cycle.
func TestNoCycleDiamond(t *testing.T) {
	b := testkit.New(t, "test")
	x := b.Input("x", 4, 4)
	e := b.Node("exp", "Exp", nil, x)
	m := b.Node("mm", "MatMul", nil, e, b.Weights(4, 4))
	a := b.Node("add", "Add", nil, e, m)
	g := b.Output(b.Node("log", "Log", nil, b.Node("abs", "Abs", nil, a)))
	checkEquivalent(t, g, "--opt_level=2", cpuBE, 1e-5)
	if err := g.TopoSort(); err != nil {
		t.Fatal(err)
	}
	for _, k := range kernels(g) {
		var ops []string
		for _, n := range k.Body.Nodes {
			ops = append(ops, n.Op)
		}
		if slices.Contains(ops, "Exp") && slices.Contains(ops, "Add") {
			t.Fatalf("kernel %v spans the MatMul: cycle", ops)
		}
	}
	if got := strings.Join(kernelOps(g), "|"); got != "Add,Abs,Log" {
		t.Errorf("kernels %s", got)
	}
}
