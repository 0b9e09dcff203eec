package fusion

import (
	"slices"
	"strings"
	"testing"

	"gkconv/internal/testkit"
)

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
