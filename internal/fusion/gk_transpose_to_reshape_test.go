package fusion

import (
	"strings"
	"testing"

	"gkconv/internal/testkit"
)

func TestTransposeToReshape(t *testing.T) {
	b := testkit.New(t, "test")
	x := b.Input("x", 1, 5, 8)
	moved := b.Node("t1", "Transpose", perm(1, 0, 2), x)             // [5,1,8]: same order
	kept := b.Node("t2", "Transpose", perm(0, 2, 1), x)              // [1,8,5]: reorders
	g := b.Output(b.Node("m", "Mul", nil, moved, b.Scalar(2)), kept) // kept is a graph output
	res := checkEquivalent(t, g, "--opt_level=2 --disable_pass=cluster.graph_kernel_cluster", cpuBE, 0)
	if rec := passRecord(res, "preprocess", "transpose_to_reshape"); !strings.Contains(rec.Note, "1 Transpose -> Reshape") {
		t.Errorf("record %+v", rec)
	}
	for _, n := range g.Nodes {
		if (n.Name == "t1") != (n.Op == "Reshape") {
			t.Errorf("%s is %s", n.Name, n.Op)
		}
	}
}
