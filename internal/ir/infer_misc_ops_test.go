package ir

import (
	"math"
	"testing"
)

func TestInferMiscOps(t *testing.T) {
	u8 := func(dims ...int64) *Value { return tVal(Uint8, dims...) }
	bools := func(v ...int64) *Value {
		c := NewTensor(Bool, []int64{int64(len(v))})
		for i, b := range v {
			c.Data[i] = byte(b)
		}
		return &Value{Name: "cond", DType: Bool, Shape: cloneShape(c.Shape), Const: c}
	}
	floats2 := func(rows, cols int64, v ...float32) *Value {
		c := Float32Tensor([]int64{rows, cols}, v...)
		return &Value{Name: "x", DType: Float32, Shape: cloneShape(c.Shape), Const: c}
	}
	nan, negZero := float32(math.NaN()), float32(math.Copysign(0, -1))
	tfidf := Attrs{"mode": StringAttr("TF"), "min_gram_length": IntAttr(1), "max_gram_length": IntAttr(2),
		"ngram_counts": IntsAttr(0, 2), "ngram_indexes": IntsAttr(0, 4, 1), "pool_int64s": IntsAttr(1, 2, 1, 2)}
	runInferTable(t, []inferCase{
		{name: "same size", op: "BitCast", inputs: []*Value{tVal(Float32, 2, 3)}, attrs: Attrs{"to": IntAttr(int64(Int32))}, want: []outWant{tOut(Int32, 2, 3)}},
		{name: "size change", op: "BitCast", inputs: []*Value{tVal(Float32, 2)}, attrs: Attrs{"to": IntAttr(int64(Int64))}, err: "cannot bitcast"},
		{name: "broadcast", op: "BitwiseAnd", inputs: []*Value{u8(2, 1), u8(3)}, want: []outWant{tOut(Uint8, 2, 3)}},
		{name: "float", op: "BitwiseOr", inputs: []*Value{tVal(Float32, 2), tVal(Float32, 2)}, err: "integer"},
		{name: "direction", op: "BitShift", inputs: []*Value{u8(2), u8(2)}, attrs: Attrs{"direction": StringAttr("UP")}, err: "direction"},
		{name: "not", op: "BitwiseNot", inputs: []*Value{tVal(Int16, 4)}, want: []outWant{tOut(Int16, 4)}},
		{name: "target dtype", op: "CastLike", inputs: []*Value{tVal(Float32, 2, 2), tVal(Int8)}, want: []outWant{tOut(Int8, 2, 2)}},
		{name: "unknown target", op: "CastLike", inputs: []*Value{tVal(Float32, 2), tUnk(Undefined)}, want: []outWant{tOut(Undefined, 2)}},
		{name: "size known", op: "HannWindow", inputs: []*Value{tInt(10)}, attrs: Attrs{"output_datatype": IntAttr(int64(Float64))}, want: []outWant{tOut(Float64, 10)}},
		{name: "size at run time", op: "BlackmanWindow", inputs: []*Value{tVal(Int32)}, want: []outWant{tOut(Float32, -1)}},
		{name: "negative size", op: "HammingWindow", inputs: []*Value{tInt(-1)}, err: "negative"},
		{name: "string output", op: "HannWindow", inputs: []*Value{tInt(3)}, attrs: Attrs{"output_datatype": IntAttr(int64(String))}, err: "output_datatype"},
		{name: "shape", op: "MelWeightMatrix", inputs: []*Value{tInt(8), tInt(16), tInt(8192), tFloat(0), tFloat(4096)}, want: []outWant{tOut(Float32, 9, 8)}},
		{name: "unknown bins", op: "MelWeightMatrix", inputs: []*Value{tVal(Int32), tInt(16), tInt(8192), tFloat(0), tFloat(4096)}, want: []outWant{tOut(Float32, 9, -1)}},
		{name: "batch", op: "TfIdfVectorizer", inputs: []*Value{tVal(Int64, 3, 7)}, attrs: tfidf, want: []outWant{tOut(Float32, 3, 5)}},
		{name: "rank 1", op: "TfIdfVectorizer", inputs: []*Value{tVal(Int32, 7)}, attrs: tfidf, want: []outWant{tOut(Float32, 5)}},
		{name: "float input", op: "TfIdfVectorizer", inputs: []*Value{tVal(Float32, 7)}, attrs: tfidf, err: "int32 or int64"},
		{name: "bad counts", op: "TfIdfVectorizer", inputs: []*Value{tVal(Int32, 7)}, attrs: Attrs{"mode": StringAttr("TF"), "min_gram_length": IntAttr(2),
			"max_gram_length": IntAttr(2), "ngram_counts": IntsAttr(0, 0), "ngram_indexes": IntsAttr(0), "pool_int64s": IntsAttr(1, 2, 3)}, err: "ngram_counts"},
		{name: "axes", op: "CenterCropPad", inputs: []*Value{tVal(Float32, 20, 8, 3), tInts(10, 9)}, attrs: Attrs{"axes": IntsAttr(-3, -2)}, want: []outWant{tOut(Float32, 10, 9, 3)}},
		{name: "shape unknown", op: "CenterCropPad", inputs: []*Value{tVal(Float32, 4, 5), tVec(2)}, want: []outWant{tOut(Float32, -1, -1)}},
		{name: "count mismatch", op: "CenterCropPad", inputs: []*Value{tVal(Float32, 4, 5), tInts(3)}, err: "values for 2 axes"},
		{name: "5-D", op: "Col2Im", inputs: []*Value{tVal(Float32, 1, 10, 12), tInts(3, 4, 5), tInts(1, 1, 5)}, want: []outWant{tOut(Float32, 1, 2, 3, 4, 5)}},
		{name: "image at run time", op: "Col2Im", inputs: []*Value{tVal(Float32, 1, 10, 12), tVec(2), tInts(1, 5)}, want: []outWant{tOut(Float32, 1, 2, -1, -1)}},
		{name: "block not dividing", op: "Col2Im", inputs: []*Value{tVal(Float32, 1, 7, 12), tInts(4, 4), tInts(2, 2)}, err: "multiple"},
		{name: "axis", op: "Compress", inputs: []*Value{tVal(Float32, 3, 2), bools(0, 1, 1)}, attrs: Attrs{"axis": IntAttr(0)}, want: []outWant{tOut(Float32, 2, 2)}},
		{name: "flat, long condition", op: "Compress", inputs: []*Value{tVal(Float32, 3), bools(1, 0, 1, 1, 1)}, want: []outWant{tOut(Float32, 2)}},
		{name: "condition at run time", op: "Compress", inputs: []*Value{tVal(Float32, 3, 2), tVal(Bool, 2)}, attrs: Attrs{"axis": IntAttr(-1)}, want: []outWant{tOut(Float32, 3, -1)}},
		{name: "2-D condition", op: "Compress", inputs: []*Value{tVal(Float32, 3), tVal(Bool, 1, 3)}, err: "1-D"},
		{name: "axis 1 float depth", op: "OneHot", inputs: []*Value{tVal(Int64, 2, 2), tFloat(10.7), tVal(Float32, 2)}, attrs: Attrs{"axis": IntAttr(1)}, want: []outWant{tOut(Float32, 2, 10, 2)}},
		{name: "default axis", op: "OneHot", inputs: []*Value{tVal(Int64, 3), tInt(5), tVal(Int32, 2)}, want: []outWant{tOut(Int32, 3, 5)}},
		{name: "depth 0", op: "OneHot", inputs: []*Value{tVal(Int64, 3), tInt(0), tVal(Int32, 2)}, err: "positive"},
		{name: "axis range", op: "OneHot", inputs: []*Value{tVal(Int64, 3), tInt(2), tVal(Int32, 2)}, attrs: Attrs{"axis": IntAttr(2)}, err: "out of range"},
		{name: "same", op: "ReverseSequence", inputs: []*Value{tVal(Float32, 4, 3, 2), tVal(Int64, 3)}, want: []outWant{tOut(Float32, 4, 3, 2)}},
		{name: "batch mismatch", op: "ReverseSequence", inputs: []*Value{tVal(Float32, 4, 3), tVal(Int64, 4)}, err: "sequence_lens"},
		{name: "axis 2", op: "ReverseSequence", inputs: []*Value{tVal(Float32, 4, 3, 2), tVal(Int64, 2)}, attrs: Attrs{"batch_axis": IntAttr(2)}, err: "must be 0 and 1"},
		{name: "flat from data", op: "Unique", inputs: []*Value{floats2(2, 3, 1, nan, negZero, 0, nan, 1)}, nout: 4,
			want: []outWant{tOut(Float32, 3), tOut(Int64, 3), tOut(Int64, 6), tOut(Int64, 3)}},
		{name: "rows from data", op: "Unique", inputs: []*Value{floats2(3, 2, 1, 2, 1, 3, 1, 2)}, attrs: Attrs{"axis": IntAttr(0)}, nout: 4,
			want: []outWant{tOut(Float32, 2, 2), tOut(Int64, 2), tOut(Int64, 3), tOut(Int64, 2)}},
		{name: "columns from data", op: "Unique", inputs: []*Value{floats2(3, 2, 1, 2, 1, 3, 1, 2)}, attrs: Attrs{"axis": IntAttr(-1)}, nout: 2,
			want: []outWant{tOut(Float32, 3, 2), tOut(Int64, 2)}},
		{name: "at run time", op: "Unique", inputs: []*Value{tVal(Int32, 4, 5)}, attrs: Attrs{"axis": IntAttr(1)}, nout: 3,
			want: []outWant{tOut(Int32, 4, -1), tOut(Int64, -1), tOut(Int64, 5)}},
	})
}
