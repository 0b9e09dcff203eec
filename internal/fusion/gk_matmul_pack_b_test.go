package fusion

import (
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"gkconv/internal/akgcfg"
	"gkconv/internal/ir"
	"gkconv/internal/testkit"
)

// packGraph: x[2,5,12] @ w1[12,40] + bias -> @ w2^T (w2 [24,40], transpose_b)
// -> out1; x @ y (non-const B) -> out2; xt^T @ w1 (transpose_a, w1 shared).
func packGraph(t *testing.T) *ir.Graph {
	b := testkit.New(t, "test")
	x := b.Input("x", 2, 5, 12)
	y := b.Input("y", 2, 12, 3)
	xt := b.Input("xt", 12, 7)
	w1, w2 := b.Weights(12, 40), b.Weights(24, 40)
	h := b.Node("mm1", "MatMul", nil, x, w1)
	h = b.Node("bias", "Add", nil, h, b.Weights(40))
	o1 := b.Node("mm2", "MatMul", ir.Attrs{"transpose_b": ir.IntAttr(1)}, h, w2)
	o2 := b.Node("mm3", "MatMul", nil, x, y)
	o3 := b.Node("mm4", "MatMul", ir.Attrs{"transpose_a": ir.IntAttr(1)}, xt, w1)
	return b.Output(o1, o2, o3)
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

// markedNames lists the top-level MatMuls marked pack_b, in graph order.
func markedNames(g *ir.Graph) []string {
	var out []string
	for _, n := range g.Nodes {
		if ir.PackBMarked(n) {
			out = append(out, n.Name)
		}
	}
	return out
}

// The pass marks the MatMuls with a constant float32 B and changes nothing
// else: no new op, no packed constant, weights and their layout as they were
// (execGraph runs the marked ones on the packed GEMM, as the runtime does).
func TestMatMulPackB(t *testing.T) {
	g := packGraph(t)
	consts := slices.Clone(g.Consts)
	res := checkEquivalent(t, g, "--opt_level=2", cpuBE, 1e-5)
	rec, ok := packRecord(res)
	if !ok || !rec.Ran || !rec.Changed || rec.StageIndex != 5 || rec.Level != 2 {
		t.Fatalf("pass record %+v", rec)
	}
	if !strings.Contains(rec.Note, "3 MatMul marked pack_b=1, 2 B to pack at load") {
		t.Errorf("note %q", rec.Note)
	}
	if got := markedNames(g); !slices.Equal(got, []string{"mm1", "mm2", "mm4"}) { // mm3: B is not constant
		t.Fatalf("marked %v, want [mm1 mm2 mm4]:\n%s", got, dumpText(g))
	}
	if got := countOps(g, "MatMul"); got != 4 {
		t.Errorf("%d MatMul, want 4", got)
	}
	if !slices.Equal(g.Consts[:len(consts)-1], consts[:len(consts)-1]) {
		t.Errorf("weights changed: %v, were %v", g.Consts, consts)
	}
	for _, n := range g.Nodes {
		if !ir.PackBMarked(n) {
			continue
		}
		if a := n.Attrs[ir.AttrPackB]; a.Kind != ir.AttrInt || a.I != 1 {
			t.Errorf("%s: %s = %#v, want int 1", n.Name, ir.AttrPackB, a)
		}
		b := n.Inputs[1]
		if !b.IsConst() || len(b.Const.Shape) != 2 {
			t.Errorf("%s: B %v is not the 2-D weight", n.Name, b)
		}
		switch n.Name {
		case "mm2":
			if n.Attrs.Int("transpose_b", 0) != 1 || !slices.Equal(b.Const.Shape, []int64{24, 40}) {
				t.Errorf("mm2 lost transpose_b or its [24,40] weight: %v %v", n.Attrs, b.Const.Shape)
			}
		case "mm4":
			if n.Attrs.Int("transpose_a", 0) != 1 {
				t.Errorf("mm4 lost transpose_a: %v", n.Attrs)
			}
		}
	}
	if g.Nodes[0].Inputs[1] != g.Nodes[len(g.Nodes)-1].Inputs[1] {
		t.Error("mm1 and mm4 no longer share w1")
	}
}

// With values whose products and sums are exact in float32, the marked
// graph (packed GEMM) and the same graph unmarked (OpenBLAS) agree to the
// bit: the packed path computes the same function, transposes and bias
// included.
func TestMatMulPackBBitIdentical(t *testing.T) {
	g := packGraph(t)
	r := rand.New(rand.NewSource(3))
	for _, v := range g.Consts {
		for i := range v.Const.F32() {
			v.Const.F32()[i] = float32(r.Intn(9) - 4)
		}
	}
	run(t, g, "--opt_level=2", cpuBE)
	if len(markedNames(g)) != 3 {
		t.Fatalf("marked %v", markedNames(g))
	}
	plain := testkit.CloneGraph(g)
	for _, n := range plain.Nodes {
		delete(n.Attrs, ir.AttrPackB)
	}
	in := map[string]*ir.Tensor{}
	for _, v := range g.Inputs {
		x := ir.NewTensor(v.DType, v.Shape)
		for i := range x.F32() {
			x.F32()[i] = float32(r.Intn(9)-4) * 0.5
		}
		in[v.Name] = x
	}
	got, want := execute(t, g, in), execute(t, plain, in)
	for i := range want {
		for j, w := range want[i].F32() {
			if math.Float32bits(got[i].F32()[j]) != math.Float32bits(w) {
				t.Fatalf("output %d[%d]: packed %g, unpacked %g", i, j, got[i].F32()[j], w)
			}
		}
	}
}

// A weight that something else also reads is marked all the same: the
// packed copy exists only at run time and the other reader keeps the weight.
func TestMatMulPackBSharedWeight(t *testing.T) {
	b := testkit.New(t, "test")
	x := b.Input("x", 8, 8)
	w := b.Weights(8, 8)
	g := b.Output(b.Node("mm", "MatMul", nil, x, w), b.Node("add", "Add", nil, x, w))
	res := checkEquivalent(t, g, "--opt_level=2", cpuBE, 1e-5)
	rec, _ := packRecord(res)
	if !slices.Contains(g.Consts, w) || !strings.Contains(rec.Note, "1 MatMul marked") || len(markedNames(g)) != 1 {
		t.Errorf("shared weight: consts %v, note %q, marked %v", g.Consts, rec.Note, markedNames(g))
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
		if m := markedNames(g); len(m) != 0 {
			t.Errorf("%s on %v: marked %v", c.flags, c.be.Device, m)
		}
	}
}

// Not marked: float16 A, rank-3 const B (ir.PackableMatMul's other cases are
// in its own test).
func TestMatMulPackBSkips(t *testing.T) {
	b := testkit.New(t, "test")
	x := b.Input("x", 3, 8)
	w3 := b.Weights(2, 8, 4)
	o := b.Node("mm", "MatMul", nil, x, w3)
	g := b.Output(o)
	half := &ir.Value{Name: "h", DType: ir.Float16, Shape: []int64{3, 8}}
	g.Inputs = append(g.Inputs, half)
	w16 := g.AddConst("w16", ir.NewTensor(ir.Float16, []int64{8, 4})) // MatMul's A and B share a dtype
	n := g.AddNode("mmh", "MatMul", []*ir.Value{half, w16}, "mmh_out")
	if err := ir.InferNode(n); err != nil {
		t.Fatal(err)
	}
	g.Outputs = append(g.Outputs, n.Outputs[0])
	res := run(t, g, "--opt_level=2", cpuBE)
	rec, _ := packRecord(res)
	if len(markedNames(g)) != 0 || rec.Changed {
		t.Errorf("marked: %v, record %+v", markedNames(g), rec)
	}
}
