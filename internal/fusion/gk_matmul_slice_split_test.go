package fusion

import (
	"slices"
	"strings"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/testkit"
)

func TestMatMulSliceSplit(t *testing.T) {
	b := testkit.New(t, "test")
	x := b.Input("x", 2, 6, 16)
	slice := func(name string, v *ir.Value, lo, hi, axis int64) *ir.Value {
		return b.Node(name, "Slice", nil, v, b.Ints(lo), b.Ints(hi), b.Ints(axis))
	}
	qkv := b.Node("qkv_bias", "Add", nil, b.Node("qkv", "MatMul", nil, x, b.Weights(16, 24)), b.Weights(24))
	qs, ks, vs := slice("q", qkv, 0, 8, -1), slice("k", qkv, 8, 16, 2), slice("v", qkv, 16, 100, -1)
	wt := b.Node("wt", "MatMul", ir.Attrs{"transpose_b": ir.IntAttr(1)}, x, b.Weights(12, 16))
	a, c := slice("a", wt, 0, 4, -1), slice("c", wt, 6, 12, -1)
	over := b.Node("over", "MatMul", nil, x, b.Weights(16, 10)) // overlapping slices: kept
	o1, o2 := slice("o1", over, 0, 6, -1), slice("o2", over, 4, 10, -1)
	rows := b.Node("rows", "MatMul", nil, x, b.Weights(16, 10)) // a slice of rows: kept
	r1 := slice("r1", rows, 0, 3, 1)
	sp := b.NodeN("sp", "Split", 3, ir.Attrs{"axis": ir.IntAttr(-1)}, b.Node("spmm", "MatMul", nil, x, b.Weights(16, 9)), b.Ints(2, 3, 4))
	g := b.Output(qs, ks, vs, a, c, o1, o2, r1, sp[0], sp[2], b.Node("spn", "Neg", nil, sp[1]))
	unsplit := testkit.CloneGraph(g)
	run(t, unsplit, "--opt_level=2 --disable_pass=preprocess.matmul_slice_split", cpuBE)
	res := checkEquivalent(t, g, "--opt_level=2", cpuBE, 1e-6)
	in := randInputs(g, 1)
	want, got := execute(t, unsplit, in), execute(t, g, in)
	for i := range want { // the same dot products: bit for bit
		if !slices.Equal(want[i].F32(), got[i].F32()) {
			t.Errorf("output %d differs from the unsplit MatMul", i)
		}
	}
	if rec := passRecord(res, "preprocess", "matmul_slice_split"); !strings.Contains(rec.Note, "3 MatMul split into 8") {
		t.Errorf("record %+v", rec)
	}
	for _, n := range g.Nodes {
		if n.Name == "qkv" || n.Name == "wt" || n.Name == "spmm" || n.Op == "Split" {
			t.Errorf("%s was not split", n.Name)
		}
		if (n.Name == "q" || n.Name == "k" || n.Name == "v") && len(n.Inputs) != 3 {
			t.Errorf("%s lost the bias: %d inputs", n.Name, len(n.Inputs))
		}
	}
	if got := countOps(g, "Slice"); got != 3 {
		t.Errorf("%d Slices left, want 3 (o1, o2, r1)", got)
	}
}
