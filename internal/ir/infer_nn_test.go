package ir

import "testing"

func TestInferMisc(t *testing.T) {
	valueAttr := func(tt *Tensor) Attrs { return Attrs{"value": TensorAttr(tt)} }
	runInferTable(t, []inferCase{
		{name: "same", op: "Trilu", inputs: []*Value{tVal(Float32, 2, 4, 4), tInt(1)}, want: []outWant{tOut(Float32, 2, 4, 4)}},
		{name: "rank", op: "Trilu", inputs: []*Value{tVal(Float32, 4)}, err: "rank >= 2"},
		{name: "k vector", op: "Trilu", inputs: []*Value{tVal(Float32, 4, 4), tInts(1, 2)}, err: "must be a scalar"},

		{name: "int", op: "Range", inputs: []*Value{tInt(0), tInt(10), tInt(3)}, want: []outWant{tOut(Int64, 4)}},
		{name: "int negative delta", op: "Range", inputs: []*Value{tInt(10), tInt(0), tInt(-3)}, want: []outWant{tOut(Int64, 4)}},
		{name: "int empty", op: "Range", inputs: []*Value{tInt(5), tInt(0), tInt(1)}, want: []outWant{tOut(Int64, 0)}},
		{name: "float", op: "Range", inputs: []*Value{tFloat(0), tFloat(1), tFloat(0.25)}, want: []outWant{tOut(Float32, 4)}},
		{name: "float fraction", op: "Range", inputs: []*Value{tFloat(1), tFloat(2.1), tFloat(0.5)}, want: []outWant{tOut(Float32, 3)}},
		{name: "no data", op: "Range", inputs: []*Value{tInt(0), tVal(Int64), tInt(1)}, want: []outWant{tOut(Int64, -1)}},
		{name: "delta 0", op: "Range", inputs: []*Value{tInt(0), tInt(4), tInt(0)}, err: "delta is 0"},
		{name: "float delta 0", op: "Range", inputs: []*Value{tFloat(0), tFloat(4), tFloat(0)}, err: "delta is 0"},
		{name: "not scalar", op: "Range", inputs: []*Value{tInts(0, 1), tInt(4), tInt(1)}, err: "must be a scalar"},

		{name: "all", op: "Shape", inputs: []*Value{tVal(Float32, -1, 3, 4)}, want: []outWant{tOut(Int64, 3)}},
		{name: "start end", op: "Shape", inputs: []*Value{tVal(Float32, 1, 2, 3, 4)}, attrs: Attrs{"start": IntAttr(1), "end": IntAttr(-1)}, want: []outWant{tOut(Int64, 2)}},
		{name: "clamped", op: "Shape", inputs: []*Value{tVal(Float32, 1, 2)}, attrs: Attrs{"start": IntAttr(-10), "end": IntAttr(10)}, want: []outWant{tOut(Int64, 2)}},
		{name: "empty", op: "Shape", inputs: []*Value{tVal(Float32, 1, 2)}, attrs: Attrs{"start": IntAttr(2), "end": IntAttr(1)}, want: []outWant{tOut(Int64, 0)}},
		{name: "unknown rank", op: "Shape", inputs: []*Value{tUnk(Float32)}, want: []outWant{tOut(Int64, -1)}},
		{name: "scalar", op: "Size", inputs: []*Value{tVal(Float32, 2, 3)}, want: []outWant{tOut(Int64)}},
		{name: "unknown", op: "Size", inputs: []*Value{tUnk(Float32)}, want: []outWant{tOut(Int64)}},

		{name: "default value", op: "ConstantOfShape", inputs: []*Value{tInts(2, 3)}, want: []outWant{tOut(Float32, 2, 3)}},
		{name: "int value", op: "ConstantOfShape", inputs: []*Value{tInts(4)}, attrs: valueAttr(Int64Tensor([]int64{1}, 7)), want: []outWant{tOut(Int64, 4)}},
		{name: "scalar out", op: "ConstantOfShape", inputs: []*Value{tInts()}, want: []outWant{tOut(Float32)}},
		{name: "no data", op: "ConstantOfShape", inputs: []*Value{tVec(3)}, attrs: valueAttr(NewTensor(Bool, []int64{1})), want: []outWant{tOut(Bool, -1, -1, -1)}},
		{name: "no data no len", op: "ConstantOfShape", inputs: []*Value{tUnk(Int64)}, want: []outWant{tOutU(Float32)}},
		{name: "negative", op: "ConstantOfShape", inputs: []*Value{tInts(2, -3)}, err: "negative dim"},
		{name: "value size", op: "ConstantOfShape", inputs: []*Value{tInts(2)}, attrs: valueAttr(NewTensor(Float32, []int64{2})), err: "one element"},

		{name: "last axis", op: "TopK", inputs: []*Value{tVal(Float32, 3, 10), tInts(4)}, want: []outWant{tOut(Float32, 3, 4), tOut(Int64, 3, 4)}},
		{name: "axis 0", op: "TopK", inputs: []*Value{tVal(Float16, 3, 10), tInt(2)}, attrs: Attrs{"axis": IntAttr(0)}, want: []outWant{tOut(Float16, 2, 10), tOut(Int64, 2, 10)}},
		{name: "no data", op: "TopK", inputs: []*Value{tVal(Float32, 3, 10), tVec(1)}, want: []outWant{tOut(Float32, 3, -1), tOut(Int64, 3, -1)}},
		{name: "unknown rank", op: "TopK", inputs: []*Value{tUnk(Float32), tInts(4)}, want: []outWant{tOutU(Float32), tOutU(Int64)}},
		{name: "k too big", op: "TopK", inputs: []*Value{tVal(Float32, 3, 10), tInts(11)}, nout: 2, err: "k = 11 exceeds axis 1"},
		{name: "k negative", op: "TopK", inputs: []*Value{tVal(Float32, 3, 10), tInts(-1)}, nout: 2, err: "k is negative"},
		{name: "axis", op: "TopK", inputs: []*Value{tVal(Float32, 3, 10), tInts(1)}, attrs: Attrs{"axis": IntAttr(2)}, nout: 2, err: "out of range"},

		{name: "same", op: "CumSum", inputs: []*Value{tVal(Float32, 2, 3), tInt(-1)}, want: []outWant{tOut(Float32, 2, 3)}},
		{name: "no data", op: "CumSum", inputs: []*Value{tVal(Int32, 2, 3), tVal(Int64)}, want: []outWant{tOut(Int32, 2, 3)}},
		{name: "axis", op: "CumSum", inputs: []*Value{tVal(Float32, 2, 3), tInt(2)}, err: "out of range"},

		{name: "scales", op: "Resize", inputs: []*Value{tVal(Float32, 1, 1, 2, 4), nil, tFloats(1, 1, 0.6, 0.6)}, want: []outWant{tOut(Float32, 1, 1, 1, 2)}},
		{name: "scales up", op: "Resize", inputs: []*Value{tVal(Float32, 1, 3, 5, 7), tFloats(), tFloats(1, 1, 2, 3)}, want: []outWant{tOut(Float32, 1, 3, 10, 21)}},
		{name: "sizes", op: "Resize", inputs: []*Value{tVal(Float32, 1, 1, 2, 4), tFloats(), tFloats(), tInts(1, 1, 3, 3)}, want: []outWant{tOut(Float32, 1, 1, 3, 3)}},
		{name: "sizes axes", op: "Resize", inputs: []*Value{tVal(Float32, 1, 1, 2, 4), nil, nil, tInts(3, 5)}, attrs: Attrs{"axes": IntsAttr(3, -2)}, want: []outWant{tOut(Float32, 1, 1, 5, 3)}},
		{name: "not_larger", op: "Resize", inputs: []*Value{tVal(Float32, 1, 1, 2, 2), nil, nil, tInts(7, 8)},
			attrs: Attrs{"axes": IntsAttr(2, 3), "keep_aspect_ratio_policy": StringAttr("not_larger")}, want: []outWant{tOut(Float32, 1, 1, 7, 7)}},
		{name: "not_smaller", op: "Resize", inputs: []*Value{tVal(Float32, 1, 1, 2, 2), nil, nil, tInts(7, 8)},
			attrs: Attrs{"axes": IntsAttr(2, 3), "keep_aspect_ratio_policy": StringAttr("not_smaller")}, want: []outWant{tOut(Float32, 1, 1, 8, 8)}},
		{name: "not_larger down", op: "Resize", inputs: []*Value{tVal(Float32, 1, 1, 2, 4), nil, nil, tInts(1, 1, 1, 3)},
			attrs: Attrs{"keep_aspect_ratio_policy": StringAttr("not_larger")}, want: []outWant{tOut(Float32, 1, 1, 1, 2)}},
		{name: "crop", op: "Resize", inputs: []*Value{tVal(Float32, 1, 1, 4, 4), tFloats(0, 0.25, 0.5, 0.75), tFloats(2, 3)},
			attrs: Attrs{"axes": IntsAttr(2, 3), "coordinate_transformation_mode": StringAttr("tf_crop_and_resize")}, want: []outWant{tOut(Float32, 1, 1, 4, 6)}},
		{name: "scales no data", op: "Resize", inputs: []*Value{tVal(Float32, 1, 3, 4, 4), nil, tVal(Float32, 2)}, attrs: Attrs{"axes": IntsAttr(2, 3)}, want: []outWant{tOut(Float32, 1, 3, -1, -1)}},
		{name: "sizes no data", op: "Resize", inputs: []*Value{tVal(Float32, 1, 3, 4, 4), nil, nil, tVec(4)}, want: []outWant{tOut(Float32, -1, -1, -1, -1)}},
		{name: "unknown rank", op: "Resize", inputs: []*Value{tUnk(Float32), nil, tFloats(1, 2)}, want: []outWant{tOutU(Float32)}},
		{name: "both", op: "Resize", inputs: []*Value{tVal(Float32, 1, 4), nil, tFloats(1, 2), tInts(1, 8)}, err: "only one of scales"},
		{name: "neither", op: "Resize", inputs: []*Value{tVal(Float32, 1, 4), tFloats()}, err: "one of scales"},
		{name: "count", op: "Resize", inputs: []*Value{tVal(Float32, 1, 4), nil, tFloats(2)}, err: "1 scales for 2 axes"},
		{name: "bad scale", op: "Resize", inputs: []*Value{tVal(Float32, 1, 4), nil, tFloats(1, -2)}, err: "must be positive"},
		{name: "policy", op: "Resize", inputs: []*Value{tVal(Float32, 1, 4), nil, nil, tInts(1, 8)}, attrs: Attrs{"keep_aspect_ratio_policy": StringAttr("fit")}, err: "keep_aspect_ratio_policy"},
	})
}

func TestInferNN(t *testing.T) {
	conv := func(kv ...any) Attrs {
		a := Attrs{}
		for i := 0; i+1 < len(kv); i += 2 {
			switch v := kv[i+1].(type) {
			case string:
				a[kv[i].(string)] = StringAttr(v)
			case int:
				a[kv[i].(string)] = IntAttr(int64(v))
			case []int64:
				a[kv[i].(string)] = IntsAttr(v...)
			}
		}
		return a
	}
	runInferTable(t, []inferCase{
		{name: "2d", op: "MatMul", inputs: []*Value{tVal(Float32, 2, 3), tVal(Float32, 3, 4)}, want: []outWant{tOut(Float32, 2, 4)}},
		{name: "batch broadcast", op: "MatMul", inputs: []*Value{tVal(Float32, 5, 1, 2, 3), tVal(Float32, 4, 3, 6)}, want: []outWant{tOut(Float32, 5, 4, 2, 6)}},
		{name: "vec vec", op: "MatMul", inputs: []*Value{tVal(Float32, 3), tVal(Float32, 3)}, want: []outWant{tOut(Float32)}},
		{name: "vec mat", op: "MatMul", inputs: []*Value{tVal(Float32, 3), tVal(Float32, 2, 3, 4)}, want: []outWant{tOut(Float32, 2, 4)}},
		{name: "mat vec", op: "MatMul", inputs: []*Value{tVal(Float32, 2, 3, 4), tVal(Float32, 4)}, want: []outWant{tOut(Float32, 2, 3)}},
		{name: "transpose_b", op: "MatMul", inputs: []*Value{tVal(Float32, 8, 16), tVal(Float32, 32, 16)}, attrs: conv("transpose_b", 1), want: []outWant{tOut(Float32, 8, 32)}},
		{name: "transpose_a", op: "MatMul", inputs: []*Value{tVal(Float32, 2, 16, 8), tVal(Float32, 16, 4)}, attrs: conv("transpose_a", 1), want: []outWant{tOut(Float32, 2, 8, 4)}},
		{name: "unknown dims", op: "MatMul", inputs: []*Value{tVal(Float32, -1, -1, 768), tVal(Float32, 768, 3072)}, want: []outWant{tOut(Float32, -1, -1, 3072)}},
		{name: "unknown rank", op: "MatMul", inputs: []*Value{tUnk(Float32), tVal(Float32, 3, 4)}, want: []outWant{tOutU(Float32)}},
		{name: "k mismatch", op: "MatMul", inputs: []*Value{tVal(Float32, 2, 3), tVal(Float32, 4, 5)}, err: "inner dims differ"},
		{name: "batch mismatch", op: "MatMul", inputs: []*Value{tVal(Float32, 2, 2, 3), tVal(Float32, 3, 3, 5)}, err: "batch dims"},
		{name: "scalar", op: "MatMul", inputs: []*Value{tVal(Float32), tVal(Float32, 3)}, err: "rank >= 1"},

		{name: "pads strides", op: "Conv2D", inputs: []*Value{tVal(Float32, 1, 3, 32, 32), tVal(Float32, 16, 3, 3, 3), tVal(Float32, 16)},
			attrs: conv("pads", []int64{1, 1, 1, 1}, "strides", []int64{2, 2}), want: []outWant{tOut(Float32, 1, 16, 16, 16)}},
		{name: "asym pads", op: "Conv2D", inputs: []*Value{tVal(Float32, 1, 3, 10, 10), tVal(Float32, 4, 3, 3, 3)},
			attrs: conv("pads", []int64{0, 1, 2, 1}), want: []outWant{tOut(Float32, 1, 4, 10, 10)}},
		{name: "same_upper", op: "Conv2D", inputs: []*Value{tVal(Float32, 1, 3, 33, 33), tVal(Float32, 8, 3, 3, 3)},
			attrs: conv("auto_pad", "SAME_UPPER", "strides", []int64{2, 2}), want: []outWant{tOut(Float32, 1, 8, 17, 17)}},
		{name: "valid dilated", op: "Conv2D", inputs: []*Value{tVal(Float32, 1, 3, 32, 32), tVal(Float32, 8, 3, 3, 3)},
			attrs: conv("auto_pad", "VALID", "dilations", []int64{2, 2}), want: []outWant{tOut(Float32, 1, 8, 28, 28)}},
		{name: "group", op: "Conv2D", inputs: []*Value{tVal(Float32, 2, 8, 5, 5), tVal(Float32, 16, 4, 1, 1)}, attrs: conv("group", 2), want: []outWant{tOut(Float32, 2, 16, 5, 5)}},
		{name: "1d", op: "Conv2D", inputs: []*Value{tVal(Float32, 1, 2, 10), tVal(Float32, 4, 2, 3)}, want: []outWant{tOut(Float32, 1, 4, 8)}},
		{name: "3d", op: "Conv2D", inputs: []*Value{tVal(Float32, 1, 2, 4, 6, 8), tVal(Float32, 4, 2, 3, 3, 3)}, attrs: conv("pads", []int64{1, 1, 1, 1, 1, 1}), want: []outWant{tOut(Float32, 1, 4, 4, 6, 8)}},
		{name: "unknown x", op: "Conv2D", inputs: []*Value{tUnk(Float32), tVal(Float32, 16, 3, 3, 3)}, want: []outWant{tOut(Float32, -1, 16, -1, -1)}},
		{name: "dynamic spatial", op: "Conv2D", inputs: []*Value{tVal(Float32, -1, 3, -1, 224), tVal(Float32, 16, 3, 3, 3)}, want: []outWant{tOut(Float32, -1, 16, -1, 222)}},
		{name: "channels", op: "Conv2D", inputs: []*Value{tVal(Float32, 1, 4, 8, 8), tVal(Float32, 16, 3, 3, 3)}, err: "has 4 channels"},
		{name: "too small", op: "Conv2D", inputs: []*Value{tVal(Float32, 1, 3, 2, 2), tVal(Float32, 16, 3, 3, 3)}, err: "too small"},
		{name: "pads length", op: "Conv2D", inputs: []*Value{tVal(Float32, 1, 3, 8, 8), tVal(Float32, 16, 3, 3, 3)}, attrs: conv("pads", []int64{1, 1}), err: "attribute pads [1 1] has 2 entries, want 4"},
		{name: "auto_pad", op: "Conv2D", inputs: []*Value{tVal(Float32, 1, 3, 8, 8), tVal(Float32, 16, 3, 3, 3)}, attrs: conv("auto_pad", "SAME"), err: "auto_pad"},
		{name: "bias", op: "Conv2D", inputs: []*Value{tVal(Float32, 1, 3, 8, 8), tVal(Float32, 16, 3, 3, 3), tVal(Float32, 8)}, err: "bias shape [8]"},
		{name: "rank", op: "Conv2D", inputs: []*Value{tVal(Float32, 3, 8), tVal(Float32, 16, 3, 3)}, err: "rank >= 3"},

		{name: "stride 2", op: "Conv2DTranspose", inputs: []*Value{tVal(Float32, 1, 3, 4, 4), tVal(Float32, 3, 8, 3, 3)},
			attrs: conv("strides", []int64{2, 2}, "pads", []int64{1, 1, 1, 1}, "output_padding", []int64{1, 1}), want: []outWant{tOut(Float32, 1, 8, 8, 8)}},
		{name: "group", op: "Conv2DTranspose", inputs: []*Value{tVal(Float32, 1, 4, 5, 5), tVal(Float32, 4, 4, 3, 3)}, attrs: conv("group", 2), want: []outWant{tOut(Float32, 1, 8, 7, 7)}},
		{name: "output_shape", op: "Conv2DTranspose", inputs: []*Value{tVal(Float32, 1, 3, 4, 4), tVal(Float32, 3, 8, 3, 3)},
			attrs: conv("strides", []int64{3, 2}, "output_shape", []int64{10, 8}), want: []outWant{tOut(Float32, 1, 8, 10, 8)}},
		{name: "same", op: "Conv2DTranspose", inputs: []*Value{tVal(Float32, 1, 3, 4, 5), tVal(Float32, 3, 2, 3, 3)},
			attrs: conv("strides", []int64{2, 2}, "auto_pad", "SAME_LOWER"), want: []outWant{tOut(Float32, 1, 2, 8, 10)}},
		{name: "dilated 1d", op: "Conv2DTranspose", inputs: []*Value{tVal(Float32, 1, 1, 3), tVal(Float32, 1, 1, 3)}, attrs: conv("dilations", []int64{2}), want: []outWant{tOut(Float32, 1, 1, 7)}},
		{name: "channels", op: "Conv2DTranspose", inputs: []*Value{tVal(Float32, 1, 4, 4, 4), tVal(Float32, 3, 8, 3, 3)}, err: "has 4 channels"},

		{name: "max", op: "MaxPool", inputs: []*Value{tVal(Float32, 1, 3, 32, 32)}, attrs: conv("kernel_shape", []int64{2, 2}, "strides", []int64{2, 2}),
			want: []outWant{tOut(Float32, 1, 3, 16, 16), tOut(Int64, 1, 3, 16, 16)}},
		{name: "ceil", op: "MaxPool", inputs: []*Value{tVal(Float32, 1, 1, 5, 5)}, attrs: conv("kernel_shape", []int64{2, 2}, "strides", []int64{2, 2}, "ceil_mode", 1),
			want: []outWant{tOut(Float32, 1, 1, 3, 3)}},
		{name: "floor", op: "MaxPool", inputs: []*Value{tVal(Float32, 1, 1, 5, 5)}, attrs: conv("kernel_shape", []int64{2, 2}, "strides", []int64{2, 2}),
			want: []outWant{tOut(Float32, 1, 1, 2, 2)}},
		{name: "ceil reduce by one", op: "MaxPool", inputs: []*Value{tVal(Float32, 1, 1, 2, 2)}, attrs: conv("kernel_shape", []int64{1, 1}, "strides", []int64{2, 2}, "ceil_mode", 1),
			want: []outWant{tOut(Float32, 1, 1, 1, 1)}},
		{name: "same_lower", op: "MaxPool", inputs: []*Value{tVal(Uint8, 1, 1, 5, 5)}, attrs: conv("kernel_shape", []int64{3, 3}, "strides", []int64{2, 2}, "auto_pad", "SAME_LOWER"),
			want: []outWant{tOut(Uint8, 1, 1, 3, 3)}},
		{name: "dilations 3d", op: "MaxPool", inputs: []*Value{tVal(Float32, 1, 1, 4, 4, 4)}, attrs: conv("kernel_shape", []int64{2, 2, 2}, "dilations", []int64{2, 2, 2}),
			want: []outWant{tOut(Float32, 1, 1, 2, 2, 2)}},
		{name: "avg pads", op: "AvgPool", inputs: []*Value{tVal(Float32, 1, 3, 28, 28)}, attrs: conv("kernel_shape", []int64{5, 5}, "pads", []int64{2, 2, 2, 2}),
			want: []outWant{tOut(Float32, 1, 3, 28, 28)}},
		{name: "avg 1d", op: "AvgPool", inputs: []*Value{tVal(Float32, 1, 3, 32)}, attrs: conv("kernel_shape", []int64{2}), want: []outWant{tOut(Float32, 1, 3, 31)}},
		{name: "avg valid", op: "AvgPool", inputs: []*Value{tVal(Float32, 1, 3, 32, 32)}, attrs: conv("kernel_shape", []int64{5, 5}, "strides", []int64{3, 3}, "auto_pad", "VALID"),
			want: []outWant{tOut(Float32, 1, 3, 10, 10)}},
		{name: "unknown", op: "AvgPool", inputs: []*Value{tUnk(Float32)}, attrs: conv("kernel_shape", []int64{2, 2}), want: []outWant{tOut(Float32, -1, -1, -1, -1)}},
		{name: "no kernel", op: "AvgPool", inputs: []*Value{tVal(Float32, 1, 3, 8, 8)}, err: "kernel_shape is missing"},
		{name: "rank", op: "MaxPool", inputs: []*Value{tVal(Float32, 1, 3, 8)}, attrs: conv("kernel_shape", []int64{2, 2}), err: "must have rank 4"},
		{name: "avg indices", op: "AvgPool", inputs: []*Value{tVal(Float32, 1, 3, 8, 8)}, attrs: conv("kernel_shape", []int64{2, 2}), nout: 2, err: "expects 1 outputs"},

		{name: "bn", op: "BatchNorm", inputs: []*Value{tVal(Float32, 2, 3, 4, 4), tVal(Float32, 3), tVal(Float32, 3), tVal(Float32, 3), tVal(Float32, 3)}, want: []outWant{tOut(Float32, 2, 3, 4, 4)}},
		{name: "bn extra outputs", op: "BatchNorm", inputs: []*Value{tVal(Float32, 2, 3), tVal(Float32, 3), tVal(Float32, 3), tVal(Float32, 3), tVal(Float32, 3)},
			want: []outWant{tOut(Float32, 2, 3), tOut(Float32, 3), tOut(Float32, 3)}},
		{name: "bn mismatch", op: "BatchNorm", inputs: []*Value{tVal(Float32, 2, 3, 4, 4), tVal(Float32, 3), tVal(Float32, 4), tVal(Float32, 3), tVal(Float32, 3)}, err: "input 2 (in) has shape [4], want [3]"},
		{name: "bn inputs", op: "BatchNorm", inputs: []*Value{tVal(Float32, 2, 3), tVal(Float32, 3)}, err: "expects 5 inputs"},
		{name: "in", op: "InstanceNorm", inputs: []*Value{tVal(Float32, 2, 3, 4), tVal(Float32, 3), tVal(Float32, 3)}, want: []outWant{tOut(Float32, 2, 3, 4)}},
		{name: "in mismatch", op: "InstanceNorm", inputs: []*Value{tVal(Float32, 2, 3, 4), tVal(Float32, 2), tVal(Float32, 3)}, err: "want [3]"},

		{name: "ln", op: "LayerNorm", inputs: []*Value{tVal(Float16, 2, 5, 8), tVal(Float16, 8), tVal(Float16, 8)},
			want: []outWant{tOut(Float16, 2, 5, 8), tOut(Float32, 2, 5, 1), tOut(Float32, 2, 5, 1)}},
		{name: "ln axis", op: "LayerNorm", inputs: []*Value{tVal(Float32, 2, 5, 8), tVal(Float32, 5, 8)}, attrs: conv("axis", 1, "stash_type", int(Float64)),
			want: []outWant{tOut(Float32, 2, 5, 8), tOut(Float64, 2, 1, 1), tOut(Float64, 2, 1, 1)}},
		{name: "ln unknown", op: "LayerNorm", inputs: []*Value{tUnk(Float32), tVal(Float32, 8)}, want: []outWant{tOutU(Float32), tOutU(Float32)}},
		{name: "ln scale", op: "LayerNorm", inputs: []*Value{tVal(Float32, 2, 5, 8), tVal(Float32, 5)}, err: "does not fit normalized dims [8]"},
		{name: "ln axis range", op: "LayerNorm", inputs: []*Value{tVal(Float32, 2, 8), tVal(Float32, 8)}, attrs: conv("axis", -3), err: "out of range"},

		{name: "softmax", op: "Softmax", inputs: []*Value{tVal(Float32, 2, 10)}, want: []outWant{tOut(Float32, 2, 10)}},
		{name: "logsoftmax axis", op: "LogSoftmax", inputs: []*Value{tVal(Float32, 2, 10)}, attrs: conv("axis", 0), want: []outWant{tOut(Float32, 2, 10)}},
		{name: "softmax axis", op: "Softmax", inputs: []*Value{tVal(Float32, 2, 10)}, attrs: conv("axis", 2), err: "out of range"},
	})
}

func TestInferEinsum(t *testing.T) {
	eq := func(s string) Attrs { return Attrs{"equation": StringAttr(s)} }
	runInferTable(t, []inferCase{
		{name: "matmul", op: "Einsum", inputs: []*Value{tVal(Float32, 2, 3), tVal(Float32, 3, 4)}, attrs: eq("ij,jk->ik"), want: []outWant{tOut(Float32, 2, 4)}},
		{name: "implicit matmul", op: "Einsum", inputs: []*Value{tVal(Float32, 2, 3), tVal(Float32, 3, 4)}, attrs: eq("ij,jk"), want: []outWant{tOut(Float32, 2, 4)}},
		{name: "implicit transpose", op: "Einsum", inputs: []*Value{tVal(Float32, 2, 3)}, attrs: eq("ji"), want: []outWant{tOut(Float32, 3, 2)}},
		{name: "spaces", op: "Einsum", inputs: []*Value{tVal(Float32, 2, 3)}, attrs: eq("i j -> j i"), want: []outWant{tOut(Float32, 3, 2)}},
		{name: "batch", op: "Einsum", inputs: []*Value{tVal(Float32, -1, 2, 3), tVal(Float32, 8, 3, 4)}, attrs: eq("bij,bjk->bik"), want: []outWant{tOut(Float32, 8, 2, 4)}},
		{name: "ellipsis", op: "Einsum", inputs: []*Value{tVal(Float32, 5, 1, 2, 3), tVal(Float32, 4, 3, 6)}, attrs: eq("...ij,...jk->...ik"), want: []outWant{tOut(Float32, 5, 4, 2, 6)}},
		{name: "implicit ellipsis", op: "Einsum", inputs: []*Value{tVal(Float32, 7, 2, 3)}, attrs: eq("...ij"), want: []outWant{tOut(Float32, 7, 2, 3)}},
		{name: "ellipsis middle", op: "Einsum", inputs: []*Value{tVal(Float32, 2, 5, 6, 3)}, attrs: eq("i...j->j...i"), want: []outWant{tOut(Float32, 3, 5, 6, 2)}},
		{name: "diagonal", op: "Einsum", inputs: []*Value{tVal(Float32, 3, 3)}, attrs: eq("ii->i"), want: []outWant{tOut(Float32, 3)}},
		{name: "trace", op: "Einsum", inputs: []*Value{tVal(Float32, 3, 3)}, attrs: eq("ii"), want: []outWant{tOut(Float32)}},
		{name: "sum all", op: "Einsum", inputs: []*Value{tVal(Float64, 3, 4)}, attrs: eq("ij->"), want: []outWant{tOut(Float64)}},
		{name: "case sorted", op: "Einsum", inputs: []*Value{tVal(Float32, 2, 3)}, attrs: eq("bA"), want: []outWant{tOut(Float32, 3, 2)}},
		{name: "unknown rank", op: "Einsum", inputs: []*Value{tUnk(Float32), tVal(Float32, 3, 4)}, attrs: eq("ij,jk->ik"), want: []outWant{tOut(Float32, -1, 4)}},
		{name: "unknown rank ellipsis", op: "Einsum", inputs: []*Value{tUnk(Float32)}, attrs: eq("...i->...i"), want: []outWant{tOutU(Float32)}},
		{name: "broadcast 1", op: "Einsum", inputs: []*Value{tVal(Float32, 1, 3), tVal(Float32, 4, 3)}, attrs: eq("ij,ij->ij"), want: []outWant{tOut(Float32, 4, 3)}},
		{name: "operand count", op: "Einsum", inputs: []*Value{tVal(Float32, 2, 3)}, attrs: eq("ij,jk->ik"), err: "has 2 operands, node has 1 inputs"},
		{name: "rank", op: "Einsum", inputs: []*Value{tVal(Float32, 2, 3, 4)}, attrs: eq("ij->i"), err: "has rank 3, but term"},
		{name: "size mismatch", op: "Einsum", inputs: []*Value{tVal(Float32, 2, 3), tVal(Float32, 4, 5)}, attrs: eq("ij,jk->ik"), err: "label 'j' has size 4, elsewhere 3"},
		{name: "output label", op: "Einsum", inputs: []*Value{tVal(Float32, 2, 3)}, attrs: eq("ij->k"), err: "output label 'k' is in no operand"},
		{name: "output repeated", op: "Einsum", inputs: []*Value{tVal(Float32, 2, 3)}, attrs: eq("ij->ii"), err: "repeated"},
		{name: "bad char", op: "Einsum", inputs: []*Value{tVal(Float32, 2, 3)}, attrs: eq("i1->i"), err: "invalid character"},
		{name: "two ellipses", op: "Einsum", inputs: []*Value{tVal(Float32, 2, 3)}, attrs: eq("......->"), err: "more than one ellipsis"},
		{name: "no equation", op: "Einsum", inputs: []*Value{tVal(Float32, 2, 3)}, err: "equation is missing"},
	})
}
