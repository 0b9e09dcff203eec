package fusion

import (
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/testkit"
)

// TestConvBiasaddFusion: a Conv2D then an Add or BiasAdd of a per-channel
// constant becomes (is added to) the conv's bias; an Add that broadcasts or
// adds an input stays.
func TestConvBiasaddFusion(t *testing.T) {
	runConvAnfCases(t, []convAnfCase{
		{"biasadd_add", func(b *testkit.Graph) *ir.Graph {
			return b.Output(b.Node("add", "Add", nil, convIn(b, false), anfConst(b, 10, false, 1, 4, 1, 1)))
		}, "Conv2D", "ConvBiasaddFusion", 0},
		{"biasadd_onto_bias", func(b *testkit.Graph) *ir.Graph {
			return b.Output(b.Node("add", "BiasAdd", nil, convIn(b, true), anfConst(b, 10, false, 4)))
		}, "Conv2D", "ConvBiasaddFusion", 0},
		{"biasadd_broadcasting", func(b *testkit.Graph) *ir.Graph { // the Add makes the output bigger
			return b.Output(b.Node("add", "Add", nil, convIn(b, false), anfConst(b, 10, false, 2, 4, 1, 1)))
		}, "Conv2D,Add", "", 0},
		{"biasadd_input", func(b *testkit.Graph) *ir.Graph {
			return b.Output(b.Node("add", "Add", nil, convIn(b, false), b.Input("z", 1, 4, 1, 1)))
		}, "Conv2D,Add", "", 0},
	})
}
