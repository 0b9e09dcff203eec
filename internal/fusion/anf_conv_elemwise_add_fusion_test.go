package fusion

import (
	"strings"
	"testing"

	"gkconv/internal/testkit"
)

// TestConvElemwiseAddFusionBlacklisted: fusion_blacklists switches the pass
// off (the cases of the pass itself are in TestConvAnfFusions).
func TestConvElemwiseAddFusionBlacklisted(t *testing.T) {
	b := testkit.New(t, "g")
	g := b.Output(b.Node("relu", "ReLU", nil, b.Node("add", "Add", nil, convIn(b, true), b.Input("z", 1, 4, 6, 6))))
	res, warns := runAnfChecked(t, g, AnfOptions{Blacklist: []string{"ConvElemwiseAddFusion"}})
	if got := strings.Join(topOps(g), ","); got != "Conv2D,Add,ReLU" || len(warns) != 0 {
		t.Fatalf("ops %s, warnings %q", got, warns)
	}
	if r := anfRecord(res, "ConvElemwiseAddFusion"); r.Ran || !strings.Contains(r.Note, "fusion_blacklists") {
		t.Errorf("record %+v", r)
	}
}
