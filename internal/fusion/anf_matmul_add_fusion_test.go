package fusion

import (
	"strings"
	"testing"

	"gkconv/internal/testkit"
)

func TestMatMulAddFusionReusesBiasFold(t *testing.T) {
	b := testkit.New(t, "mm")
	x := b.Input("x", 5, 16)
	g := b.Output(b.Node("add", "Add", nil, b.Node("mm", "MatMul", nil, x, b.Weights(16, 8)), b.Weights(8)))
	res, _ := runAnfChecked(t, g, AnfOptions{})
	if got := strings.Join(topOps(g), ","); got != "MatMul" || len(g.Nodes[0].Inputs) != 3 {
		t.Fatalf("ops %s\n%s", got, dumpText(g))
	}
	if r := anfRecord(res, "MatMulAddFusion"); !r.Ran || !r.Changed || r.Stage != AnfStage || r.StageIndex != 6 {
		t.Errorf("record %+v", r)
	}
	if r := anfRecord(res, "MatMulActivationFusion"); !r.Ran || r.Changed || !strings.Contains(r.Note, "no MatMul") {
		t.Errorf("record %+v", r)
	}
}
