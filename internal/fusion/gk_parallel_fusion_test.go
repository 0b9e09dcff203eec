package fusion

import (
	"slices"
	"testing"

	"gkconv/internal/akgcfg"
	"gkconv/internal/ir"
	"gkconv/internal/testkit"
)

func TestOptLevel3Backends(t *testing.T) {
	mk := func() *ir.Graph {
		b := testkit.New(t, "test")
		x := b.Input("x", 4, 4)
		y1 := b.Node("a1", "Add", nil, b.Node("m1", "Mul", nil, x, b.Scalar(2)), b.Scalar(1))
		y2 := b.Node("a2", "Sub", nil, b.Node("m2", "Mul", nil, x, b.Scalar(3)), b.Scalar(1))
		return b.Output(y1, y2)
	}
	g := mk()
	res := run(t, g, "--opt_level=3", cpuBE)
	for _, name := range []string{"reduce_stitch", "parallel_fusion"} {
		i := slices.IndexFunc(res.Passes, func(p PassRecord) bool { return p.Name == name })
		if i < 0 || res.Passes[i].Ran || res.Passes[i].Note != "not applicable on CPU" {
			t.Errorf("%s on CPU: %+v", name, res.Passes[i])
		}
	}
	gpu := akgcfg.Backend{Device: akgcfg.GPU}
	g = mk()
	res = run(t, g, "--opt_level=3", gpu)
	ks := kernels(g)
	if len(ks) != 2 {
		t.Fatalf("GPU kernels %v", kernelOps(g))
	}
	g0, g1 := ks[0].Attrs.String(ir.GKParallelGroup, ""), ks[1].Attrs.String(ir.GKParallelGroup, "")
	if g0 == "" || g0 != g1 {
		t.Errorf("parallel groups %q %q\n%s", g0, g1, res)
	}
}
