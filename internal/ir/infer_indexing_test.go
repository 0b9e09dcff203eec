package ir

import "testing"

// Shape functions of the indexing and detection family: conversion-time
// shapes (no data: data-dependent dims unknown) and inconsistent inputs.
func TestInferIndexing(t *testing.T) {
	nms := func(extra ...*Value) []*Value {
		return append([]*Value{tVal(Float32, 1, 6, 4), tVal(Float32, 1, 2, 6)}, extra...)
	}
	runInferTable(t, []inferCase{
		{name: "batch_dims 0", op: "GatherNd", inputs: []*Value{tVal(Float32, 4, 5, 6), tVal(Int64, 2, 3, 2)}, want: []outWant{tOut(Float32, 2, 3, 6)}},
		{name: "batch_dims 1", op: "GatherNd", inputs: []*Value{tVal(Float32, 4, 5, 6), tVal(Int64, 4, 3, 1)}, attrs: Attrs{"batch_dims": IntAttr(1)}, want: []outWant{tOut(Float32, 4, 3, 6)}},
		{name: "tuple too long", op: "GatherNd", inputs: []*Value{tVal(Float32, 4, 5), tVal(Int64, 2, 3)}, err: "last dim 3"},
		{name: "batch mismatch", op: "GatherNd", inputs: []*Value{tVal(Float32, 4, 5), tVal(Int64, 3, 1)}, attrs: Attrs{"batch_dims": IntAttr(1)}, err: "batch dim 0"},

		{name: "same as data", op: "ScatterElements", inputs: []*Value{tVal(Float32, 3, 4), tVal(Int32, 2, 4), tVal(Float32, 2, 4)}, want: []outWant{tOut(Float32, 3, 4)}},
		{name: "bad reduction", op: "ScatterElements", inputs: []*Value{tVal(Float32, 3), tVal(Int64, 1), tVal(Float32, 1)}, attrs: Attrs{"reduction": StringAttr("sub")}, err: "reduction"},
		{name: "rank", op: "ScatterElements", inputs: []*Value{tVal(Float32, 3), tVal(Int64, 1, 1), tVal(Float32, 1, 1)}, err: "rank"},
		{name: "updates shape", op: "ScatterNdUpdate", inputs: []*Value{tVal(Float32, 3, 4), tVal(Int64, 2, 1), tVal(Float32, 2, 5)}, err: "expected shape [2 4]"},
		{name: "float indices", op: "ScatterNdUpdate", inputs: []*Value{tVal(Float32, 3, 4), tVal(Float32, 2, 1), tVal(Float32, 2, 4)}, err: "integers"},

		{name: "cache", op: "TensorScatter", inputs: []*Value{tVal(Float16, 2, 8, 16, 4), tVal(Float16, 2, 8, 3, 4), tVal(Int64, 2)}, want: []outWant{tOut(Float16, 2, 8, 16, 4)}},
		{name: "update too long", op: "TensorScatter", inputs: []*Value{tVal(Float32, 2, 4, 1), tVal(Float32, 2, 5, 1)}, attrs: Attrs{"axis": IntAttr(1)}, err: "does not fit"},
		{name: "batch axis", op: "TensorScatter", inputs: []*Value{tVal(Float32, 2, 4), tVal(Float32, 2, 4)}, attrs: Attrs{"axis": IntAttr(0)}, err: "batch axis"},

		{name: "no data", op: "NonZero", inputs: []*Value{tVal(Float32, 2, 3)}, want: []outWant{tOut(Int64, 2, -1)}},
		{name: "empty", op: "NonZero", inputs: []*Value{tVal(Float32, 0, 3)}, want: []outWant{tOut(Int64, 2, 0)}},
		{name: "data", op: "NonZero", inputs: []*Value{tInts(0, 3, 0, 5)}, want: []outWant{tOut(Int64, 1, 2)}},

		{name: "no data", op: "NonMaxSuppression", inputs: nms(tInts(3)), want: []outWant{tOut(Int64, -1, 3)}},
		{name: "boxes last dim", op: "NonMaxSuppression", inputs: []*Value{tVal(Float32, 1, 6, 5), tVal(Float32, 1, 2, 6)}, err: "last dim must be 4"},
		{name: "box count", op: "NonMaxSuppression", inputs: []*Value{tVal(Float32, 1, 6, 4), tVal(Float32, 1, 2, 5)}, err: "box count"},

		{name: "4-D", op: "GridSample", inputs: []*Value{tVal(Float32, 2, 3, 8, 8), tVal(Float32, 2, 5, 6, 2)}, want: []outWant{tOut(Float32, 2, 3, 5, 6)}},
		{name: "5-D", op: "GridSample", inputs: []*Value{tVal(Float32, 1, 3, 4, 8, 8), tVal(Float32, 1, 2, 5, 6, 3)}, want: []outWant{tOut(Float32, 1, 3, 2, 5, 6)}},
		{name: "bad padding", op: "GridSample", inputs: []*Value{tVal(Float32, 2, 3, 8, 8), tVal(Float32, 2, 5, 6, 2)}, attrs: Attrs{"padding_mode": StringAttr("wrap")}, err: "padding_mode"},

		{name: "2-D", op: "AffineGrid", inputs: []*Value{tVal(Float32, 2, 2, 3), tInts(2, 3, 5, 7)}, want: []outWant{tOut(Float32, 2, 5, 7, 2)}},
		{name: "3-D no data", op: "AffineGrid", inputs: []*Value{tVal(Float32, 2, 3, 4), tVec(5)}, want: []outWant{tOut(Float32, 2, -1, -1, -1, 3)}},
		{name: "theta mismatch", op: "AffineGrid", inputs: []*Value{tVal(Float32, 2, 3, 4), tInts(2, 3, 5, 7)}, err: "does not fit"},

		{name: "rois", op: "RoiAlign", inputs: []*Value{tVal(Float32, 1, 8, 10, 10), tVal(Float32, 5, 4), tVal(Int64, 5)}, attrs: Attrs{"output_height": IntAttr(3), "output_width": IntAttr(2)}, want: []outWant{tOut(Float32, 5, 8, 3, 2)}},
		{name: "roi count", op: "RoiAlign", inputs: []*Value{tVal(Float32, 1, 8, 10, 10), tVal(Float32, 5, 4), tVal(Int64, 4)}, err: "roi count"},

		{name: "default shape", op: "MaxUnpool", inputs: []*Value{tVal(Float32, 1, 2, 3, 3), tVal(Int64, 1, 2, 3, 3)}, attrs: Attrs{"kernel_shape": IntsAttr(2, 2), "strides": IntsAttr(2, 2), "pads": IntsAttr(1, 0, 0, 0)}, want: []outWant{tOut(Float32, 1, 2, 5, 6)}},
		{name: "output_shape", op: "MaxUnpool", inputs: []*Value{tVal(Float32, 1, 2, 3, 3), tVal(Int64, 1, 2, 3, 3), tInts(1, 2, 7, 7)}, attrs: Attrs{"kernel_shape": IntsAttr(2, 2)}, want: []outWant{tOut(Float32, 1, 2, 7, 7)}},
		{name: "no kernel", op: "MaxUnpool", inputs: []*Value{tVal(Float32, 1, 2, 3, 3), tVal(Int64, 1, 2, 3, 3)}, err: "kernel_shape"},

		{name: "conv shape", op: "DeformConv", inputs: []*Value{tVal(Float32, 1, 4, 9, 9), tVal(Float32, 6, 2, 3, 3), tVal(Float32, 1, 36, 4, 4)}, attrs: Attrs{"group": IntAttr(2), "offset_group": IntAttr(2), "strides": IntsAttr(2, 2)}, want: []outWant{tOut(Float32, 1, 6, 4, 4)}},
		{name: "offset channels", op: "DeformConv", inputs: []*Value{tVal(Float32, 1, 4, 9, 9), tVal(Float32, 6, 4, 3, 3), tVal(Float32, 1, 36, 7, 7)}, err: "offset"},
	})
}
