package fusion

import (
	"slices"
	"strings"
	"testing"

	"gkconv/internal/akgcfg"
	"gkconv/internal/ir"
)

// packGraph: x[2,5,12] @ w1[12,40] + bias -> @ w2^T (w2 [24,40], transpose_b)
// -> out1; x @ y (non-const B) -> out2; xt^T @ w1 (transpose_a, w1 shared).
func packGraph(t *testing.T) *ir.Graph {
	b := newGB(t)
	x := b.input("x", 2, 5, 12)
	y := b.input("y", 2, 12, 3)
	xt := b.input("xt", 12, 7)
	w1, w2 := b.weights(12, 40), b.weights(24, 40)
	h := b.op("mm1", "MatMul", nil, x, w1)
	h = b.op("bias", "Add", nil, h, b.weights(40))
	o1 := b.op("mm2", "MatMul", ir.Attrs{"transpose_b": ir.IntAttr(1)}, h, w2)
	o2 := b.op("mm3", "MatMul", nil, x, y)
	o3 := b.op("mm4", "MatMul", ir.Attrs{"transpose_a": ir.IntAttr(1)}, xt, w1)
	return b.output(o1, o2, o3)
}

func packRecord(res *Result) (PassRecord, bool) {
	for _, p := range res.Passes {
		if p.Stage == "postprocess" && p.Name == "matmul_pack_b" {
			return p, true
		}
	}
	return PassRecord{}, false
}

func countOps(g *ir.Graph, op string) int {
	c := 0
	for _, n := range g.Nodes {
		if n.Op == op {
			c++
		}
	}
	return c
}

func TestMatMulPackB(t *testing.T) {
	g := packGraph(t)
	w1, w2 := g.Consts[0], g.Consts[1]
	res := checkEquivalent(t, g, "--opt_level=2", cpuBE, 1e-5)
	rec, ok := packRecord(res)
	if !ok || !rec.Ran || !rec.Changed || rec.StageIndex != 5 || rec.Level != 2 {
		t.Fatalf("pass record %+v", rec)
	}
	if !strings.Contains(rec.Note, "3 MatMul -> PackedMatMul, 2 B packed") {
		t.Errorf("note %q", rec.Note)
	}
	if got := countOps(g, ir.OpPackedMatMul); got != 3 {
		t.Fatalf("%d PackedMatMul, want 3:\n%s", got, dumpText(g))
	}
	if got := countOps(g, "MatMul"); got != 1 { // B is not constant
		t.Errorf("%d MatMul left, want 1", got)
	}
	if slices.Contains(g.Consts, w1) || slices.Contains(g.Consts, w2) {
		t.Error("unpacked weights still in the graph")
	}
	for _, n := range g.Nodes {
		if n.Op != ir.OpPackedMatMul {
			continue
		}
		b := n.Inputs[1]
		k, nn := n.Attrs.Int("k", 0), n.Attrs.Int("n", 0)
		if !b.IsConst() || len(b.Const.Shape) != 1 || b.Const.Shape[0] != int64(ir.PackedLen(int(k), int(nn), ir.PackNR)) {
			t.Errorf("%s: packed B %v for k=%d n=%d", n.Name, b, k, nn)
		}
		if n.Name == "mm4" && n.Attrs.Int("transpose_a", 0) != 1 {
			t.Errorf("mm4 lost transpose_a: %v", n.Attrs)
		}
	}
	if g.Nodes[0].Inputs[1] != g.Nodes[len(g.Nodes)-1].Inputs[1] {
		t.Error("mm1 and mm4 share w1 but got two packed copies")
	}
}

// A weight that something else also reads stays, next to its packed copy.
func TestMatMulPackBKeepsSharedWeight(t *testing.T) {
	b := newGB(t)
	x := b.input("x", 8, 8)
	w := b.weights(8, 8)
	g := b.output(b.op("mm", "MatMul", nil, x, w), b.op("add", "Add", nil, x, w))
	res := checkEquivalent(t, g, "--opt_level=2", cpuBE, 1e-5)
	rec, _ := packRecord(res)
	if !slices.Contains(g.Consts, w) || !strings.Contains(rec.Note, "1 unpacked B kept") {
		t.Errorf("shared weight: consts %v, note %q", g.Consts, rec.Note)
	}
}

func TestMatMulPackBOff(t *testing.T) {
	cases := []struct {
		flags string
		be    akgcfg.Backend
		note  string
	}{
		{"--opt_level=2 --disable_pass=postprocess.matmul_pack_b", cpuBE, "disable_pass"},
		{"--opt_level=2 --disable_pass=5.2", cpuBE, "disable_pass"},
		{"--opt_level=1", cpuBE, "opt_level >= 2"},
		{"--opt_level=2", akgcfg.Backend{Device: akgcfg.GPU}, "not applicable"},
	}
	for _, c := range cases {
		g := packGraph(t)
		res, err := Run(g, flagsFor(t, c.flags, c.be), c.be, nil, Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.flags, err)
		}
		rec, ok := packRecord(res)
		if !ok || rec.Ran || !strings.Contains(rec.Note, c.note) {
			t.Errorf("%s on %v: record %+v", c.flags, c.be.Device, rec)
		}
		if n := countOps(g, ir.OpPackedMatMul); n != 0 {
			t.Errorf("%s on %v: %d PackedMatMul", c.flags, c.be.Device, n)
		}
	}
}

// Not packed: float16 A, rank-3 const B, mismatched K.
func TestMatMulPackBSkips(t *testing.T) {
	b := newGB(t)
	x := b.input("x", 3, 8)
	w3 := b.weights(2, 8, 4)
	o := b.op("mm", "MatMul", nil, x, w3)
	g := b.output(o)
	half := &ir.Value{Name: "h", DType: ir.Float16, Shape: []int64{3, 8}}
	g.Inputs = append(g.Inputs, half)
	n := g.AddNode("mmh", "MatMul", []*ir.Value{half, b.weights(8, 4)}, "mmh_out")
	if err := ir.InferNode(n); err != nil {
		t.Fatal(err)
	}
	g.Outputs = append(g.Outputs, n.Outputs[0])
	res := run(t, g, "--opt_level=2", cpuBE)
	rec, _ := packRecord(res)
	if countOps(g, ir.OpPackedMatMul) != 0 || rec.Changed {
		t.Errorf("packed: %v, record %+v", topOps(g), rec)
	}
}
