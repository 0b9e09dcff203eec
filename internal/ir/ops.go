package ir

// The op table: one row per IR op. IR op names are MindSpore primitive names
// where MindSpore has the op (so flag lists such as enable_expand_ops=GeLU or
// disable_cluster_ops=MatMul mean what MindSpore's documents say); ops without
// a MindSpore primitive keep their ONNX name.
//
// Conventions every frontend, pass and kernel follows:
//   - Signatures are those of the newest ONNX opset of the op: operands that
//     older opsets gave as attributes (Reduce* axes, Split split, Squeeze and
//     Unsqueeze axes, Clip min/max, Pad pads, Slice starts/ends/axes/steps,
//     Resize scales/sizes, TopK k, Tile repeats, Reshape shape, Expand shape,
//     Upsample scales) are inputs; frontends turn the old attribute forms into
//     constant inputs. Attribute names and defaults are ONNX's.
//   - Broadcasting is numpy-style for every binary op.
//   - Renamed ops keep ONNX attributes, except where noted in the row.
//   - The MindIR reader maps MindSpore attributes onto these conventions.

// The table below is the one registry of op facts: arity, shape function,
// fusion pattern and flags, one row per op (as Go's SSA op tables declare
// theirs). InferNode checks the arity from the row before the shape
// function runs; passes and back ends ask the row (LookupOp(op).IsReshape(),
// IsAlias(), ...) instead of listing op names.

// Pattern is the fusion class of an op: MindSpore's NodePattern
// (PrimOp::ComputeType in
// mindspore/ccsrc/backend/common/graph_kernel/model/op_node.h), in its
// order, which the split model compares (VIRTUAL < RESHAPE < ... < OPAQUE).
// Binary ops with numpy broadcasting are ELEMWISE (their edges decide
// BROADCAST in the split model); BroadcastTo and Tile are BROADCAST.
type Pattern int

const (
	PatternVirtual Pattern = iota
	PatternReshape
	PatternElemwise
	PatternBroadcast
	PatternReduce
	PatternOpaque
)

func (p Pattern) String() string {
	return [...]string{"VIRTUAL", "RESHAPE", "ELEMWISE", "BROADCAST", "REDUCE", "OPAQUE"}[p]
}

// Arity is how many inputs (or outputs) a node of the op has: Min to Max,
// Max < 0 for no limit. Trailing omitted optional inputs (nil) do not
// count; the first Min inputs must be present.
type Arity struct{ Min, Max int }

// OpFlags are the facts about an op that its pattern does not say.
type OpFlags uint8

const (
	// FlagAlias: output 0 is input 0's bytes under another shape, so an
	// executor may share the buffer and a reader may look through the op:
	// the RESHAPE ops and Identity. Not Dropout: the runtime reads its
	// training_mode input.
	FlagAlias OpFlags = 1 << iota
	// FlagPassThrough: output 0 holds input 0's elements at the same
	// (broadcast) index, without arithmetic: Identity, Dropout (inference)
	// and BroadcastTo.
	FlagPassThrough
	// FlagValueDepend: input 1 (shape, axes or repeats) is data the
	// output's shape depends on, so graph-kernel clustering takes the node
	// only when it is a constant (as MindSpore's
	// mindspore/ccsrc/backend/common/graph_kernel/core/value_depend_op_utils.cc).
	// Set on Reshape, Squeeze, Unsqueeze, BroadcastTo, Tile and ReduceSum,
	// ReduceMax, ReduceMin, ReduceMean, ReduceProd; other ops whose shape
	// functions read input values (Slice, Pad, Split, TopK, Resize, the
	// other reductions) do not carry it.
	FlagValueDepend
)

// OpInfo is one row of the op table.
type OpInfo struct {
	Name    string    // IR op name
	Onnx    string    // ONNX op type it comes from ("" = IR only)
	In, Out Arity     // input and output counts
	Infer   InferFunc // shape function; runs after the arity check
	Pattern Pattern   // fusion class
	Flags   OpFlags
	Note    string // convention differences from ONNX, if any

	// OnnxAliases are older ONNX op types with the same signature and
	// meaning that map to this row too (Scatter for ScatterElements).
	OnnxAliases []string
}

// opTable is the core rows below plus the families that live in their own
// files (ops_<family>.go), so each family's rows sit next to its shape
// functions and adding one touches one file.
var opTable = joinOpTables(coreOps, lossNormOps, indexingOps, quantOps, recurrentOps, controlFlowOps, miscOps)

func joinOpTables(tables ...[]OpInfo) []OpInfo {
	var out []OpInfo
	seen := map[string]bool{}
	for _, t := range tables {
		for _, o := range t {
			if seen[o.Name] {
				panic("ir: op " + o.Name + " is in two op tables")
			}
			seen[o.Name] = true
			out = append(out, o)
		}
	}
	return out
}

var coreOps = []OpInfo{
	// unary elementwise
	{Name: "Abs", Onnx: "Abs", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise},
	{Name: "ACos", Onnx: "Acos", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise},
	{Name: "Acosh", Onnx: "Acosh", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise},
	{Name: "Asin", Onnx: "Asin", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise},
	{Name: "Asinh", Onnx: "Asinh", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise},
	{Name: "Atan", Onnx: "Atan", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise},
	{Name: "Atanh", Onnx: "Atanh", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise},
	{Name: "Ceil", Onnx: "Ceil", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise},
	{Name: "CeLU", Onnx: "Celu", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise},
	{Name: "Cos", Onnx: "Cos", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise},
	{Name: "Cosh", Onnx: "Cosh", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise},
	{Name: "Elu", Onnx: "Elu", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise},
	{Name: "Erf", Onnx: "Erf", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise},
	{Name: "Exp", Onnx: "Exp", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise},
	{Name: "Floor", Onnx: "Floor", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise},
	{Name: "GeLU", Onnx: "Gelu", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise, Note: "attr approximate: none|tanh"},
	{Name: "HSigmoid", Onnx: "HardSigmoid", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise, Note: "attrs alpha, beta as ONNX (MindSpore's HSigmoid is alpha=1/6, beta=0.5)"},
	{Name: "HSwish", Onnx: "HardSwish", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise},
	{Name: "IsInf", Onnx: "IsInf", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferPredicate, Pattern: PatternElemwise},
	{Name: "IsNan", Onnx: "IsNaN", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferPredicate, Pattern: PatternElemwise},
	{Name: "LeakyReLU", Onnx: "LeakyRelu", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise},
	{Name: "Log", Onnx: "Log", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise},
	{Name: "LogicalNot", Onnx: "Not", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferPredicate, Pattern: PatternElemwise},
	{Name: "Mish", Onnx: "Mish", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise},
	{Name: "Neg", Onnx: "Neg", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise},
	{Name: "Reciprocal", Onnx: "Reciprocal", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise},
	{Name: "ReLU", Onnx: "Relu", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise},
	{Name: "ReLU6", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise, Note: "Clip(0,6) recognised by passes"},
	{Name: "Round", Onnx: "Round", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise, Note: "half to even"},
	{Name: "SeLU", Onnx: "Selu", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise},
	{Name: "Sigmoid", Onnx: "Sigmoid", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise},
	{Name: "Sign", Onnx: "Sign", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise},
	{Name: "Sin", Onnx: "Sin", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise},
	{Name: "Sinh", Onnx: "Sinh", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise},
	{Name: "Softplus", Onnx: "Softplus", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise},
	{Name: "Softsign", Onnx: "Softsign", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise},
	{Name: "Sqrt", Onnx: "Sqrt", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise},
	{Name: "Rsqrt", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise, Note: "1/sqrt(x); produced by expanders"},
	{Name: "Square", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise, Note: "x*x; produced by expanders"},
	{Name: "Tan", Onnx: "Tan", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise},
	{Name: "Tanh", Onnx: "Tanh", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise},
	{Name: "ThresholdedReLU", Onnx: "ThresholdedRelu", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise},
	{Name: "Cast", Onnx: "Cast", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferCast, Pattern: PatternElemwise, Note: "attr to: ONNX dtype number"},
	{Name: "Identity", Onnx: "Identity", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternElemwise, Flags: FlagAlias | FlagPassThrough},
	{Name: "Dropout", Onnx: "Dropout", In: Arity{1, 3}, Out: Arity{1, 2}, Infer: inferDropout, Pattern: PatternElemwise, Flags: FlagPassThrough, Note: "inference: identity; optional mask output all true"},
	{Name: "Clip", Onnx: "Clip", In: Arity{1, 3}, Out: Arity{1, 1}, Infer: inferClip, Pattern: PatternElemwise, Note: "inputs x, min?, max?"},
	// binary / n-ary elementwise with broadcasting
	{Name: "Add", Onnx: "Add", In: Arity{2, 2}, Out: Arity{1, 1}, Infer: inferBinary, Pattern: PatternElemwise},
	{Name: "Sub", Onnx: "Sub", In: Arity{2, 2}, Out: Arity{1, 1}, Infer: inferBinary, Pattern: PatternElemwise},
	{Name: "Mul", Onnx: "Mul", In: Arity{2, 2}, Out: Arity{1, 1}, Infer: inferBinary, Pattern: PatternElemwise},
	{Name: "RealDiv", Onnx: "Div", In: Arity{2, 2}, Out: Arity{1, 1}, Infer: inferBinary, Pattern: PatternElemwise, Note: "integer inputs divide truncating toward zero, as ONNX"},
	{Name: "Pow", Onnx: "Pow", In: Arity{2, 2}, Out: Arity{1, 1}, Infer: inferBinaryMixed, Pattern: PatternElemwise},
	{Name: "Mod", Onnx: "Mod", In: Arity{2, 2}, Out: Arity{1, 1}, Infer: inferBinary, Pattern: PatternElemwise, Note: "attr fmod as ONNX"},
	{Name: "Maximum", Onnx: "Max", In: Arity{1, -1}, Out: Arity{1, 1}, Infer: inferVariadic, Pattern: PatternElemwise, Note: "variadic, as ONNX Max"},
	{Name: "Minimum", Onnx: "Min", In: Arity{1, -1}, Out: Arity{1, 1}, Infer: inferVariadic, Pattern: PatternElemwise, Note: "variadic, as ONNX Min"},
	{Name: "AddN", Onnx: "Sum", In: Arity{1, -1}, Out: Arity{1, 1}, Infer: inferVariadic, Pattern: PatternElemwise, Note: "variadic with broadcasting, as ONNX Sum"},
	{Name: "Mean", Onnx: "Mean", In: Arity{1, -1}, Out: Arity{1, 1}, Infer: inferVariadic, Pattern: PatternElemwise, Note: "variadic, as ONNX Mean"},
	{Name: "Equal", Onnx: "Equal", In: Arity{2, 2}, Out: Arity{1, 1}, Infer: inferCompare, Pattern: PatternElemwise},
	{Name: "Greater", Onnx: "Greater", In: Arity{2, 2}, Out: Arity{1, 1}, Infer: inferCompare, Pattern: PatternElemwise},
	{Name: "GreaterEqual", Onnx: "GreaterOrEqual", In: Arity{2, 2}, Out: Arity{1, 1}, Infer: inferCompare, Pattern: PatternElemwise},
	{Name: "Less", Onnx: "Less", In: Arity{2, 2}, Out: Arity{1, 1}, Infer: inferCompare, Pattern: PatternElemwise},
	{Name: "LessEqual", Onnx: "LessOrEqual", In: Arity{2, 2}, Out: Arity{1, 1}, Infer: inferCompare, Pattern: PatternElemwise},
	{Name: "LogicalAnd", Onnx: "And", In: Arity{2, 2}, Out: Arity{1, 1}, Infer: inferCompare, Pattern: PatternElemwise},
	{Name: "LogicalOr", Onnx: "Or", In: Arity{2, 2}, Out: Arity{1, 1}, Infer: inferCompare, Pattern: PatternElemwise},
	{Name: "LogicalXor", Onnx: "Xor", In: Arity{2, 2}, Out: Arity{1, 1}, Infer: inferCompare, Pattern: PatternElemwise},
	{Name: "PReLU", Onnx: "PRelu", In: Arity{2, 2}, Out: Arity{1, 1}, Infer: inferPReLU, Pattern: PatternElemwise},
	{Name: "Select", Onnx: "Where", In: Arity{3, 3}, Out: Arity{1, 1}, Infer: inferSelect, Pattern: PatternElemwise, Note: "inputs cond, x, y"},
	{Name: "BiasAdd", In: Arity{2, 2}, Out: Arity{1, 1}, Infer: inferBiasAdd, Pattern: PatternElemwise, Note: "inputs x, bias[C]; attr format NCHW (channel axis 1) or NHWC (last)"},
	{Name: "SquaredDifference", In: Arity{2, 2}, Out: Arity{1, 1}, Infer: inferBinary, Pattern: PatternElemwise, Note: "(x-y)^2; produced by expanders"},
	{Name: "BroadcastTo", Onnx: "Expand", In: Arity{2, 2}, Out: Arity{1, 1}, Infer: inferBroadcastTo, Pattern: PatternBroadcast, Flags: FlagPassThrough | FlagValueDepend, Note: "inputs x, shape"},
	// reductions: inputs data, axes?; attrs keepdims, noop_with_empty_axes
	{Name: "ReduceSum", Onnx: "ReduceSum", In: Arity{1, 2}, Out: Arity{1, 1}, Infer: inferReduce, Pattern: PatternReduce, Flags: FlagValueDepend},
	{Name: "ReduceMean", Onnx: "ReduceMean", In: Arity{1, 2}, Out: Arity{1, 1}, Infer: inferReduce, Pattern: PatternReduce, Flags: FlagValueDepend},
	{Name: "ReduceMax", Onnx: "ReduceMax", In: Arity{1, 2}, Out: Arity{1, 1}, Infer: inferReduce, Pattern: PatternReduce, Flags: FlagValueDepend},
	{Name: "ReduceMin", Onnx: "ReduceMin", In: Arity{1, 2}, Out: Arity{1, 1}, Infer: inferReduce, Pattern: PatternReduce, Flags: FlagValueDepend},
	{Name: "ReduceProd", Onnx: "ReduceProd", In: Arity{1, 2}, Out: Arity{1, 1}, Infer: inferReduce, Pattern: PatternReduce, Flags: FlagValueDepend},
	{Name: "ReduceL1", Onnx: "ReduceL1", In: Arity{1, 2}, Out: Arity{1, 1}, Infer: inferReduce, Pattern: PatternReduce},
	{Name: "ReduceL2", Onnx: "ReduceL2", In: Arity{1, 2}, Out: Arity{1, 1}, Infer: inferReduce, Pattern: PatternReduce},
	{Name: "ReduceLogSum", Onnx: "ReduceLogSum", In: Arity{1, 2}, Out: Arity{1, 1}, Infer: inferReduce, Pattern: PatternReduce},
	{Name: "ReduceLogSumExp", Onnx: "ReduceLogSumExp", In: Arity{1, 2}, Out: Arity{1, 1}, Infer: inferReduce, Pattern: PatternReduce},
	{Name: "ReduceSumSquare", Onnx: "ReduceSumSquare", In: Arity{1, 2}, Out: Arity{1, 1}, Infer: inferReduce, Pattern: PatternReduce},
	{Name: "Argmax", Onnx: "ArgMax", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferArgReduce, Pattern: PatternOpaque, Note: "attrs axis, keepdims, select_last_index"},
	{Name: "Argmin", Onnx: "ArgMin", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferArgReduce, Pattern: PatternOpaque, Note: "attrs axis, keepdims, select_last_index"},
	// shape and data movement
	{Name: "Reshape", Onnx: "Reshape", In: Arity{2, 2}, Out: Arity{1, 1}, Infer: inferReshape, Pattern: PatternReshape, Flags: FlagAlias | FlagValueDepend, Note: "inputs x, shape; attr allowzero"},
	{Name: "Flatten", Onnx: "Flatten", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferFlatten, Pattern: PatternReshape, Flags: FlagAlias},
	{Name: "Squeeze", Onnx: "Squeeze", In: Arity{1, 2}, Out: Arity{1, 1}, Infer: inferSqueeze, Pattern: PatternReshape, Flags: FlagAlias | FlagValueDepend, Note: "inputs x, axes?"},
	{Name: "Unsqueeze", Onnx: "Unsqueeze", In: Arity{2, 2}, Out: Arity{1, 1}, Infer: inferUnsqueeze, Pattern: PatternReshape, Flags: FlagAlias | FlagValueDepend, Note: "inputs x, axes"},
	{Name: "Transpose", Onnx: "Transpose", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferTranspose, Pattern: PatternOpaque, Note: "attr perm"},
	{Name: "Concat", Onnx: "Concat", In: Arity{1, -1}, Out: Arity{1, 1}, Infer: inferConcat, Pattern: PatternOpaque},
	{Name: "Split", Onnx: "Split", In: Arity{1, 2}, Out: Arity{1, -1}, Infer: inferSplit, Pattern: PatternOpaque, Note: "inputs x, split?; attrs axis, num_outputs"},
	{Name: "Slice", Onnx: "Slice", In: Arity{3, 5}, Out: Arity{1, 1}, Infer: inferSlice, Pattern: PatternOpaque, Note: "inputs data, starts, ends, axes?, steps?"},
	{Name: "Gather", Onnx: "Gather", In: Arity{2, 2}, Out: Arity{1, 1}, Infer: inferGather, Pattern: PatternOpaque},
	{Name: "GatherD", Onnx: "GatherElements", In: Arity{2, 2}, Out: Arity{1, 1}, Infer: inferGatherD, Pattern: PatternOpaque},
	{Name: "Pad", Onnx: "Pad", In: Arity{2, 4}, Out: Arity{1, 1}, Infer: inferPad, Pattern: PatternOpaque, Note: "inputs data, pads, constant_value?, axes?; attr mode"},
	{Name: "Tile", Onnx: "Tile", In: Arity{2, 2}, Out: Arity{1, 1}, Infer: inferTile, Pattern: PatternBroadcast, Flags: FlagValueDepend, Note: "inputs x, repeats"},
	{Name: "DepthToSpace", Onnx: "DepthToSpace", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferDepthToSpace, Pattern: PatternOpaque},
	{Name: "SpaceToDepth", Onnx: "SpaceToDepth", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferSpaceToDepth, Pattern: PatternOpaque},
	{Name: "Trilu", Onnx: "Trilu", In: Arity{1, 2}, Out: Arity{1, 1}, Infer: inferTrilu, Pattern: PatternOpaque},
	{Name: "Range", Onnx: "Range", In: Arity{3, 3}, Out: Arity{1, 1}, Infer: inferRange, Pattern: PatternOpaque},
	{Name: "Shape", Onnx: "Shape", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferShapeOp, Pattern: PatternOpaque, Note: "attrs start, end"},
	{Name: "Size", Onnx: "Size", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferSize, Pattern: PatternOpaque},
	{Name: "ConstantOfShape", Onnx: "ConstantOfShape", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferConstantOfShape, Pattern: PatternOpaque, Note: "attr value: tensor"},
	{Name: "TopK", Onnx: "TopK", In: Arity{2, 2}, Out: Arity{1, 2}, Infer: inferTopK, Pattern: PatternOpaque, Note: "inputs x, k; attrs axis, largest, sorted"},
	{Name: "CumSum", Onnx: "CumSum", In: Arity{2, 2}, Out: Arity{1, 1}, Infer: inferCumSum, Pattern: PatternOpaque},
	{Name: "Resize", Onnx: "Resize", In: Arity{1, 4}, Out: Arity{1, 1}, Infer: inferResize, Pattern: PatternOpaque, Note: "inputs x, roi?, scales?, sizes?"},
	// nn
	{Name: "MatMul", Onnx: "MatMul", In: Arity{2, 3}, Out: Arity{1, 1}, Infer: inferMatMul, Pattern: PatternOpaque, Note: "numpy matmul; attrs transpose_a, transpose_b (last two dims); optional bias input [..., N] added after the product (MindSpore Lite MatMulFusion; from preprocess.matmul_bias_fold); attr pack_b (int, a MindSpore bool; ir.AttrPackB): 1 = the CPU runtime packs the constant B once at model load (ir.PackB layout, kept out of the file) and runs its packed-B GEMM, set by postprocess.matmul_pack_b on the MatMuls ir.PackableMatMul accepts; a hint only, the values are those of MatMul; attr activation_type (ir.AttrActivation: 1 RELU, 3 RELU6, MindSpore Lite MatMulFusion's) applied after the bias, set by anf_fusion.MatMulActivationFusion"},
	{Name: "Conv2D", Onnx: "Conv", In: Arity{2, 4}, Out: Arity{1, 1}, Infer: inferConv, Pattern: PatternOpaque, Note: "any spatial rank; ONNX attrs (pads begin..., end...); inputs x, w, b?, z?; z (ir.ConvResidualInput, index 3; b may then be absent, nil) is a residual of exactly the output's shape and dtype added after the bias (onnxruntime FusedConv's Z; set by anf_fusion.ConvElemwiseAddFusion, written as Conv2DFusion then AddFusion); attr activation_type (ir.AttrActivation, MindSpore ActivationType: 0 none, 1 RELU, 3 RELU6; 2 SIGMOID, 10 TANH, 12 HSWISH, 18 SWISH, written as Conv2DFusion then Activation) applied after the bias and the residual, set by anf_fusion.ConvActivationFusion, ConvElemwiseAddFusion and ConvSwishActivationFusion"},
	{Name: "Conv2DTranspose", Onnx: "ConvTranspose", In: Arity{2, 3}, Out: Arity{1, 1}, Infer: inferConvTranspose, Pattern: PatternOpaque, Note: "ONNX attrs"},
	{Name: "AvgPool", Onnx: "AveragePool", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferPool, Pattern: PatternOpaque, Note: "ONNX attrs"},
	{Name: "GlobalAveragePool", Onnx: "GlobalAveragePool", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferGlobalPool, Pattern: PatternOpaque, Note: "mean over every spatial dim (N, C, spatial...), any spatial rank, summed in onnxruntime's (MLAS's global pooling) order; MindIR: AvgPoolFusion with global=true, as converter_lite writes it (MindSpore primitives: ReduceMean over the spatial axes)"},
	{Name: "MaxPool", Onnx: "MaxPool", In: Arity{1, 1}, Out: Arity{1, 2}, Infer: inferPool, Pattern: PatternOpaque, Note: "ONNX attrs; optional Indices output"},
	{Name: "BatchNorm", Onnx: "BatchNormalization", In: Arity{5, 5}, Out: Arity{1, 3}, Infer: inferBatchNorm, Pattern: PatternOpaque, Note: "inference form; inputs x, scale, bias, mean, var; attr epsilon"},
	{Name: "InstanceNorm", Onnx: "InstanceNormalization", In: Arity{3, 3}, Out: Arity{1, 1}, Infer: inferInstanceNorm, Pattern: PatternOpaque},
	{Name: "LayerNorm", Onnx: "LayerNormalization", In: Arity{2, 3}, Out: Arity{1, 3}, Infer: inferLayerNorm, Pattern: PatternOpaque, Note: "attrs axis, epsilon; inputs x, scale, bias?; extra outputs mean, inv_std"},
	{Name: "Softmax", Onnx: "Softmax", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferSoftmax, Pattern: PatternOpaque, Note: "attr axis (opset>=13 meaning; frontends rewrite older forms)"},
	{Name: "LogSoftmax", Onnx: "LogSoftmax", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferSoftmax, Pattern: PatternOpaque, Note: "as Softmax"},
	{Name: "Attention", Onnx: "Attention", In: Arity{3, 7}, Out: Arity{1, 4}, Infer: inferAttention, Pattern: PatternOpaque, Note: "ONNX Attention (opset 23/24): inputs Q, K, V, attn_mask?, past_key?, past_value?, nonpad_kv_seqlen?; outputs Y, present_key?, present_value?, qk_matmul_output?; ONNX attrs; from the ONNX op or fusion's MultiHeadAttentionFusion (preprocess); MindIR: Custom gkconv.Attention (MindSpore's Attention primitive includes the Q/K/V/O projections)"},
	{Name: "Einsum", Onnx: "Einsum", In: Arity{1, -1}, Out: Arity{1, 1}, Infer: inferEinsum, Pattern: PatternOpaque, Note: "attr equation"},
	// fused kernels
	{Name: OpGraphKernel, In: Arity{0, -1}, Out: Arity{0, -1}, Infer: inferGraphKernel, Pattern: PatternOpaque, Note: "Custom node: a fused subgraph in Body and its compiled kernel"},
}

var opsByName, opsByOnnx = indexOps(opTable)

func indexOps(table []OpInfo) (byName, byOnnx map[string]*OpInfo) {
	byName, byOnnx = map[string]*OpInfo{}, map[string]*OpInfo{}
	for i := range table {
		o := &table[i]
		byName[o.Name] = o
		if o.Onnx != "" {
			byOnnx[o.Onnx] = o
		}
		for _, a := range o.OnnxAliases {
			byOnnx[a] = o
		}
	}
	return byName, byOnnx
}

// LookupOp returns the row for an IR op name, nil when the IR has no such
// op; the queries below answer false (and OPAQUE) for a nil row.
func LookupOp(name string) *OpInfo { return opsByName[name] }

// OpFromOnnx maps an ONNX op type (default domain) to its IR row.
func OpFromOnnx(onnxOp string) (*OpInfo, bool) { o, ok := opsByOnnx[onnxOp]; return o, ok }

// Ops returns the whole table (read-only).
func Ops() []OpInfo { return opTable }

// PatternOf is the op's fusion class; OPAQUE for ops the IR does not have.
func (o *OpInfo) PatternOf() Pattern {
	if o == nil {
		return PatternOpaque
	}
	return o.Pattern
}

// IsReshape: the op only reinterprets input 0's shape (Reshape, Flatten,
// Squeeze, Unsqueeze); later inputs are parameters.
func (o *OpInfo) IsReshape() bool { return o.PatternOf() == PatternReshape }

// IsElemwise: output element i depends on element i of each (broadcast) input.
func (o *OpInfo) IsElemwise() bool { return o.PatternOf() == PatternElemwise }

// IsReduce: a reduction over the axes of input 1 (ReduceSum, ...).
func (o *OpInfo) IsReduce() bool { return o.PatternOf() == PatternReduce }

// IsAlias reports FlagAlias.
func (o *OpInfo) IsAlias() bool { return o.has(FlagAlias) }

// PassesThrough reports FlagPassThrough.
func (o *OpInfo) PassesThrough() bool { return o.has(FlagPassThrough) }

// ValueDepend reports FlagValueDepend.
func (o *OpInfo) ValueDepend() bool { return o.has(FlagValueDepend) }

func (o *OpInfo) has(f OpFlags) bool { return o != nil && o.Flags&f != 0 }
