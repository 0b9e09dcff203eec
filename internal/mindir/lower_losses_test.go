package mindir

import (
	"testing"

	"gkconv/internal/ir"
)

// lossNormCases: the lowerings of lower_losses.go and the Custom fallbacks
// of the family, run by TestNNLowerings (write, converter check, read back,
// same values).
var lossNormCases = []nnCase{
	{name: "CumProd", prim: "CumProd", want: map[string]string{"exclusive": nnBool, "reverse": nnBool}, nin: 2, g: func(b *nnGraph) *ir.Graph {
		return b.node("CumProd", ir.Attrs{"exclusive": ir.IntAttr(0), "reverse": ir.IntAttr(1)}, 1, b.in("x", ir.Float32, 2, 3), b.scalarInt("axis", -1))
	}},
	{name: "MatrixDeterminant", prim: "MatrixDeterminant", want: map[string]string{}, nin: 1, g: func(b *nnGraph) *ir.Graph {
		return b.node("MatrixDeterminant", nil, 1, b.in("x", ir.Float32, 2, 3, 3))
	}},
	{name: "LpNormalization", prim: "LpNormalization", want: map[string]string{"axis": nnI64, "p": nnI64}, nin: 1, g: func(b *nnGraph) *ir.Graph {
		return b.node("LpNormalization", ir.Attrs{"axis": ir.IntAttr(0), "p": ir.IntAttr(1)}, 1, b.in("x", ir.Float32, 3, 4))
	}, check: func(t *testing.T, w nnWritten) {
		nnWantInt(t, w, "axis", 0)
		nnWantInt(t, w, "p", 1)
	}},
	// alpha/size in float32 read back times size may differ from alpha in
	// the last bit: loose.
	{name: "LRN", prim: "LRN", loose: true, want: map[string]string{"depth_radius": nnI64, "alpha": nnF32T, "beta": nnF32T, "bias": nnF32T}, nin: 1, g: func(b *nnGraph) *ir.Graph {
		return b.node("LRN", ir.Attrs{"size": ir.IntAttr(3), "alpha": ir.FloatAttr(nnF32(2e-4)), "beta": ir.FloatAttr(nnF32(0.75)),
			"bias": ir.FloatAttr(nnF32(2))}, 1, b.in("x", ir.Float32, 1, 5, 2, 2))
	}, check: func(t *testing.T, w nnWritten) { nnWantInt(t, w, "depth_radius", 1) }},
	// An even window is not centred: MindSpore's LRN cannot say it.
	{name: "LRN_even", prim: "Custom:gkconv.LRN", g: func(b *nnGraph) *ir.Graph {
		return b.node("LRN", ir.Attrs{"size": ir.IntAttr(2)}, 1, b.in("x", ir.Float32, 1, 5, 2, 2))
	}},
	{name: "RMSNormalization", prim: "Custom:gkconv.RMSNormalization", g: func(b *nnGraph) *ir.Graph {
		return b.node("RMSNormalization", ir.Attrs{"axis": ir.IntAttr(1), "epsilon": ir.FloatAttr(nnF32(1e-3))}, 1,
			b.in("x", ir.Float32, 2, 3, 4), b.floats("s", 1, 3, 4))
	}},
	{name: "SoftmaxCrossEntropyLoss", prim: "Custom:gkconv.SoftmaxCrossEntropyLoss", norun: true, g: func(b *nnGraph) *ir.Graph {
		return b.node("SoftmaxCrossEntropyLoss", ir.Attrs{"reduction": ir.StringAttr("sum"), "ignore_index": ir.IntAttr(1)}, 2,
			b.in("x", ir.Float32, 2, 3, 4), b.c("t", ir.Int64Tensor([]int64{2, 4}, 0, 1, 2, 1, 2, 2, 0, 1)))
	}},
}

func init() { nnCases = append(nnCases, lossNormCases...) }

// TestLossNormLoweringCases: every lowering of the family has a case.
func TestLossNormLoweringCases(t *testing.T) {
	covered := map[string]bool{}
	for _, tc := range lossNormCases {
		covered[tc.name] = true
	}
	for op := range lowerLossNormTable {
		if !covered[op] {
			t.Errorf("no case for %s", op)
		}
	}
}
