package fusion

import (
	"slices"
	"strings"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/testkit"
)

func perm(p ...int64) ir.Attrs { return ir.Attrs{"perm": ir.IntsAttr(p...)} }

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

func TestTransposeMatMulFusion(t *testing.T) {
	b := testkit.New(t, "test")
	q := b.Input("q", 3, 5, 4) // [H,S,D]
	k := b.Input("k", 5, 3, 4) // [S,H,D]
	w := b.Input("w", 6, 4)
	kt := b.Node("kt", "Transpose", perm(1, 2, 0), k) // [H,D,S]: gathers elements
	scores := b.Node("qk", "MatMul", nil, q, kt)      // [H,S,S]
	wt := b.Node("wt", "Transpose", perm(1, 0), w)    // a plain swap: disappears
	proj := b.Node("proj", "MatMul", nil, b.Node("r", "Reshape", nil, q, b.Ints(15, 4)), wt)
	other := b.Node("ot", "Transpose", perm(0, 2, 1), q) // [H,D,S] also read below
	both := b.Node("qo", "MatMul", nil, q, other)
	g := b.Output(scores, proj, both, b.Node("oo", "Neg", nil, other))
	res := checkEquivalent(t, g, "--opt_level=2 --disable_pass=postprocess.matmul_pack_b", cpuBE, 1e-5)
	if rec := passRecord(res, "preprocess", "transpose_matmul_fusion"); !strings.Contains(rec.Note, "2 Transpose folded into MatMul (1 removed)") {
		t.Errorf("record %+v", rec)
	}
	for _, n := range g.Nodes {
		switch n.Name {
		case "kt":
			if p := n.Attrs.Ints("perm", nil); !slices.Equal(p, []int64{1, 0, 2}) {
				t.Errorf("kt perm %v, want [1 0 2]", p)
			}
		case "wt":
			t.Error("wt is still there")
		case "qk", "proj":
			if n.Attrs.Int("transpose_b", 0) != 1 {
				t.Errorf("%s: transpose_b not set", n.Name)
			}
		case "qo":
			if n.Attrs.Int("transpose_b", 0) != 0 {
				t.Error("qo: a shared Transpose was folded")
			}
		}
	}
}

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
