package fusion

import (
	"slices"
	"strings"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/testkit"
)

func simplifyGraph(t *testing.T) *ir.Graph {
	b := testkit.New(t, "test")
	x := b.Input("x", 4, 4)
	m := b.Node("mul", "Mul", nil, x, b.Scalar(2))
	a := b.Node("add0", "Add", nil, m, b.Scalar(0))
	n1 := b.Node("neg1", "Neg", nil, a)
	n2 := b.Node("neg2", "Neg", nil, n1)
	return b.Output(b.Node("mul3", "Mul", nil, n2, b.Scalar(3)))
}

func TestSimplifyExprFlags(t *testing.T) {
	cases := []struct{ flags, want string }{
		{"--opt_level=2", "Mul,Mul"},
		{"--opt_level=2 --disable_simplify_exprs=1", "Mul,Add,Mul"},
		{"--opt_level=2 --enable_simplify_exprs_only=24", "Mul,Add,Mul"},
		{"--opt_level=2 --enable_simplify_exprs_only=1", "Mul,Neg,Neg,Mul"},
		// Mul(Mul(x,2),3) = Mul(x,6): a lone basic op is inlined, no kernel.
		{"--opt_level=2 --exact_precision_mode=false", ""},
	}
	for _, c := range cases {
		g := simplifyGraph(t)
		checkEquivalent(t, g, c.flags, cpuBE, 1e-6)
		if got := strings.Join(kernelOps(g), "|"); got != c.want {
			t.Errorf("%s: kernel %s, want %s", c.flags, got, c.want)
		}
		if c.want == "" && !slices.Equal(topOps(g), []string{"Mul"}) {
			t.Errorf("%s: ops %v", c.flags, topOps(g))
		}
	}
}

func TestExactPrecisionKeepsInexactRules(t *testing.T) {
	// x / sqrt(y): rule 48 rewrites to x * rsqrt(y) only when inexact is allowed.
	mk := func() *ir.Graph {
		b := testkit.New(t, "test")
		x, y := b.Input("x", 4, 4), b.Input("y", 4, 4)
		s := b.Node("sqrt", "Sqrt", nil, b.Node("abs", "Abs", nil, y))
		return b.Output(b.Node("div", "RealDiv", nil, x, s))
	}
	g := mk()
	run(t, g, "--opt_level=2", cpuBE)
	if got := strings.Join(kernelOps(g), "|"); got != "Abs,Sqrt,RealDiv" {
		t.Errorf("exact mode: %s", got)
	}
	g = mk()
	checkEquivalent(t, g, "--opt_level=2 --exact_precision_mode=false", cpuBE, 1e-5)
	if got := strings.Join(kernelOps(g), "|"); got != "Abs,Rsqrt,Mul" {
		t.Errorf("inexact mode: %s", got)
	}
}
