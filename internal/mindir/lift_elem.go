package mindir

// Lifting (MindSpore primitive -> IR) of the elementwise, broadcast and
// reduction primitives lower_elem.go writes, and of MindSpore's own forms
// of them: liftElemTable and its lifts (Activation, the *Fusion arithmetic
// primitives, Mod/FloorMod, PowFusion, LogicalXor, Eltwise, PReLU(Fusion),
// Where/Select, BroadcastTo, ReduceFusion, ArgMax/ArgMinFusion, Clip, Dropout, ExpFusion,
// Identity) with the mnode helpers they share.

import (
	"fmt"
	"math"

	"gkconv/internal/ir"
	pb "gkconv/internal/mindir/mindirpb"
)

// ---- lifting: the primitives above (and MindSpore's own forms of them) ----

var liftElemTable = map[string]func(*mnode) (any, error){
	"Activation":   liftActivation,
	"AddFusion":    liftArith("Add"),
	"SubFusion":    liftArith("Sub"),
	"MulFusion":    liftArith("Mul"),
	"DivFusion":    liftArith("RealDiv"),
	"PowFusion":    liftPow,
	"Mod":          liftMod(1),
	"FloorMod":     liftMod(0),
	"LogicalXor":   liftBinary("LogicalXor"),
	"Eltwise":      liftEltwise,
	"PReLUFusion":  liftPReLU,
	"PReLU":        liftPReLU,
	"Where":        liftWhere,
	"Select":       liftWhere,
	"BroadcastTo":  liftBroadcastTo,
	"ReduceFusion": liftReduceFusion,
	"ArgMaxFusion": liftArg("Argmax"),
	"ArgMaxExt":    liftArgExt("Argmax"),
	"ArgMinExt":    liftArgExt("Argmin"),
	"ArgMinFusion": liftArg("Argmin"),
	"Clip":         liftClip,
	"Dropout":      liftDropout,
	"Identity":     liftIdentity,
	"ExpFusion":    liftExpFusion,
}

// elemScalar makes a rank-0 constant of a float dtype.
func (m *mnode) elemScalar(name string, dt ir.DType, v float64) *ir.Value {
	t := ir.NewTensor(dt, []int64{})
	t.PutFloat(0, v)
	return m.konst(name, t)
}

// elemTyped makes a rank-0 constant of dtype dt holding v (exact).
func (m *mnode) elemTyped(name string, dt ir.DType, v float64) (*ir.Value, error) {
	switch {
	case dt.IsFloat():
		return m.elemScalar(name, dt, v), nil
	case dt.IsInt():
		if v != math.Trunc(v) {
			return nil, unsupported("%s %g on a %s input", name, v, dt)
		}
		t := ir.NewTensor(dt, []int64{})
		putInts(t, []int64{int64(v)})
		return m.konst(name, t), nil
	}
	return nil, unsupported("%s on a %s input", name, dt)
}

func liftActivation(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	typ, err := m.intArg(-1, -1, "activation_type")
	if err != nil {
		return nil, err
	}
	if m.convActivation {
		if y, ok := m.joinConvActivation(x, typ); ok {
			return y, nil
		}
	}
	alpha := func(def float64) (float64, error) { return m.floatArg(-1, def, "alpha") }
	unary := func(op string) (any, error) { return m.emit1(op, nil, x), nil }
	switch typ {
	case elemActNoActivation, elemActLinear:
		return unary("Identity")
	case elemActReLU:
		return unary("ReLU")
	case elemActSigmoid:
		return unary("Sigmoid")
	case elemActReLU6:
		return unary("ReLU6")
	case elemActAbs:
		return unary("Abs")
	case elemActSoftsign:
		return unary("Softsign")
	case elemActSoftplus:
		return unary("Softplus")
	case elemActTanh:
		return unary("Tanh")
	case elemActSeLU:
		return unary("SeLU")
	case elemActHSwish:
		return unary("HSwish")
	case elemActSign:
		return unary("Sign")
	case elemActElu, elemActLeakyReLU:
		op, def := "Elu", 1.0
		if typ == elemActLeakyReLU {
			op, def = "LeakyReLU", 0.01
		}
		a, err := alpha(def)
		if err != nil {
			return nil, err
		}
		return m.emit1(op, ir.Attrs{"alpha": ir.FloatAttr(a)}, x), nil
	case elemActHSigmoid:
		// relu6(x+3)/6 whatever alpha says.
		return m.emit1("HSigmoid", ir.Attrs{"alpha": ir.FloatAttr(1.0 / 6), "beta": ir.FloatAttr(0.5)}, x), nil
	case elemActGeLU:
		approx, err := m.intArg(-1, 0, "approximate")
		if err != nil {
			return nil, err
		}
		if approx != 0 {
			return m.emit1("GeLU", ir.Attrs{"approximate": ir.StringAttr("tanh")}, x), nil
		}
		return m.emit1("GeLU", nil, x), nil
	case elemActHardTanh:
		lo, err := m.floatArg(-1, -1, "min_val")
		if err != nil {
			return nil, err
		}
		hi, err := m.floatArg(-1, 1, "max_val")
		if err != nil {
			return nil, err
		}
		if !x.DType.IsFloat() {
			return nil, unsupported("HARD_TANH on a %s input", x.DType)
		}
		return m.emit1("Clip", nil, x, m.elemScalar("min", x.DType, lo), m.elemScalar("max", x.DType, hi)), nil
	case elemActSwish, elemActSiLU:
		return m.emit1("Mul", nil, x, m.emit1("Sigmoid", nil, x)), nil
	}
	return nil, unsupported("activation_type %d", typ)
}

func (m *mnode) elemTwo() (*ir.Value, *ir.Value, error) {
	if len(m.ins) != 2 {
		return nil, nil, fmt.Errorf("needs 2 inputs, has %d", len(m.ins))
	}
	a, err := m.tensor(0)
	if err != nil {
		return nil, nil, err
	}
	b, err := m.tensor(1)
	return a, b, err
}

func liftArith(irop string) func(*mnode) (any, error) {
	return func(m *mnode) (any, error) {
		a, b, err := m.elemTwo()
		if err != nil {
			return nil, err
		}
		if m.convResidual && irop == "Add" {
			if y, ok := m.joinConvResidual(a, b); ok {
				return y, nil
			}
		}
		return m.activation(m.emit1(irop, nil, a, b))
	}
}

func liftBinary(irop string) func(*mnode) (any, error) {
	return func(m *mnode) (any, error) {
		a, b, err := m.elemTwo()
		if err != nil {
			return nil, err
		}
		return m.emit1(irop, nil, a, b), nil
	}
}

// liftMod: Mod is the IR's fmod=1, FloorMod its default fmod=0.
func liftMod(fmod int64) func(*mnode) (any, error) {
	return func(m *mnode) (any, error) {
		a, b, err := m.elemTwo()
		if err != nil {
			return nil, err
		}
		var attrs ir.Attrs
		if fmod != 0 {
			attrs = ir.Attrs{"fmod": ir.IntAttr(1)}
		}
		return m.emit1("Mod", attrs, a, b), nil
	}
}

// liftPow reads PowFusion(x, y) (scale*x + shift)^y; the Caffe form gives the
// exponent as the power attribute.
func liftPow(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	var y *ir.Value
	if len(m.ins) > 1 {
		if y, err = m.tensor(1); err != nil {
			return nil, err
		}
	}
	scale, err := m.floatArg(-1, 1, "scale")
	if err != nil {
		return nil, err
	}
	shift, err := m.floatArg(-1, 0, "shift")
	if err != nil {
		return nil, err
	}
	if (scale != 1 || shift != 0 || y == nil) && !x.DType.IsFloat() {
		return nil, unsupported("scale/shift/power on a %s input", x.DType)
	}
	if y == nil {
		p, err := m.floatArg(-1, 1, "power")
		if err != nil {
			return nil, err
		}
		y = m.elemScalar("power", x.DType, p)
	}
	if scale != 1 {
		x = m.emit1("Mul", nil, x, m.elemScalar("scale", x.DType, scale))
	}
	if shift != 0 {
		x = m.emit1("Add", nil, x, m.elemScalar("shift", x.DType, shift))
	}
	return m.emit1("Pow", nil, x, y), nil
}

// liftEltwise: Eltwise(mode) over its inputs.
func liftEltwise(m *mnode) (any, error) {
	var vs []*ir.Value
	for i := range m.ins {
		v, err := m.tensor(i)
		if err != nil {
			return nil, err
		}
		vs = append(vs, v)
	}
	if len(vs) < 2 {
		return nil, fmt.Errorf("needs at least 2 inputs, has %d", len(vs))
	}
	mode, err := m.intArg(-1, elemEltwiseSum, "mode")
	if err != nil {
		return nil, err
	}
	switch mode {
	case elemEltwiseSum:
		return m.emit1("AddN", nil, vs...), nil
	case elemEltwiseMax:
		return m.emit1("Maximum", nil, vs...), nil
	case elemEltwiseProd:
		y := vs[0]
		for _, v := range vs[1:] {
			y = m.emit1("Mul", nil, y, v)
		}
		return y, nil
	}
	return nil, unsupported("Eltwise mode %d", mode)
}

// liftPReLU: the IR slope broadcasts numpy-style; a 1-D per-channel slope
// (MindSpore's form) of an input of rank > 2 is reshaped to [C, 1, ...].
func liftPReLU(m *mnode) (any, error) {
	x, w, err := m.elemTwo()
	if err != nil {
		return nil, err
	}
	if len(w.Shape) == 1 && w.Shape[0] != 1 && len(x.Shape) > 2 {
		shape := make([]int64, len(x.Shape)-1)
		for i := range shape {
			shape[i] = 1
		}
		shape[0] = w.Shape[0]
		if w.Const != nil {
			t := *w.Const
			t.Shape = shape
			w = m.konst("slope", &t)
		} else {
			if shape[0] < 0 {
				shape[0] = -1
			}
			w = m.emit1("Reshape", nil, w, m.ints64("slope_shape", shape))
		}
	}
	return m.emit1("PReLU", nil, x, w), nil
}

// liftWhere: the three-input Where (and MindSpore's Select) is the IR's Select.
func liftWhere(m *mnode) (any, error) {
	if len(m.ins) != 3 {
		return nil, unsupported("%s with %d inputs", m.op, len(m.ins))
	}
	var in [3]*ir.Value
	for i := range in {
		v, err := m.tensor(i)
		if err != nil {
			return nil, err
		}
		in[i] = v
	}
	return m.emit1("Select", nil, in[:]...), nil
}

// elemPrimAttr finds a primitive attribute of the node being mapped. The reader
// takes a primitive attribute named "shape" for the node's output types, so
// BroadcastTo's shape attribute is looked up here.
func (m *mnode) elemPrimAttr(name string) *pb.AttributeProto {
	c := m.c
	find := func(nodes []*pb.NodeProto) *pb.AttributeProto {
		for _, np := range nodes {
			if np.GetName() != m.name {
				continue
			}
			if _, pattrs, err := c.primOf(np); err == nil {
				for _, a := range pattrs {
					if a.GetName() == name {
						return a
					}
				}
			}
			return nil
		}
		return nil
	}
	if a := find(c.mp.GetGraph().GetNode()); a != nil {
		return a
	}
	for _, f := range c.mp.Functions {
		if a := find(f.GetNode()); a != nil {
			return a
		}
	}
	return nil
}

// liftBroadcastTo: MindSpore's target shape (attribute, or input 1) with -1
// = keep is ONNX Expand's shape with 1 there.
func liftBroadcastTo(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	var shape []int64
	ok := false
	if len(m.ins) > 1 {
		shape, ok, err = m.intsArg(1)
		if err != nil {
			return nil, err
		}
	}
	if !ok {
		if a := m.elemPrimAttr("shape"); a != nil {
			v, err := attrValue(a)
			if err != nil {
				return nil, err
			}
			shape, ok = asInts(v)
		}
	}
	if !ok {
		return nil, unsupported("shape must be constant integers")
	}
	onnx := make([]int64, len(shape))
	for i, d := range shape {
		onnx[i] = d
		if d == -1 {
			onnx[i] = 1
		}
	}
	return m.emit1("BroadcastTo", nil, x, m.ints64("shape", onnx)), nil
}

// liftReduceFusion: ReduceFusion(x, axes) with mode, keep_dims,
// reduce_to_end (reduce axes[0].. to the end, keep_dims false) and coeff
// (a factor MindSpore Lite applies in the reduce_to_end form).
func liftReduceFusion(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	mode, err := m.intArg(-1, 0, "mode") // the schema's default: Reduce_Mean
	if err != nil {
		return nil, err
	}
	op := ""
	for k, v := range elemReduceModes {
		if v == mode {
			op = k
		}
	}
	if mode == 6 { // Reduce_ASum: sum of |x|
		op = "ReduceL1"
	}
	if op == "" {
		return nil, unsupported("ReduceFusion mode %d", mode)
	}
	keep, err := m.intArg(-1, 0, "keep_dims")
	if err != nil {
		return nil, err
	}
	toEnd, err := m.intArg(-1, 0, "reduce_to_end")
	if err != nil {
		return nil, err
	}
	coeff, err := m.floatArg(-1, 1, "coeff")
	if err != nil {
		return nil, err
	}
	var axes *ir.Value // nil: every axis
	if len(m.ins) > 1 {
		if _, none := m.ins[1].(noneVal); !none {
			if axes, err = m.tensor(1); err != nil {
				return nil, err
			}
		}
	}
	if axes == nil {
		if v, ok := m.attrs["axes"]; ok { // the parser's attribute, before InputAdjust
			a, ok := asInts(v)
			if !ok {
				return nil, unsupported("axes must be constant integers")
			}
			if len(a) > 0 {
				axes = m.ints64("axes", a)
			}
		}
	} else if axes.Const != nil {
		a, err := axes.Const.Int64s()
		if err != nil {
			return nil, unsupported("axes: %v", err)
		}
		switch {
		case len(a) == 0:
			axes = nil
		case axes.DType != ir.Int64:
			axes = m.ints64("axes", a)
		}
	}
	if toEnd != 0 {
		var a []int64
		ok := false
		if axes != nil {
			a, ok = asInts(axes)
		}
		if !ok || len(a) != 1 || x.Shape == nil {
			return nil, unsupported("reduce_to_end needs one constant axis and a known rank")
		}
		r := int64(len(x.Shape))
		begin := a[0]
		if begin < 0 {
			begin += r
		}
		var all []int64
		for i := begin; i < r; i++ {
			all = append(all, i)
		}
		axes, keep = m.ints64("axes", all), 0
	}
	attrs := ir.Attrs{"keepdims": ir.IntAttr(b2i(keep != 0))}
	var y *ir.Value
	if axes == nil {
		y = m.emit1(op, attrs, x)
	} else {
		y = m.emit1(op, attrs, x, axes)
	}
	if toEnd != 0 && coeff != 1 {
		if !x.DType.IsFloat() {
			return nil, unsupported("coeff on a %s input", x.DType)
		}
		y = m.emit1("Mul", nil, y, m.elemScalar("coeff", x.DType, coeff))
	}
	return y, nil
}

// liftArg: ArgMaxFusion/ArgMinFusion with top_k 1 and out_max_value false.
func liftArg(irop string) func(*mnode) (any, error) {
	return func(m *mnode) (any, error) {
		x, err := m.tensor(0)
		if err != nil {
			return nil, err
		}
		axis, err := m.intArg(-1, 0, "axis")
		if err != nil {
			return nil, err
		}
		keep, err := m.intArg(-1, 0, "keep_dims")
		if err != nil {
			return nil, err
		}
		if k, _ := m.intArg(-1, 1, "top_k"); k != 1 {
			return nil, unsupported("top_k %d", k)
		}
		if o, _ := m.intArg(-1, 0, "out_max_value"); o != 0 {
			return nil, unsupported("out_max_value")
		}
		return m.emit1(irop, ir.Attrs{"axis": ir.IntAttr(axis), "keepdims": ir.IntAttr(b2i(keep != 0))}, x), nil
	}
}

// liftArgExt reads MindSpore's ArgMaxExt/ArgMinExt(input, dim, keepdim):
// int64 indices like ONNX's; dim None (the flattened input) is not read.
func liftArgExt(irop string) func(*mnode) (any, error) {
	return func(m *mnode) (any, error) {
		x, err := m.tensor(0)
		if err != nil {
			return nil, err
		}
		if m.arg(1, "dim") == nil {
			return nil, unsupported("dim None (the flattened input)")
		}
		axis, err := m.intArg(1, 0, "dim")
		if err != nil {
			return nil, err
		}
		keep, err := m.intArg(2, 0, "keepdim")
		if err != nil {
			return nil, err
		}
		return m.emit1(irop, ir.Attrs{"axis": ir.IntAttr(axis), "keepdims": ir.IntAttr(b2i(keep != 0))}, x), nil
	}
}

// liftClip: Clip's bounds are its inputs 1 and 2 when connected, else its
// min/max attributes (an infinite bound is no bound).
func liftClip(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	ins := []*ir.Value{x}
	if len(m.ins) > 1 {
		for i := 1; i < len(m.ins) && i < 3; i++ {
			if _, none := m.ins[i].(noneVal); none {
				ins = append(ins, nil)
				continue
			}
			v, err := m.tensor(i)
			if err != nil {
				return nil, err
			}
			ins = append(ins, v)
		}
		return m.emit1("Clip", nil, ins...), nil
	}
	for i, b := range []struct {
		name string
		def  float64
	}{{"min", math.Inf(-1)}, {"max", math.Inf(1)}} {
		v, err := m.floatArg(-1, b.def, b.name)
		if err != nil {
			return nil, err
		}
		ins = append(ins, nil)
		if !math.IsInf(v, 0) {
			if ins[i+1], err = m.elemTyped(b.name, x.DType, v); err != nil {
				return nil, err
			}
		}
	}
	for len(ins) > 1 && ins[len(ins)-1] == nil {
		ins = ins[:len(ins)-1]
	}
	return m.emit1("Clip", nil, ins...), nil
}

// liftDropout: Dropout returns (output, mask). The IR's Dropout is the
// inference identity with ONNX's bool mask as its optional second output; a
// mask of another type (MindSpore's) has no IR form and is left unusable.
// keep_prob and any ratio input do not change the inference result; Seed0
// is ONNX's seed.
func liftDropout(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	var attrs ir.Attrs
	if seed, err := m.intArg(-1, 0, "Seed0"); err == nil && seed != 0 {
		attrs = ir.Attrs{"seed": ir.IntAttr(seed)}
	}
	if len(m.outTypes) > 1 && m.outTypes[1].dt == ir.Bool {
		n := m.emit("Dropout", []*ir.Value{x}, 2, attrs)
		return tuple{n.Outputs[0], n.Outputs[1]}, nil
	}
	return tuple{m.emit1("Dropout", attrs, x), poisonVal{}}, nil
}

// liftExpFusion: base^(scale*x + shift), base -1 = e.
func liftExpFusion(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	var p [3]float64
	for i, a := range []struct {
		name string
		def  float64
	}{{"base", -1}, {"scale", 1}, {"shift", 0}} {
		if p[i], err = m.floatArg(-1, a.def, a.name); err != nil {
			return nil, err
		}
	}
	base, scale, shift := p[0], p[1], p[2]
	if base != -1 && base != math.E && base <= 0 {
		return nil, unsupported("base %g", base)
	}
	if (scale != 1 || shift != 0 || (base != -1 && base != math.E)) && !x.DType.IsFloat() {
		return nil, unsupported("base/scale/shift on a %s input", x.DType)
	}
	if base != -1 && base != math.E {
		scale, shift = scale*math.Log(base), shift*math.Log(base)
	}
	if scale != 1 {
		x = m.emit1("Mul", nil, x, m.elemScalar("scale", x.DType, scale))
	}
	if shift != 0 {
		x = m.emit1("Add", nil, x, m.elemScalar("shift", x.DType, shift))
	}
	return m.emit1("Exp", nil, x), nil
}

// liftIdentity: an Identity of a tensor is the IR's Identity; of anything
// else it passes its input on.
func liftIdentity(m *mnode) (any, error) {
	if len(m.ins) == 0 {
		return nil, fmt.Errorf("no input")
	}
	if x, ok := m.ins[0].(*ir.Value); ok {
		return m.emit1("Identity", nil, x), nil
	}
	return m.ins[0], nil
}
