package mindir

// Lifting (MindSpore primitive -> IR) of the shape and data-movement
// primitives lower_shape.go writes: Split, StridedSlice, GatherD,
// PadFusion, Tile, DepthToSpace, SpaceToDepth, Reshape, Flatten,
// Unsqueeze, Resize, TopKFusion, CumSum, Range, ConstantOfShape and
// Triu/Tril. The table that dispatches to them (liftNNTable) and the shared
// mnode helpers are in lift_nn.go.

import (
	"fmt"

	"gkconv/internal/ir"
)

func liftSplit(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	// converter_lite's Split has attributes; MindSpore's op_def Split
	// (mind_ir_version >= 2) takes axis and output_num as inputs 1 and 2.
	axis, err := m.intArg(1, 0, "axis")
	if err != nil {
		return nil, err
	}
	num, err := m.intArg(2, 0, "output_num")
	if err != nil {
		return nil, err
	}
	sizes, _, err := m.intsArg(-1, "size_splits")
	if err != nil {
		return nil, err
	}
	nout := int(num)
	if len(sizes) > 0 {
		nout = len(sizes)
	}
	if m.c.own && len(m.outTypes) > 0 {
		nout = len(m.outTypes)
	}
	if nout < 1 {
		return nil, unsupported("output_num %d", num)
	}
	attrs := ir.Attrs{"axis": ir.IntAttr(axis)}
	ins := []*ir.Value{x}
	if len(sizes) > 0 {
		if len(sizes) != nout {
			return nil, fmt.Errorf("%d size_splits for %d outputs", len(sizes), nout)
		}
		ins = append(ins, m.ints64("split", sizes))
	} else {
		attrs["num_outputs"] = ir.IntAttr(int64(nout))
	}
	n := m.emit("Split", ins, nout, attrs)
	out := make(tuple, nout)
	for i, o := range n.Outputs {
		out[i] = o
	}
	return out, nil
}

// liftStridedSlice reads converter_lite's ONNX form StridedSlice(x, starts,
// ends, axes, steps); other forms are MindSpore's (ops.go stridedSlice).
func liftStridedSlice(m *mnode) (any, error) {
	if len(m.ins) != 5 {
		return m.stridedSlice()
	}
	if f, err := m.intArg(-1, fmkTypeOnnx, "fmk_type"); err != nil || f != fmkTypeOnnx {
		return m.stridedSlice()
	}
	ins := make([]*ir.Value, 5)
	for i := range ins {
		v, err := m.tensor(i)
		if err != nil {
			return nil, err
		}
		ins[i] = v
	}
	return m.emit1("Slice", nil, ins...), nil
}

func liftGatherD(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	dim, err := m.intArg(1, 0, "dim", "dims")
	if err != nil {
		return nil, err
	}
	idx, err := m.tensor(2)
	if err != nil {
		return nil, err
	}
	return m.emit1("GatherD", ir.Attrs{"axis": ir.IntAttr(dim)}, x, idx), nil
}

func liftPadFusion(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	pairs, ok := nestedInts(m.arg(1, "paddings"))
	if !ok || len(pairs)%2 != 0 {
		return nil, unsupported("paddings must be constant (begin, end) pairs")
	}
	k := len(pairs) / 2
	pads := make([]int64, 2*k)
	maxPad := int64(0)
	for i := 0; i < k; i++ {
		pads[i], pads[k+i] = pairs[2*i], pairs[2*i+1]
		maxPad = max(maxPad, pairs[2*i], pairs[2*i+1])
	}
	mode, err := m.intArg(-1, msPaddingConstant, "padding_mode")
	if err != nil {
		return nil, err
	}
	attrs := ir.Attrs{}
	switch mode {
	case msPaddingConstant:
	case msPaddingReflect:
		attrs["mode"] = ir.StringAttr("reflect")
	case msPaddingSymmetric:
		if maxPad > 1 {
			return nil, unsupported("SYMMETRIC padding by more than 1")
		}
		attrs["mode"] = ir.StringAttr("edge")
	default:
		return nil, unsupported("padding_mode %d", mode)
	}
	ins := []*ir.Value{x, m.ints64("pads", pads)}
	cv, err := m.optTensor(2)
	if err != nil {
		return nil, err
	}
	if cv == nil && mode == msPaddingConstant {
		f, err := m.floatArg(-1, 0, "constant_value")
		if err != nil {
			return nil, err
		}
		if f != 0 {
			dt := x.DType
			if dt == ir.Undefined || dt.Size() == 0 || dt == ir.String {
				dt = ir.Float32
			}
			t := ir.NewTensor(dt, []int64{})
			if dt.IsFloat() {
				t.PutFloat(0, f)
			} else {
				putInts(t, []int64{int64(f)})
			}
			cv = m.konst("constant_value", t)
		}
	}
	if cv != nil {
		ins = append(ins, cv)
	}
	return m.emit1("Pad", attrs, ins...), nil
}

// nestedInts flattens an integer constant, tuple or tuple of tuples.
func nestedInts(v any) ([]int64, bool) {
	switch x := v.(type) {
	case constTuple:
		return nestedInts(x.items)
	case tuple:
		var out []int64
		for _, e := range x {
			is, ok := nestedInts(e)
			if !ok {
				return nil, false
			}
			out = append(out, is...)
		}
		return out, true
	case nil:
		return nil, false
	}
	return asInts(v)
}

func liftTile(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	if d, ok, _ := m.intsArg(-1, "dims"); ok && len(d) > 0 {
		return nil, unsupported("TileFusion dims %v", d)
	}
	var reps *ir.Value
	if len(m.ins) > 1 {
		if reps, err = m.tensor(1); err != nil {
			return nil, err
		}
	} else {
		r, ok, err := m.intsArg(-1, "multiples")
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("no multiples")
		}
		reps = m.ints64("repeats", r)
	}
	return m.emit1("Tile", nil, x, reps), nil
}

func liftDepthToSpace(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	if err := m.nchwOnly(); err != nil {
		return nil, err
	}
	b, err := m.intArg(-1, 0, "block_size")
	if err != nil {
		return nil, err
	}
	attrs := ir.Attrs{"blocksize": ir.IntAttr(b)}
	if v := m.arg(-1, "mode"); v != nil {
		s, ok := asString(v)
		if !ok || (s != "DCR" && s != "CRD") {
			return nil, unsupported("mode %v", v)
		}
		attrs["mode"] = ir.StringAttr(s)
	}
	return m.emit1("DepthToSpace", attrs, x), nil
}

func liftSpaceToDepth(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	if err := m.nchwOnly(); err != nil {
		return nil, err
	}
	b, err := m.intArg(-1, 0, "block_size")
	if err != nil {
		return nil, err
	}
	return m.emit1("SpaceToDepth", ir.Attrs{"blocksize": ir.IntAttr(b)}, x), nil
}

// liftReshape passes a shape tensor input through as it is (a constant
// keeps its name) and reads allowzero; other forms go to ops.go's reshape.
func liftReshape(m *mnode) (any, error) {
	var attrs ir.Attrs
	if v := m.arg(-1, "allowzero"); v != nil {
		z, ok := asInt(v)
		if !ok {
			return nil, unsupported("allowzero %v", v)
		}
		attrs = ir.Attrs{"allowzero": ir.IntAttr(z)}
	}
	if len(m.ins) > 1 {
		if s, ok := m.ins[1].(*ir.Value); ok && s.DType == ir.Int64 && len(s.Shape) == 1 {
			x, err := m.tensor(0)
			if err != nil {
				return nil, err
			}
			return m.emit1("Reshape", attrs, x, s), nil
		}
	}
	res, err := m.reshape()
	if err != nil || attrs == nil {
		return res, err
	}
	if v, ok := res.(*ir.Value); ok && v.Producer != nil {
		v.Producer.Attrs = attrs
	}
	return res, nil
}

func liftFlatten(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	var attrs ir.Attrs
	if m.arg(-1, "axis") != nil {
		a, err := m.intArg(-1, 1, "axis")
		if err != nil {
			return nil, err
		}
		attrs = ir.Attrs{"axis": ir.IntAttr(a)}
	}
	return m.emit1("Flatten", attrs, x), nil
}

func liftUnsqueeze(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	axes, ok, err := m.intsArg(1, "axis", "axes")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("no axis")
	}
	return m.emit1("Unsqueeze", nil, x, m.ints64("axes", axes)), nil
}

// enumName looks a value up in an enum table.
func enumName(table map[string]int64, v int64) (string, bool) {
	for k, x := range table {
		if x == v {
			return k, true
		}
	}
	return "", false
}

func liftResize(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	if err := m.nchwOnly(); err != nil {
		return nil, err
	}
	if len(m.ins) != 2 {
		return nil, unsupported("Resize with %d inputs", len(m.ins))
	}
	arg, err := m.tensor(1)
	if err != nil {
		return nil, err
	}
	attrs := ir.Attrs{}
	method, err := m.intArg(-1, 0, "method")
	if err != nil {
		return nil, err
	}
	mode, ok := enumName(resizeMethods, method)
	if !ok {
		return nil, unsupported("method %d", method)
	}
	attrs["mode"] = ir.StringAttr(mode)
	coord, err := m.intArg(-1, 0, "coordinate_transform_mode")
	if err != nil {
		return nil, err
	}
	cname, ok := enumName(resizeCoords, coord)
	if !ok {
		return nil, unsupported("coordinate_transform_mode %d", coord)
	}
	attrs["coordinate_transformation_mode"] = ir.StringAttr(cname)
	if mode == "nearest" {
		nm, err := m.intArg(-1, 1, "nearest_mode")
		if err != nil {
			return nil, err
		}
		nname, ok := enumName(resizeNearest, nm)
		if !ok {
			return nil, unsupported("nearest_mode %d", nm)
		}
		attrs["nearest_mode"] = ir.StringAttr(nname)
	}
	if m.arg(-1, "cubic_coeff") != nil {
		f, err := m.floatArg(-1, -0.75, "cubic_coeff")
		if err != nil {
			return nil, err
		}
		attrs["cubic_coeff_a"] = ir.FloatAttr(f)
	}
	if m.arg(-1, "exclude_outside") != nil {
		e, err := m.intArg(-1, 0, "exclude_outside")
		if err != nil {
			return nil, err
		}
		attrs["exclude_outside"] = ir.IntAttr(e)
	}
	bySize, err := m.intArg(-1, 0, "bysize")
	if err != nil {
		return nil, err
	}
	if bySize != 0 || arg.DType.IsInt() {
		return m.emit1("Resize", attrs, x, nil, nil, arg), nil
	}
	return m.emit1("Resize", attrs, x, nil, arg), nil
}

func liftTopKFusion(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	k, err := m.tensor(1)
	if err != nil {
		return nil, err
	}
	axis, err := m.intArg(-1, -1, "axis")
	if err != nil {
		return nil, err
	}
	largest, err := m.intArg(-1, 1, "largest")
	if err != nil {
		return nil, err
	}
	sorted, err := m.intArg(-1, 1, "sorted")
	if err != nil {
		return nil, err
	}
	attrs := ir.Attrs{"axis": ir.IntAttr(axis), "largest": ir.IntAttr(b2i(largest != 0)), "sorted": ir.IntAttr(b2i(sorted != 0))}
	n := m.emit("TopK", []*ir.Value{x, k}, 2, attrs)
	return tuple{n.Outputs[0], n.Outputs[1]}, nil
}

func liftCumSum(m *mnode) (any, error) { return liftScan(m, "CumSum") }

// liftScan reads CumSum or CumProd into the IR op of the same name.
func liftScan(m *mnode, op string) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	var axis *ir.Value
	if len(m.ins) > 1 {
		if axis, err = m.tensor(1); err != nil {
			return nil, err
		}
	} else {
		a, err := m.intArg(-1, 0, "axis")
		if err != nil {
			return nil, err
		}
		axis = m.konst("axis", ir.Int64Tensor([]int64{}, a))
	}
	attrs := ir.Attrs{}
	// Attributes (converter_lite, mind_ir_version 1) or op_def inputs 2
	// and 3 (cum_sum_op.yaml: input, axis, exclusive, reverse).
	for i, k := range []string{"exclusive", "reverse"} {
		if m.arg(2+i, k) != nil {
			v, err := m.intArg(2+i, 0, k)
			if err != nil {
				return nil, err
			}
			attrs[k] = ir.IntAttr(b2i(v != 0))
		}
	}
	return m.emit1(op, attrs, x, axis), nil
}

func liftRange(m *mnode) (any, error) {
	var in [3]*ir.Value
	for i := range in {
		v, err := m.tensor(i)
		if err != nil {
			return nil, err
		}
		in[i] = v
	}
	return m.emit1("Range", nil, in[:]...), nil
}

func liftConstantOfShape(m *mnode) (any, error) {
	shape, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	dt := ir.Float32
	if v := m.arg(-1, "data_type"); v != nil {
		id, ok := asInt(v)
		if !ok {
			return nil, unsupported("data_type %v", v)
		}
		if dt, ok = mindTypeIDs[id]; !ok {
			return nil, unsupported("data_type TypeId %d", id)
		}
	}
	val := 0.0
	if v := m.arg(-1, "value"); v != nil {
		f, ok := asFloats(v)
		if !ok || len(f) != 1 {
			return nil, unsupported("value %v", v)
		}
		val = f[0]
	}
	t := ir.NewTensor(dt, []int64{1})
	switch {
	case dt.IsFloat():
		t.PutFloat(0, val)
	case dt == ir.Bool:
		t.Data[0] = byte(b2i(val != 0))
	default:
		putInts(t, []int64{int64(val)})
	}
	return m.emit1("ConstantOfShape", ir.Attrs{"value": ir.TensorAttr(t)}, shape), nil
}

func liftTrilu(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	ins := []*ir.Value{x}
	k, err := m.optTensor(1)
	if err != nil {
		return nil, err
	}
	if k == nil {
		d, err := m.intArg(-1, 0, "diagonal")
		if err != nil {
			return nil, err
		}
		if d != 0 {
			k = m.konst("k", ir.Int64Tensor([]int64{}, d))
		}
	}
	if k != nil {
		ins = append(ins, k)
	}
	var attrs ir.Attrs
	if m.op == "Tril" {
		attrs = ir.Attrs{"upper": ir.IntAttr(0)}
	}
	return m.emit1("Trilu", attrs, ins...), nil
}

// padV3 reads MindSpore's PadV3(x, paddings, value) in constant mode with
// paddings_contiguous: (begin, end) pairs from the last dim backwards
// (what the framework form writes for a padded MaxPool, and ops.pad).
func (m *mnode) padV3() (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	if mode, _ := asString(m.arg(-1, "mode")); mode != "" && mode != "constant" {
		return nil, unsupported("PadV3 mode %q", mode)
	}
	if c, ok := m.arg(-1, "paddings_contiguous").(bool); ok && !c {
		return nil, unsupported("PadV3 with paddings_contiguous false")
	}
	p, ok, err := m.intsArg(1, "paddings")
	if err != nil {
		return nil, err
	}
	r := len(x.Shape)
	if !ok || len(p)%2 != 0 || x.Shape == nil || len(p)/2 > r {
		return nil, unsupported("PadV3 paddings %v for rank %d", p, r)
	}
	pads := make([]int64, 2*r)
	for i := 0; i < len(p)/2; i++ {
		d := r - 1 - i
		pads[d], pads[r+d] = p[2*i], p[2*i+1]
	}
	ins := []*ir.Value{x, m.ints64("pads", pads)}
	cv, err := m.optTensor(2)
	if err != nil {
		return nil, err
	}
	if cv != nil {
		ins = append(ins, cv)
	}
	return m.emit1("Pad", ir.Attrs{"mode": ir.StringAttr("constant")}, ins...), nil
}
