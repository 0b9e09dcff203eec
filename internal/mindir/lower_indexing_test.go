package mindir

import (
	"testing"

	"gkconv/internal/ir"
)

// indexingCases: the issue-13 indexing ops written as the primitives
// converter_lite writes (lower_indexing.go) or as Custom, read back to the
// same IR node and run the same.
var indexingCases = []nnCase{
	{name: "GatherNd", prim: "GatherNd", want: map[string]string{}, nin: 2, g: func(b *nnGraph) *ir.Graph {
		idx := b.c("idx", ir.Int64Tensor([]int64{2, 2}, 0, 1, 2, -1))
		return b.node("GatherNd", nil, 1, b.in("x", ir.Float32, 3, 4), idx)
	}},
	{name: "GatherNd_batch_dims", prim: "Custom:" + CustomTypePrefix + "GatherNd", g: func(b *nnGraph) *ir.Graph {
		idx := b.c("idx", ir.Int64Tensor([]int64{3, 1}, 0, 3, 1))
		return b.node("GatherNd", ir.Attrs{"batch_dims": ir.IntAttr(1)}, 1, b.in("x", ir.Float32, 3, 4), idx)
	}},
	{name: "ScatterNdUpdate", prim: "ScatterNdUpdate", want: map[string]string{}, nin: 3, g: func(b *nnGraph) *ir.Graph {
		idx := b.c("idx", ir.Int64Tensor([]int64{2, 1}, 1, 3))
		return b.node("ScatterNdUpdate", nil, 1, b.in("x", ir.Float32, 4, 3), idx, b.in("u", ir.Float32, 2, 3))
	}},
	{name: "ScatterNdUpdate_add", prim: "Custom:" + CustomTypePrefix + "ScatterNdUpdate", g: func(b *nnGraph) *ir.Graph {
		idx := b.c("idx", ir.Int64Tensor([]int64{2, 1}, 1, 1))
		return b.node("ScatterNdUpdate", ir.Attrs{"reduction": ir.StringAttr("add")}, 1, b.in("x", ir.Float32, 4, 3), idx, b.in("u", ir.Float32, 2, 3))
	}},
	{name: "ScatterElements", prim: "ScatterElements", want: map[string]string{"axis": nnI64}, nin: 3, g: func(b *nnGraph) *ir.Graph {
		idx := b.c("idx", ir.Int64Tensor([]int64{2, 2}, 0, -1, 2, 1))
		return b.node("ScatterElements", ir.Attrs{"axis": ir.IntAttr(1)}, 1, b.in("x", ir.Float32, 2, 3), idx, b.in("u", ir.Float32, 2, 2))
	}},
	{name: "ScatterElements_max", prim: "Custom:" + CustomTypePrefix + "ScatterElements", g: func(b *nnGraph) *ir.Graph {
		idx := b.c("idx", ir.Int64Tensor([]int64{2, 2}, 0, 0, 2, 2))
		return b.node("ScatterElements", ir.Attrs{"axis": ir.IntAttr(1), "reduction": ir.StringAttr("max")}, 1, b.in("x", ir.Float32, 2, 3), idx, b.in("u", ir.Float32, 2, 2))
	}},
	{name: "NonMaxSuppression", prim: "NonMaxSuppression", want: map[string]string{"center_point_box": nnI64}, nin: 4, g: func(b *nnGraph) *ir.Graph {
		return b.node("NonMaxSuppression", ir.Attrs{"center_point_box": ir.IntAttr(1)}, 1, b.in("boxes", ir.Float32, 1, 6, 4),
			b.in("scores", ir.Float32, 1, 2, 6), b.ints("max", 3), b.c("iou", ir.Float32Tensor([]int64{1}, 0.5)))
	}},
	{name: "AffineGrid", prim: "AffineGrid", want: map[string]string{"align_corners": nnBool}, nin: 2, g: func(b *nnGraph) *ir.Graph {
		return b.node("AffineGrid", ir.Attrs{"align_corners": ir.IntAttr(1)}, 1, b.in("theta", ir.Float32, 2, 2, 3), b.ints("size", 2, 1, 4, 5))
	}},
	{name: "GridSample", prim: "Custom:" + CustomTypePrefix + "GridSample", g: func(b *nnGraph) *ir.Graph {
		return b.node("GridSample", ir.Attrs{"mode": ir.StringAttr("cubic"), "padding_mode": ir.StringAttr("border"), "align_corners": ir.IntAttr(1)}, 1,
			b.in("x", ir.Float32, 1, 2, 4, 4), b.in("grid", ir.Float32, 1, 3, 3, 2))
	}},
	{name: "NonZero", prim: "Custom:" + CustomTypePrefix + "NonZero", g: func(b *nnGraph) *ir.Graph {
		return b.node("NonZero", nil, 1, b.in("x", ir.Float32, 3, 4))
	}},
	{name: "TensorScatter", prim: "Custom:" + CustomTypePrefix + "TensorScatter", g: func(b *nnGraph) *ir.Graph {
		return b.node("TensorScatter", ir.Attrs{"mode": ir.StringAttr("circular")}, 1, b.in("past", ir.Float32, 2, 5, 3),
			b.in("upd", ir.Float32, 2, 2, 3), b.ints("w", 4, 1))
	}},
}

func TestIndexingLowerings(t *testing.T) {
	covered := map[string]bool{}
	for _, tc := range indexingCases {
		t.Run(tc.name, func(t *testing.T) {
			g := tc.g(newNNGraph(t))
			if tc.prim == g.Nodes[0].Op || tc.want != nil {
				covered[g.Nodes[0].Op] = true
			}
			runNNCase(t, tc, g)
		})
	}
	for op := range lowerIndexingTable {
		if !covered[op] {
			t.Errorf("no case for %s", op)
		}
	}
}
