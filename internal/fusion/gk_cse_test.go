package fusion

import (
	"strings"
	"testing"

	"gkconv/internal/testkit"
)

func TestCSEInsideKernel(t *testing.T) {
	b := testkit.New(t, "test")
	x := b.Input("x", 4, 4)
	a := b.Node("m1", "Mul", nil, b.Node("e1", "Exp", nil, x), b.Scalar(2))
	c := b.Node("m2", "Mul", nil, b.Node("e2", "Exp", nil, x), b.Scalar(2))
	g := b.Output(b.Node("add", "Add", nil, a, c))
	checkEquivalent(t, g, "--opt_level=2", cpuBE, 0)
	if got := strings.Join(kernelOps(g), "|"); got != "Exp,Mul,Add" {
		t.Errorf("kernel %s", got)
	}
}
