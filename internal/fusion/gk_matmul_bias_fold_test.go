package fusion

import (
	"strings"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/testkit"
)

// biasGraph: five MatMuls with constant B. mm1 (Add [1,24]) and mm2
// (BiasAdd [24]) fold; mm3 adds a graph input, mm4's Add broadcasts the
// product to a bigger shape, mm5's product is also a graph output.
func biasGraph(t *testing.T) *ir.Graph {
	b := testkit.New(t, "test")
	x := b.Input("x", 6, 16)
	z := b.Input("z", 6, 24)
	o1 := b.Node("bias1", "Add", nil, b.Node("mm1", "MatMul", nil, x, b.Weights(16, 24)), b.Weights(1, 24))
	o2 := b.Node("bias2", "BiasAdd", nil, b.Node("mm2", "MatMul", nil, x, b.Weights(16, 24)), b.Weights(24))
	o3 := b.Node("add3", "Add", nil, b.Node("mm3", "MatMul", nil, x, b.Weights(16, 24)), z)
	o4 := b.Node("add4", "Add", nil, b.Node("mm4", "MatMul", nil, x, b.Weights(16, 24)), b.Weights(2, 6, 24))
	shared := b.Node("mm5", "MatMul", nil, x, b.Weights(16, 24))
	return b.Output(o1, o2, o3, o4, b.Node("add5", "Add", nil, shared, b.Weights(24)), shared)
}

func passRecord(res *Result, stage, name string) PassRecord {
	for _, p := range res.Passes {
		if p.Stage == stage && p.Name == name {
			return p
		}
	}
	return PassRecord{}
}

func TestMatMulBiasFold(t *testing.T) {
	for _, flags := range []string{"--opt_level=2", "--opt_level=2 --disable_pass=postprocess.matmul_pack_b"} {
		g := biasGraph(t)
		res := checkEquivalent(t, g, flags, cpuBE, 1e-5)
		rec := passRecord(res, "preprocess", "matmul_bias_fold")
		if !rec.Ran || !rec.Changed || rec.StageIndex != 0 || rec.Level != 2 || !strings.Contains(rec.Note, "2 bias Add folded") {
			t.Errorf("%s: record %+v", flags, rec)
		}
		for _, n := range g.Nodes {
			if n.Op != "MatMul" {
				continue
			}
			want := 2
			if n.Name == "mm1" || n.Name == "mm2" {
				want = 3
			}
			if len(n.Inputs) != want {
				t.Errorf("%s: %s has %d inputs, want %d", flags, n.Name, len(n.Inputs), want)
			}
		}
	}
}

func TestMatMulBiasFoldOff(t *testing.T) {
	for _, c := range []struct{ flags, note string }{
		{"--opt_level=1", "opt_level >= 2"},
		{"--opt_level=2 --disable_pass=preprocess.matmul_bias_fold", "disable_pass"},
		{"--opt_level=2 --enable_cluster_ops=MatMul", "clusterable"},
	} {
		g := biasGraph(t)
		res := checkEquivalent(t, g, c.flags, cpuBE, 1e-5)
		rec := passRecord(res, "preprocess", "matmul_bias_fold")
		if rec.Changed || !strings.Contains(rec.Note, c.note) {
			t.Errorf("%s: record %+v", c.flags, rec)
		}
		for _, n := range g.Nodes {
			if n.Op == "MatMul" && len(n.Inputs) != 2 {
				t.Errorf("%s: %s got a bias", c.flags, n.Name)
			}
		}
	}
}

// Vector operands: a 1-D A folds (the output is one row); a 1-D B has no
// column axis, so its Add stays.
func TestMatMulBiasFoldVectors(t *testing.T) {
	b := testkit.New(t, "test")
	x := b.Input("x", 16)
	m := b.Input("m", 5, 16)
	row := b.Node("addrow", "Add", nil, b.Node("vm", "MatMul", nil, x, b.Weights(16, 24)), b.Weights(24))
	col := b.Node("addcol", "Add", nil, b.Node("mv", "MatMul", nil, m, b.Weights(16)), b.Weights(5))
	g := b.Output(row, col)
	res := checkEquivalent(t, g, "--opt_level=2", cpuBE, 1e-5)
	if rec := passRecord(res, "preprocess", "matmul_bias_fold"); !strings.Contains(rec.Note, "1 bias Add folded") {
		t.Errorf("record %+v", rec)
	}
}
