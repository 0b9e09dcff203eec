package mindir

// The MindSpore framework form (WriteOptions.MindSporePrimitives, the
// converter's --primitiveSet=mindspore): IR ops written as the primitives
// `mindspore.export` writes in MindSpore 2.7, so the file runs in
// mindspore.nn.GraphCell on MindSpore's own CPU kernels, which have none for
// converter_lite's fusion primitives (Conv2DFusion, MatMulFusion, AddFusion,
// ReduceFusion, ... "Unsupported op [MatMulFusion] on CPU").
//
// The form is MindSpore 2.7's, read off files MindSpore 2.7.2 exported
// (scripts/interop/export_nets.py): the file says mind_ir_version 3, op_def
// (yaml) primitives are PRIMITIVE_FUNCTION with every argument a node input
// (scalars and tuples as Constant value nodes: ReduceMean(x, (2,3), True),
// Gather(x, i, 0, 0), Softmax(x, (-1,)), BatchNorm(x, g, b, m, v, False,
// eps, momentum, NCHW)), and the primitives that are not op_def ops yet
// (Conv2D, MaxPool, PadV3) keep their attributes as PRIMITIVE. A fused
// activation, bias or residual that MindSpore's Conv2D and MatMul do not
// carry becomes the separate nodes MindSpore would have (Conv2D, BiasAdd,
// Add, ReLU...). An IR op or instance without a framework form keeps its
// converter_lite lowering (MindSpore still loads it; only running it needs
// the Lite runtime), and a fused kernel stays converter_lite's GraphKernel
// Custom node.

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"gkconv/internal/ir"
	pb "gkconv/internal/mindir/mindirpb"
)

// frameworkMindIRVersion is what MindSpore 2.7 exports: op_def arguments are
// node inputs (load_model.cc CheckMindIRVseriosn: >= 2).
const frameworkMindIRVersion = 3

var lowerFrameworkTable = map[string]lowerFunc{
	"Conv2D":            lowerFwConv2D,
	"MaxPool":           lowerFwMaxPool,
	"AvgPool":           lowerFwAvgPool,
	"GlobalAveragePool": lowerFwGlobalAvgPool,
	"MatMul":            lowerFwMatMul,
	"BiasAdd":           lowerFwBiasAdd,
	"Add":               lowerFwSame(2),
	"Sub":               lowerFwSame(2),
	"Mul":               lowerFwSame(2),
	"RealDiv":           lowerFwDiv,
	"Pow":               lowerFwPow,
	"Maximum":           lowerFwSame(2),
	"Minimum":           lowerFwSame(2),
	"Equal":             lowerFwSame(2),
	"Greater":           lowerFwSame(2),
	"Less":              lowerFwSame(2),
	"LogicalAnd":        lowerFwSame(2),
	"LogicalOr":         lowerFwSame(2),
	"Select":            lowerFwSame(3),
	"ReLU":              lowerFwSame(1),
	"ReLU6":             lowerFwSame(1),
	"Sigmoid":           lowerFwSame(1),
	"Tanh":              lowerFwSame(1),
	"HSwish":            lowerFwSame(1),
	"HSigmoid":          lowerFwHSigmoid,
	"Exp":               lowerFwSame(1),
	"Log":               lowerFwSame(1),
	"Sqrt":              lowerFwSame(1),
	"Rsqrt":             lowerFwSame(1),
	"Erf":               lowerFwSame(1),
	"Abs":               lowerFwSame(1),
	"Neg":               lowerFwSame(1),
	"Reciprocal":        lowerFwSame(1),
	"Square":            lowerFwSame(1),
	"Floor":             lowerFwSame(1),
	"Ceil":              lowerFwSame(1),
	"Sin":               lowerFwSame(1),
	"Cos":               lowerFwSame(1),
	"LogicalNot":        lowerFwSame(1),
	"ReduceMean":        lowerFwReduce,
	"ReduceSum":         lowerFwReduce,
	"ReduceMax":         lowerFwReduce,
	"ReduceMin":         lowerFwReduce,
	"ReduceProd":        lowerFwReduce,
	"Transpose":         lowerFwTranspose,
	"Softmax":           lowerFwSoftmax,
	"Gather":            lowerFwGather,
	"Concat":            lowerFwConcat,
	"Slice":             lowerFwSlice,
	"Squeeze":           lowerFwSqueeze,
	"Unsqueeze":         lowerFwToShape,
	"Reshape":           lowerFwToShape,
	"Flatten":           lowerFwToShape,
	"Cast":              lowerFwCast,
	"BatchNorm":         lowerFwBatchNorm,
	"LayerNorm":         lowerFwLayerNorm,
	"Split":             lowerFwSplit,
	"Argmax":            lowerFwArg("ArgMaxExt"),
	"Elu":               lowerFwElu,
	"GeLU":              lowerFwGeLU,
	opPadV3:             lowerFwPad,
}

// lowerFwArg: ArgMaxExt(input, dim, keepdim), int64 indices as ONNX's (MindSpore
// 2.7.2 has no CPU kernel for ArgMinExt: ArgMin keeps ArgMinFusion); the
// first extreme index (select_last_index=1 is not expressible).
func lowerFwArg(prim string) lowerFunc {
	return func(c *lowerCtx) (*msNode, error) {
		n := c.n
		if !elemInputs(n, 1) || !elemOnlyAttrs(n, "axis", "keepdims", "select_last_index") || n.Attrs.Int("select_last_index", 0) != 0 {
			return nil, errNoPrimitive
		}
		return fw(prim, n.Inputs[0]).with(vInt(n.Attrs.Int("axis", 0)), vBool(n.Attrs.Int("keepdims", 1) != 0)), nil
	}
}

// lowerFwGeLU: MindSpore's GeLU is the tanh approximation (what nn.GELU()
// exports); the exact (erf) form is split into its definition
// (splitGeLU).
func lowerFwGeLU(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !elemInputs(n, 1) || !elemOnlyAttrs(n, "approximate") || n.Attrs.String("approximate", "none") != "tanh" {
		return nil, errNoPrimitive
	}
	return fw("GeLU", n.Inputs[0]), nil
}

// lowerFwElu: Elu(x, alpha).
func lowerFwElu(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !elemInputs(n, 1) || !elemOnlyAttrs(n, "alpha") {
		return nil, errNoPrimitive
	}
	return fw("Elu", n.Inputs[0]).with(vFloat(float32(n.Attrs.Float("alpha", 1)))), nil
}

// lowerFwSplit: Split(x, axis, output_num) cuts equal parts only (SplitV's
// size_splits is not an op_def argument of Split).
func lowerFwSplit(c *lowerCtx) (*msNode, error) {
	n := c.n
	x := c.in(0)
	if !attrsOnly(n, "axis", "num_outputs") || x == nil || !x.ShapeKnown() || len(n.Outputs) == 0 {
		return nil, errNoPrimitive
	}
	r := int64(len(x.Shape))
	axis := n.Attrs.Int("axis", 0)
	if axis < -r || axis >= r {
		return nil, errNoPrimitive
	}
	a := axis
	if a < 0 {
		a += r
	}
	for _, o := range n.Outputs {
		if o == nil || !o.ShapeKnown() || o.Shape[a]*int64(len(n.Outputs)) != x.Shape[a] {
			return nil, errNoPrimitive
		}
	}
	m := fw("Split", x).with(vInt(axis), vInt(int64(len(n.Outputs))))
	m.tuple = true
	return m, nil
}

// opPadV3 is the IR op of the PadV3 piece a split MaxPool makes; it exists
// only while the framework form is written.
const opPadV3 = "gkconv.framework.PadV3"

// fw starts a PRIMITIVE_FUNCTION node of prim over the tensor inputs ins.
func fw(prim string, ins ...*ir.Value) *msNode {
	return &msNode{prim: prim, inputs: ins, primFunc: true}
}

func vInt(v int64) *pb.AttributeProto     { return aInt("value", v) }
func vBool(v bool) *pb.AttributeProto     { return aBool("value", v) }
func vFloat(v float32) *pb.AttributeProto { return aFloat("value", v) }
func vInts(v ...int64) *pb.AttributeProto { return aInts("value", v...) }

// with appends Constant value-node inputs (scalars, tuples) after the
// inputs so far.
func (m *msNode) with(vals ...*pb.AttributeProto) *msNode {
	if m.values == nil {
		m.values = map[*ir.Value]*pb.AttributeProto{}
	}
	for _, a := range vals {
		ph := &ir.Value{Name: "value"}
		m.values[ph] = a
		m.inputs = append(m.inputs, ph)
	}
	return m
}

func lowerFwSame(inputs int) lowerFunc {
	return func(c *lowerCtx) (*msNode, error) {
		n := c.n
		if len(n.Attrs) > 0 || len(n.Inputs) != inputs || len(n.Outputs) != 1 {
			return nil, errNoPrimitive
		}
		for _, v := range n.Inputs {
			if v == nil {
				return nil, errNoPrimitive
			}
		}
		return fw(n.Op, n.Inputs...), nil
	}
}

// lowerFwDiv: MindSpore's Div is true division; the IR's integer division
// truncates, so only floats.
func lowerFwDiv(c *lowerCtx) (*msNode, error) {
	m, err := lowerFwSame(2)(c)
	if err != nil || !c.n.Inputs[0].DType.IsFloat() {
		return nil, errNoPrimitive
	}
	m.prim = "Div"
	return m, nil
}

// lowerFwPow: Pow takes one dtype for both operands (pow_op.yaml dtype_group).
func lowerFwPow(c *lowerCtx) (*msNode, error) {
	m, err := lowerFwSame(2)(c)
	if err != nil || c.n.Inputs[0].DType != c.n.Inputs[1].DType || !c.n.Inputs[0].DType.IsFloat() {
		return nil, errNoPrimitive
	}
	return m, nil
}

// lowerFwHSigmoid: MindSpore's HSigmoid is relu6(x+3)/6, ONNX HardSigmoid
// with alpha 1/6 and beta 0.5 only.
func lowerFwHSigmoid(c *lowerCtx) (*msNode, error) {
	n := c.n
	alpha, beta := n.Attrs.Float("alpha", 0.2), n.Attrs.Float("beta", 0.5)
	if len(n.Inputs) != 1 || math.Abs(alpha-1.0/6) > 1e-7 || beta != 0.5 {
		return nil, errNoPrimitive
	}
	return fw("HSigmoid", n.Inputs[0]), nil
}

func lowerFwConv2D(c *lowerCtx) (*msNode, error) {
	if len(c.n.Inputs) != 2 || c.n.Attrs.Has(ir.AttrActivation) {
		return nil, errNoPrimitive // split first (frameworkPieces)
	}
	return lowerCoreConv2D(c)
}

// lowerFwMaxPool: MaxPool (attribute form) without padding; padded and
// ceil_mode pools are split into PadV3(-inf) + MaxPool (frameworkPieces).
func lowerFwMaxPool(c *lowerCtx) (*msNode, error) {
	n := c.n
	if n.Attrs.String("auto_pad", "NOTSET") == "SAME_UPPER" && n.Attrs.Int("ceil_mode", 0) == 0 && !n.Attrs.Has("dilations") && !n.Attrs.Has("pads") {
		// MindSpore's SAME puts the odd padding at the end, as SAME_UPPER
		// (what mindspore.export writes for nn.MaxPool2d(pad_mode='same')).
		k, ok1 := twoInts(n, "kernel_shape", 0)
		s, ok2 := twoInts(n, "strides", 1)
		if !ok1 || !ok2 || len(n.Inputs) != 1 || len(c.in(0).Shape) != 4 {
			return nil, errNoPrimitive
		}
		return corePool(n, k, s, "SAME"), nil
	}
	return lowerCorePool(c)
}

// lowerFwAvgPool: AvgPool(x, kernel_size, strides, pad_mode, data_format)
// without padding (a padded average depends on count_include_pad).
func lowerFwAvgPool(c *lowerCtx) (*msNode, error) {
	k, s, ok := unpaddedPool(c)
	if !ok {
		return nil, errNoPrimitive
	}
	return fw("AvgPool", c.n.Inputs[0]).with(vInts(k...), vInts(s...), vInt(msPadModeValid), vInt(msFormatNCHW)), nil
}

// lowerFwGlobalAvgPool: MindSpore has no global pooling primitive; its own
// form of the mean over the spatial axes is ReduceMean(x, (2, ...), True).
func lowerFwGlobalAvgPool(c *lowerCtx) (*msNode, error) {
	n := c.n
	x := c.in(0)
	if x == nil || len(n.Attrs) != 0 || len(n.Inputs) != 1 || len(x.Shape) < 3 {
		return nil, errNoPrimitive
	}
	axes := make([]int64, 0, len(x.Shape)-2)
	for a := 2; a < len(x.Shape); a++ {
		axes = append(axes, int64(a))
	}
	return fw("ReduceMean", x).with(vInts(axes...), vBool(true)), nil
}

// lowerFwMatMul: MatMul(x1, x2, transpose_a, transpose_b) for 2-D operands,
// BatchMatMul for equal ranks above 2, MatMulExt (NumPy matmul) otherwise
// without transposes. Bias and activation are split off first.
func lowerFwMatMul(c *lowerCtx) (*msNode, error) {
	n := c.n
	if len(n.Inputs) != 2 || n.Inputs[0] == nil || n.Inputs[1] == nil || len(n.Outputs) != 1 {
		return nil, errNoPrimitive
	}
	for k := range n.Attrs {
		if k != "transpose_a" && k != "transpose_b" && k != "pack_b" {
			return nil, errNoPrimitive
		}
	}
	a, b := n.Inputs[0], n.Inputs[1]
	ta, tb := n.Attrs.Int("transpose_a", 0) != 0, n.Attrs.Int("transpose_b", 0) != 0
	ra, rb := len(a.Shape), len(b.Shape)
	switch {
	case a.Shape == nil || b.Shape == nil:
		return nil, errNoPrimitive
	case ra == 2 && rb == 2:
		return fw("MatMul", a, b).with(vBool(ta), vBool(tb)), nil
	case ra == rb && ra > 2 && slices.Equal(a.Shape[:ra-2], b.Shape[:rb-2]):
		// MindSpore 2.7.2's CPU BatchMatMul gives garbage for batch dims
		// that only broadcast (interop: test_matmul_bcast).
		return fw("BatchMatMul", a, b).with(vBool(ta), vBool(tb)), nil
	case !ta && !tb:
		return fw("MatMulExt", a, b), nil
	}
	return nil, errNoPrimitive
}

func lowerFwBiasAdd(c *lowerCtx) (*msNode, error) {
	n := c.n
	if len(n.Inputs) != 2 || n.Attrs.String("format", "NCHW") != "NCHW" {
		return nil, errNoPrimitive
	}
	return fw("BiasAdd", n.Inputs...).with(vInt(msFormatNCHW)), nil
}

// lowerFwReduce: Reduce*(x, axis, keep_dims) with constant axes (an empty
// tuple reduces every axis); ReduceSum has a fourth input, skip_mode.
func lowerFwReduce(c *lowerCtx) (*msNode, error) {
	n := c.n
	x := c.in(0)
	if x == nil || len(n.Inputs) > 2 || !elemOnlyAttrs(n, "keepdims", "noop_with_empty_axes") {
		return nil, errNoPrimitive
	}
	keep := vBool(n.Attrs.Int("keepdims", 1) != 0)
	var m *msNode
	if axes, ok := c.optConstInts(1); ok {
		if len(axes) == 0 && n.Attrs.Int("noop_with_empty_axes", 0) != 0 {
			return nil, errNoPrimitive
		}
		m = fw(n.Op, x).with(vInts(axes...), keep)
	} else if a := c.in(1); n.Attrs.Int("noop_with_empty_axes", 0) == 0 && len(a.Shape) == 1 && a.Shape[0] > 0 {
		// Axes computed at run time: MindSpore's axis takes a tensor
		// (type_cast tensor); an empty one would differ (ONNX: all axes).
		m = fw(n.Op, x, a).with(keep)
	} else {
		return nil, errNoPrimitive
	}
	if n.Op == "ReduceSum" {
		m.with(vBool(false))
	}
	return m, nil
}

func lowerFwTranspose(c *lowerCtx) (*msNode, error) {
	n := c.n
	x := c.in(0)
	if !attrsOnly(n, "perm") || len(n.Inputs) != 1 || x == nil || x.Shape == nil {
		return nil, errNoPrimitive
	}
	perm := n.Attrs.Ints("perm", nil)
	if !n.Attrs.Has("perm") {
		r := int64(len(x.Shape))
		for i := int64(0); i < r; i++ {
			perm = append(perm, r-1-i)
		}
	}
	return fw("Transpose", x).with(vInts(perm...)), nil
}

func lowerFwSoftmax(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !attrsOnly(n, "axis") || len(n.Inputs) != 1 || n.Inputs[0] == nil {
		return nil, errNoPrimitive
	}
	return fw("Softmax", n.Inputs[0]).with(vInts(n.Attrs.Int("axis", -1))), nil
}

// lowerFwGather: Gather(params, indices, axis, batch_dims). ONNX allows
// negative indices, which MindSpore's CPU Gather does not wrap: only
// constant indices that are all non-negative, or integer indices read from
// a graph input (an embedding lookup), where the caller's ids are the
// reference's.
func lowerFwGather(c *lowerCtx) (*msNode, error) {
	n := c.n
	x, idx := c.in(0), c.in(1)
	if !attrsOnly(n, "axis") || len(n.Inputs) != 2 || x == nil || idx == nil {
		return nil, errNoPrimitive
	}
	if idx.Const != nil {
		v, err := idx.Const.Int64s()
		if err != nil {
			return nil, errNoPrimitive
		}
		for _, i := range v {
			if i < 0 {
				return nil, errNoPrimitive
			}
		}
	}
	return fw("Gather", x, idx).with(vInt(n.Attrs.Int("axis", 0)), vInt(0)), nil
}

func lowerFwConcat(c *lowerCtx) (*msNode, error) {
	m, err := lowerConcat(c)
	if err != nil {
		return nil, err
	}
	m.attrs = nil
	m.primFunc = true
	return m.with(vInt(c.n.Attrs.Int("axis", 0))), nil
}

// lowerFwSlice: StridedSlice(x, begin, end, strides, begin_mask, end_mask,
// ellipsis_mask, new_axis_mask, shrink_axis_mask) over every axis.
func lowerFwSlice(c *lowerCtx) (*msNode, error) {
	sl, ok := coreSliceArgs(c)
	if !ok {
		return nil, errNoPrimitive
	}
	return fw("StridedSlice", c.n.Inputs[0]).with(vInts(sl.begin...), vInts(sl.end...), vInts(sl.strides...),
		vInt(sl.beginMask), vInt(sl.endMask), vInt(0), vInt(0), vInt(0)), nil
}

func lowerFwSqueeze(c *lowerCtx) (*msNode, error) {
	n := c.n
	x := c.in(0)
	if len(n.Attrs) > 0 || x == nil || len(n.Inputs) > 2 {
		return nil, errNoPrimitive
	}
	axes, ok := c.optConstInts(1)
	if !ok || c.in(1) != nil && len(axes) == 0 {
		return nil, errNoPrimitive // an empty axes input; the empty tuple means "all"
	}
	return fw("Squeeze", x).with(vInts(axes...)), nil
}

// lowerFwToShape: Reshape, Unsqueeze and Flatten as Reshape(x, shape) to
// the node's static output shape (MindSpore's Reshape has no ONNX "0 copies
// the input dim").
func lowerFwToShape(c *lowerCtx) (*msNode, error) {
	n := c.n
	x := c.in(0)
	if x == nil || len(n.Outputs) != 1 || !n.Outputs[0].ShapeKnown() {
		return nil, errNoPrimitive
	}
	return fw("Reshape", x).with(vInts(n.Outputs[0].Shape...)), nil
}

func lowerFwCast(c *lowerCtx) (*msNode, error) {
	to, ok := castTarget(c)
	if !ok {
		return nil, errNoPrimitive
	}
	return fw("Cast", c.n.Inputs[0]).with(vInt(to)), nil
}

// lowerFwBatchNorm: BatchNorm(x, scale, bias, mean, variance, is_training
// False, epsilon, momentum, NCHW), outputs (y, and four statistics).
func lowerFwBatchNorm(c *lowerCtx) (*msNode, error) {
	m, err := lowerBatchNorm(c)
	if err != nil {
		return nil, err
	}
	n := c.n
	if len(m.inputs[0].Shape) != 4 && len(m.inputs[0].Shape) != 2 {
		return nil, errNoPrimitive
	}
	m.prim, m.attrs, m.primFunc = "BatchNorm", nil, true
	return m.with(vBool(false), vFloat(float32(n.Attrs.Float("epsilon", 1e-5))), vFloat(0.1), vInt(msFormatNCHW)), nil
}

// lowerFwLayerNorm: LayerNorm(x, gamma, beta, begin_norm_axis,
// begin_params_axis, epsilon), outputs (y, mean, variance).
func lowerFwLayerNorm(c *lowerCtx) (*msNode, error) {
	m, err := lowerLayerNorm(c)
	if err != nil || len(m.inputs) != 3 {
		return nil, errNoPrimitive // MindSpore's LayerNorm needs beta
	}
	n := c.n
	axis := n.Attrs.Int("axis", -1)
	m.prim, m.attrs, m.primFunc = "LayerNorm", nil, true
	return m.with(vInt(axis), vInt(axis), vFloat(float32(n.Attrs.Float("epsilon", 1e-5)))), nil
}

// ---- converter_lite lowerings of op_def primitives, as inputs ----

// asPrimFunc rewrites a converter_lite lowering m of an op_def (yaml)
// primitive into MindSpore 2.7's PRIMITIVE_FUNCTION form, as MindSpore's
// loader does itself for mind_ir_version 1 files: the schema's arguments in
// order, prim_init attributes and constant scalar/tuple inputs as Constant
// value nodes, absent arguments from their upstream defaults. It returns nil
// (and m stays as it is) when an argument has no value it can give:
// MindSpore still loads such a node, only its CPU kernel selection refuses
// it. Constants the lowering made for converted inputs are dropped.
func (c *lowerCtx) asPrimFunc(m *msNode) *msNode {
	if m == nil || m.primFunc || m.core || m.pack != nil || m.prim == "Custom" {
		return nil
	}
	s, ok := LookupPrim(m.prim)
	if !ok || !strings.HasSuffix(s.Source, ".yaml") {
		return nil
	}
	attrs := map[string]*pb.AttributeProto{}
	for _, a := range m.attrs {
		name := a.GetName()
		if _, ok := s.Arg(name); !ok && name != "input_names" && name != "output_names" {
			// An attribute MindSpore's primitive has no argument for
			// (size_splits, fmk_type ONNX, mode...) carries meaning the
			// op_def form would drop.
			return nil
		}
		attrs[name] = a
	}
	out := &msNode{prim: m.prim, outs: m.outs, tuple: m.tuple, nodeAttrs: m.nodeAttrs, primFunc: true}
	var dropped []*ir.Value
	next := 0
	for _, arg := range s.Args {
		if arg.Form == FormInput {
			if next >= len(m.inputs) {
				if a, ok := attrs[arg.Name]; ok { // converter_lite keeps it as an attribute
					out.with(attrAsValue(a))
					continue
				}
				if arg.Default == "None" {
					out.inputs = append(out.inputs, nil)
					continue
				}
				v, ok := defaultValue(arg)
				if !ok {
					return nil
				}
				out.with(v)
				continue
			}
			in := m.inputs[next]
			next++
			if arg.Type != "tensor" && in != nil && in.Const != nil && !strings.HasPrefix(arg.Type, "tensor") {
				v, ok := constValue(arg, in.Const)
				if !ok {
					return nil
				}
				out.with(v)
				dropped = append(dropped, in)
				continue
			}
			out.inputs = append(out.inputs, in)
			continue
		}
		if a, ok := attrs[arg.Name]; ok {
			out.with(attrAsValue(a))
			continue
		}
		v, ok := defaultValue(arg)
		if !ok {
			return nil
		}
		out.with(v)
	}
	if next != len(m.inputs) {
		return nil // more inputs than the schema has arguments
	}
	for _, d := range dropped {
		for i, e := range c.gw.extra {
			if e == d {
				c.gw.extra = append(c.gw.extra[:i], c.gw.extra[i+1:]...)
				break
			}
		}
	}
	return out
}

// attrAsValue is attribute a as a Constant node's value.
func attrAsValue(a *pb.AttributeProto) *pb.AttributeProto {
	v := proto.Clone(a).(*pb.AttributeProto)
	v.Name = ptr("value")
	return v
}

// constValue is a constant tensor input as the value node of a scalar or
// tuple argument.
func constValue(arg PrimArg, t *ir.Tensor) (*pb.AttributeProto, bool) {
	switch {
	case arg.Type == "int" || arg.Type == "bool" || arg.Type == "float":
		if t.NumElements() != 1 {
			return nil, false
		}
		if arg.Type == "float" {
			f, err := t.Float64s()
			if err != nil {
				return nil, false
			}
			return vFloat(float32(f[0])), true
		}
		v, err := t.Int64s()
		if err != nil {
			return nil, false
		}
		if arg.Type == "bool" {
			return vBool(v[0] != 0), true
		}
		return vInt(v[0]), true
	case strings.HasPrefix(arg.Type, "tuple[int]") || strings.HasPrefix(arg.Type, "list[int]"):
		v, err := t.Int64s()
		if err != nil || len(t.Shape) > 1 {
			return nil, false
		}
		return vInts(v...), true
	}
	return nil, false
}

// defaultValue is an absent argument's upstream default as a value node,
// for the plain literals ("False", "-1", "1e-5", "()", "(0,)", "None").
func defaultValue(arg PrimArg) (*pb.AttributeProto, bool) {
	d := arg.Default
	switch {
	case d == "":
		return nil, false
	case d == "None":
		return &pb.AttributeProto{Name: ptr("value"), Type: pb.AttributeProto_NONE.Enum()}, true
	case d == "False" || d == "false":
		return vBool(false), true
	case d == "True" || d == "true":
		return vBool(true), true
	case strings.HasPrefix(d, "("):
		var vs []int64
		for _, f := range strings.FieldsFunc(strings.Trim(d, "()"), func(r rune) bool { return r == ',' || r == ' ' }) {
			x, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				return nil, false
			}
			vs = append(vs, x)
		}
		return vInts(vs...), true
	}
	switch arg.Type {
	case "int":
		if x, err := strconv.ParseInt(d, 10, 64); err == nil {
			return vInt(x), true
		}
	case "float":
		if x, err := strconv.ParseFloat(strings.TrimSuffix(d, "f"), 32); err == nil {
			return vFloat(float32(x)), true
		}
	}
	return nil, false
}
