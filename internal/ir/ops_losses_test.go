package ir

import "testing"

func TestInferLossNorm(t *testing.T) {
	runInferTable(t, []inferCase{
		{name: "nll none", op: "NegativeLogLikelihoodLoss", inputs: []*Value{tVal(Float32, 2, 3, 4), tVal(Int64, 2, 4)},
			attrs: Attrs{"reduction": StringAttr("none")}, want: []outWant{tOut(Float32, 2, 4)}},
		{name: "nll mean", op: "NegativeLogLikelihoodLoss", inputs: []*Value{tVal(Float32, 2, 3), tVal(Int32, 2), tVal(Float32, 3)},
			want: []outWant{tOut(Float32)}},
		{name: "nll unknown target", op: "NegativeLogLikelihoodLoss", inputs: []*Value{tVal(Float64, 2, 3, -1), tUnk(Int64)},
			attrs: Attrs{"reduction": StringAttr("none")}, want: []outWant{tOut(Float64, 2, -1)}},
		{name: "nll bad reduction", op: "NegativeLogLikelihoodLoss", inputs: []*Value{tVal(Float32, 2, 3), tVal(Int64, 2)},
			attrs: Attrs{"reduction": StringAttr("max")}, err: "reduction"},
		{name: "nll target shape", op: "NegativeLogLikelihoodLoss", inputs: []*Value{tVal(Float32, 2, 3, 4), tVal(Int64, 2, 5)}, err: "want [2 4]"},
		{name: "nll float target", op: "NegativeLogLikelihoodLoss", inputs: []*Value{tVal(Float32, 2, 3), tVal(Float32, 2)}, err: "integer"},
		{name: "nll weight", op: "NegativeLogLikelihoodLoss", inputs: []*Value{tVal(Float32, 2, 3), tVal(Int64, 2), tVal(Float32, 4)}, err: "want [3]"},
		{name: "sce log_prob", op: "SoftmaxCrossEntropyLoss", inputs: []*Value{tVal(Float16, 2, 3, 4), tVal(Int64, 2, 4)},
			want: []outWant{tOut(Float16), tOut(Float16, 2, 3, 4)}},
		{name: "rms", op: "RMSNormalization", inputs: []*Value{tVal(Float32, 2, 3, 4), tVal(Float32, 4)},
			attrs: Attrs{"axis": IntAttr(-2)}, want: []outWant{tOut(Float32, 2, 3, 4)}},
		{name: "rms scale", op: "RMSNormalization", inputs: []*Value{tVal(Float32, 2, 3, 4), tVal(Float32, 2, 3, 4)},
			attrs: Attrs{"axis": IntAttr(1)}, err: "normalized dims"},
		{name: "rope 3-D", op: "RotaryEmbedding", inputs: []*Value{tVal(Float32, 1, 5, 8), tVal(Float32, 1, 5, 2), tVal(Float32, 1, 5, 2)},
			attrs: Attrs{"num_heads": IntAttr(2)}, want: []outWant{tOut(Float32, 1, 5, 8)}},
		{name: "rope 3-D no heads", op: "RotaryEmbedding", inputs: []*Value{tVal(Float32, 1, 5, 8), tVal(Float32, 1, 5, 2), tVal(Float32, 1, 5, 2)},
			err: "num_heads"},
		{name: "cumprod axis", op: "CumProd", inputs: []*Value{tVal(Int32, 2, 3), tInt(-3)}, err: "out of range"},
		{name: "eyelike dtype", op: "EyeLike", inputs: []*Value{tVal(Float32, 2, 3)}, attrs: Attrs{"dtype": IntAttr(int64(Int32))},
			want: []outWant{tOut(Int32, 2, 3)}},
		{name: "eyelike 3-D", op: "EyeLike", inputs: []*Value{tVal(Float32, 2, 3, 1)}, err: "2-D"},
		{name: "groupnorm per group", op: "GroupNormalization", inputs: []*Value{tVal(Float32, 1, 6, 2), tVal(Float32, 3), tVal(Float32, 3)},
			attrs: Attrs{"num_groups": IntAttr(3)}, want: []outWant{tOut(Float32, 1, 6, 2)}},
		{name: "groupnorm groups", op: "GroupNormalization", inputs: []*Value{tVal(Float32, 1, 6, 2), tVal(Float32, 6), tVal(Float32, 6)},
			attrs: Attrs{"num_groups": IntAttr(4)}, err: "does not divide"},
		{name: "lrn rank", op: "LRN", inputs: []*Value{tVal(Float32, 2, 3)}, attrs: Attrs{"size": IntAttr(3)}, err: "rank >= 3"},
		{name: "det", op: "MatrixDeterminant", inputs: []*Value{tVal(Float64, 4, 3, 3)}, want: []outWant{tOut(Float64, 4)}},
		{name: "det square", op: "MatrixDeterminant", inputs: []*Value{tVal(Float64, 3, 2)}, err: "equal"},
		{name: "lppool", op: "LpPool", inputs: []*Value{tVal(Float32, 1, 2, 5)}, attrs: Attrs{"kernel_shape": IntsAttr(2), "strides": IntsAttr(2)},
			want: []outWant{tOut(Float32, 1, 2, 2)}},
		{name: "hardmax axis", op: "Hardmax", inputs: []*Value{tVal(Float32, 2, 3)}, attrs: Attrs{"axis": IntAttr(2)}, err: "out of range"},
	})
}
