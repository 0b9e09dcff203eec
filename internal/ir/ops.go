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

// Pattern is the fusion class of an op (MindSpore split model, reference §4).
type Pattern int

const (
	PatternOpaque Pattern = iota
	PatternElemwise
	PatternBroadcast
	PatternReduce
	PatternReshape
)

func (p Pattern) String() string {
	return [...]string{"OPAQUE", "ELEMWISE", "BROADCAST", "REDUCE", "RESHAPE"}[p]
}

type OpInfo struct {
	Name    string  // IR op name
	Onnx    string  // ONNX op type it comes from ("" = IR only)
	Pattern Pattern // fusion class
	Note    string  // convention differences from ONNX, if any
}

var opTable = []OpInfo{
	// unary elementwise
	{"Abs", "Abs", PatternElemwise, ""},
	{"ACos", "Acos", PatternElemwise, ""},
	{"Acosh", "Acosh", PatternElemwise, ""},
	{"Asin", "Asin", PatternElemwise, ""},
	{"Asinh", "Asinh", PatternElemwise, ""},
	{"Atan", "Atan", PatternElemwise, ""},
	{"Atanh", "Atanh", PatternElemwise, ""},
	{"Ceil", "Ceil", PatternElemwise, ""},
	{"CeLU", "Celu", PatternElemwise, ""},
	{"Cos", "Cos", PatternElemwise, ""},
	{"Cosh", "Cosh", PatternElemwise, ""},
	{"Elu", "Elu", PatternElemwise, ""},
	{"Erf", "Erf", PatternElemwise, ""},
	{"Exp", "Exp", PatternElemwise, ""},
	{"Floor", "Floor", PatternElemwise, ""},
	{"GeLU", "Gelu", PatternElemwise, "attr approximate: none|tanh"},
	{"HSigmoid", "HardSigmoid", PatternElemwise, "attrs alpha, beta as ONNX (MindSpore's HSigmoid is alpha=1/6, beta=0.5)"},
	{"HSwish", "HardSwish", PatternElemwise, ""},
	{"IsInf", "IsInf", PatternElemwise, ""},
	{"IsNan", "IsNaN", PatternElemwise, ""},
	{"LeakyReLU", "LeakyRelu", PatternElemwise, ""},
	{"Log", "Log", PatternElemwise, ""},
	{"LogicalNot", "Not", PatternElemwise, ""},
	{"Mish", "Mish", PatternElemwise, ""},
	{"Neg", "Neg", PatternElemwise, ""},
	{"Reciprocal", "Reciprocal", PatternElemwise, ""},
	{"ReLU", "Relu", PatternElemwise, ""},
	{"ReLU6", "", PatternElemwise, "Clip(0,6) recognised by passes"},
	{"Round", "Round", PatternElemwise, "half to even"},
	{"SeLU", "Selu", PatternElemwise, ""},
	{"Sigmoid", "Sigmoid", PatternElemwise, ""},
	{"Sign", "Sign", PatternElemwise, ""},
	{"Sin", "Sin", PatternElemwise, ""},
	{"Sinh", "Sinh", PatternElemwise, ""},
	{"Softplus", "Softplus", PatternElemwise, ""},
	{"Softsign", "Softsign", PatternElemwise, ""},
	{"Sqrt", "Sqrt", PatternElemwise, ""},
	{"Rsqrt", "", PatternElemwise, "1/sqrt(x); produced by expanders"},
	{"Square", "", PatternElemwise, "x*x; produced by expanders"},
	{"Tan", "Tan", PatternElemwise, ""},
	{"Tanh", "Tanh", PatternElemwise, ""},
	{"ThresholdedReLU", "ThresholdedRelu", PatternElemwise, ""},
	{"Cast", "Cast", PatternElemwise, "attr to: ONNX dtype number"},
	{"Identity", "Identity", PatternElemwise, ""},
	{"Dropout", "Dropout", PatternElemwise, "inference: identity; optional mask output all true"},
	{"Clip", "Clip", PatternElemwise, "inputs x, min?, max?"},
	// binary / n-ary elementwise with broadcasting
	{"Add", "Add", PatternBroadcast, ""},
	{"Sub", "Sub", PatternBroadcast, ""},
	{"Mul", "Mul", PatternBroadcast, ""},
	{"RealDiv", "Div", PatternBroadcast, "integer inputs divide truncating toward zero, as ONNX"},
	{"Pow", "Pow", PatternBroadcast, ""},
	{"Mod", "Mod", PatternBroadcast, "attr fmod as ONNX"},
	{"Maximum", "Max", PatternBroadcast, "variadic, as ONNX Max"},
	{"Minimum", "Min", PatternBroadcast, "variadic, as ONNX Min"},
	{"AddN", "Sum", PatternBroadcast, "variadic with broadcasting, as ONNX Sum"},
	{"Mean", "Mean", PatternBroadcast, "variadic, as ONNX Mean"},
	{"Equal", "Equal", PatternBroadcast, ""},
	{"Greater", "Greater", PatternBroadcast, ""},
	{"GreaterEqual", "GreaterOrEqual", PatternBroadcast, ""},
	{"Less", "Less", PatternBroadcast, ""},
	{"LessEqual", "LessOrEqual", PatternBroadcast, ""},
	{"LogicalAnd", "And", PatternBroadcast, ""},
	{"LogicalOr", "Or", PatternBroadcast, ""},
	{"LogicalXor", "Xor", PatternBroadcast, ""},
	{"PReLU", "PRelu", PatternBroadcast, ""},
	{"Select", "Where", PatternBroadcast, "inputs cond, x, y"},
	{"BiasAdd", "", PatternBroadcast, "inputs x, bias[C]; attr format NCHW (channel axis 1) or NHWC (last)"},
	{"SquaredDifference", "", PatternBroadcast, "(x-y)^2; produced by expanders"},
	{"BroadcastTo", "Expand", PatternBroadcast, "inputs x, shape"},
	// reductions: inputs data, axes?; attrs keepdims, noop_with_empty_axes
	{"ReduceSum", "ReduceSum", PatternReduce, ""},
	{"ReduceMean", "ReduceMean", PatternReduce, ""},
	{"ReduceMax", "ReduceMax", PatternReduce, ""},
	{"ReduceMin", "ReduceMin", PatternReduce, ""},
	{"ReduceProd", "ReduceProd", PatternReduce, ""},
	{"ReduceL1", "ReduceL1", PatternReduce, ""},
	{"ReduceL2", "ReduceL2", PatternReduce, ""},
	{"ReduceLogSum", "ReduceLogSum", PatternReduce, ""},
	{"ReduceLogSumExp", "ReduceLogSumExp", PatternReduce, ""},
	{"ReduceSumSquare", "ReduceSumSquare", PatternReduce, ""},
	{"Argmax", "ArgMax", PatternOpaque, "attrs axis, keepdims, select_last_index"},
	{"Argmin", "ArgMin", PatternOpaque, "attrs axis, keepdims, select_last_index"},
	// shape and data movement
	{"Reshape", "Reshape", PatternReshape, "inputs x, shape; attr allowzero"},
	{"Flatten", "Flatten", PatternReshape, ""},
	{"Squeeze", "Squeeze", PatternReshape, "inputs x, axes?"},
	{"Unsqueeze", "Unsqueeze", PatternReshape, "inputs x, axes"},
	{"Transpose", "Transpose", PatternOpaque, "attr perm"},
	{"Concat", "Concat", PatternOpaque, ""},
	{"Split", "Split", PatternOpaque, "inputs x, split?; attrs axis, num_outputs"},
	{"Slice", "Slice", PatternOpaque, "inputs data, starts, ends, axes?, steps?"},
	{"Gather", "Gather", PatternOpaque, ""},
	{"GatherD", "GatherElements", PatternOpaque, ""},
	{"Pad", "Pad", PatternOpaque, "inputs data, pads, constant_value?, axes?; attr mode"},
	{"Tile", "Tile", PatternOpaque, "inputs x, repeats"},
	{"DepthToSpace", "DepthToSpace", PatternOpaque, ""},
	{"SpaceToDepth", "SpaceToDepth", PatternOpaque, ""},
	{"Trilu", "Trilu", PatternOpaque, ""},
	{"Range", "Range", PatternOpaque, ""},
	{"Shape", "Shape", PatternOpaque, "attrs start, end"},
	{"Size", "Size", PatternOpaque, ""},
	{"ConstantOfShape", "ConstantOfShape", PatternOpaque, "attr value: tensor"},
	{"TopK", "TopK", PatternOpaque, "inputs x, k; attrs axis, largest, sorted"},
	{"CumSum", "CumSum", PatternOpaque, ""},
	{"Resize", "Resize", PatternOpaque, "inputs x, roi?, scales?, sizes?"},
	// nn
	{"MatMul", "MatMul", PatternOpaque, "numpy matmul; attrs transpose_a, transpose_b (last two dims); optional bias input [..., N] added after the product (MindSpore Lite MatMulFusion; from preprocess.matmul_bias_fold); attr pack_b (int, a MindSpore bool; ir.AttrPackB): 1 = the CPU runtime packs the constant B once at model load (ir.PackB layout, kept out of the file) and runs its packed-B GEMM, set by postprocess.matmul_pack_b on the MatMuls ir.PackableMatMul accepts; a hint only, the values are those of MatMul"},
	{"Conv2D", "Conv", PatternOpaque, "any spatial rank; ONNX attrs (pads begin..., end...); inputs x, w, b?"},
	{"Conv2DTranspose", "ConvTranspose", PatternOpaque, "ONNX attrs"},
	{"AvgPool", "AveragePool", PatternOpaque, "ONNX attrs"},
	{"MaxPool", "MaxPool", PatternOpaque, "ONNX attrs; optional Indices output"},
	{"BatchNorm", "BatchNormalization", PatternOpaque, "inference form; inputs x, scale, bias, mean, var; attr epsilon"},
	{"InstanceNorm", "InstanceNormalization", PatternOpaque, ""},
	{"LayerNorm", "LayerNormalization", PatternOpaque, "attrs axis, epsilon; inputs x, scale, bias?; extra outputs mean, inv_std"},
	{"Softmax", "Softmax", PatternOpaque, "attr axis (opset>=13 meaning; frontends rewrite older forms)"},
	{"LogSoftmax", "LogSoftmax", PatternOpaque, "as Softmax"},
	{"Einsum", "Einsum", PatternOpaque, "attr equation"},
	// fused kernels
	{OpGraphKernel, "", PatternOpaque, "Custom node: a fused subgraph in Body and its compiled kernel"},
}

var (
	opsByName = map[string]*OpInfo{}
	opsByOnnx = map[string]*OpInfo{}
)

func init() {
	for i := range opTable {
		o := &opTable[i]
		opsByName[o.Name] = o
		if o.Onnx != "" {
			opsByOnnx[o.Onnx] = o
		}
	}
}

// LookupOp returns the row for an IR op name.
func LookupOp(name string) (*OpInfo, bool) { o, ok := opsByName[name]; return o, ok }

// OpFromOnnx maps an ONNX op type (default domain) to its IR row.
func OpFromOnnx(onnxOp string) (*OpInfo, bool) { o, ok := opsByOnnx[onnxOp]; return o, ok }

// Ops returns the whole table (read-only).
func Ops() []OpInfo { return opTable }
