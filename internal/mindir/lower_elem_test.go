package mindir

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"testing"

	"gkconv/internal/ir"
	pb "gkconv/internal/mindir/mindirpb"
	"gkconv/internal/testkit"
)

// The elementwise, broadcast and reduction lowerings (lower_elem.go): every
// op of the family, as a one-node graph, is written as the expected
// primitive with the expected attribute names and types, passes `converter
// check`, reads back as an equivalent node, and the read-back graph computes
// exactly what the original computes.

func TestElemLowerings(t *testing.T) {
	f32 := ir.Float32
	x4 := func() *ir.Value { return elemIn("x", f32, 2, 3, 4, 5) }
	x2 := func() *ir.Value { return elemIn("x", f32, 3, 4) }
	unary := func(op string, attrs ir.Attrs) func(t *testing.T) *ir.Graph {
		return func(t *testing.T) *ir.Graph { return elemGraph(t, op, attrs, 1, x2()) }
	}
	binop := func(op string, attrs ir.Attrs, dt ir.DType) func(t *testing.T) *ir.Graph {
		return func(t *testing.T) *ir.Graph {
			return elemGraph(t, op, attrs, 1, elemIn("a", dt, 2, 3, 4), elemIn("b", dt, 3, 1))
		}
	}
	act := []string{"activation_type:INT64"}
	actAlpha := []string{"activation_type:INT64", "alpha:FLOAT"}
	names := []string{"input_names:LIST", "output_names:LIST"}
	with := func(a []string, b ...string) []string {
		out := append(append([]string{}, a...), b...)
		slices.Sort(out)
		return out
	}
	attrInt := func(name string, want int64) func(t *testing.T, mp *pb.ModelProto, p *pb.PrimitiveProto, n *pb.NodeProto) {
		return func(t *testing.T, mp *pb.ModelProto, p *pb.PrimitiveProto, n *pb.NodeProto) {
			if a := elemAttr(p, name); a == nil || a.GetI() != want {
				t.Errorf("%s = %v, want %d", name, a, want)
			}
		}
	}
	attrFloat := func(name string, want float32) func(t *testing.T, mp *pb.ModelProto, p *pb.PrimitiveProto, n *pb.NodeProto) {
		return func(t *testing.T, mp *pb.ModelProto, p *pb.PrimitiveProto, n *pb.NodeProto) {
			if a := elemAttr(p, name); a == nil || a.GetF() != want {
				t.Errorf("%s = %v, want %g", name, a, want)
			}
		}
	}
	both := func(fs ...func(t *testing.T, mp *pb.ModelProto, p *pb.PrimitiveProto, n *pb.NodeProto)) func(t *testing.T, mp *pb.ModelProto, p *pb.PrimitiveProto, n *pb.NodeProto) {
		return func(t *testing.T, mp *pb.ModelProto, p *pb.PrimitiveProto, n *pb.NodeProto) {
			for _, f := range fs {
				f(t, mp, p, n)
			}
		}
	}

	cases := []elemCase{
		// activations
		{name: "GeLU", g: unary("GeLU", nil), prim: "Activation", attrs: act, check: attrInt("activation_type", elemActGeLU)},
		{name: "GeLU/none", g: unary("GeLU", ir.Attrs{"approximate": ir.StringAttr("none")}), prim: "Activation", attrs: act},
		{name: "GeLU/tanh", g: unary("GeLU", ir.Attrs{"approximate": ir.StringAttr("tanh")}), prim: "Activation",
			attrs: with(act, "approximate:BOOL"), check: attrInt("approximate", 1)},
		{name: "HSigmoid/mindspore", g: unary("HSigmoid", ir.Attrs{"alpha": ir.FloatAttr(1.0 / 6), "beta": ir.FloatAttr(0.5)}),
			prim: "Activation", attrs: actAlpha, check: attrInt("activation_type", elemActHSigmoid)},
		{name: "HSigmoid/onnx-default", g: unary("HSigmoid", nil), prim: "Custom"},
		{name: "LeakyReLU", g: unary("LeakyReLU", ir.Attrs{"alpha": ir.FloatAttr(float64(float32(0.1)))}), prim: "Activation",
			attrs: actAlpha, check: both(attrInt("activation_type", elemActLeakyReLU), attrFloat("alpha", 0.1))},
		{name: "LeakyReLU/default", g: unary("LeakyReLU", nil), prim: "Activation", attrs: actAlpha, check: attrFloat("alpha", 0.01), noRun: true},
		{name: "Elu", g: unary("Elu", ir.Attrs{"alpha": ir.FloatAttr(0.5)}), prim: "Activation", attrs: actAlpha,
			check: both(attrInt("activation_type", elemActElu), attrFloat("alpha", 0.5))},
		{name: "Softplus", g: unary("Softplus", nil), prim: "Activation", attrs: act, check: attrInt("activation_type", elemActSoftplus)},
		{name: "ReLU", g: unary("ReLU", nil), prim: "Activation", attrs: with(act, "max_val:FLOAT", "min_val:FLOAT"),
			check: both(attrInt("activation_type", elemActReLU), attrFloat("min_val", 0), attrFloat("max_val", math.MaxFloat32))},
		{name: "Sigmoid", g: unary("Sigmoid", nil), prim: "Activation", attrs: act, check: attrInt("activation_type", elemActSigmoid)},
		{name: "Tanh", g: unary("Tanh", nil), prim: "Activation", attrs: act, check: attrInt("activation_type", elemActTanh)},
		{name: "Exp", g: unary("Exp", nil), prim: "ExpFusion", attrs: with(names, "base:FLOAT", "scale:FLOAT", "shift:FLOAT"),
			check: both(attrFloat("base", -1), attrFloat("scale", 1), attrFloat("shift", 0))},
		{name: "CeLU", g: unary("CeLU", ir.Attrs{"alpha": ir.FloatAttr(2)}), prim: "CeLU", attrs: []string{"alpha:FLOAT"}, check: attrFloat("alpha", 2)},
		{name: "SeLU", g: unary("SeLU", nil), prim: "SeLU", attrs: names},
		{name: "SeLU/onnx-defaults", g: unary("SeLU", ir.Attrs{"alpha": ir.FloatAttr(float64(float32(elemSeluAlpha))), "gamma": ir.FloatAttr(float64(float32(elemSeluGamma)))}),
			prim: "SeLU", attrs: names, noRun: true},
		{name: "SeLU/other", g: unary("SeLU", ir.Attrs{"alpha": ir.FloatAttr(2)}), prim: "Custom"},
		{name: "ThresholdedReLU", g: unary("ThresholdedReLU", ir.Attrs{"alpha": ir.FloatAttr(0.5)}), prim: "Custom"},
		{name: "Round", g: unary("Round", nil), prim: "Round", attrs: []string{}},
		{name: "Log", g: unary("Log", nil), prim: "Log", attrs: []string{"base:FLOAT", "cust_aicpu:STRING", "scale:FLOAT", "shift:FLOAT"},
			check: both(attrFloat("base", -1), attrFloat("scale", 1), attrFloat("shift", 0))},
		{name: "Identity", g: unary("Identity", nil), prim: "Identity", attrs: []string{}},

		// Cast: the target is an int32 scalar parameter holding the TypeId
		{name: "Cast/f32-i32", g: unary("Cast", ir.Attrs{"to": ir.IntAttr(int64(ir.Int32))}), prim: "Cast", attrs: []string{},
			check: func(t *testing.T, mp *pb.ModelProto, p *pb.PrimitiveProto, n *pb.NodeProto) {
				if len(n.Input) != 2 {
					t.Fatalf("Cast inputs %v", n.Input)
				}
				to := elemParam(mp, n.Input[1])
				if to == nil || to.GetDataType() != int32(ir.Int32) || len(to.Dims) != 0 || len(to.RawData) != 4 || binary.LittleEndian.Uint32(to.RawData) != 34 {
					t.Errorf("Cast target parameter %v, want int32 scalar 34 (kNumberTypeInt32)", to)
				}
			}},
		{name: "Cast/f32-f64", g: unary("Cast", ir.Attrs{"to": ir.IntAttr(int64(ir.Float64)), "saturate": ir.IntAttr(1)}), prim: "Cast", attrs: []string{},
			check: func(t *testing.T, mp *pb.ModelProto, p *pb.PrimitiveProto, n *pb.NodeProto) {
				if to := elemParam(mp, n.Input[1]); to == nil || binary.LittleEndian.Uint32(to.RawData) != 44 {
					t.Errorf("Cast target parameter %v, want 44 (kNumberTypeFloat64: not narrowed)", to)
				}
			}},
		{name: "Cast/i64-bool", g: func(t *testing.T) *ir.Graph {
			return elemGraph(t, "Cast", ir.Attrs{"to": ir.IntAttr(int64(ir.Bool))}, 1, elemIn("x", ir.Int64, 4, 3))
		}, prim: "Cast", attrs: []string{}},
		{name: "Cast/f32-bf16", g: unary("Cast", ir.Attrs{"to": ir.IntAttr(int64(ir.BFloat16))}), prim: "Cast", attrs: []string{},
			check: func(t *testing.T, mp *pb.ModelProto, p *pb.PrimitiveProto, n *pb.NodeProto) {
				if to := elemParam(mp, n.Input[1]); to == nil || binary.LittleEndian.Uint32(to.RawData) != 45 {
					t.Errorf("Cast target parameter %v, want 45 (kNumberTypeBFloat16)", to)
				}
			}},
		{name: "Cast/string", g: unary("Cast", ir.Attrs{"to": ir.IntAttr(int64(ir.String))}), prim: "Custom", noRun: true},

		// Dropout: keep_prob = 1 - ratio, outputs (y, mask)
		{name: "Dropout", g: func(t *testing.T) *ir.Graph {
			return elemGraph(t, "Dropout", ir.Attrs{"seed": ir.IntAttr(3)}, 1, x2(), elemConst("ratio", elemF32([]int64{}, 0.25)))
		}, prim: "Dropout", attrs: []string{"Seed0:INT64", "Seed1:INT64", "keep_prob:FLOAT"},
			check: both(attrFloat("keep_prob", 1), attrInt("Seed0", 3)), looseInputs: true},
		{name: "Dropout/mask", g: func(t *testing.T) *ir.Graph {
			return elemGraph(t, "Dropout", nil, 2, x2(), nil, elemConst("training_mode", &ir.Tensor{DType: ir.Bool, Shape: []int64{}, Data: []byte{0}}))
		}, prim: "Dropout", attrs: []string{"Seed0:INT64", "Seed1:INT64", "keep_prob:FLOAT"}, check: attrFloat("keep_prob", 1), looseInputs: true},
		{name: "Dropout/training-ratio-0", g: func(t *testing.T) *ir.Graph {
			return elemGraph(t, "Dropout", nil, 2, x2(), elemConst("ratio", elemF32([]int64{}, 0)), elemConst("training_mode", &ir.Tensor{DType: ir.Bool, Shape: []int64{}, Data: []byte{1}}))
		}, prim: "Dropout", check: attrFloat("keep_prob", 1), looseInputs: true},
		{name: "Dropout/training", g: func(t *testing.T) *ir.Graph {
			return elemGraph(t, "Dropout", nil, 1, x2(), elemConst("ratio", elemF32([]int64{}, 0.3)), elemConst("training_mode", &ir.Tensor{DType: ir.Bool, Shape: []int64{}, Data: []byte{1}}))
		}, prim: "Custom", noRun: true},

		// Clip: min/max attributes
		{name: "Clip", g: func(t *testing.T) *ir.Graph {
			return elemGraph(t, "Clip", nil, 1, x2(), elemConst("lo", elemF32([]int64{}, -1.5)), elemConst("hi", elemF32([]int64{}, 2)))
		}, prim: "Clip", attrs: []string{"max:FLOAT", "min:FLOAT"}, check: both(attrFloat("min", -1.5), attrFloat("max", 2))},
		{name: "Clip/max-only", g: func(t *testing.T) *ir.Graph {
			return elemGraph(t, "Clip", nil, 1, x2(), nil, elemConst("hi", elemF32([]int64{}, 0.5)))
		}, prim: "Clip", attrs: []string{"max:FLOAT", "min:FLOAT"}, check: both(attrFloat("min", float32(math.Inf(-1))), attrFloat("max", 0.5))},
		{name: "Clip/int8-unbounded", g: func(t *testing.T) *ir.Graph {
			return elemGraph(t, "Clip", nil, 1, elemIn("x", ir.Int8, 3, 4))
		}, prim: "Clip", attrs: []string{"max:FLOAT", "min:FLOAT"}},
		{name: "Clip/int32-min", g: func(t *testing.T) *ir.Graph {
			return elemGraph(t, "Clip", nil, 1, elemIn("x", ir.Int32, 3, 4), elemConst("lo", elemScalarT(ir.Int32, -2)))
		}, prim: "Clip", attrs: []string{"max:FLOAT", "min:FLOAT"}},
		{name: "Clip/min-not-below-max", g: func(t *testing.T) *ir.Graph {
			return elemGraph(t, "Clip", nil, 1, x2(), elemConst("lo", elemF32([]int64{}, 1)), elemConst("hi", elemF32([]int64{}, 1)))
		}, prim: "Custom"},
		{name: "Clip/dynamic", g: func(t *testing.T) *ir.Graph {
			return elemGraph(t, "Clip", nil, 1, x2(), elemIn("lo", f32))
		}, prim: "Custom"},
		{name: "Clip/not-float32", g: func(t *testing.T) *ir.Graph {
			return elemGraph(t, "Clip", nil, 1, elemIn("x", ir.Float64, 3), elemConst("lo", elemScalarT(ir.Float64, 0.1)))
		}, prim: "Custom"},

		// binary arithmetic
		{name: "Add", g: binop("Add", nil, f32), prim: "AddFusion", attrs: with(names, "activation_type:INT64"), check: attrInt("activation_type", 0)},
		{name: "Add/int64", g: binop("Add", nil, ir.Int64), prim: "AddFusion", attrs: with(names, "activation_type:INT64")},
		{name: "Sub", g: binop("Sub", nil, f32), prim: "SubFusion", attrs: []string{"activation_type:INT64"}},
		{name: "Mul", g: binop("Mul", nil, f32), prim: "MulFusion", attrs: with(names, "activation_type:INT64")},
		{name: "RealDiv", g: binop("RealDiv", nil, f32), prim: "DivFusion", attrs: []string{"activation_type:INT64", "original_op_name:STRING"}},
		{name: "RealDiv/int32", g: binop("RealDiv", nil, ir.Int32), prim: "Custom"},
		{name: "Pow", g: func(t *testing.T) *ir.Graph {
			return elemGraph(t, "Pow", nil, 1, elemIn("a", f32, 3, 4), elemConst("p", elemF32([]int64{4}, 2, 0.5, -1, 3)))
		}, prim: "PowFusion", attrs: []string{"scale:FLOAT", "shift:FLOAT"}, check: both(attrFloat("scale", 1), attrFloat("shift", 0))},
		{name: "Pow/int-exponent", g: func(t *testing.T) *ir.Graph {
			return elemGraph(t, "Pow", nil, 1, elemIn("a", f32, 3, 4), elemIn("b", ir.Int64, 4))
		}, prim: "Custom"},
		{name: "Mod/fmod", g: binop("Mod", ir.Attrs{"fmod": ir.IntAttr(1)}, f32), prim: "Mod", attrs: names},
		{name: "Mod/fmod-int", g: binop("Mod", ir.Attrs{"fmod": ir.IntAttr(1)}, ir.Int32), prim: "Mod", attrs: names},
		{name: "Mod/floor-int", g: binop("Mod", nil, ir.Int64), prim: "FloorMod", attrs: []string{}},
		{name: "Mod/floor-float", g: binop("Mod", ir.Attrs{"fmod": ir.IntAttr(0)}, f32), prim: "Custom"},
		{name: "Maximum", g: binop("Maximum", nil, f32), prim: "Maximum", attrs: []string{}},
		{name: "Minimum", g: binop("Minimum", nil, ir.Int32), prim: "Minimum", attrs: []string{}},
		{name: "Maximum/3", g: func(t *testing.T) *ir.Graph {
			return elemGraph(t, "Maximum", nil, 1, elemIn("a", f32, 3), elemIn("b", f32, 3), elemIn("c", f32, 3))
		}, prim: "Custom"},
		{name: "AddN", g: binop("AddN", nil, f32), prim: "Eltwise", attrs: []string{"mode:INT64"}, check: attrInt("mode", elemEltwiseSum)},
		{name: "AddN/3", g: func(t *testing.T) *ir.Graph {
			return elemGraph(t, "AddN", nil, 1, elemIn("a", f32, 3), elemIn("b", f32, 3), elemIn("c", f32, 3))
		}, prim: "Custom"},
		{name: "Mean", g: binop("Mean", nil, f32), prim: "Custom"},
		{name: "LogicalXor", g: binop("LogicalXor", nil, ir.Bool), prim: "LogicalXor", attrs: []string{}},

		// PReLU: shared or per-channel (axis 1) slopes
		{name: "PReLU/channel", g: func(t *testing.T) *ir.Graph {
			return elemGraph(t, "PReLU", nil, 1, x4(), elemConst("slope", elemF32([]int64{3, 1, 1}, 0.1, 0.2, -0.5)))
		}, prim: "PReLUFusion", attrs: with(names, "channel_shared:BOOL", "slope:TUPLE"),
			check: func(t *testing.T, mp *pb.ModelProto, p *pb.PrimitiveProto, n *pb.NodeProto) {
				if a := elemAttr(p, "channel_shared"); a.GetI() != 0 {
					t.Errorf("channel_shared %v", a)
				}
				if a := elemAttr(p, "slope"); len(a.Values) != 3 || a.Values[2].GetType() != pb.AttributeProto_FLOAT || a.Values[2].Floats[0] != -0.5 {
					t.Errorf("slope %v", a)
				}
			}},
		{name: "PReLU/shared", g: func(t *testing.T) *ir.Graph {
			return elemGraph(t, "PReLU", nil, 1, x4(), elemConst("slope", elemF32([]int64{1}, 0.25)))
		}, prim: "PReLUFusion", attrs: with(names, "channel_shared:BOOL", "slope:TUPLE"), check: attrInt("channel_shared", 1)},
		{name: "PReLU/rank2", g: func(t *testing.T) *ir.Graph {
			return elemGraph(t, "PReLU", nil, 1, x2(), elemIn("slope", f32, 4))
		}, prim: "PReLUFusion", attrs: with(names, "channel_shared:BOOL")},
		{name: "PReLU/last-axis", g: func(t *testing.T) *ir.Graph {
			return elemGraph(t, "PReLU", nil, 1, x4(), elemConst("slope", elemF32([]int64{5}, 1, 2, 3, 4, 5)))
		}, prim: "Custom"},

		// Select is converter_lite's Where(condition, x, y)
		{name: "Select", g: func(t *testing.T) *ir.Graph {
			return elemGraph(t, "Select", nil, 1, elemIn("c", ir.Bool, 3, 4), elemIn("a", f32, 3, 4), elemIn("b", f32, 3, 4))
		}, prim: "Select", attrs: []string{}},
		{name: "Select/broadcast", g: func(t *testing.T) *ir.Graph {
			return elemGraph(t, "Select", nil, 1, elemIn("c", ir.Bool, 3, 1), elemIn("a", f32, 3, 4), elemIn("b", f32, 4))
		}, prim: "Custom"},
		{name: "BiasAdd", g: func(t *testing.T) *ir.Graph {
			return elemGraph(t, "BiasAdd", ir.Attrs{"format": ir.StringAttr("NCHW")}, 1, x4(), elemIn("b", f32, 3))
		}, prim: "BiasAdd", attrs: []string{"data_format:INT64"}, check: attrInt("data_format", 0)},
		{name: "BiasAdd/NHWC", g: func(t *testing.T) *ir.Graph {
			return elemGraph(t, "BiasAdd", ir.Attrs{"format": ir.StringAttr("NHWC")}, 1, x4(), elemIn("b", f32, 5))
		}, prim: "BiasAdd", attrs: []string{"data_format:INT64"}, check: attrInt("data_format", 1)},

		// BroadcastTo: MindSpore's target shape, -1 where ONNX's 1 keeps the input dim
		{name: "BroadcastTo", g: func(t *testing.T) *ir.Graph {
			return elemGraph(t, "BroadcastTo", nil, 1, elemIn("x", f32, 3, 1), elemConst("shape", elemI64([]int64{3}, 2, 1, 6)))
		}, prim: "BroadcastTo", attrs: []string{"shape:TUPLE"},
			check: func(t *testing.T, mp *pb.ModelProto, p *pb.PrimitiveProto, n *pb.NodeProto) {
				var got []int64
				for _, v := range elemAttr(p, "shape").Values {
					if v.GetType() != pb.AttributeProto_INT64 {
						t.Errorf("shape item type %s", v.GetType())
					}
					got = append(got, v.Ints...)
				}
				if !slices.Equal(got, []int64{2, -1, 6}) || len(n.Input) != 1 {
					t.Errorf("shape %v, inputs %v; want [2 -1 6], x only", got, n.Input)
				}
			}},
		{name: "BroadcastTo/same", g: func(t *testing.T) *ir.Graph {
			return elemGraph(t, "BroadcastTo", nil, 1, elemIn("x", f32, 4), elemConst("shape", elemI64([]int64{2}, 3, 4)))
		}, prim: "BroadcastTo", attrs: []string{"shape:TUPLE"}},
		{name: "BroadcastTo/dynamic", g: func(t *testing.T) *ir.Graph {
			return elemGraph(t, "BroadcastTo", nil, 1, elemIn("x", f32, 4), elemIn("shape", ir.Int64, 2))
		}, prim: "Custom", noRun: true},

		// arg reductions
		{name: "Argmax", g: unary("Argmax", ir.Attrs{"axis": ir.IntAttr(1), "keepdims": ir.IntAttr(0)}), prim: "ArgMaxFusion",
			attrs: with(names, "axis:INT64", "keep_dims:BOOL", "out_max_value:BOOL", "top_k:INT64"),
			check: both(attrInt("axis", 1), attrInt("keep_dims", 0), attrInt("top_k", 1), attrInt("out_max_value", 0))},
		{name: "Argmin", g: unary("Argmin", nil), prim: "ArgMinFusion",
			attrs: with(names, "axis:INT64", "keep_dims:BOOL", "out_max_value:BOOL", "top_k:INT64"), check: both(attrInt("axis", 0), attrInt("keep_dims", 1))},
		{name: "Argmax/last", g: unary("Argmax", ir.Attrs{"select_last_index": ir.IntAttr(1)}), prim: "Custom"},
	}

	// reductions: ReduceFusion with the mode of each, axes as an input
	reduceAttrs := []string{"coeff:FLOAT", "keep_dims:BOOL", "mode:INT64", "reduce_to_end:BOOL"}
	for _, op := range []string{"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
		"ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"} {
		op := op
		cases = append(cases, elemCase{name: op, g: func(t *testing.T) *ir.Graph {
			return elemGraph(t, op, ir.Attrs{"keepdims": ir.IntAttr(0)}, 1, elemIn("x", f32, 2, 3, 4), elemConst("axes", elemI64([]int64{2}, -1, 0)))
		}, prim: "ReduceFusion", attrs: reduceAttrs, check: both(attrInt("mode", elemReduceModes[op]), attrInt("keep_dims", 0))})
	}
	cases = append(cases,
		elemCase{name: "ReduceSum/all", g: unary("ReduceSum", nil), prim: "ReduceFusion", attrs: reduceAttrs,
			check: func(t *testing.T, mp *pb.ModelProto, p *pb.PrimitiveProto, n *pb.NodeProto) {
				axes := elemParam(mp, n.Input[1])
				if axes == nil || len(axes.Dims) != 1 || axes.Dims[0] != 0 || elemAttr(p, "keep_dims").GetI() != 1 {
					t.Errorf("axes %v keep_dims %v: want an empty axes parameter, keep_dims true", axes, elemAttr(p, "keep_dims"))
				}
			}},
		elemCase{name: "ReduceMax/dynamic-axes", g: func(t *testing.T) *ir.Graph {
			return elemGraph(t, "ReduceMax", nil, 1, elemIn("x", f32, 2, 3), elemIn("axes", ir.Int64, 1))
		}, prim: "ReduceFusion", attrs: reduceAttrs, noRun: true},
		elemCase{name: "ReduceSum/noop", g: unary("ReduceSum", ir.Attrs{"noop_with_empty_axes": ir.IntAttr(1)}), prim: "Custom"},
		elemCase{name: "ReduceMean/noop-axes", g: func(t *testing.T) *ir.Graph {
			return elemGraph(t, "ReduceMean", ir.Attrs{"noop_with_empty_axes": ir.IntAttr(1)}, 1, x2(), elemConst("axes", elemI64([]int64{1}, 1)))
		}, prim: "ReduceFusion", attrs: reduceAttrs},
	)

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := tc.g(t)
			data := writeBytes(t, g, WriteOptions{})
			mp, p, node := elemWritten(t, data)
			if p.GetOpType() != tc.prim {
				t.Fatalf("written as %s %v, want %s", p.GetOpType(), elemAttrSig(p.Attribute), tc.prim)
			}
			if tc.prim == "Custom" {
				if a := elemAttr(p, "type"); a == nil || string(a.S) != CustomTypePrefix+g.Nodes[0].Op {
					t.Errorf("Custom type %v", a)
				}
			} else if tc.attrs != nil {
				if got := elemAttrSig(p.Attribute); !slices.Equal(got, tc.attrs) {
					t.Errorf("attributes %v, want %v", got, tc.attrs)
				}
			}
			if tc.check != nil {
				tc.check(t, mp, p, node)
			}
			rep, err := checkBytes(data, tc.name)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range rep.Violations {
				t.Errorf("converter check: %s", v)
			}
			if len(rep.Unchecked) > 0 && tc.prim != "Custom" {
				t.Errorf("primitives outside the schema: %v", rep.Unchecked)
			}
			back, err := Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			if tc.prim == "Custom" {
				if d := testkit.GraphDiff(g, back); d != "" {
					t.Fatalf("fallback round trip: %s", d)
				}
			} else {
				elemSameNode(t, g, back, tc.looseInputs)
			}
			if !tc.noRun {
				elemSameNumbers(t, g, back)
			}
		})
	}
}

// TestElemRoundTripExact: instances whose read-back is the very IR node
// (same inputs, constants and attributes) give back the same graph, and
// writing it again gives the same bytes.
func TestElemRoundTripExact(t *testing.T) {
	build := []func(t *testing.T) *ir.Graph{
		func(t *testing.T) *ir.Graph {
			return elemGraph(t, "Add", nil, 1, elemIn("a", ir.Float32, 2, 3), elemIn("b", ir.Float32, 3))
		},
		func(t *testing.T) *ir.Graph {
			return elemGraph(t, "Clip", nil, 1, elemIn("x", ir.Float32, 3), elemConst("lo", elemF32([]int64{}, -1)), elemConst("hi", elemF32([]int64{}, 1)))
		},
		func(t *testing.T) *ir.Graph {
			return elemGraph(t, "ReduceMean", ir.Attrs{"keepdims": ir.IntAttr(1)}, 1, elemIn("x", ir.Float32, 2, 3), elemConst("axes", elemI64([]int64{1}, 1)))
		},
		func(t *testing.T) *ir.Graph {
			return elemGraph(t, "PReLU", nil, 1, elemIn("x", ir.Float32, 1, 2, 3), elemConst("s", elemF32([]int64{2, 1}, 0.5, 0.25)))
		},
		func(t *testing.T) *ir.Graph {
			return elemGraph(t, "LeakyReLU", ir.Attrs{"alpha": ir.FloatAttr(float64(float32(0.2)))}, 1, elemIn("x", ir.Float32, 3))
		},
		func(t *testing.T) *ir.Graph {
			return elemGraph(t, "Mod", ir.Attrs{"fmod": ir.IntAttr(1)}, 1, elemIn("a", ir.Float32, 3), elemIn("b", ir.Float32, 3))
		},
		func(t *testing.T) *ir.Graph {
			return elemGraph(t, "Dropout", nil, 2, elemIn("x", ir.Float32, 3))
		},
	}
	for _, b := range build {
		g := b(t)
		t.Run(g.Nodes[0].Op, func(t *testing.T) {
			data := writeBytes(t, g, WriteOptions{})
			back, err := Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			if d := testkit.GraphDiff(g, back); d != "" {
				t.Fatalf("round trip: %s", d)
			}
			if again := writeBytes(t, back, WriteOptions{}); !bytes.Equal(again, data) {
				t.Errorf("writing the read-back graph gives other bytes")
			}
		})
	}
}

// TestElemLiftConverterLite reads the forms converter_lite (and MindSpore)
// write that this writer does not produce itself (fused activations,
// int32 axes, reduce_to_end, PowFusion's scale and shift, Eltwise's other
// modes, a 1-D per-channel PReLU slope, a broadcasting three-input Where,
// Clip bounds as attributes, Dropout's float mask, BroadcastTo's shape as
// an input), and checks the numbers against the IR they stand for.
func TestElemLiftConverterLite(t *testing.T) {
	fltMax := float32(math.MaxFloat32)
	type liftCase struct {
		name  string
		file  func(b *msModel)
		want  func(t *testing.T) *ir.Graph
		ops   []string // IR ops read, in order
		float bool     // compare within float32 rounding instead of bit for bit
	}
	param := func(b *msModel, name string, tt *ir.Tensor) {
		dims := append([]int64{}, tt.Shape...)
		if len(dims) == 0 {
			dims = nil
		}
		b.mp.Graph.Parameter = append(b.mp.Graph.Parameter, &pb.TensorProto{Name: ptr(name), Dims: dims, DataType: ptr(int32(tt.DType)), RawData: tt.Data})
	}
	x := func() *ir.Value { return elemIn("x", ir.Float32, 2, 3, 4) }
	unaryWant := func(build func(g *ir.Graph, x *ir.Value) *ir.Value) func(t *testing.T) *ir.Graph {
		return func(t *testing.T) *ir.Graph {
			g := ir.NewGraph("net")
			xv := x()
			g.Inputs = []*ir.Value{xv}
			g.Outputs = []*ir.Value{build(g, xv)}
			return g
		}
	}
	node := func(g *ir.Graph, op string, attrs ir.Attrs, ins ...*ir.Value) *ir.Value {
		n := g.AddNode(fmt.Sprintf("n%d", len(g.Nodes)), op, ins, fmt.Sprintf("v%d", len(g.Nodes)))
		n.Attrs = attrs
		for _, in := range ins {
			if in != nil && in.Const != nil && !slices.Contains(g.Consts, in) {
				g.Consts = append(g.Consts, in)
			}
		}
		if err := ir.InferNode(n); err != nil {
			t.Fatal(err)
		}
		return n.Outputs[0]
	}
	act := func(typ int64, extra ...*pb.AttributeProto) func(b *msModel) {
		return func(b *msModel) {
			b.input("x", 1, 2, 3, 4)
			b.node("y", "Activation", []string{"x"}, append([]*pb.AttributeProto{intA("activation_type", typ, pb.AttributeProto_INT64)}, extra...)...)
			b.output("y")
		}
	}
	fa := func(name string, v float32) *pb.AttributeProto {
		return &pb.AttributeProto{Name: ptr(name), F: ptr(v), Type: pb.AttributeProto_FLOAT.Enum()}
	}
	cases := []liftCase{
		{name: "Activation/RELU", file: act(elemActReLU, fa("min_val", 0), fa("max_val", fltMax)), ops: []string{"ReLU"},
			want: unaryWant(func(g *ir.Graph, x *ir.Value) *ir.Value { return node(g, "ReLU", nil, x) })},
		{name: "Activation/SIGMOID", file: act(elemActSigmoid), ops: []string{"Sigmoid"},
			want: unaryWant(func(g *ir.Graph, x *ir.Value) *ir.Value { return node(g, "Sigmoid", nil, x) })},
		{name: "Activation/TANH", file: act(elemActTanh), ops: []string{"Tanh"},
			want: unaryWant(func(g *ir.Graph, x *ir.Value) *ir.Value { return node(g, "Tanh", nil, x) })},
		{name: "Activation/HARD_TANH", file: act(elemActHardTanh, fa("min_val", -1), fa("max_val", 2)), ops: []string{"Clip"},
			want: unaryWant(func(g *ir.Graph, x *ir.Value) *ir.Value {
				return node(g, "Clip", nil, x, elemConst("lo", elemF32([]int64{}, -1)), elemConst("hi", elemF32([]int64{}, 2)))
			})},
		{name: "Activation/SWISH", file: act(elemActSwish), ops: []string{"Sigmoid", "Mul"},
			want: unaryWant(func(g *ir.Graph, x *ir.Value) *ir.Value { return node(g, "Mul", nil, x, node(g, "Sigmoid", nil, x)) })},
		{name: "Activation/LEAKY_RELU-no-alpha", file: act(elemActLeakyReLU), ops: []string{"LeakyReLU"},
			want: unaryWant(func(g *ir.Graph, x *ir.Value) *ir.Value { return node(g, "LeakyReLU", nil, x) })},
		{name: "Activation/HSIGMOID", file: act(elemActHSigmoid, fa("alpha", 0.2)), ops: []string{"HSigmoid"}, float: true,
			want: unaryWant(func(g *ir.Graph, x *ir.Value) *ir.Value {
				// relu6(x+3)/6 whatever alpha says
				return node(g, "Clip", nil, node(g, "RealDiv", nil, node(g, "Add", nil, x, elemConst("three", elemF32(nil, 3))), elemConst("six", elemF32(nil, 6))),
					elemConst("zero", elemF32(nil, 0)), elemConst("one", elemF32(nil, 1)))
			})},
		{name: "AddFusion/RELU", file: func(b *msModel) {
			b.input("x", 1, 2, 3, 4)
			param(b, "b", elemF32([]int64{4}, -1, 0.5, 2, -3))
			b.node("y", "AddFusion", []string{"x", "b"}, intA("activation_type", elemActReLU, pb.AttributeProto_INT64))
			b.output("y")
		}, ops: []string{"Add", "ReLU"}, want: unaryWant(func(g *ir.Graph, x *ir.Value) *ir.Value {
			return node(g, "ReLU", nil, node(g, "Add", nil, x, elemConst("b", elemF32([]int64{4}, -1, 0.5, 2, -3))))
		})},
		{name: "ReduceFusion/int32-axes", file: func(b *msModel) {
			b.input("x", 1, 2, 3, 4)
			axes := ir.NewTensor(ir.Int32, []int64{1})
			putInts(axes, []int64{1})
			param(b, "axes", axes)
			b.node("y", "ReduceFusion", []string{"x", "axes"}, intA("keep_dims", 0, pb.AttributeProto_BOOL), intA("mode", 0, pb.AttributeProto_INT64))
			b.output("y")
		}, ops: []string{"ReduceMean"}, want: unaryWant(func(g *ir.Graph, x *ir.Value) *ir.Value {
			return node(g, "ReduceMean", ir.Attrs{"keepdims": ir.IntAttr(0)}, x, elemConst("axes", elemI64([]int64{1}, 1)))
		})},
		{name: "ReduceFusion/reduce_to_end", file: func(b *msModel) {
			b.input("x", 1, 2, 3, 4)
			axes := ir.NewTensor(ir.Int32, []int64{1})
			putInts(axes, []int64{1})
			param(b, "axes", axes)
			b.node("y", "ReduceFusion", []string{"x", "axes"}, intA("keep_dims", 1, pb.AttributeProto_BOOL), intA("mode", 5, pb.AttributeProto_INT64),
				intA("reduce_to_end", 1, pb.AttributeProto_BOOL), fa("coeff", 1))
			b.output("y")
		}, ops: []string{"ReduceSumSquare"}, want: unaryWant(func(g *ir.Graph, x *ir.Value) *ir.Value {
			return node(g, "ReduceSumSquare", ir.Attrs{"keepdims": ir.IntAttr(0)}, x, elemConst("axes", elemI64([]int64{2}, 1, 2)))
		})},
		{name: "ReduceFusion/all", file: func(b *msModel) {
			b.input("x", 1, 2, 3, 4)
			param(b, "axes", ir.NewTensor(ir.Int32, []int64{0}))
			b.node("y", "ReduceFusion", []string{"x", "axes"}, intA("keep_dims", 1, pb.AttributeProto_BOOL), intA("mode", 1, pb.AttributeProto_INT64))
			b.output("y")
		}, ops: []string{"ReduceMax"}, want: unaryWant(func(g *ir.Graph, x *ir.Value) *ir.Value {
			return node(g, "ReduceMax", nil, x)
		})},
		{name: "PowFusion/scale-shift", file: func(b *msModel) {
			b.input("x", 1, 2, 3, 4)
			param(b, "p", elemF32([]int64{}, 2))
			b.node("y", "PowFusion", []string{"x", "p"}, fa("scale", 3), fa("shift", 0.5))
			b.output("y")
		}, ops: []string{"Mul", "Add", "Pow"}, want: unaryWant(func(g *ir.Graph, x *ir.Value) *ir.Value {
			s := node(g, "Add", nil, node(g, "Mul", nil, x, elemConst("s", elemF32(nil, 3))), elemConst("h", elemF32(nil, 0.5)))
			return node(g, "Pow", nil, s, elemConst("p", elemF32(nil, 2)))
		})},
		{name: "Eltwise/PROD", file: func(b *msModel) {
			b.input("x", 1, 2, 3, 4)
			param(b, "k", elemF32([]int64{4}, 1, 2, 3, 4))
			b.node("y", "Eltwise", []string{"x", "k"}, intA("mode", elemEltwiseProd, pb.AttributeProto_INT64))
			b.output("y")
		}, ops: []string{"Mul"}, want: unaryWant(func(g *ir.Graph, x *ir.Value) *ir.Value {
			return node(g, "Mul", nil, x, elemConst("k", elemF32([]int64{4}, 1, 2, 3, 4)))
		})},
		{name: "Eltwise/MAXIMUM", file: func(b *msModel) {
			b.input("x", 1, 2, 3, 4)
			param(b, "k", elemF32([]int64{4}, 1, -2, 0, 4))
			b.node("y", "Eltwise", []string{"x", "k"}, intA("mode", elemEltwiseMax, pb.AttributeProto_INT64))
			b.output("y")
		}, ops: []string{"Maximum"}, want: unaryWant(func(g *ir.Graph, x *ir.Value) *ir.Value {
			return node(g, "Maximum", nil, x, elemConst("k", elemF32([]int64{4}, 1, -2, 0, 4)))
		})},
		{name: "PReLUFusion/1-D", file: func(b *msModel) {
			b.input("x", 1, 2, 3, 4)
			param(b, "w", elemF32([]int64{3}, 0.1, -0.5, 2))
			b.node("y", "PReLUFusion", []string{"x", "w"}, intA("channel_shared", 0, pb.AttributeProto_BOOL))
			b.output("y")
		}, ops: []string{"PReLU"}, want: unaryWant(func(g *ir.Graph, x *ir.Value) *ir.Value {
			return node(g, "PReLU", nil, x, elemConst("w", elemF32([]int64{3, 1}, 0.1, -0.5, 2)))
		})},
		{name: "Where/broadcast", file: func(b *msModel) {
			b.input("x", 1, 2, 3, 4)
			param(b, "c", &ir.Tensor{DType: ir.Bool, Shape: []int64{4}, Data: []byte{1, 0, 0, 1}})
			param(b, "z", elemF32([]int64{}, 7))
			b.node("y", "Where", []string{"c", "x", "z"})
			b.output("y")
		}, ops: []string{"Select"}, want: unaryWant(func(g *ir.Graph, x *ir.Value) *ir.Value {
			return node(g, "Select", nil, elemConst("c", &ir.Tensor{DType: ir.Bool, Shape: []int64{4}, Data: []byte{1, 0, 0, 1}}), x, elemConst("z", elemF32(nil, 7)))
		})},
		{name: "Clip/attributes", file: func(b *msModel) {
			b.input("x", 1, 2, 3, 4)
			b.node("y", "Clip", []string{"x"}, fa("min", -fltMax), fa("max", 0.5))
			b.output("y")
		}, ops: []string{"Clip"}, want: unaryWant(func(g *ir.Graph, x *ir.Value) *ir.Value {
			return node(g, "Clip", nil, x, nil, elemConst("hi", elemF32(nil, 0.5)))
		})},
		{name: "Dropout/float-mask", file: func(b *msModel) {
			b.input("x", 1, 2, 3, 4)
			b.node("d", "Dropout", []string{"x"}, fa("keep_prob", 0.8))
			b.constant("i0", intA("", 0, pb.AttributeProto_INT64))
			b.node("y", "TupleGetItem", []string{"d", "i0"})
			b.output("y")
		}, ops: []string{"Dropout"}, want: unaryWant(func(g *ir.Graph, x *ir.Value) *ir.Value { return node(g, "Identity", nil, x) })},
		{name: "ArgMaxFusion", file: func(b *msModel) {
			b.input("x", 1, 2, 3, 4)
			b.node("y", "ArgMaxFusion", []string{"x"}, intA("axis", -1, pb.AttributeProto_INT64), intA("keep_dims", 1, pb.AttributeProto_BOOL),
				intA("top_k", 1, pb.AttributeProto_INT64), intA("out_max_value", 0, pb.AttributeProto_BOOL))
			b.output("y")
		}, ops: []string{"Argmax"}, want: unaryWant(func(g *ir.Graph, x *ir.Value) *ir.Value {
			return node(g, "Argmax", ir.Attrs{"axis": ir.IntAttr(-1)}, x)
		})},
		{name: "BroadcastTo/shape-input", file: func(b *msModel) {
			b.input("x", 1, 2, 3, 4)
			param(b, "s", elemI64([]int64{4}, 5, -1, 3, 4))
			b.node("y", "BroadcastTo", []string{"x", "s"})
			b.output("y")
		}, ops: []string{"BroadcastTo"}, want: unaryWant(func(g *ir.Graph, x *ir.Value) *ir.Value {
			return node(g, "BroadcastTo", nil, x, elemConst("s", elemI64([]int64{4}, 5, 1, 1, 1)))
		})},
		{name: "ExpFusion/base-2", file: func(b *msModel) {
			b.input("x", 1, 2, 3, 4)
			b.node("y", "ExpFusion", []string{"x"}, fa("base", 2), fa("scale", 1), fa("shift", 0))
			b.output("y")
		}, ops: []string{"Mul", "Exp"}, float: true, want: unaryWant(func(g *ir.Graph, x *ir.Value) *ir.Value {
			return node(g, "Pow", nil, elemConst("two", elemF32(nil, 2)), x)
		})},
		{name: "Cast/int32-target", file: func(b *msModel) {
			b.input("x", 1, 2, 3, 4)
			to := ir.NewTensor(ir.Int32, []int64{})
			putInts(to, []int64{35})
			param(b, "to", to)
			b.node("y", "Cast", []string{"x", "to"})
			b.output("y")
		}, ops: []string{"Cast"}, want: unaryWant(func(g *ir.Graph, x *ir.Value) *ir.Value {
			return node(g, "Cast", ir.Attrs{"to": ir.IntAttr(int64(ir.Int64))}, x)
		})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newMSModel()
			tc.file(b)
			g, err := Parse(b.bytes(t))
			if err != nil {
				t.Fatal(err)
			}
			var ops []string
			for _, n := range g.Nodes {
				ops = append(ops, n.Op)
			}
			if !slices.Equal(ops, tc.ops) {
				t.Fatalf("read %v, want %v", ops, tc.ops)
			}
			want := tc.want(t)
			r := rand.New(rand.NewSource(3))
			in := elemRandom(r, want.Inputs[0])
			a, got := elemRun(t, want, []*ir.Tensor{in}), elemRun(t, g, []*ir.Tensor{in})
			if a[0].DType != got[0].DType || !slices.Equal(a[0].Shape, got[0].Shape) {
				t.Fatalf("read %s, want %s", got[0], a[0])
			}
			if tc.float {
				x, _ := a[0].Float64s()
				y, _ := got[0].Float64s()
				for i := range x {
					if math.Abs(x[i]-y[i]) > 1e-6*math.Max(1, math.Abs(x[i])) {
						t.Fatalf("element %d: %g, want %g", i, y[i], x[i])
					}
				}
			} else if !bytes.Equal(a[0].Data, got[0].Data) {
				t.Fatalf("read graph computes %s, want %s", got[0].Summary(8), a[0].Summary(8))
			}
		})
	}
}
