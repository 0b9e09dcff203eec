package mindir

// Lifting (MindSpore primitive -> IR) of the NN primitives lower_nn.go's
// lowerings write: liftNNTable, the mnode helpers the lifts share (optional
// inputs, fused activations, format, pad mode, 2-D windows), and the lifts
// of the convolution, pool, normalization, MatMulFusion and Einsum
// primitives. The shape and data-movement lifts are in lift_shape.go.

import (
	"fmt"

	"gkconv/internal/ir"
)

// liftNNTable: the primitives above that liftCoreTable (lift_core.go) does
// not already map to the same IR (Transpose, Concat, Softmax, LogSoftmax,
// Gather, Squeeze, Shape and Size are read there), plus forms of shared
// primitives (StridedSlice with ONNX inputs, Reshape's allowzero, Flatten's
// axis) and MindSpore's LayerNorm, read by the same lift as LayerNormFusion.
var liftNNTable = map[string]func(*mnode) (any, error){
	"Conv2DFusion":          liftConv2DFusion,
	"Conv2dTransposeFusion": liftConvTransposeFusion,
	"AvgPoolFusion":         liftPoolFusion,
	"MaxPoolFusion":         liftPoolFusion,
	"FusedBatchNorm":        liftFusedBatchNorm,
	"InstanceNorm":          liftInstanceNorm,
	"LayerNormFusion":       liftLayerNorm,
	"LayerNorm":             liftLayerNorm,
	"MatMulFusion":          liftMatMulFusion,
	"Einsum":                liftEinsum,
	"Split":                 liftSplit,
	"StridedSlice":          liftStridedSlice,
	"GatherD":               liftGatherD,
	"PadFusion":             liftPadFusion,
	"TileFusion":            liftTile,
	"Tile":                  liftTile,
	"DepthToSpace":          liftDepthToSpace,
	"SpaceToDepth":          liftSpaceToDepth,
	"Reshape":               liftReshape,
	"Flatten":               liftFlatten,
	"Unsqueeze":             liftUnsqueeze,
	"Resize":                liftResize,
	"TopKFusion":            liftTopKFusion,
	"CumSum":                liftCumSum,
	"Range":                 liftRange,
	"ConstantOfShape":       liftConstantOfShape,
	"Triu":                  liftTrilu,
	"Tril":                  liftTrilu,
}

// ---- lifting ----

// optTensor returns input i as a tensor, nil when absent or None.
func (m *mnode) optTensor(i int) (*ir.Value, error) {
	if i >= len(m.ins) {
		return nil, nil
	}
	if _, none := m.ins[i].(noneVal); none {
		return nil, nil
	}
	return m.tensor(i)
}

// activation applies a fused activation_type after y.
func (m *mnode) activation(y *ir.Value) (*ir.Value, error) {
	act, err := m.intArg(-1, msActNone, "activation_type")
	if err != nil {
		return nil, err
	}
	switch act {
	case msActNone:
		return y, nil
	case msActReLU:
		return m.emit1("ReLU", nil, y), nil
	case msActReLU6:
		return m.emit1("ReLU6", nil, y), nil
	}
	return nil, unsupported("activation_type %d", act)
}

// nchwOnly refuses a format other than NCHW.
func (m *mnode) nchwOnly() error {
	f, err := m.formatArg(-1, "format", "data_format")
	if err != nil {
		return err
	}
	if f != "NCHW" {
		return unsupported("format %s", f)
	}
	return nil
}

// liftPadMode reads pad_mode; converter_lite's default is PAD.
func (m *mnode) liftPadMode() (string, error) {
	// Absent means the explicit pad list (converter_lite writes pad_mode
	// whenever it is not PAD), not the schema's VALID.
	a := m.schemaArg("pad_mode")
	if v, err := a.Value(); err != nil || v == nil {
		return "PAD", err
	}
	return a.PadMode()
}

// liftWindow sets the ONNX window attributes from MindSpore's kernel,
// stride, dilation (the names given) and pad list [top, bottom, left, right].
func (m *mnode) liftWindow(attrs ir.Attrs, strideName, dilationName, padName string) error {
	k, ok, err := m.schemaArg("kernel_size").Ints()
	if err != nil {
		return err
	}
	if !ok {
		return unsupported("no kernel_size")
	}
	k2, err := spatial2(k, "kernel_size")
	if err != nil {
		return err
	}
	attrs["kernel_shape"] = ir.IntsAttr(k2...)
	for _, p := range [][2]string{{strideName, "strides"}, {dilationName, "dilations"}} {
		if p[0] == "" {
			continue
		}
		v, ok, err := m.schemaArg(p[0]).Ints()
		if err != nil {
			return err
		}
		if !ok {
			v = []int64{1}
		}
		v2, err := spatial2(v, p[0])
		if err != nil {
			return err
		}
		attrs[p[1]] = ir.IntsAttr(v2...)
	}
	mode, err := m.liftPadMode()
	if err != nil {
		return err
	}
	switch mode {
	case "SAME":
		attrs["auto_pad"] = ir.StringAttr("SAME_UPPER")
	case "VALID":
		attrs["auto_pad"] = ir.StringAttr("VALID")
	default:
		list, ok, err := m.schemaArg(padName).Ints()
		if err != nil {
			return err
		}
		switch {
		case !ok:
			list = []int64{0, 0, 0, 0}
		case len(list) == 1:
			list = []int64{list[0], list[0], list[0], list[0]}
		case len(list) != 4:
			return unsupported("%s %v", padName, list)
		}
		attrs["pads"] = ir.IntsAttr(list[0], list[2], list[1], list[3])
	}
	return nil
}

func liftConv2DFusion(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	w, err := m.tensor(1)
	if err != nil {
		return nil, err
	}
	b, err := m.optTensor(2)
	if err != nil {
		return nil, err
	}
	if err := m.nchwOnly(); err != nil {
		return nil, err
	}
	attrs := ir.Attrs{}
	if err := m.liftWindow(attrs, "stride", "dilation", "pad_list"); err != nil {
		return nil, err
	}
	group, err := m.schemaArg("group").Int()
	if err != nil {
		return nil, err
	}
	attrs["group"] = ir.IntAttr(group)
	ins := []*ir.Value{x, w}
	if b != nil {
		ins = append(ins, b)
	}
	// RELU and RELU6 stay on the conv (ir.AttrActivation, applied by the
	// runtime's conv); msActReLU/msActReLU6 are ir.ActReLU/ActReLU6.
	// The schema's default is the enum name NO_ACTIVATION (= msActNone).
	act, err := m.schemaArg("activation_type").IntOr(msActNone)
	if err != nil {
		return nil, err
	}
	if act == msActReLU || act == msActReLU6 {
		attrs[ir.AttrActivation] = ir.IntAttr(act)
		return m.emit("Conv2D", ins, 1, attrs).Outputs[0], nil
	}
	return m.activation(m.emit("Conv2D", ins, 1, attrs).Outputs[0])
}

func liftConvTransposeFusion(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	w, err := m.tensor(1)
	if err != nil {
		return nil, err
	}
	b, err := m.optTensor(2)
	if err != nil {
		return nil, err
	}
	if err := m.nchwOnly(); err != nil {
		return nil, err
	}
	attrs := ir.Attrs{}
	if err := m.liftWindow(attrs, "stride", "dilation", "pad_list"); err != nil {
		return nil, err
	}
	if attrs.String("auto_pad", "") == "SAME_UPPER" {
		return nil, unsupported("pad_mode SAME of a transposed convolution")
	}
	group, err := m.schemaArg("group").Int()
	if err != nil {
		return nil, err
	}
	attrs["group"] = ir.IntAttr(group)
	op, ok, err := m.schemaArg("output_paddings", "output_padding").Ints()
	if err != nil {
		return nil, err
	}
	if ok && len(op) > 0 {
		op2, err := spatial2(op, "output_paddings")
		if err != nil {
			return nil, err
		}
		if op2[0] != 0 || op2[1] != 0 {
			attrs["output_padding"] = ir.IntsAttr(op2...)
		}
	}
	ins := []*ir.Value{x, w}
	if b != nil {
		ins = append(ins, b)
	}
	return m.activation(m.emit("Conv2DTranspose", ins, 1, attrs).Outputs[0])
}

func liftPoolFusion(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	if err := m.nchwOnly(); err != nil {
		return nil, err
	}
	op := "MaxPool"
	if m.op == "AvgPoolFusion" {
		op = "AvgPool"
	}
	attrs := ir.Attrs{}
	global, err := m.schemaArg("global").Int()
	if err != nil {
		return nil, err
	}
	if global != 0 && op == "AvgPool" {
		// converter_lite's form of ONNX GlobalAveragePool: the IR op of
		// that name (whatever the dims, which may be unknown here).
		if len(x.Shape) != 4 && x.Shape != nil {
			return nil, unsupported("global pooling of a rank-%d input", len(x.Shape))
		}
		return m.activation(m.emit("GlobalAveragePool", []*ir.Value{x}, 1, ir.Attrs{}).Outputs[0])
	}
	if global != 0 {
		if len(x.Shape) != 4 || x.Shape[2] <= 0 || x.Shape[3] <= 0 {
			return nil, unsupported("global pooling of an input whose H and W are unknown")
		}
		attrs["kernel_shape"] = ir.IntsAttr(x.Shape[2], x.Shape[3])
		attrs["strides"] = ir.IntsAttr(1, 1)
		attrs["pads"] = ir.IntsAttr(0, 0, 0, 0)
	} else if err := m.liftWindow(attrs, "strides", "", "pad"); err != nil {
		return nil, err
	}
	// The schema's default is the enum name RoundMode::FLOOR.
	round, err := m.schemaArg("round_mode").IntOr(msRoundFloor)
	if err != nil {
		return nil, err
	}
	if round == msRoundCeil {
		attrs["ceil_mode"] = ir.IntAttr(1)
	}
	if op == "AvgPool" {
		// count_include_pad is not an argument of AvgPoolFusion in the
		// schema; this project's writer adds it when the ONNX node has
		// it, so its meaning survives the round trip.
		if v := m.arg(-1, "count_include_pad"); v != nil {
			inc, ok := asInt(v)
			if !ok {
				return nil, unsupported("count_include_pad %v", v)
			}
			attrs["count_include_pad"] = ir.IntAttr(b2i(inc != 0))
		}
	}
	return m.activation(m.emit(op, []*ir.Value{x}, 1, attrs).Outputs[0])
}

func liftFusedBatchNorm(m *mnode) (any, error) {
	var in [5]*ir.Value
	for i := range in {
		v, err := m.tensor(i)
		if err != nil {
			return nil, err
		}
		in[i] = v
	}
	if err := m.nchwOnly(); err != nil {
		return nil, err
	}
	eps, err := m.schemaArg("epsilon").Float()
	if err != nil {
		return nil, err
	}
	attrs := ir.Attrs{"epsilon": ir.FloatAttr(eps)}
	if momentum := m.schemaArg("momentum"); momentum.value() != nil {
		mom, err := momentum.Float()
		if err != nil {
			return nil, err
		}
		attrs["momentum"] = ir.FloatAttr(mom)
	}
	y := m.emit1("BatchNorm", attrs, in[:]...)
	return tuple{y, poisonVal{}, poisonVal{}, poisonVal{}, poisonVal{}}, nil
}

func liftInstanceNorm(m *mnode) (any, error) {
	if len(m.ins) != 3 {
		// MindSpore's own InstanceNorm is the training op (x, gamma, beta,
		// mean, variance -> y, updated mean and variance).
		return nil, unsupported("InstanceNorm with %d inputs", len(m.ins))
	}
	var in [3]*ir.Value
	for i := range in {
		v, err := m.tensor(i)
		if err != nil {
			return nil, err
		}
		in[i] = v
	}
	eps, err := m.schemaArg("epsilon").Float()
	if err != nil {
		return nil, err
	}
	return m.emit1("InstanceNorm", ir.Attrs{"epsilon": ir.FloatAttr(eps)}, in[:]...), nil
}

// liftLayerNorm is the one mapping of MindSpore's LayerNorm (op_def: the
// axes and epsilon as inputs 3-5 or attributes, beta required) and
// MindSpore Lite's LayerNormFusion (attributes, beta optional since this
// writer writes it without a bias, lower_norm.go) to the IR's LayerNorm.
// Where the arguments live and their defaults are the schema's, except
// three LayerNormFusion defaults said below.
func liftLayerNorm(m *mnode) (any, error) {
	fusion := m.op == "LayerNormFusion"
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	gamma, err := m.tensor(1)
	if err != nil {
		return nil, err
	}
	var beta *ir.Value
	if fusion {
		beta, err = m.optTensor(2)
	} else {
		beta, err = m.tensor(2)
	}
	if err != nil {
		return nil, err
	}
	axis, err := m.schemaArg("begin_norm_axis").Int()
	if err != nil {
		return nil, err
	}
	var paxis int64
	if fusion {
		// Absent: begin_norm_axis, as converter_lite's ONNX parser sets
		// both from one axis.
		paxis, err = m.schemaArg("begin_params_axis").IntOr(axis)
	} else {
		paxis, err = m.schemaArg("begin_params_axis").Int()
	}
	if err != nil {
		return nil, err
	}
	if paxis != axis {
		return nil, unsupported("begin_params_axis %d differs from begin_norm_axis %d", paxis, axis)
	}
	var eps float64
	if fusion {
		// Absent: true, since the node has gamma (the C++ Init default,
		// false, is a LayerNorm without gamma and beta); a false one is
		// refused.
		ea, err := m.schemaArg("elementwise_affine").IntOr(1)
		if err != nil {
			return nil, err
		}
		if ea == 0 {
			return nil, unsupported("elementwise_affine false")
		}
		// Absent: ONNX LayerNormalization's 1e-5, the form this writer
		// lowers from (it always writes epsilon; the schema says 1e-7).
		eps, err = m.schemaArg("epsilon").FloatOr(1e-5)
	} else {
		eps, err = m.schemaArg("epsilon").Float()
	}
	if err != nil {
		return nil, err
	}
	ins := []*ir.Value{x, gamma}
	if beta != nil {
		ins = append(ins, beta)
	}
	y := m.emit("LayerNorm", ins, 1, ir.Attrs{"axis": ir.IntAttr(axis), "epsilon": ir.FloatAttr(eps)}).Outputs[0]
	// MindSpore's other outputs are mean and variance; the IR's are mean and inv_std.
	return tuple{y, poisonVal{}, poisonVal{}}, nil
}

// matMulFusionAttrs are MatMulFusion's own attributes.
var matMulFusionAttrs = map[string]bool{"transpose_a": true, "transpose_b": true, "activation_type": true}

func liftMatMulFusion(m *mnode) (any, error) {
	a, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	b, err := m.tensor(1)
	if err != nil {
		return nil, err
	}
	bias, err := m.optTensor(2)
	if err != nil {
		return nil, err
	}
	attrs := ir.Attrs{}
	for _, k := range []string{"transpose_a", "transpose_b"} {
		v, err := m.schemaArg(k).Int()
		if err != nil {
			return nil, err
		}
		if v != 0 {
			attrs[k] = ir.IntAttr(1)
		}
	}
	// The extra attributes this project's writer carried (lowerMatMul).
	if m.c.own {
		for k, v := range m.attrs {
			if matMulFusionAttrs[k] || ir.IsAnnotation(k) {
				continue
			}
			x, ok := irAttrOf(v)
			if !ok {
				return nil, fmt.Errorf("attribute %s: cannot read %s back", k, kindOf(v))
			}
			attrs[k] = x
		}
	}
	ins := []*ir.Value{a, b}
	if bias != nil {
		ins = append(ins, bias)
	}
	// RELU and RELU6 stay on a float MatMul (ir.AttrActivation, applied by
	// the runtime's MatMul after the bias), as on Conv2D; an integer one
	// keeps a ReLU node after it, which the runtime's ReLU computes.
	act, err := m.schemaArg("activation_type").IntOr(msActNone)
	if err != nil {
		return nil, err
	}
	if (act == msActReLU || act == msActReLU6) && a.DType.IsFloat() {
		attrs[ir.AttrActivation] = ir.IntAttr(act)
		return m.emit("MatMul", ins, 1, attrs).Outputs[0], nil
	}
	return m.activation(m.emit("MatMul", ins, 1, attrs).Outputs[0])
}

// irAttrOf turns a decoded attribute written by irAttrProto back into an IR
// attribute (integers, floats, strings, their lists, tensors).
func irAttrOf(v any) (ir.Attr, bool) {
	switch x := v.(type) {
	case scalar:
		switch {
		case x.dt == ir.String:
			return ir.StringAttr(x.s), true
		case x.dt.IsFloat():
			return ir.FloatAttr(x.f), true
		default:
			return ir.IntAttr(x.i), true
		}
	case *ir.Tensor:
		return ir.TensorAttr(x), true
	case tuple:
		if len(x) == 0 {
			return ir.IntsAttr(), true
		}
		first, ok := x[0].(scalar)
		if !ok {
			return ir.Attr{}, false
		}
		switch {
		case first.dt == ir.String:
			ss := make([]string, len(x))
			for i, e := range x {
				s, ok := e.(scalar)
				if !ok || s.dt != ir.String {
					return ir.Attr{}, false
				}
				ss[i] = s.s
			}
			return ir.StringsAttr(ss...), true
		case first.dt.IsFloat():
			fs, ok := asFloats(x)
			return ir.FloatsAttr(fs...), ok
		default:
			is, ok := asInts(x)
			return ir.IntsAttr(is...), ok
		}
	}
	return ir.Attr{}, false
}

func liftEinsum(m *mnode) (any, error) {
	var vs []*ir.Value
	for _, in := range m.ins {
		vs = append(vs, flatten(in)...)
	}
	if len(vs) == 0 {
		return nil, fmt.Errorf("no inputs")
	}
	eq, ok := asString(m.arg(-1, "equation"))
	if !ok {
		return nil, unsupported("no equation")
	}
	return m.emit1("Einsum", ir.Attrs{"equation": ir.StringAttr(eq)}, vs...), nil
}
