package mindir

// The MindSpore primitives liftCoreTable (lift_core.go) maps with attribute
// work of their own: Conv2D, the pools, MatMul/BatchMatMul, Dense, Reshape,
// Cast, Concat, StridedSlice, CeLU, Log, BatchNorm and UpsampleNearestND,
// with the helpers only they use (pads, mindTypeIDs, rangeInts). Arguments
// are read where the schema puts them (schemaArg), except the pools' and
// Concat's, whose layouts the schema does not describe (said there). The
// mnode type and the helpers shared by every mapping are in ops.go.

import (
	"fmt"
	"math"

	"gkconv/internal/ir"
)

func (m *mnode) conv2d() (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	w, err := m.tensor(1)
	if err != nil {
		return nil, err
	}
	format, err := m.schemaArg("format", "data_format").Format()
	if err != nil {
		return nil, err
	}
	if format != "NCHW" {
		return nil, unsupported("format %s", format)
	}
	attrs := ir.Attrs{}
	if k, ok, _ := m.schemaArg("kernel_size").Ints(); ok {
		k2, err := spatial2(k, "kernel_size")
		if err != nil {
			return nil, err
		}
		attrs["kernel_shape"] = ir.IntsAttr(k2...)
	}
	for _, p := range [][2]string{{"stride", "strides"}, {"dilation", "dilations"}} {
		v, ok, err := m.schemaArg(p[0], p[1]).Ints()
		if err != nil {
			return nil, err
		}
		if !ok {
			v = []int64{1}
		}
		v2, err := spatial2(v, p[0])
		if err != nil {
			return nil, err
		}
		attrs[p[1]] = ir.IntsAttr(v2...)
	}
	group, err := m.schemaArg("group", "groups").Int()
	if err != nil {
		return nil, err
	}
	attrs["group"] = ir.IntAttr(group)
	mode, err := m.schemaArg("pad_mode").PadMode()
	if err != nil {
		return nil, err
	}
	if err := m.pads(attrs, mode, "pad_list", "pad"); err != nil {
		return nil, err
	}
	return m.emit1("Conv2D", attrs, x, w), nil
}

// pads sets ONNX pads/auto_pad from a MindSpore pad_mode and pad list
// ([top, bottom, left, right] -> ONNX [top, left, bottom, right]).
func (m *mnode) pads(attrs ir.Attrs, mode string, names ...string) error {
	var list []int64
	for _, n := range names {
		if v, ok, _ := m.intsArg(-1, n); ok {
			if len(v) == 1 {
				v = []int64{v[0], v[0], v[0], v[0]}
			}
			if len(v) != 4 {
				return unsupported("%s %v", n, v)
			}
			list = v
			break
		}
	}
	nonzero := false
	for _, p := range list {
		nonzero = nonzero || p != 0
	}
	switch {
	case mode == "VALID":
		attrs["pads"] = ir.IntsAttr(0, 0, 0, 0)
	case mode == "SAME" && !nonzero:
		// MindSpore puts the odd padding at the end, as SAME_UPPER.
		attrs["auto_pad"] = ir.StringAttr("SAME_UPPER")
	default: // PAD, or SAME with pad_list already computed by MindSpore
		if list == nil {
			list = []int64{0, 0, 0, 0}
		}
		attrs["pads"] = ir.IntsAttr(list[0], list[2], list[1], list[3])
	}
	return nil
}

func (m *mnode) pool() (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	// 2.x primitive functions pass kernel_size, strides, pad_mode, format
	// as inputs 1..4, MaxPool too, whose schema row (ops/infer/max_pool.h)
	// has them as attributes only: the positions are written here.
	format, err := m.formatArg(4, "format", "data_format")
	if err != nil {
		return nil, err
	}
	if format != "NCHW" {
		return nil, unsupported("format %s", format)
	}
	attrs := ir.Attrs{}
	k, ok, err := m.intsArg(1, "kernel_size", "ksize")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("no kernel_size")
	}
	k2, err := spatial2(k, "kernel_size")
	if err != nil {
		return nil, err
	}
	attrs["kernel_shape"] = ir.IntsAttr(k2...)
	s, ok, err := m.intsArg(2, "strides", "stride")
	if err != nil {
		return nil, err
	}
	if !ok {
		s = []int64{1}
	}
	s2, err := spatial2(s, "strides")
	if err != nil {
		return nil, err
	}
	attrs["strides"] = ir.IntsAttr(s2...)
	mode, err := m.padModeArg(3, "pad_mode")
	if err != nil {
		return nil, err
	}
	if err := m.pads(attrs, mode, "pad_list", "pad"); err != nil {
		return nil, err
	}
	if ceil, _ := m.intArg(-1, 0, "ceil_mode"); ceil != 0 {
		attrs["ceil_mode"] = ir.IntAttr(1)
	}
	return m.emit1(m.op, attrs, x), nil
}

func (m *mnode) matmul() (any, error) {
	a, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	b, err := m.tensor(1)
	if err != nil {
		return nil, err
	}
	attrs := ir.Attrs{}
	if m.op == "MatMulExt" { // NumPy matmul, no transpose arguments
		return m.emit1("MatMul", attrs, a, b), nil
	}
	ta, err := m.schemaArg("transpose_a", "transpose_x1").Int()
	if err != nil {
		return nil, err
	}
	tb, err := m.schemaArg("transpose_b", "transpose_x2").Int()
	if err != nil {
		return nil, err
	}
	if ta != 0 {
		attrs["transpose_a"] = ir.IntAttr(1)
	}
	if tb != 0 {
		attrs["transpose_b"] = ir.IntAttr(1)
	}
	return m.emit1("MatMul", attrs, a, b), nil
}

func (m *mnode) dense() (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	w, err := m.tensor(1)
	if err != nil {
		return nil, err
	}
	y := m.emit1("MatMul", ir.Attrs{"transpose_b": ir.IntAttr(1)}, x, w)
	if len(m.ins) > 2 {
		if _, none := m.ins[2].(noneVal); !none {
			b, err := m.tensor(2)
			if err != nil {
				return nil, err
			}
			y = m.emit1("Add", nil, y, b)
		}
	}
	return y, nil
}

func (m *mnode) reshape() (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	s, err := m.schemaArg("shape").Value()
	if err != nil {
		return nil, err
	}
	if s == nil {
		return nil, fmt.Errorf("no shape")
	}
	if ct, ok := s.(constTuple); ok {
		s = ct.items
	}
	// A 1-D int64 constant is the IR's shape input as it is (a file this
	// project wrote); keeping it keeps its name.
	if v, ok := s.(*ir.Value); ok && v.Const != nil && v.DType == ir.Int64 && len(v.Shape) == 1 {
		return m.emit1("Reshape", nil, x, v), nil
	}
	if shape, ok := asInts(s); ok {
		return m.emit1("Reshape", nil, x, m.ints64("shape", shape)), nil
	}
	if v, ok := s.(*ir.Value); ok && v.Const == nil && v.DType == ir.Int64 {
		return m.emit1("Reshape", nil, x, v), nil
	}
	return nil, unsupported("shape is not a constant")
}

// mindTypeIDs maps MindSpore TypeId numbers (Cast given an integer type).
var mindTypeIDs = map[int64]ir.DType{
	30: ir.Bool, 32: ir.Int8, 33: ir.Int16, 34: ir.Int32, 35: ir.Int64, 37: ir.Uint8, 38: ir.Uint16,
	39: ir.Uint32, 40: ir.Uint64, 42: ir.Float16, 43: ir.Float32, 44: ir.Float64, 45: ir.BFloat16,
}

func (m *mnode) cast() (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	var dt ir.DType
	dst, err := m.schemaArg("dtype", "dst_type", "DstT", "to").Value()
	if err != nil {
		return nil, err
	}
	switch v := dst.(type) {
	case dtypeVal:
		dt = v.dt
	case nil:
		return nil, fmt.Errorf("no target type")
	default:
		id, ok := asInt(v)
		if !ok {
			return nil, unsupported("target type is not a constant")
		}
		if dt, ok = mindTypeIDs[id]; !ok {
			return nil, unsupported("target TypeId %d", id)
		}
	}
	return m.emit1("Cast", ir.Attrs{"to": ir.IntAttr(int64(dt))}, x), nil
}

func (m *mnode) concat() (any, error) {
	var vs []*ir.Value
	axisIn := -1
	if len(m.ins) == 2 {
		if _, isTuple := m.ins[0].(tuple); isTuple {
			axisIn = 1 // 2.x: Concat(tensors, axis)
		}
	}
	for i, in := range m.ins {
		if i == axisIn {
			continue
		}
		vs = append(vs, flatten(in)...)
	}
	if len(vs) == 0 {
		return nil, fmt.Errorf("no inputs")
	}
	// Not by the schema: the axis is input 1 only in the 2.x form, after a
	// tuple of tensors, and older files give every tensor as an input.
	axis, err := m.intArg(axisIn, 0, "axis")
	if err != nil {
		return nil, err
	}
	return m.emit1("Concat", ir.Attrs{"axis": ir.IntAttr(axis)}, vs...), nil
}

func (m *mnode) stridedSlice() (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	var lists [3][]int64
	for i, n := range []string{"begin", "end", "strides"} {
		v, ok, err := m.schemaArg(n).Ints()
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("no %s", n)
		}
		lists[i] = v
	}
	begin, end, strides := lists[0], lists[1], lists[2]
	if len(end) != len(begin) || len(strides) != len(begin) {
		return nil, fmt.Errorf("begin %v, end %v, strides %v differ in length", begin, end, strides)
	}
	var masks [5]int64
	for i, n := range []string{"begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"} {
		if masks[i], err = m.schemaArg(n).Int(); err != nil {
			return nil, err
		}
	}
	if masks[2] != 0 || masks[3] != 0 {
		return nil, unsupported("ellipsis_mask/new_axis_mask")
	}
	starts := make([]int64, len(begin))
	ends := make([]int64, len(begin))
	axes := make([]int64, len(begin))
	var squeeze []int64
	for i := range begin {
		axes[i] = int64(i)
		bit := int64(1) << uint(i)
		step := strides[i]
		if step == 0 {
			return nil, fmt.Errorf("stride 0 on axis %d", i)
		}
		starts[i], ends[i] = begin[i], end[i]
		if masks[0]&bit != 0 {
			starts[i] = 0
			if step < 0 {
				starts[i] = math.MaxInt64
			}
		}
		if masks[1]&bit != 0 {
			ends[i] = math.MaxInt64
			if step < 0 {
				ends[i] = math.MinInt64
			}
		}
		if masks[4]&bit != 0 {
			ends[i] = begin[i] + 1
			if begin[i] == -1 {
				ends[i] = math.MaxInt64
			}
			strides[i] = 1
			squeeze = append(squeeze, int64(i))
		}
	}
	y := m.emit1("Slice", nil, x, m.ints64("starts", starts), m.ints64("ends", ends), m.ints64("axes", axes), m.ints64("steps", strides))
	if len(squeeze) > 0 {
		y = m.emit1("Squeeze", nil, y, m.ints64("squeeze_axes", squeeze))
	}
	return y, nil
}

func (m *mnode) celu() (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	a, err := m.schemaArg("alpha").Value()
	if err != nil {
		return nil, err
	}
	if a == nil {
		return m.emit1("CeLU", ir.Attrs{"alpha": ir.FloatAttr(1)}, x), nil
	}
	if f, ok := asFloat(a); ok {
		return m.emit1("CeLU", ir.Attrs{"alpha": ir.FloatAttr(f)}, x), nil
	}
	// alpha computed at run time: celu(x) = max(0,x) + min(0, alpha*(exp(x/alpha)-1))
	alpha, err := asValue(a, "alpha")
	if err != nil {
		return nil, err
	}
	if !x.DType.IsFloat() {
		return nil, unsupported("CeLU with a run-time alpha needs a known float input type")
	}
	if alpha.DType != x.DType {
		alpha = m.emit1("Cast", ir.Attrs{"to": ir.IntAttr(int64(x.DType))}, alpha)
	}
	scalarOf := func(name string, v float64) *ir.Value {
		t := ir.NewTensor(x.DType, []int64{})
		t.PutFloat(0, v)
		return m.konst(name, t)
	}
	zero, one := scalarOf("zero", 0), scalarOf("one", 1)
	pos := m.emit1("Maximum", nil, x, zero)
	e := m.emit1("Exp", nil, m.emit1("RealDiv", nil, x, alpha))
	neg := m.emit1("Minimum", nil, zero, m.emit1("Mul", nil, alpha, m.emit1("Sub", nil, e, one)))
	return m.emit1("Add", nil, pos, neg), nil
}

// log maps MindSpore's Log with attributes base (-1 = e), scale, shift:
// log_base(scale*x + shift). The attributes are the older primitive's
// (MindSpore Lite's); the 2.7 schema's Log has none, so they are read by name.
func (m *mnode) log() (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	base, err := m.floatArg(-1, -1, "base")
	if err != nil {
		return nil, err
	}
	scale, err := m.floatArg(-1, 1, "scale")
	if err != nil {
		return nil, err
	}
	shift, err := m.floatArg(-1, 0, "shift")
	if err != nil {
		return nil, err
	}
	if (scale != 1 || shift != 0 || (base != -1 && base != math.E)) && !x.DType.IsFloat() {
		return nil, unsupported("base/scale/shift on a %s input", x.DType)
	}
	scalarOf := func(name string, v float64) *ir.Value {
		t := ir.NewTensor(x.DType, []int64{})
		t.PutFloat(0, v)
		return m.konst(name, t)
	}
	if scale != 1 {
		x = m.emit1("Mul", nil, x, scalarOf("scale", scale))
	}
	if shift != 0 {
		x = m.emit1("Add", nil, x, scalarOf("shift", shift))
	}
	y := m.emit1("Log", nil, x)
	if base > 0 && base != math.E {
		if base == 1 {
			return nil, unsupported("base 1")
		}
		y = m.emit1("Mul", nil, y, scalarOf("inv_ln_base", 1/math.Log(base)))
	}
	return y, nil
}

func (m *mnode) batchNorm() (any, error) {
	var in [5]*ir.Value
	for i := range in {
		v, err := m.tensor(i)
		if err != nil {
			return nil, err
		}
		in[i] = v
	}
	training, err := m.schemaArg("is_training").Int()
	if err != nil {
		return nil, err
	}
	if training != 0 {
		return nil, unsupported("is_training")
	}
	eps, err := m.schemaArg("epsilon").Float()
	if err != nil {
		return nil, err
	}
	format, err := m.schemaArg("data_format", "format").Format()
	if err != nil {
		return nil, err
	}
	if format != "NCHW" {
		return nil, unsupported("format %s", format)
	}
	y := m.emit1("BatchNorm", ir.Attrs{"epsilon": ir.FloatAttr(eps)}, in[:]...)
	return tuple{y, poisonVal{}, poisonVal{}, poisonVal{}, poisonVal{}}, nil
}

// upsampleNearest maps UpsampleNearestND(x, output_size, scales) to Resize
// with PyTorch's nearest semantics (asymmetric coordinates, floor).
func (m *mnode) upsampleNearest(nd int) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	attrs := ir.Attrs{
		"mode":                           ir.StringAttr("nearest"),
		"coordinate_transformation_mode": ir.StringAttr("asymmetric"),
		"nearest_mode":                   ir.StringAttr("floor"),
	}
	if size, ok, err := m.schemaArg("output_size").Ints(); err != nil {
		return nil, err
	} else if ok && len(size) > 0 {
		if len(size) != nd {
			return nil, fmt.Errorf("output_size %v for %dD", size, nd)
		}
		attrs["axes"] = ir.IntsAttr(rangeInts(2, 2+nd)...)
		return m.emit1("Resize", attrs, x, nil, nil, m.ints64("sizes", size)), nil
	}
	sv, err := m.schemaArg("scales").Value()
	if err != nil {
		return nil, err
	}
	if ct, ok := sv.(constTuple); ok {
		sv = ct.items
	}
	scales, ok := asFloats(sv)
	if !ok || len(scales) != nd {
		return nil, unsupported("needs a constant output_size or %d constant scales", nd)
	}
	t := ir.NewTensor(ir.Float32, []int64{int64(nd + 2)})
	t.PutFloat(0, 1)
	t.PutFloat(1, 1)
	for i, s := range scales {
		t.PutFloat(i+2, s)
	}
	return m.emit1("Resize", attrs, x, nil, m.konst("scales", t)), nil
}

func rangeInts(from, to int) []int64 {
	out := make([]int64, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, int64(i))
	}
	return out
}
