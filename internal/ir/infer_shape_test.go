package ir

import (
	"math"
	"testing"
)

func TestInferReduce(t *testing.T) {
	keep0 := Attrs{"keepdims": IntAttr(0)}
	runInferTable(t, []inferCase{
		{name: "axes keep", op: "ReduceSum", inputs: []*Value{tVal(Float32, 2, 3, 4), tInts(1)}, want: []outWant{tOut(Float32, 2, 1, 4)}},
		{name: "neg axes drop", op: "ReduceMean", inputs: []*Value{tVal(Float32, 2, 3, 4), tInts(-1, 0)}, attrs: keep0, want: []outWant{tOut(Float32, 3)}},
		{name: "all keep", op: "ReduceMax", inputs: []*Value{tVal(Float32, 2, 3)}, want: []outWant{tOut(Float32, 1, 1)}},
		{name: "all drop", op: "ReduceMin", inputs: []*Value{tVal(Int32, 2, 3)}, attrs: keep0, want: []outWant{tOut(Int32)}},
		{name: "empty axes const", op: "ReduceProd", inputs: []*Value{tVal(Float32, 2, 3), tInts()}, attrs: keep0, want: []outWant{tOut(Float32)}},
		{name: "noop empty", op: "ReduceL1", inputs: []*Value{tVal(Float32, 2, 3), tInts()}, attrs: Attrs{"noop_with_empty_axes": IntAttr(1)}, want: []outWant{tOut(Float32, 2, 3)}},
		{name: "noop absent", op: "ReduceL2", inputs: []*Value{tVal(Float32, 2, 3)}, attrs: Attrs{"noop_with_empty_axes": IntAttr(1)}, want: []outWant{tOut(Float32, 2, 3)}},
		{name: "no data keep", op: "ReduceLogSum", inputs: []*Value{tVal(Float32, 2, 1, 4), tVec(1)}, want: []outWant{tOut(Float32, -1, 1, -1)}},
		{name: "no data drop", op: "ReduceLogSumExp", inputs: []*Value{tVal(Float32, 2, 3, 4), tVec(2)}, attrs: keep0, want: []outWant{tOut(Float32, -1)}},
		{name: "no data unknown len", op: "ReduceSumSquare", inputs: []*Value{tVal(Float32, 2, 3), tUnk(Int64)}, attrs: keep0, want: []outWant{tOutU(Float32)}},
		{name: "unknown rank all drop", op: "ReduceSum", inputs: []*Value{tUnk(Float32)}, attrs: keep0, want: []outWant{tOut(Float32)}},
		{name: "unknown rank axes", op: "ReduceSum", inputs: []*Value{tUnk(Float32), tInts(0)}, want: []outWant{tOutU(Float32)}},
		{name: "axis out of range", op: "ReduceSum", inputs: []*Value{tVal(Float32, 2, 3), tInts(2)}, err: "input 1 (c): axis 2 is out of range for rank 2"},
		{name: "repeated axis", op: "ReduceSum", inputs: []*Value{tVal(Float32, 2, 3), tInts(1, -1)}, err: "repeated"},
		{name: "too many axes", op: "ReduceSum", inputs: []*Value{tVal(Float32, 2, 3), tVec(3)}, attrs: keep0, err: "3 axes for a rank-2 input"},
		{name: "float axes", op: "ReduceSum", inputs: []*Value{tVal(Float32, 2, 3), tFloats(1)}, err: "expected an integer tensor"},

		{name: "keep", op: "Argmax", inputs: []*Value{tVal(Float32, 2, 3, 4)}, attrs: Attrs{"axis": IntAttr(-2)}, want: []outWant{tOut(Int64, 2, 1, 4)}},
		{name: "drop", op: "Argmin", inputs: []*Value{tVal(Float32, 2, 3, 4)}, attrs: Attrs{"axis": IntAttr(2), "keepdims": IntAttr(0)}, want: []outWant{tOut(Int64, 2, 3)}},
		{name: "default axis", op: "Argmax", inputs: []*Value{tVal(Float32, 5)}, attrs: keep0, want: []outWant{tOut(Int64)}},
		{name: "unknown", op: "Argmin", inputs: []*Value{tUnk(Float32)}, want: []outWant{tOutU(Int64)}},
		{name: "bad axis", op: "Argmax", inputs: []*Value{tVal(Float32, 5)}, attrs: Attrs{"axis": IntAttr(1)}, err: "attribute axis: axis 1 is out of range"},
	})
}

func TestInferReshapeFamily(t *testing.T) {
	runInferTable(t, []inferCase{
		{name: "infer -1", op: "Reshape", inputs: []*Value{tVal(Float32, 2, 3, 4), tInts(4, -1)}, want: []outWant{tOut(Float32, 4, 6)}},
		{name: "copy 0", op: "Reshape", inputs: []*Value{tVal(Float32, 2, 3, 4), tInts(0, 0, 2, -1)}, want: []outWant{tOut(Float32, 2, 3, 2, 2)}},
		{name: "copy unknown", op: "Reshape", inputs: []*Value{tVal(Float32, -1, 3, 4), tInts(0, -1)}, want: []outWant{tOut(Float32, -1, -1)}},
		{name: "unknown total", op: "Reshape", inputs: []*Value{tVal(Float32, -1, 12), tInts(-1, 3, 4)}, want: []outWant{tOut(Float32, -1, 3, 4)}},
		{name: "allowzero", op: "Reshape", inputs: []*Value{tVal(Float32, 0, 3), tInts(3, 0)}, attrs: Attrs{"allowzero": IntAttr(1)}, want: []outWant{tOut(Float32, 3, 0)}},
		{name: "allowzero -1", op: "Reshape", inputs: []*Value{tVal(Float32, 0, 3), tInts(0, -1)}, attrs: Attrs{"allowzero": IntAttr(1)}, err: "mixes 0 and -1"},
		{name: "to scalar", op: "Reshape", inputs: []*Value{tVal(Float32, 1, 1), tInts()}, want: []outWant{tOut(Float32)}},
		{name: "no data", op: "Reshape", inputs: []*Value{tVal(Float32, 2, 3), tVec(3)}, want: []outWant{tOut(Float32, -1, -1, -1)}},
		{name: "no data no len", op: "Reshape", inputs: []*Value{tVal(Float32, 2, 3), tUnk(Int64)}, want: []outWant{tOutU(Float32)}},
		{name: "unknown x", op: "Reshape", inputs: []*Value{tUnk(Float32), tInts(0, 4)}, want: []outWant{tOut(Float32, -1, 4)}},
		{name: "wrong count", op: "Reshape", inputs: []*Value{tVal(Float32, 2, 3), tInts(4, 2)}, err: "cannot reshape x [2 3] (6 elements) to [4 2] (8 elements)"},
		{name: "not divisible", op: "Reshape", inputs: []*Value{tVal(Float32, 2, 3), tInts(4, -1)}, err: "cannot reshape"},
		{name: "two -1", op: "Reshape", inputs: []*Value{tVal(Float32, 2, 3), tInts(-1, -1)}, err: "more than one -1"},
		{name: "bad dim", op: "Reshape", inputs: []*Value{tVal(Float32, 2, 3), tInts(-2, 3)}, err: "invalid dim -2"},
		{name: "0 beyond rank", op: "Reshape", inputs: []*Value{tVal(Float32, 6), tInts(1, 0)}, err: "copies dim 1"},

		{name: "default", op: "Flatten", inputs: []*Value{tVal(Float32, 2, 3, 4)}, want: []outWant{tOut(Float32, 2, 12)}},
		{name: "axis 0", op: "Flatten", inputs: []*Value{tVal(Float32, 2, 3, 4)}, attrs: Attrs{"axis": IntAttr(0)}, want: []outWant{tOut(Float32, 1, 24)}},
		{name: "axis r", op: "Flatten", inputs: []*Value{tVal(Float32, 2, 3, 4)}, attrs: Attrs{"axis": IntAttr(3)}, want: []outWant{tOut(Float32, 24, 1)}},
		{name: "neg axis unknown", op: "Flatten", inputs: []*Value{tVal(Float32, -1, 3, 4)}, attrs: Attrs{"axis": IntAttr(-1)}, want: []outWant{tOut(Float32, -1, 4)}},
		{name: "unknown rank", op: "Flatten", inputs: []*Value{tUnk(Float32)}, want: []outWant{tOut(Float32, -1, -1)}},
		{name: "bad axis", op: "Flatten", inputs: []*Value{tVal(Float32, 2)}, attrs: Attrs{"axis": IntAttr(2)}, err: "out of range"},

		{name: "axes", op: "Squeeze", inputs: []*Value{tVal(Float32, 1, 3, 1, 4), tInts(0, -2)}, want: []outWant{tOut(Float32, 3, 4)}},
		{name: "all", op: "Squeeze", inputs: []*Value{tVal(Float32, 1, 3, 1, 4)}, want: []outWant{tOut(Float32, 3, 4)}},
		{name: "all with unknown", op: "Squeeze", inputs: []*Value{tVal(Float32, 1, -1)}, want: []outWant{tOutU(Float32)}},
		{name: "unknown dim axis", op: "Squeeze", inputs: []*Value{tVal(Float32, -1, 3), tInts(0)}, want: []outWant{tOut(Float32, 3)}},
		{name: "no data", op: "Squeeze", inputs: []*Value{tVal(Float32, 1, 3, 1), tVec(2)}, want: []outWant{tOut(Float32, -1)}},
		{name: "not 1", op: "Squeeze", inputs: []*Value{tVal(Float32, 1, 3), tInts(1)}, err: "cannot squeeze axis 1 of size 3"},
		{name: "axis range", op: "Squeeze", inputs: []*Value{tVal(Float32, 1, 3), tInts(2)}, err: "out of range"},

		{name: "axes", op: "Unsqueeze", inputs: []*Value{tVal(Float32, 3, 4), tInts(0, -1)}, want: []outWant{tOut(Float32, 1, 3, 4, 1)}},
		{name: "middle", op: "Unsqueeze", inputs: []*Value{tVal(Float32, 3, 4), tInts(1, 3)}, want: []outWant{tOut(Float32, 3, 1, 4, 1)}},
		{name: "scalar", op: "Unsqueeze", inputs: []*Value{tVal(Int64), tInts(0)}, want: []outWant{tOut(Int64, 1)}},
		{name: "no data", op: "Unsqueeze", inputs: []*Value{tVal(Float32, 3), tVec(2)}, want: []outWant{tOut(Float32, -1, -1, -1)}},
		{name: "dup", op: "Unsqueeze", inputs: []*Value{tVal(Float32, 3), tInts(0, -3)}, err: "repeated"},
		{name: "range", op: "Unsqueeze", inputs: []*Value{tVal(Float32, 3), tInts(2)}, err: "axis 2 is out of range for rank 2"},
		{name: "no axes", op: "Unsqueeze", inputs: []*Value{tVal(Float32, 3)}, err: "expects 2 inputs, got 1"},

		{name: "perm", op: "Transpose", inputs: []*Value{tVal(Float32, 2, 3, 4)}, attrs: Attrs{"perm": IntsAttr(1, 2, 0)}, want: []outWant{tOut(Float32, 3, 4, 2)}},
		{name: "default", op: "Transpose", inputs: []*Value{tVal(Float32, 2, 3, 4)}, want: []outWant{tOut(Float32, 4, 3, 2)}},
		{name: "unknown rank perm", op: "Transpose", inputs: []*Value{tUnk(Float32)}, attrs: Attrs{"perm": IntsAttr(1, 0)}, want: []outWant{tOut(Float32, -1, -1)}},
		{name: "bad perm", op: "Transpose", inputs: []*Value{tVal(Float32, 2, 3)}, attrs: Attrs{"perm": IntsAttr(0, 0)}, err: "not a permutation"},
		{name: "perm length", op: "Transpose", inputs: []*Value{tVal(Float32, 2, 3)}, attrs: Attrs{"perm": IntsAttr(0, 1, 2)}, err: "has 3 entries for rank-2"},
	})
}

func TestInferDataMovement(t *testing.T) {
	ax := func(a int64) Attrs { return Attrs{"axis": IntAttr(a)} }
	runInferTable(t, []inferCase{
		{name: "axis 1", op: "Concat", inputs: []*Value{tVal(Float32, 2, 3), tVal(Float32, 2, 5)}, attrs: ax(1), want: []outWant{tOut(Float32, 2, 8)}},
		{name: "neg axis unknown", op: "Concat", inputs: []*Value{tVal(Float32, -1, 3), tVal(Float32, 2, -1)}, attrs: ax(-2), want: []outWant{tOut(Float32, -1, 3)}},
		{name: "unknown rank member", op: "Concat", inputs: []*Value{tVal(Float32, 2, 3), tUnk(Float32)}, attrs: ax(0), want: []outWant{tOut(Float32, -1, 3)}},
		{name: "all unknown", op: "Concat", inputs: []*Value{tUnk(Int64), tUnk(Int64)}, attrs: ax(0), want: []outWant{tOutU(Int64)}},
		{name: "rank mismatch", op: "Concat", inputs: []*Value{tVal(Float32, 2, 3), tVal(Float32, 2, 3, 1)}, attrs: ax(0), err: "input 1 (in) has rank 3"},
		{name: "dim mismatch", op: "Concat", inputs: []*Value{tVal(Float32, 2, 3), tVal(Float32, 2, 4)}, attrs: ax(0), err: "dim 1 is 4, expected 3"},
		{name: "axis range", op: "Concat", inputs: []*Value{tVal(Float32, 2)}, attrs: ax(1), err: "out of range"},

		{name: "sizes", op: "Split", inputs: []*Value{tVal(Float32, 2, 10), tInts(3, 7)}, attrs: ax(1), want: []outWant{tOut(Float32, 2, 3), tOut(Float32, 2, 7)}},
		{name: "even", op: "Split", inputs: []*Value{tVal(Float32, 6, 2)}, want: []outWant{tOut(Float32, 2, 2), tOut(Float32, 2, 2), tOut(Float32, 2, 2)}},
		{name: "num_outputs uneven", op: "Split", inputs: []*Value{tVal(Float32, 7)}, attrs: Attrs{"num_outputs": IntAttr(3)}, want: []outWant{tOut(Float32, 3), tOut(Float32, 3), tOut(Float32, 1)}},
		{name: "empty split", op: "Split", inputs: []*Value{tVal(Float32, 4), tInts()}, want: []outWant{tOut(Float32, 2), tOut(Float32, 2)}},
		{name: "no data", op: "Split", inputs: []*Value{tVal(Float32, 4, 5), tVec(2)}, attrs: ax(-1), want: []outWant{tOut(Float32, 4, -1), tOut(Float32, 4, -1)}},
		{name: "unknown dim", op: "Split", inputs: []*Value{tVal(Float32, -1)}, want: []outWant{tOut(Float32, -1), tOut(Float32, -1)}},
		{name: "bad sum", op: "Split", inputs: []*Value{tVal(Float32, 10), tInts(3, 3)}, nout: 2, err: "sum to 6, but axis 0"},
		{name: "count", op: "Split", inputs: []*Value{tVal(Float32, 10), tInts(3, 3, 4)}, nout: 2, err: "3 split sizes for 2 outputs"},
		{name: "num_outputs mismatch", op: "Split", inputs: []*Value{tVal(Float32, 10)}, attrs: Attrs{"num_outputs": IntAttr(3)}, nout: 2, err: "num_outputs is 3"},
		{name: "too many chunks", op: "Split", inputs: []*Value{tVal(Float32, 5)}, nout: 4, err: "cannot split axis 0 of size 5 into 4"},

		{name: "basic", op: "Slice", inputs: []*Value{tVal(Float32, 10, 20), tInts(1, 0), tInts(5, 20)}, want: []outWant{tOut(Float32, 4, 20)}},
		{name: "axes steps", op: "Slice", inputs: []*Value{tVal(Float32, 10, 20), tInts(0), tInts(20), tInts(1), tInts(3)}, want: []outWant{tOut(Float32, 10, 7)}},
		{name: "negative", op: "Slice", inputs: []*Value{tVal(Float32, 10), tInts(-3), tInts(-1)}, want: []outWant{tOut(Float32, 2)}},
		{name: "clamped", op: "Slice", inputs: []*Value{tVal(Float32, 10), tInts(-100), tInts(math.MaxInt64)}, want: []outWant{tOut(Float32, 10)}},
		{name: "reverse", op: "Slice", inputs: []*Value{tVal(Float32, 10), tInts(-1), tInts(math.MinInt64), tInts(0), tInts(-1)}, want: []outWant{tOut(Float32, 10)}},
		{name: "reverse step 3", op: "Slice", inputs: []*Value{tVal(Float32, 10), tInts(8), tInts(1), tInts(0), tInts(-3)}, want: []outWant{tOut(Float32, 3)}},
		{name: "huge neg step", op: "Slice", inputs: []*Value{tVal(Float32, 10), tInts(9), tInts(-11), tInts(0), tInts(math.MinInt64)}, want: []outWant{tOut(Float32, 1)}},
		{name: "empty", op: "Slice", inputs: []*Value{tVal(Float32, 10), tInts(5), tInts(2)}, want: []outWant{tOut(Float32, 0)}},
		{name: "neg axis", op: "Slice", inputs: []*Value{tVal(Float32, 4, 6), tInts(1), tInts(3), tInts(-1)}, want: []outWant{tOut(Float32, 4, 2)}},
		{name: "no data", op: "Slice", inputs: []*Value{tVal(Float32, 4, 6), tVec(1), tVec(1), tInts(1)}, want: []outWant{tOut(Float32, 4, -1)}},
		{name: "no axes data", op: "Slice", inputs: []*Value{tVal(Float32, 4, 6), tInts(1), tInts(2), tVec(1)}, want: []outWant{tOut(Float32, -1, -1)}},
		{name: "unknown dim", op: "Slice", inputs: []*Value{tVal(Float32, -1, 6), tInts(0, 1), tInts(2, 3)}, want: []outWant{tOut(Float32, -1, 2)}},
		{name: "unknown rank", op: "Slice", inputs: []*Value{tUnk(Float32), tInts(0), tInts(2)}, want: []outWant{tOutU(Float32)}},
		{name: "step 0", op: "Slice", inputs: []*Value{tVal(Float32, 4), tInts(0), tInts(2), tInts(0), tInts(0)}, err: "step is 0"},
		{name: "lengths", op: "Slice", inputs: []*Value{tVal(Float32, 4, 4), tInts(0, 0), tInts(2)}, err: "has 2 entries"},
		{name: "axis range", op: "Slice", inputs: []*Value{tVal(Float32, 4), tInts(0), tInts(2), tInts(1)}, err: "out of range"},
		{name: "two inputs", op: "Slice", inputs: []*Value{tVal(Float32, 4), tInts(0)}, err: "expects 3 to 5 inputs, got 2"},

		{name: "axis 0", op: "Gather", inputs: []*Value{tVal(Float32, 5, 4), tVal(Int64, 2, 3)}, want: []outWant{tOut(Float32, 2, 3, 4)}},
		{name: "scalar index neg axis", op: "Gather", inputs: []*Value{tVal(Float32, 5, 4, 3), tVal(Int32)}, attrs: ax(-2), want: []outWant{tOut(Float32, 5, 3)}},
		{name: "unknown idx", op: "Gather", inputs: []*Value{tVal(Float32, 5, 4), tUnk(Int64)}, want: []outWant{tOutU(Float32)}},
		{name: "float idx", op: "Gather", inputs: []*Value{tVal(Float32, 5), tVal(Float32, 2)}, err: "indices must be integers"},
		{name: "axis", op: "Gather", inputs: []*Value{tVal(Float32, 5), tVal(Int64, 2)}, attrs: ax(1), err: "out of range"},

		{name: "elements", op: "GatherD", inputs: []*Value{tVal(Float32, 3, 4), tVal(Int64, 3, 2)}, attrs: ax(1), want: []outWant{tOut(Float32, 3, 2)}},
		{name: "rank", op: "GatherD", inputs: []*Value{tVal(Float32, 3, 4), tVal(Int64, 3)}, err: "indices rank 1 differs from data rank 2"},
		{name: "axis", op: "GatherD", inputs: []*Value{tVal(Float32, 3, 4), tVal(Int64, 3, 4)}, attrs: ax(-3), err: "out of range"},

		{name: "pads", op: "Pad", inputs: []*Value{tVal(Float32, 1, 3, 4, 4), tInts(0, 0, 1, 2, 0, 0, 3, 4)}, want: []outWant{tOut(Float32, 1, 3, 8, 10)}},
		{name: "axes", op: "Pad", inputs: []*Value{tVal(Float32, 3, 4), tInts(1, 1), tFloat(0), tInts(-1)}, want: []outWant{tOut(Float32, 3, 6)}},
		{name: "crop", op: "Pad", inputs: []*Value{tVal(Float32, 5), tInts(-1, -2)}, attrs: Attrs{"mode": StringAttr("edge")}, want: []outWant{tOut(Float32, 2)}},
		{name: "no data", op: "Pad", inputs: []*Value{tVal(Float32, 3, 4), tVec(2), nil, tInts(1)}, want: []outWant{tOut(Float32, 3, -1)}},
		{name: "no axes data", op: "Pad", inputs: []*Value{tVal(Float32, 3, 4), tInts(1, 1), nil, tVec(1)}, want: []outWant{tOut(Float32, -1, -1)}},
		{name: "count", op: "Pad", inputs: []*Value{tVal(Float32, 3, 4), tInts(1, 1)}, err: "2 pads for 2 axes (want 4)"},
		{name: "too negative", op: "Pad", inputs: []*Value{tVal(Float32, 2), tInts(-2, -1)}, err: "negative"},
		{name: "mode", op: "Pad", inputs: []*Value{tVal(Float32, 2), tInts(1, 1)}, attrs: Attrs{"mode": StringAttr("mirror")}, err: "attribute mode"},

		{name: "repeats", op: "Tile", inputs: []*Value{tVal(Float32, 2, 3), tInts(2, 0)}, want: []outWant{tOut(Float32, 4, 0)}},
		{name: "unknown dim", op: "Tile", inputs: []*Value{tVal(Float32, -1, 3), tInts(2, 2)}, want: []outWant{tOut(Float32, -1, 6)}},
		{name: "no data", op: "Tile", inputs: []*Value{tVal(Float32, 2, 3), tVec(2)}, want: []outWant{tOut(Float32, -1, -1)}},
		{name: "count", op: "Tile", inputs: []*Value{tVal(Float32, 2, 3), tInts(2)}, err: "1 repeats for rank-2"},
		{name: "negative", op: "Tile", inputs: []*Value{tVal(Float32, 2), tInts(-1)}, err: "negative repeat"},

		{name: "d2s", op: "DepthToSpace", inputs: []*Value{tVal(Float32, 1, 8, 2, 3)}, attrs: Attrs{"blocksize": IntAttr(2), "mode": StringAttr("CRD")}, want: []outWant{tOut(Float32, 1, 2, 4, 6)}},
		{name: "d2s unknown", op: "DepthToSpace", inputs: []*Value{tUnk(Float32)}, attrs: Attrs{"blocksize": IntAttr(2)}, want: []outWant{tOut(Float32, -1, -1, -1, -1)}},
		{name: "d2s channels", op: "DepthToSpace", inputs: []*Value{tVal(Float32, 1, 6, 2, 3)}, attrs: Attrs{"blocksize": IntAttr(2)}, err: "not divisible"},
		{name: "d2s no blocksize", op: "DepthToSpace", inputs: []*Value{tVal(Float32, 1, 8, 2, 3)}, err: "blocksize"},
		{name: "s2d", op: "SpaceToDepth", inputs: []*Value{tVal(Float32, 1, 2, 4, 6)}, attrs: Attrs{"blocksize": IntAttr(2)}, want: []outWant{tOut(Float32, 1, 8, 2, 3)}},
		{name: "s2d rank", op: "SpaceToDepth", inputs: []*Value{tVal(Float32, 2, 4, 6)}, attrs: Attrs{"blocksize": IntAttr(2)}, err: "must be 4-D"},
		{name: "s2d spatial", op: "SpaceToDepth", inputs: []*Value{tVal(Float32, 1, 2, 5, 6)}, attrs: Attrs{"blocksize": IntAttr(2)}, err: "not divisible"},
	})
}
