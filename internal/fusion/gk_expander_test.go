package fusion

import (
	"slices"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/testkit"
)

func softmaxAndLayerNorm(t *testing.T) *ir.Graph {
	b := testkit.New(t, "test")
	x := b.Input("x", 2, 8)
	s := b.Node("sm", "Softmax", ir.Attrs{"axis": ir.IntAttr(-1)}, x)
	m := b.Node("mm", "MatMul", nil, s, b.Weights(8, 8)) // not clusterable on CPU: keeps the two apart
	y := b.Node("ln", "LayerNorm", ir.Attrs{"axis": ir.IntAttr(-1)}, m, b.Weights(8), b.Weights(8))
	return b.Output(y)
}

func TestExpandFlags(t *testing.T) {
	cases := []struct {
		flags string
		want  []string // remaining top-level ops
	}{
		{"--opt_level=2", []string{ir.OpGraphKernel, "MatMul", ir.OpGraphKernel}},
		{"--opt_level=2 --disable_expand_ops=Softmax", []string{"Softmax", "MatMul", ir.OpGraphKernel}},
		{"--opt_level=2 --enable_expand_ops_only=Softmax", []string{ir.OpGraphKernel, "MatMul", "LayerNorm"}},
		{"--opt_level=2 --fusion_ops_level=0", []string{"Softmax", "MatMul", "LayerNorm"}},
	}
	for _, c := range cases {
		g := softmaxAndLayerNorm(t)
		run(t, g, c.flags, cpuBE)
		if got := topOps(g); !slices.Equal(got, c.want) {
			t.Errorf("%s: ops %v, want %v", c.flags, got, c.want)
		}
	}
	// enable_expand_ops adds an op outside the default table.
	mk := func() *ir.Graph {
		b := testkit.New(t, "test")
		return b.Output(b.Node("mish", "Mish", nil, b.Input("x", 4, 4)))
	}
	g := mk()
	run(t, g, "--opt_level=2", cpuBE)
	if !slices.Equal(topOps(g), []string{"Mish"}) {
		t.Errorf("Mish expanded by default: %v", topOps(g))
	}
	g = mk()
	checkEquivalent(t, g, "--opt_level=2 --enable_expand_ops=Mish", cpuBE, 1e-5)
	if !slices.Equal(topOps(g), []string{ir.OpGraphKernel}) {
		t.Errorf("enable_expand_ops=Mish: %v", topOps(g))
	}
}
