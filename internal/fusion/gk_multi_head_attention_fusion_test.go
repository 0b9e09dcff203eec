package fusion

import (
	"math"
	"strings"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/testkit"
)

// causalCond is Where's condition of a causal mask: true above the diagonal
// (masked out), [1, 1, s, s].
func causalCond(b *testkit.Graph, s int64) *ir.Value {
	t := ir.NewTensor(ir.Bool, []int64{1, 1, s, s})
	for i := int64(0); i < s; i++ {
		for j := i + 1; j < s; j++ {
			t.Data[i*s+j] = 1
		}
	}
	return b.Const("cond", t)
}

// gptAttention builds the exporter's causal attention on x [1, 6, 16] with
// 2 heads of 8: head split, QK^T, Mul scale, Where(cond, fill, .), Softmax
// (axis), PV, head merge.
func gptAttention(b *testkit.Graph, fill float32, axis int64, cond *ir.Value) *ir.Value {
	split := func(name string) *ir.Value {
		x := b.Input(name, 1, 6, 16)
		return b.Node(name+"_t", "Transpose", perm(0, 2, 1, 3), b.Node(name+"_r", "Reshape", nil, x, b.Ints(1, 6, 2, 8)))
	}
	q, k, v := split("q"), split("k"), split("v")
	s := b.Node("qk", "MatMul", nil, q, b.Node("kt", "Transpose", perm(0, 1, 3, 2), k))
	s = b.Node("scale", "Mul", nil, s, b.Scalar(0.35))
	s = b.Node("where", "Select", nil, cond, b.Scalar(fill), s)
	p := b.Node("softmax", "Softmax", ir.Attrs{"axis": ir.IntAttr(axis)}, s)
	y := b.Node("pv", "MatMul", nil, p, v)
	return b.Node("merge_r", "Reshape", nil, b.Node("merge", "Transpose", perm(0, 2, 1, 3), y), b.Ints(1, 6, 16))
}

var negInf = float32(math.Inf(-1))

func TestMultiHeadAttentionFusionCausal(t *testing.T) {
	b := testkit.New(t, "test")
	g := b.Output(gptAttention(b, negInf, -1, causalCond(b, 6)))
	res := checkEquivalent(t, g, "--opt_level=2", cpuBE, 1e-5)
	rec := passRecord(res, "preprocess", "MultiHeadAttentionFusion")
	if !strings.Contains(rec.Note, "1 attention patterns -> Attention (1 with head split/merge folded)") {
		t.Errorf("record %+v", rec)
	}
	if countOps(g, "Attention") != 1 || countOps(g, "Softmax") != 0 || countOps(g, "Transpose") != 0 {
		t.Errorf("graph after the pass:\n%s", dumpText(g))
	}
	for _, n := range g.Nodes {
		if n.Op == "Attention" && (n.Attrs.Int("q_num_heads", 0) != 2 || len(n.Inputs) != 4 || n.Inputs[0].Shape[2] != 16) {
			t.Errorf("Attention %v reads %v", n.Attrs, n.Inputs)
		}
	}
}

func TestMultiHeadAttentionFusionBertForm(t *testing.T) {
	// nn.MultiheadAttention: [S, H, D] heads moved first with perm [1, 0, 2],
	// Q divided by sqrt(D), K^T by perm [1, 2, 0].
	b := testkit.New(t, "test")
	heads := func(name string) *ir.Value {
		return b.Node(name+"_r", "Reshape", nil, b.Input(name, 5, 1, 16), b.Ints(5, 2, 8))
	}
	q := b.Node("q_div", "RealDiv", nil, b.Node("q_t", "Transpose", perm(1, 0, 2), heads("q")), b.Scalar(2.828427))
	s := b.Node("qk", "MatMul", nil, q, b.Node("kt", "Transpose", perm(1, 2, 0), heads("k")))
	y := b.Node("pv", "MatMul", nil, b.Node("softmax", "Softmax", nil, s), b.Node("v_t", "Transpose", perm(1, 0, 2), heads("v")))
	g := b.Output(b.Node("merge_r", "Reshape", nil, b.Node("merge", "Transpose", perm(1, 0, 2), y), b.Ints(5, 16)))
	res := checkEquivalent(t, g, "--opt_level=2", cpuBE, 1e-5)
	if rec := passRecord(res, "preprocess", "MultiHeadAttentionFusion"); !strings.Contains(rec.Note, "1 with head split/merge folded") {
		t.Errorf("record %+v", rec)
	}
	if countOps(g, "Attention") != 1 || countOps(g, "Transpose") != 0 || countOps(g, "RealDiv") != 0 {
		t.Errorf("graph after the pass:\n%s", dumpText(g))
	}
}

func TestMultiHeadAttentionFusionNotMatched(t *testing.T) {
	fullyMasked := func(b *testkit.Graph) *ir.Value {
		c := causalCond(b, 6)
		for j := 0; j < 6; j++ {
			c.Const.Data[j] = 1 // row 0 masks every key: Softmax gives NaN there
		}
		return c
	}
	for _, c := range []struct {
		name  string
		build func(b *testkit.Graph) *ir.Value
	}{
		{"finite fill", func(b *testkit.Graph) *ir.Value { return gptAttention(b, -1e4, -1, causalCond(b, 6)) }},
		{"softmax axis", func(b *testkit.Graph) *ir.Value { return gptAttention(b, negInf, 2, causalCond(b, 6)) }},
		{"fully masked row", func(b *testkit.Graph) *ir.Value { return gptAttention(b, negInf, -1, fullyMasked(b)) }},
		{"runtime mask", func(b *testkit.Graph) *ir.Value {
			return gptAttention(b, negInf, -1, b.InputOf("cond", ir.Bool, 1, 1, 6, 6))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := testkit.New(t, "test")
			y := c.build(b)
			g := b.Output(y)
			if c.name == "runtime mask" { // randInputs fills float32 inputs only
				run(t, g, "--opt_level=2", cpuBE)
			} else {
				checkEquivalent(t, g, "--opt_level=2", cpuBE, 1e-5)
			}
			if n := countOps(g, "Attention"); n != 0 {
				t.Errorf("%d Attention nodes:\n%s", n, dumpText(g))
			}
		})
	}
	// The scores are also a graph output: the chain is not the MatMul's alone.
	b := testkit.New(t, "test")
	y := gptAttention(b, negInf, -1, causalCond(b, 6))
	var scores *ir.Value
	for _, n := range b.G.Nodes {
		if n.Name == "qk" {
			scores = n.Outputs[0]
		}
	}
	g := b.Output(y, scores)
	checkEquivalent(t, g, "--opt_level=2", cpuBE, 1e-5)
	if countOps(g, "Attention") != 0 {
		t.Errorf("fused although the scores are a graph output:\n%s", dumpText(g))
	}
}
