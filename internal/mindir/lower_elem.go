package mindir

// Elementwise, broadcast and reduction ops: lowering (IR -> MindSpore
// primitive) and lifting (the primitive -> IR).
//
// Each lowering writes the primitive converter_lite's ONNX parser writes for
// the op (mindspore-lite/tools/converter/parser/onnx/*), with MindSpore's
// attribute names and value types (ops/infer/cxx_api, ops/infer,
// ops/op_def/yaml) and the values MindSpore's semantics need. An instance
// the primitive cannot express exactly returns errNoPrimitive and is written
// as Custom(type="gkconv.<op>") (customFallback). The cases:
//
//	IR op            primitive        attributes
//	GeLU             Activation       activation_type=GELU, approximate (tanh only)
//	HSigmoid         Activation       activation_type=HSIGMOID, alpha; only alpha=1/6, beta=0.5
//	LeakyReLU, Elu   Activation       activation_type, alpha
//	ReLU             Activation       activation_type=RELU, min_val=0, max_val=FLT_MAX
//	Sigmoid, Tanh, Softplus  Activation  activation_type
//	Exp              ExpFusion        base=-1, scale=1, shift=0
//	CeLU             CeLU             alpha
//	SeLU             SeLU             (ONNX default alpha/gamma only)
//	Round, Identity, LogicalXor, Maximum, Minimum (2 inputs)  same name
//	Log              Log              base=-1, scale=1, shift=0 (MindSpore's labels)
//	Cast             Cast(x, to)      to: int32 scalar parameter holding the MindSpore TypeId
//	Dropout          Dropout          keep_prob=1 (inference identity), Seed0, Seed1; outputs (y, mask)
//	Clip             Clip             min, max (FLOAT; ±inf for an absent bound)
//	Add/Sub/Mul      AddFusion/...    activation_type=NO_ACTIVATION
//	RealDiv          DivFusion        activation_type, original_op_name (float only)
//	Pow              PowFusion        scale=1, shift=0 (float only)
//	Mod              Mod (fmod=1), FloorMod (fmod=0, integers)
//	AddN             Eltwise          mode=SUM (2 inputs: Lite's Eltwise is binary)
//	PReLU            PReLUFusion      channel_shared, slope
//	Select           Select           (inputs of one shape; no broadcasting)
//	BiasAdd          BiasAdd          data_format (Format enum)
//	BroadcastTo      BroadcastTo      shape (MindSpore target shape, -1 = keep)
//	Reduce*          ReduceFusion     mode, keep_dims, reduce_to_end, coeff; axes input
//	Argmax, Argmin   ArgMaxFusion/... axis, keep_dims, top_k=1, out_max_value=false
//
// ThresholdedReLU and Mean have no converter_lite ONNX parser (and no
// MindSpore Lite primitive computing them): they are not in the table and
// are always written as Custom.
//
// The lifts of these primitives are in lift_elem.go.

import (
	"math"
	"slices"

	"gkconv/internal/ir"
	pb "gkconv/internal/mindir/mindirpb"
)

// MindSpore's ActivationType (mindapi/base/types.h).
const (
	elemActNoActivation = 0
	elemActReLU         = 1
	elemActSigmoid      = 2
	elemActReLU6        = 3
	elemActElu          = 4
	elemActLeakyReLU    = 5
	elemActAbs          = 6
	elemActSoftsign     = 8
	elemActSoftplus     = 9
	elemActTanh         = 10
	elemActSeLU         = 11
	elemActHSwish       = 12
	elemActHSigmoid     = 13
	elemActLinear       = 15
	elemActHardTanh     = 16
	elemActSign         = 17
	elemActSwish        = 18
	elemActGeLU         = 19
	elemActSiLU         = 23
)

// MindSpore's EltwiseMode.
const (
	elemEltwiseProd = 0
	elemEltwiseSum  = 1
	elemEltwiseMax  = 2
)

// elemReduceModes is MindSpore's ReduceMode for each IR reduction.
var elemReduceModes = map[string]int64{
	"ReduceMean": 0, "ReduceMax": 1, "ReduceMin": 2, "ReduceProd": 3, "ReduceSum": 4, "ReduceSumSquare": 5,
	"ReduceL2": 8, "ReduceL1": 9, "ReduceLogSum": 10, "ReduceLogSumExp": 11,
}

// ONNX's SeLU constants (float32), which MindSpore's SeLU uses.
const (
	elemSeluAlpha = 1.67326319217681884765625
	elemSeluGamma = 1.05070102214813232421875
)

var lowerElemTable = elemWithReductions(map[string]lowerFunc{
	"GeLU":        lowerGeLU,
	"HSigmoid":    lowerHSigmoid,
	"LeakyReLU":   lowerAlphaActivation(elemActLeakyReLU, 0.01),
	"Elu":         lowerAlphaActivation(elemActElu, 1),
	"Softplus":    lowerUnaryActivation(elemActSoftplus),
	"ReLU":        lowerUnaryActivation(elemActReLU),
	"Sigmoid":     lowerUnaryActivation(elemActSigmoid),
	"Tanh":        lowerUnaryActivation(elemActTanh),
	"Exp":         lowerExp,
	"CeLU":        lowerCeLU,
	"SeLU":        lowerSeLU,
	"Round":       lowerElemPlain("Round"),
	"Identity":    lowerElemPlain("Identity"),
	"LogicalXor":  lowerElemPlain("LogicalXor"),
	"Log":         lowerLog,
	"Cast":        lowerCast,
	"Dropout":     lowerDropout,
	"Clip":        lowerClip,
	"Add":         lowerArith("AddFusion"),
	"Sub":         lowerArith("SubFusion"),
	"Mul":         lowerArith("MulFusion"),
	"RealDiv":     lowerArith("DivFusion"),
	"Pow":         lowerPow,
	"Mod":         lowerMod,
	"Maximum":     lowerMinMax,
	"Minimum":     lowerMinMax,
	"AddN":        lowerAddN,
	"PReLU":       lowerPReLU,
	"Select":      lowerSelect,
	"BiasAdd":     lowerBiasAdd,
	"BroadcastTo": lowerBroadcastTo,
	"Argmax":      lowerArg("ArgMaxFusion"),
	"Argmin":      lowerArg("ArgMinFusion"),
})

func elemWithReductions(t map[string]lowerFunc) map[string]lowerFunc {
	for op := range elemReduceModes {
		t[op] = lowerReduce
	}
	return t
}

// ---- lowering helpers ----

// elemOnlyAttrs reports whether n has no attributes but the named ones.
func elemOnlyAttrs(n *ir.Node, allowed ...string) bool {
	for k := range n.Attrs {
		ok := false
		for _, a := range allowed {
			ok = ok || k == a
		}
		if !ok {
			return false
		}
	}
	return true
}

// elemInputs reports whether n has exactly k inputs, none absent.
func elemInputs(n *ir.Node, k int) bool {
	if len(n.Inputs) != k {
		return false
	}
	for _, in := range n.Inputs {
		if in == nil {
			return false
		}
	}
	return true
}

// elemF32Exact reports whether v is a float32 value (or an infinity).
func elemF32Exact(v float64) bool {
	return float64(float32(v)) == v
}

// elemConstScalar reads a constant one-element input as a float64.
func elemConstScalar(v *ir.Value) (float64, bool) {
	if v == nil || v.Const == nil || v.Const.NumElements() != 1 || v.Const.DType == ir.String {
		return 0, false
	}
	f, err := v.Const.Float64s()
	if err != nil || len(f) != 1 {
		return 0, false
	}
	return f[0], true
}

func elemActivation(n *ir.Node, typ int64, attrs ...*pb.AttributeProto) *msNode {
	return &msNode{prim: "Activation", inputs: n.Inputs, attrs: append([]*pb.AttributeProto{aInt("activation_type", typ)}, attrs...)}
}

// lowerElemPlain writes a node without attributes as the same-name primitive
// (converter_lite: ops::Round, ops::Identity, ops::LogicalXor).
func lowerElemPlain(prim string) lowerFunc {
	return func(c *lowerCtx) (*msNode, error) {
		n := c.n
		if len(n.Attrs) > 0 || len(n.Inputs) == 0 {
			return nil, errNoPrimitive
		}
		for _, in := range n.Inputs {
			if in == nil {
				return nil, errNoPrimitive
			}
		}
		return &msNode{prim: prim, inputs: n.Inputs}, nil
	}
}

// ---- activations ----

// lowerGeLU: OnnxGeluParser writes Activation(GELU) without approximate,
// which MindSpore reads as false (the erf form); the tanh form sets it.
func lowerGeLU(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !elemInputs(n, 1) || !elemOnlyAttrs(n, "approximate") {
		return nil, errNoPrimitive
	}
	switch n.Attrs.String("approximate", "none") {
	case "none":
		return elemActivation(n, elemActGeLU), nil
	case "tanh":
		return elemActivation(n, elemActGeLU, aBool("approximate", true)), nil
	}
	return nil, errNoPrimitive
}

// lowerHSigmoid: MindSpore's HSIGMOID is relu6(x+3)/6 whatever alpha says,
// so only ONNX HardSigmoid with alpha=1/6, beta=0.5 is expressible (the
// parser writes ONNX's alpha; beta has no attribute).
func lowerHSigmoid(c *lowerCtx) (*msNode, error) {
	n := c.n
	alpha, beta := n.Attrs.Float("alpha", 0.2), n.Attrs.Float("beta", 0.5)
	if !elemInputs(n, 1) || !elemOnlyAttrs(n, "alpha", "beta") || float32(alpha) != float32(1.0/6) || beta != 0.5 {
		return nil, errNoPrimitive
	}
	return elemActivation(n, elemActHSigmoid, aFloat("alpha", float32(alpha))), nil
}

// lowerAlphaActivation: LeakyReLU and Elu as Activation with alpha, written
// always (the parser copies ONNX's alpha only when present, but MindSpore
// Lite's default alpha is not ONNX's).
func lowerAlphaActivation(typ int64, def float64) lowerFunc {
	return func(c *lowerCtx) (*msNode, error) {
		n := c.n
		alpha := n.Attrs.Float("alpha", def)
		if !elemInputs(n, 1) || !elemOnlyAttrs(n, "alpha") {
			return nil, errNoPrimitive
		}
		return elemActivation(n, typ, aFloat("alpha", float32(alpha))), nil
	}
}

// lowerUnaryActivation: ReLU, Sigmoid, Tanh and Softplus as Activation
// (onnx_activation_parser.cc; RELU with min_val 0 and max_val FLT_MAX, as
// the parser sets them).
func lowerUnaryActivation(typ int64) lowerFunc {
	return func(c *lowerCtx) (*msNode, error) {
		n := c.n
		if !elemInputs(n, 1) || len(n.Attrs) > 0 {
			return nil, errNoPrimitive
		}
		if typ == elemActReLU {
			return elemActivation(n, typ, aFloat("min_val", 0), aFloat("max_val", math.MaxFloat32)), nil
		}
		return elemActivation(n, typ), nil
	}
}

// lowerExp: ExpFusion computes base^(scale*x + shift), base -1 = e; the
// parser writes base -1, scale 1, shift 0.
func lowerExp(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !elemInputs(n, 1) || len(n.Attrs) > 0 {
		return nil, errNoPrimitive
	}
	m := &msNode{prim: "ExpFusion", inputs: n.Inputs, attrs: []*pb.AttributeProto{aFloat("base", -1), aFloat("scale", 1), aFloat("shift", 0)}}
	m.attrs = append(m.attrs, names([]string{"x"}, "y")...)
	return m, nil
}

// lowerCeLU: ops::CeLU with alpha (celu_op.yaml: a float init argument).
func lowerCeLU(c *lowerCtx) (*msNode, error) {
	n := c.n
	alpha := n.Attrs.Float("alpha", 1)
	if !elemInputs(n, 1) || !elemOnlyAttrs(n, "alpha") || alpha == 0 {
		return nil, errNoPrimitive
	}
	return &msNode{prim: "CeLU", inputs: n.Inputs, attrs: []*pb.AttributeProto{aFloat("alpha", float32(alpha))}}, nil
}

// lowerSeLU: ops::SeLU has no attributes (its constants are ONNX's
// defaults); other alpha/gamma are not expressible.
func lowerSeLU(c *lowerCtx) (*msNode, error) {
	n := c.n
	alpha, gamma := n.Attrs.Float("alpha", elemSeluAlpha), n.Attrs.Float("gamma", elemSeluGamma)
	if !elemInputs(n, 1) || !elemOnlyAttrs(n, "alpha", "gamma") || float32(alpha) != float32(elemSeluAlpha) || float32(gamma) != float32(elemSeluGamma) {
		return nil, errNoPrimitive
	}
	return &msNode{prim: "SeLU", inputs: n.Inputs, attrs: names([]string{"x"})}, nil
}

// lowerLog: ops::Log with the labels MindSpore's Log carries (log_op.yaml:
// log_base(scale*x + shift), base -1 = e).
func lowerLog(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !elemInputs(n, 1) || len(n.Attrs) > 0 {
		return nil, errNoPrimitive
	}
	return &msNode{prim: "Log", inputs: n.Inputs, attrs: []*pb.AttributeProto{
		aFloat("base", -1), aFloat("scale", 1), aFloat("shift", 0), aStr("cust_aicpu", "Log")}}, nil
}

// ---- Cast ----

// elemTypeID is the MindSpore TypeId of an IR dtype (the inverse of the
// reader's mindTypeIDs).
func elemTypeID(dt ir.DType) (int64, bool) {
	for id, d := range mindTypeIDs {
		if d == dt {
			return id, true
		}
	}
	return 0, false
}

// castTarget is the MindSpore TypeId a Cast node casts to, when both its
// input and target dtypes have one (string, complex, bfloat16 do not).
func castTarget(c *lowerCtx) (int64, bool) {
	n := c.n
	if !elemInputs(n, 1) || !elemOnlyAttrs(n, "to", "saturate") || !n.Attrs.Has("to") {
		return 0, false
	}
	to, ok := elemTypeID(ir.DType(n.Attrs.Int("to", 0)))
	if !ok {
		return 0, false
	}
	if dt := n.Inputs[0].DType; dt != ir.Undefined {
		if _, ok := elemTypeID(dt); !ok {
			return 0, false
		}
	}
	return to, true
}

// lowerCast: converter_lite's Cast takes the target as its second input, an
// int32 scalar parameter holding the MindSpore TypeId (InputAdjust moves the
// parser's "to" there). Unlike the parser, float64 stays float64.
func lowerCast(c *lowerCtx) (*msNode, error) {
	n := c.n
	to, ok := castTarget(c)
	if !ok {
		return nil, errNoPrimitive
	}
	t := ir.NewTensor(ir.Int32, []int64{})
	putInts(t, []int64{to})
	return &msNode{prim: "Cast", inputs: []*ir.Value{n.Inputs[0], c.konst("to", t)}}, nil
}

// ---- Dropout ----

// lowerDropout: the IR's Dropout is ONNX's at inference, the identity
// (its mask all true); MindSpore's Dropout (dropout_op.yaml: x alone,
// keep_prob, Seed0, Seed1, outputs (output, mask)) drops at random unless
// keep_prob is 1, so keep_prob is 1, not 1 - ratio (converter_lite writes
// the ratio there, which MindSpore Lite's identity kernel ignores). ONNX's
// seed goes to Seed0. Training (training_mode a constant true) is random
// unless the ratio is 0: those instances are left to the fallback, as is a
// training_mode that is not a constant.
func lowerDropout(c *lowerCtx) (*msNode, error) {
	n := c.n
	x := c.in(0)
	if x == nil || len(n.Inputs) > 3 || !elemOnlyAttrs(n, "seed") || len(n.Outputs) > 2 || len(n.Outputs) == 0 {
		return nil, errNoPrimitive
	}
	if tm := c.in(2); tm != nil {
		train, ok := elemConstScalar(tm)
		if !ok {
			return nil, errNoPrimitive
		}
		if train != 0 {
			if r, ok := elemConstScalar(c.in(1)); !ok || r != 0 {
				return nil, errNoPrimitive // random dropout
			}
		}
	}
	m := &msNode{prim: "Dropout", inputs: []*ir.Value{x}, tuple: true, attrs: []*pb.AttributeProto{
		aFloat("keep_prob", 1), aInt("Seed0", n.Attrs.Int("seed", 0)), aInt("Seed1", 0)}}
	m.outs = []msOut{{v: n.Outputs[0]}}
	if len(n.Outputs) == 2 && n.Outputs[1] != nil {
		m.outs = append(m.outs, msOut{v: n.Outputs[1]})
	} else {
		// MindSpore's mask has x's type; the reader tells ONNX's bool mask from it.
		m.outs = append(m.outs, msOut{dt: x.DType, shape: x.Shape})
	}
	return m, nil
}

// ---- Clip ----

// lowerClip: ops::Clip with min/max FLOAT attributes (onnx_clip_parser.cc
// reads them from the constant inputs, which stay connected). An absent
// bound is ±inf (the parser's ±FLT_MAX would clip infinities). Bounds must
// be constants a float32 holds exactly, min < max (MindSpore Lite's Clip
// fails otherwise; its kernel reads connected bound inputs over the
// attributes, so run-time bounds are left to the fallback too); a missing
// min before a present max drops the bound inputs (the attributes carry
// both).
func lowerClip(c *lowerCtx) (*msNode, error) {
	n := c.n
	x := c.in(0)
	if x == nil || len(n.Inputs) > 3 || len(n.Attrs) > 0 {
		return nil, errNoPrimitive
	}
	bound := func(v *ir.Value, def float64) (float64, bool) {
		if v == nil {
			return def, true
		}
		f, ok := elemConstScalar(v)
		return f, ok && elemF32Exact(f) && !math.IsNaN(f)
	}
	lo, ok1 := bound(c.in(1), math.Inf(-1))
	hi, ok2 := bound(c.in(2), math.Inf(1))
	if !ok1 || !ok2 || lo >= hi {
		return nil, errNoPrimitive // MindSpore Lite's Clip refuses min >= max
	}
	inputs := []*ir.Value{x}
	if c.in(1) != nil {
		inputs = append(inputs, c.in(1))
		if c.in(2) != nil {
			inputs = append(inputs, c.in(2))
		}
	}
	return &msNode{prim: "Clip", inputs: inputs, attrs: []*pb.AttributeProto{aFloat("max", float32(hi)), aFloat("min", float32(lo))}}, nil
}

// ---- binary arithmetic ----

// lowerArith: AddFusion, SubFusion, MulFusion, DivFusion with no fused
// activation. Integer division truncates toward zero in the IR (ONNX), which
// DivFusion (RealDiv) does not promise: only float division is written.
func lowerArith(prim string) lowerFunc {
	return func(c *lowerCtx) (*msNode, error) {
		n := c.n
		if !elemInputs(n, 2) || len(n.Attrs) > 0 {
			return nil, errNoPrimitive
		}
		m := &msNode{prim: prim, inputs: n.Inputs, attrs: []*pb.AttributeProto{aInt("activation_type", elemActNoActivation)}}
		switch prim {
		case "DivFusion":
			if !n.Inputs[0].DType.IsFloat() || n.Inputs[1].DType != n.Inputs[0].DType {
				return nil, errNoPrimitive
			}
			m.attrs = append(m.attrs, aStr("original_op_name", "RealDiv"))
		case "AddFusion", "MulFusion":
			m.attrs = append(m.attrs, names([]string{"x", "y"})...)
		}
		return m, nil
	}
}

// lowerPow: PowFusion computes (scale*x + shift)^y; scale 1, shift 0. Only
// float operands of one dtype: MindSpore's Pow takes one dtype for both
// (pow_op.yaml dtype_group) and MindSpore Lite's PowFusion kernel is float
// only, while ONNX allows mixed and integer powers.
func lowerPow(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !elemInputs(n, 2) || len(n.Attrs) > 0 || !n.Inputs[0].DType.IsFloat() || n.Inputs[1].DType != n.Inputs[0].DType {
		return nil, errNoPrimitive
	}
	return &msNode{prim: "PowFusion", inputs: n.Inputs, attrs: []*pb.AttributeProto{aFloat("scale", 1), aFloat("shift", 0)}}, nil
}

// lowerMod: MindSpore's Mod is C fmod (the sign of the dividend: ONNX
// fmod=1); ONNX's integer fmod=0 (the sign of the divisor) is FloorMod. A
// float fmod=0 is left to the fallback: FloorMod computes x - floor(x/y)*y,
// which rounds differently from the IR's exact remainder.
func lowerMod(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !elemInputs(n, 2) || !elemOnlyAttrs(n, "fmod") || n.Inputs[0].DType != n.Inputs[1].DType {
		return nil, errNoPrimitive
	}
	if n.Attrs.Int("fmod", 0) != 0 {
		return &msNode{prim: "Mod", inputs: n.Inputs, attrs: names([]string{"x", "y"})}, nil
	}
	if !n.Inputs[0].DType.IsInt() {
		return nil, errNoPrimitive
	}
	return &msNode{prim: "FloorMod", inputs: n.Inputs}, nil
}

// lowerMinMax: MindSpore's Maximum/Minimum are binary; the IR's variadic
// forms with another input count are left to the fallback.
func lowerMinMax(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !elemInputs(n, 2) || len(n.Attrs) > 0 {
		return nil, errNoPrimitive
	}
	return &msNode{prim: n.Op, inputs: n.Inputs}, nil
}

// lowerAddN: converter_lite writes ONNX Sum as Eltwise(mode=SUM), which
// MindSpore Lite runs as a binary broadcasting Add: only two inputs.
func lowerAddN(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !elemInputs(n, 2) || len(n.Attrs) > 0 {
		return nil, errNoPrimitive
	}
	return &msNode{prim: "Eltwise", inputs: n.Inputs, attrs: []*pb.AttributeProto{aInt("mode", elemEltwiseSum)}}, nil
}

// ---- PReLU, Select, BiasAdd, BroadcastTo ----

// lowerPReLU: PReLUFusion applies one slope (channel_shared) or one slope
// per channel (axis 1). The IR's slope broadcasts numpy-style, so only a
// one-element slope or one whose only non-1 dim lands on axis 1 fits. The
// slope input stays as it is (converter_lite connects ONNX's); the slope
// attribute lists a constant float32 slope, as the parser does.
func lowerPReLU(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !elemInputs(n, 2) || len(n.Attrs) > 0 {
		return nil, errNoPrimitive
	}
	x, w := n.Inputs[0], n.Inputs[1]
	if x.Shape == nil || w.Shape == nil || len(w.Shape) > len(x.Shape) {
		return nil, errNoPrimitive
	}
	count := int64(1)
	for _, d := range w.Shape {
		if d < 0 {
			return nil, errNoPrimitive
		}
		count *= d
	}
	shared := count == 1
	if !shared {
		r := len(x.Shape)
		if r < 2 {
			return nil, errNoPrimitive
		}
		off := r - len(w.Shape)
		for i, d := range w.Shape {
			axis := off + i
			if axis == 1 {
				if x.Shape[1] >= 0 && d != x.Shape[1] {
					return nil, errNoPrimitive
				}
			} else if d != 1 {
				return nil, errNoPrimitive
			}
		}
		if off > 1 {
			return nil, errNoPrimitive // the slope does not reach axis 1
		}
	}
	m := &msNode{prim: "PReLUFusion", inputs: n.Inputs, attrs: []*pb.AttributeProto{aBool("channel_shared", shared)}}
	if w.Const != nil && w.Const.DType == ir.Float32 {
		vals := w.Const.F32()
		m.attrs = append(m.attrs, aFloats("slope", vals...))
	}
	m.attrs = append(m.attrs, names([]string{"x", "weight"})...)
	return m, nil
}

// lowerSelect: MindSpore's Select(condition, x, y) needs three inputs of one
// shape, so only that instance is written; the IR's broadcasting is left to
// the fallback. (converter_lite writes ONNX Where as MindSpore Lite's Where
// with three inputs, but MindSpore's Where primitive, ops/infer/where.h,
// takes the condition alone: the schema and MindSpore's loader see one
// input. The reader reads that form too.)
func lowerSelect(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !elemInputs(n, 3) || len(n.Attrs) > 0 {
		return nil, errNoPrimitive
	}
	for _, in := range n.Inputs {
		if !in.ShapeKnown() || !slices.Equal(in.Shape, n.Inputs[0].Shape) {
			return nil, errNoPrimitive
		}
	}
	return &msNode{prim: "Select", inputs: n.Inputs}, nil
}

// lowerBiasAdd: BiasAdd with data_format as MindSpore's Format enum
// (bias_add_op.yaml: an int init argument, str_to_enum).
func lowerBiasAdd(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !elemInputs(n, 2) || !elemOnlyAttrs(n, "format") {
		return nil, errNoPrimitive
	}
	var f int64
	switch n.Attrs.String("format", "NCHW") {
	case "NCHW":
		f = 0
	case "NHWC":
		f = 1
	default:
		return nil, errNoPrimitive
	}
	return &msNode{prim: "BiasAdd", inputs: n.Inputs, attrs: []*pb.AttributeProto{aInt("data_format", f)}}, nil
}

// lowerBroadcastTo: MindSpore's BroadcastTo takes the output shape as its
// shape attribute (the parser's form for a constant shape), -1 keeping the
// input's dim. ONNX Expand broadcasts both ways (a 1 keeps the input's dim,
// the shape may be shorter than the input), so the target is rewritten:
// padded to the output rank, each 1 over an input dim becomes -1. Needs a
// constant shape and a known input rank.
func lowerBroadcastTo(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !elemInputs(n, 2) || len(n.Attrs) > 0 {
		return nil, errNoPrimitive
	}
	x := n.Inputs[0]
	shape, ok := c.constInts(1)
	if !ok || x.Shape == nil {
		return nil, errNoPrimitive
	}
	r := max(len(shape), len(x.Shape))
	target := make([]int64, r)
	for i := range target {
		s := int64(1)
		if j := i - (r - len(shape)); j >= 0 {
			s = shape[j]
		}
		xd := int64(1)
		inX := false
		if j := i - (r - len(x.Shape)); j >= 0 {
			xd, inX = x.Shape[j], true
		}
		switch {
		case s < 0:
			return nil, errNoPrimitive
		case s == 1 && inX:
			target[i] = -1
		case s == 1:
			target[i] = 1
		default:
			if xd >= 0 && xd != 1 && xd != s {
				return nil, errNoPrimitive
			}
			target[i] = s
		}
	}
	return &msNode{prim: "BroadcastTo", inputs: []*ir.Value{x}, attrs: []*pb.AttributeProto{aInts("shape", target...)}}, nil
}

// ---- reductions ----

// lowerReduce: ReduceFusion with mode, keep_dims and the axes as its second
// input (converter_lite's InputAdjust moves the parser's axes there; an
// empty axes tensor reduces every axis). noop_with_empty_axes=1 with axes
// that are or may be empty is the identity, which ReduceFusion cannot say.
func lowerReduce(c *lowerCtx) (*msNode, error) {
	n := c.n
	x := c.in(0)
	if x == nil || len(n.Inputs) > 2 || !elemOnlyAttrs(n, "keepdims", "noop_with_empty_axes") {
		return nil, errNoPrimitive
	}
	noop := n.Attrs.Int("noop_with_empty_axes", 0) != 0
	axes := c.in(1)
	switch {
	case axes == nil || (axes.Const != nil && axes.Const.NumElements() == 0):
		if noop {
			return nil, errNoPrimitive
		}
		axes = c.konst("axes", ir.NewTensor(ir.Int32, []int64{0}))
	case axes.Const == nil:
		if noop {
			return nil, errNoPrimitive
		}
	default:
		if _, ok := c.constInts(1); !ok {
			return nil, errNoPrimitive
		}
	}
	return &msNode{prim: "ReduceFusion", inputs: []*ir.Value{x, axes}, attrs: []*pb.AttributeProto{
		aBool("keep_dims", n.Attrs.Int("keepdims", 1) != 0), aInt("mode", elemReduceModes[n.Op]),
		aBool("reduce_to_end", false), aFloat("coeff", 1)}}, nil
}

// lowerArg: ArgMaxFusion/ArgMinFusion (onnx_argmax_parser.cc: axis,
// keep_dims) with top_k 1 and out_max_value false. MindSpore returns the
// first extreme index: select_last_index=1 is not expressible. (MindSpore
// infers int32 indices; converter_lite narrows ONNX's int64 the same way.)
func lowerArg(prim string) lowerFunc {
	return func(c *lowerCtx) (*msNode, error) {
		n := c.n
		if !elemInputs(n, 1) || !elemOnlyAttrs(n, "axis", "keepdims", "select_last_index") || n.Attrs.Int("select_last_index", 0) != 0 {
			return nil, errNoPrimitive
		}
		m := &msNode{prim: prim, inputs: n.Inputs, attrs: []*pb.AttributeProto{
			aInt("axis", n.Attrs.Int("axis", 0)), aBool("keep_dims", n.Attrs.Int("keepdims", 1) != 0),
			aInt("top_k", 1), aBool("out_max_value", false)}}
		m.attrs = append(m.attrs, names([]string{"x"})...)
		return m, nil
	}
}
