package onnx

import (
	"fmt"

	"strings"

	"gkconv/internal/ir"
	"gkconv/internal/onnx/onnxpb"
)

// convert emits the IR for one supported ONNX node, rewriting old-opset
// forms into the op table's conventions (newest-opset signatures).
func (c *nodeCtx) convert(info *ir.OpInfo) error {
	opset := c.b.opset
	if c.attrs.Has("broadcast") {
		if err := c.legacyBroadcast(); err != nil {
			return err
		}
	}
	switch c.op {
	case "Constant":
		return c.constantNode()
	case "Identity":
		if len(c.in) == 1 && c.in[0] != nil && len(c.outs) == 1 && c.outs[0] != "" && !c.b.graphOut[c.outs[0]] {
			c.b.env[c.outs[0]] = c.in[0] // removed by rewiring
			return nil
		}
	case "Gemm":
		return c.gemm()
	case "Upsample":
		return c.upsample()
	case "GlobalMaxPool":
		return c.globalPool()
	case "CastLike":
		// The target's element type is known when building: a plain Cast.
		// Otherwise the IR's CastLike reads it from the target at run time.
		target := c.input(1)
		if target == nil || c.input(0) == nil {
			return fmt.Errorf("CastLike needs an input and a target")
		}
		if target.DType == ir.Undefined {
			if c.b.placeholders[target] {
				return unsupportedf("CastLike target type is unknown: it comes from an unsupported node")
			}
			c.emit("CastLike", c.in[:2], ir.Attrs{}, c.outs...)
			return nil
		}
		c.in = c.in[:1]
		c.attrs["to"] = ir.IntAttr(int64(target.DType))
		c.emit("Cast", c.in, c.attrs, c.outs...)
		return nil
	case "Resize":
		c.resize()
	case "Softmax", "LogSoftmax", "Hardmax":
		if opset < 13 {
			return c.softmaxLegacy(info.Name)
		}
	case "ReduceSum":
		if err := c.axesToInput(false); err != nil {
			return err
		}
	case "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
		"ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "Squeeze":
		if err := c.axesToInput(false); err != nil {
			return err
		}
	case "Unsqueeze":
		if err := c.axesToInput(true); err != nil {
			return err
		}
		if c.input(1) == nil {
			return fmt.Errorf("Unsqueeze has no axes")
		}
	case "Split":
		if err := c.attrToInput("split", 1, false); err != nil {
			return err
		}
		if c.input(1) == nil && !c.attrs.Has("num_outputs") {
			c.attrs["num_outputs"] = ir.IntAttr(int64(len(c.outs)))
		}
	case "Clip":
		if err := c.clipLegacy(); err != nil {
			return err
		}
	case "Pad":
		if err := c.padLegacy(); err != nil {
			return err
		}
	case "Slice":
		if c.attrs.Has("starts") || c.attrs.Has("ends") {
			if !c.attrs.Has("starts") || !c.attrs.Has("ends") {
				return fmt.Errorf("Slice needs both starts and ends")
			}
			for i, name := range []string{"starts", "ends", "axes"} {
				if err := c.attrToInput(name, i+1, true); err != nil {
					return err
				}
			}
		}
	case "TopK":
		if c.attrs.Has("k") {
			k := c.attrs.Int("k", 0)
			delete(c.attrs, "k")
			c.setInput(1, c.constant("k", ir.Int64Tensor([]int64{1}, k)))
		}
	case "Reshape":
		if err := c.attrToInput("shape", 1, true); err != nil {
			return err
		}
	case "BatchNormalization":
		if err := c.batchNorm(); err != nil {
			return err
		}
	case "Dropout":
		if c.attrs.Has("ratio") {
			r := c.attrs.Float("ratio", 0.5)
			delete(c.attrs, "ratio")
			c.setInput(1, c.constant("ratio", ir.Float32Tensor([]int64{}, float32(r))))
		}
		delete(c.attrs, "is_test")
	case "Cast":
		if a, ok := c.attrs["to"]; ok && (a.Kind == ir.AttrString || a.Kind == ir.AttrBytes) {
			// Cast-1..5 named the type ("FLOAT").
			s := strings.ToUpper(c.attrs.String("to", ""))
			dt, ok := onnxpb.TensorProto_DataType_value[s]
			if !ok {
				return fmt.Errorf("Cast to unknown type %q", s)
			}
			c.attrs["to"] = ir.IntAttr(int64(dt))
		}
		if !c.attrs.Has("to") {
			return fmt.Errorf("Cast has no 'to' attribute")
		}
		if _, err := irDType(int32(c.attrs.Int("to", 0))); err != nil {
			return unsupportedf("Cast to %s", dtypeName(int32(c.attrs.Int("to", 0))))
		}
	case "Concat":
		if !c.attrs.Has("axis") {
			c.attrs["axis"] = ir.IntAttr(1) // Concat-1 default
		}
	case "Tile":
		if len(c.in) == 3 {
			return unsupportedf("Tile-1 form (tiles, axis inputs)")
		}
	}
	c.emit(info.Name, c.in, c.attrs, c.outs...)
	return nil
}

// intsAttr reads an ints attribute, checking its kind.
func (c *nodeCtx) intsAttr(name string) ([]int64, bool, error) {
	a, ok := c.attrs[name]
	if !ok {
		return nil, false, nil
	}
	switch a.Kind {
	case ir.AttrInts:
		return a.Ints, true, nil
	case ir.AttrInt:
		return []int64{a.I}, true, nil
	}
	return nil, true, fmt.Errorf("attribute %s must be ints", name)
}

// attrToInput moves an ints attribute into an int64 constant input at index
// i; an empty list becomes an absent input unless keepEmpty.
func (c *nodeCtx) attrToInput(name string, i int, keepEmpty bool) error {
	vals, ok, err := c.intsAttr(name)
	if err != nil || !ok {
		return err
	}
	delete(c.attrs, name)
	if c.input(i) != nil {
		return fmt.Errorf("%s is given both as attribute and as input %d", name, i)
	}
	if len(vals) == 0 && !keepEmpty {
		return nil
	}
	c.setInput(i, c.constant(name, ir.Int64Tensor([]int64{int64(len(vals))}, vals...)))
	return nil
}

// axesToInput: Reduce*, Squeeze and Unsqueeze took axes as an attribute
// before opset 13 (ReduceSum, Squeeze, Unsqueeze) or 18 (the other Reduce*).
func (c *nodeCtx) axesToInput(keepEmpty bool) error { return c.attrToInput("axes", 1, keepEmpty) }

// dtypeOf is the element type of v, float32 when unknown.
func dtypeOf(vs ...*ir.Value) ir.DType {
	for _, v := range vs {
		if v != nil && v.DType != ir.Undefined {
			return v.DType
		}
	}
	return ir.Float32
}

// scalar builds a rank-0 tensor of dt holding v.
func scalar(dt ir.DType, v float64) (*ir.Tensor, error) {
	if dt.Size() == 0 || dt == ir.Complex64 || dt == ir.Complex128 {
		return nil, fmt.Errorf("cannot build a %s constant", dt)
	}
	t := ir.NewTensor(dt, []int64{})
	if err := putNumber(t, 0, v); err != nil {
		return nil, err
	}
	return t, nil
}

func putNumber(t *ir.Tensor, i int, v float64) error {
	switch t.DType {
	case ir.Float32, ir.Float64, ir.Float16, ir.BFloat16:
		t.PutFloat(i, v)
	case ir.Int8:
		t.I8()[i] = int8(v)
	case ir.Uint8:
		t.U8()[i] = uint8(v)
	case ir.Bool:
		t.Data[i] = 0
		if v != 0 {
			t.Data[i] = 1
		}
	case ir.Int16:
		t.I16()[i] = int16(v)
	case ir.Uint16:
		t.U16()[i] = uint16(v)
	case ir.Int32:
		t.I32()[i] = int32(v)
	case ir.Uint32:
		t.U32()[i] = uint32(v)
	case ir.Int64:
		t.I64()[i] = int64(v)
	case ir.Uint64:
		t.U64()[i] = uint64(v)
	default:
		return fmt.Errorf("cannot build a %s constant", t.DType)
	}
	return nil
}

func (c *nodeCtx) scalarConst(suffix string, dt ir.DType, v float64) (*ir.Value, error) {
	t, err := scalar(dt, v)
	if err != nil {
		return nil, err
	}
	return c.constant(suffix, t), nil
}

// constantNode turns a Constant node into an IR constant.
func (c *nodeCtx) constantNode() error {
	if len(c.outs) != 1 || c.outs[0] == "" {
		return fmt.Errorf("Constant must have one named output")
	}
	if len(c.rn.attrs) != 1 {
		return fmt.Errorf("Constant must have exactly one value attribute, has %d", len(c.rn.attrs))
	}
	an := c.rn.attrs[0].pb.GetName()
	if an == "sparse_value" {
		return unsupportedf("sparse_value constants are not supported")
	}
	a := c.attrs[an]
	var t *ir.Tensor
	wrong := func(kind string) error { return fmt.Errorf("Constant attribute %s must be %s", an, kind) }
	switch an {
	case "value":
		if a.Kind != ir.AttrTensor {
			return wrong("a tensor")
		}
		t = a.T
	case "value_float":
		if a.Kind != ir.AttrFloat {
			return wrong("a float")
		}
		t = ir.Float32Tensor([]int64{}, float32(a.F))
	case "value_floats":
		if a.Kind != ir.AttrFloats {
			return wrong("floats")
		}
		t = ir.NewTensor(ir.Float32, []int64{int64(len(a.Floats))})
		for i, f := range a.Floats {
			t.PutFloat(i, f)
		}
	case "value_int":
		if a.Kind != ir.AttrInt {
			return wrong("an int")
		}
		t = ir.Int64Tensor([]int64{}, a.I)
	case "value_ints":
		if a.Kind != ir.AttrInts {
			return wrong("ints")
		}
		t = ir.Int64Tensor([]int64{int64(len(a.Ints))}, a.Ints...)
	case "value_string":
		if a.Kind != ir.AttrString {
			return wrong("a string")
		}
		t = &ir.Tensor{DType: ir.String, Shape: []int64{}, Strings: []string{a.S}}
	case "value_strings":
		if a.Kind != ir.AttrStrings {
			return wrong("strings")
		}
		t = &ir.Tensor{DType: ir.String, Shape: []int64{int64(len(a.Strings))}, Strings: a.Strings}
	default:
		return fmt.Errorf("unknown Constant attribute %s", an)
	}
	c.b.env[c.outs[0]] = c.b.g.AddConst(c.outs[0], t)
	return nil
}

// gemm: Y = alpha*op(A)*op(B) + beta*C becomes MatMul [-> Mul alpha]
// [-> Add/BiasAdd beta*C], beta folded into C when C is constant.
func (c *nodeCtx) gemm() error {
	if len(c.outs) != 1 {
		return fmt.Errorf("Gemm must have one output")
	}
	a, bm, cv := c.input(0), c.input(1), c.input(2)
	if a == nil || bm == nil {
		return fmt.Errorf("Gemm needs inputs A and B")
	}
	alpha := c.attrs.Float("alpha", 1)
	beta := c.attrs.Float("beta", 1)
	dt := dtypeOf(a, bm, cv)
	needMul := alpha != 1
	needAdd := cv != nil && beta != 0
	mm := c.emit("MatMul", []*ir.Value{a, bm}, ir.Attrs{
		"transpose_a": ir.IntAttr(c.attrs.Int("transA", 0)),
		"transpose_b": ir.IntAttr(c.attrs.Int("transB", 0)),
	}, c.out(!needMul && !needAdd, "matmul"))
	cur := mm.Outputs[0]
	if needMul {
		k, err := c.scalarConst("alpha", dt, alpha)
		if err != nil {
			return err
		}
		cur = c.emit("Mul", []*ir.Value{cur, k}, nil, c.out(!needAdd, "alpha")).Outputs[0]
	}
	if !needAdd {
		return nil
	}
	if !cv.IsConst() {
		if beta != 1 {
			k, err := c.scalarConst("beta", dtypeOf(cv, a), beta)
			if err != nil {
				return err
			}
			cv = c.emit("Mul", []*ir.Value{cv, k}, nil, c.out(false, "beta")).Outputs[0]
		}
		c.emit("Add", []*ir.Value{cur, cv}, nil, c.outs[0])
		return nil
	}
	ct := cv.Const
	if beta != 1 {
		vals, err := ct.Float64s()
		if err != nil {
			return fmt.Errorf("Gemm C: %w", err)
		}
		scaled := ir.NewTensor(ct.DType, ct.Shape)
		for i, v := range vals {
			if err := putNumber(scaled, i, beta*v); err != nil {
				return err
			}
		}
		cv = c.constant("beta_c", scaled)
	}
	// N, the result's column count, from B's shape.
	n := int64(-1)
	if len(bm.Shape) == 2 {
		n = bm.Shape[1]
		if c.attrs.Int("transB", 0) != 0 {
			n = bm.Shape[0]
		}
	}
	if len(ct.Shape) == 1 && n > 0 && ct.Shape[0] == n {
		c.emit("BiasAdd", []*ir.Value{cur, cv}, ir.Attrs{"format": ir.StringAttr("NCHW")}, c.outs[0])
	} else {
		c.emit("Add", []*ir.Value{cur, cv}, nil, c.outs[0])
	}
	return nil
}

// globalPool: GlobalMaxPool is ReduceMax over the spatial axes with
// keepdims, a form the fusion passes understand (a maximum is the same in
// any order). GlobalAveragePool is an IR op of its own (its row in the op
// table): onnxruntime sums it in MLAS's pooling order, not ReduceMean's, and
// converter_lite writes it as AvgPoolFusion(global).
func (c *nodeCtx) globalPool() error {
	x := c.input(0)
	if x == nil || len(c.outs) != 1 {
		return fmt.Errorf("%s needs one input and one output", c.op)
	}
	if x.Shape == nil {
		if c.b.placeholders[x] {
			return unsupportedf("the input rank is unknown: it comes from an unsupported node")
		}
		return unsupportedf("the input rank is unknown")
	}
	r := int64(len(x.Shape))
	if r < 3 {
		return fmt.Errorf("input rank %d, want N, C and spatial dims", r)
	}
	axes := make([]int64, 0, r-2)
	for a := int64(2); a < r; a++ {
		axes = append(axes, a)
	}
	ax := c.constant("axes", ir.Int64Tensor([]int64{int64(len(axes))}, axes...))
	c.emit("ReduceMax", []*ir.Value{x, ax}, ir.Attrs{"keepdims": ir.IntAttr(1)}, c.outs[0])
	return nil
}

// softmaxLegacy: before opset 13 Softmax/LogSoftmax/Hardmax coerced the input to 2-D
// at axis (default 1). When axis is the last one this is the new semantics;
// otherwise Flatten(axis) -> op(axis=-1) -> Reshape back.
func (c *nodeCtx) softmaxLegacy(irOp string) error {
	x := c.input(0)
	if x == nil || len(c.outs) != 1 {
		return fmt.Errorf("%s needs one input and one output", c.op)
	}
	axis := c.attrs.Int("axis", 1)
	if x.Shape != nil {
		r := int64(len(x.Shape))
		if axis < -r || axis > r || (r > 0 && axis == r) {
			return fmt.Errorf("axis %d is out of range for rank %d", axis, r)
		}
		if axis < 0 {
			axis += r
		}
		if axis == r-1 || r == 0 {
			c.emit(irOp, []*ir.Value{x}, ir.Attrs{"axis": ir.IntAttr(-1)}, c.outs[0])
			return nil
		}
	}
	flat := c.emit("Flatten", []*ir.Value{x}, ir.Attrs{"axis": ir.IntAttr(axis)}, c.out(false, "flatten")).Outputs[0]
	sm := c.emit(irOp, []*ir.Value{flat}, ir.Attrs{"axis": ir.IntAttr(-1)}, c.out(false, strings.ToLower(irOp))).Outputs[0]
	var shape *ir.Value
	if x.ShapeKnown() {
		shape = c.constant("shape", ir.Int64Tensor([]int64{int64(len(x.Shape))}, x.Shape...))
	} else {
		shape = c.emit("Shape", []*ir.Value{x}, nil, c.out(false, "shape")).Outputs[0]
	}
	c.emit("Reshape", []*ir.Value{sm, shape}, nil, c.outs[0])
	return nil
}

// clipLegacy: Clip before opset 11 had min/max attributes.
func (c *nodeCtx) clipLegacy() error {
	dt := dtypeOf(c.input(0))
	for i, name := range []string{"min", "max"} {
		if !c.attrs.Has(name) {
			continue
		}
		v := c.attrs.Float(name, 0)
		delete(c.attrs, name)
		if c.input(i+1) != nil {
			return fmt.Errorf("%s is given both as attribute and as input", name)
		}
		k, err := c.scalarConst(name, dt, v)
		if err != nil {
			return err
		}
		c.setInput(i+1, k)
	}
	return nil
}

// padLegacy: Pad before opset 11 had pads (paddings in Pad-1) and value attributes.
func (c *nodeCtx) padLegacy() error {
	if c.attrs.Has("paddings") && !c.attrs.Has("pads") {
		c.attrs["pads"] = c.attrs["paddings"]
		delete(c.attrs, "paddings")
	}
	if !c.attrs.Has("pads") {
		if c.input(1) == nil {
			return fmt.Errorf("Pad has no pads")
		}
		return nil
	}
	if err := c.attrToInput("pads", 1, true); err != nil {
		return err
	}
	if c.attrs.Has("value") {
		v := c.attrs.Float("value", 0)
		delete(c.attrs, "value")
		k, err := c.scalarConst("value", dtypeOf(c.input(0)), v)
		if err != nil {
			return err
		}
		c.setInput(2, k)
	}
	return nil
}

// batchNorm drops the old attributes (spatial, is_test) and, in inference
// mode, the training outputs, which inference never produces. training_mode=1
// (opset 14+) keeps Y, running_mean and running_var.
func (c *nodeCtx) batchNorm() error {
	if c.attrs.Has("spatial") && c.attrs.Int("spatial", 1) == 0 {
		return unsupportedf("spatial=0 (per-activation statistics)")
	}
	delete(c.attrs, "spatial")
	delete(c.attrs, "is_test")
	if c.attrs.Int("training_mode", 0) != 0 {
		if len(c.outs) > 3 {
			c.outs = c.outs[:3]
		}
		return nil
	}
	delete(c.attrs, "training_mode")
	if len(c.outs) > 1 {
		for _, o := range c.outs[1:] {
			if o != "" && (c.b.uses[o] > 0 || c.b.graphOut[o]) {
				return unsupportedf("training outputs (running or saved mean/var) are used")
			}
		}
		c.outs = c.outs[:1]
	}
	return nil
}

// upsample: Upsample (opset 7-9) becomes Resize with the coordinate mapping
// Upsample had.
func (c *nodeCtx) upsample() error {
	if c.b.opset < 7 {
		return unsupportedf("Upsample-1 (height_scale/width_scale form)")
	}
	var scales *ir.Value
	if c.attrs.Has("scales") {
		fs := c.attrs.Floats("scales", nil)
		t := ir.NewTensor(ir.Float32, []int64{int64(len(fs))})
		for i, f := range fs {
			t.PutFloat(i, f)
		}
		scales = c.constant("scales", t)
		delete(c.attrs, "scales")
	} else {
		scales = c.input(1)
	}
	if scales == nil || c.input(0) == nil {
		return fmt.Errorf("Upsample needs an input and scales")
	}
	c.in = []*ir.Value{c.input(0), nil, scales}
	c.resize10Attrs(scales)
	c.emit("Resize", c.in, c.attrs, c.outs...)
	return nil
}

// resize: Resize-10 took (X, scales); later forms may mark absent roi and
// scales with empty tensors.
func (c *nodeCtx) resize() {
	if c.b.opset < 11 {
		scales := c.input(1)
		c.in = []*ir.Value{c.input(0), nil, scales}
		c.resize10Attrs(scales)
		return
	}
	for i := 1; i <= 2; i++ {
		if v := c.input(i); v.IsConst() && v.Const.NumElements() == 0 {
			c.in[i] = nil
		}
	}
}

// resize10Attrs sets the opset-11 attributes that give Resize-10/Upsample
// semantics: asymmetric coordinates; nearest rounds down when upsampling and
// up when downsampling (onnxruntime's behaviour for these opsets).
func (c *nodeCtx) resize10Attrs(scales *ir.Value) {
	mode := strings.ToLower(c.attrs.String("mode", "nearest"))
	if mode == "bilinear" || mode == "trilinear" {
		mode = "linear"
	}
	c.attrs["mode"] = ir.StringAttr(mode)
	c.attrs["coordinate_transformation_mode"] = ir.StringAttr("asymmetric")
	if mode == "nearest" {
		nearest := "floor"
		if scales.IsConst() {
			if fs, err := scales.Const.Float64s(); err == nil {
				down := false
				for _, f := range fs {
					if f < 1 {
						down = true
					}
				}
				if down {
					nearest = "ceil"
				}
			}
		}
		c.attrs["nearest_mode"] = ir.StringAttr(nearest)
	}
}

var legacyBroadcastOps = map[string]bool{
	"Add": true, "Sub": true, "Mul": true, "Div": true, "Pow": true, "And": true,
	"Or": true, "Xor": true, "Equal": true, "Greater": true, "Less": true, "PRelu": true,
}

// legacyBroadcast: before opset 7, binary ops broadcast B only with
// broadcast=1, aligned at axis. Numpy rules align at the end, so B gets
// trailing 1-dims.
func (c *nodeCtx) legacyBroadcast() error {
	if !legacyBroadcastOps[c.op] {
		return nil
	}
	bc := c.attrs.Int("broadcast", 0)
	axisAttr, hasAxis := c.attrs["axis"]
	delete(c.attrs, "broadcast")
	delete(c.attrs, "axis")
	if bc == 0 || !hasAxis {
		return nil
	}
	a, bv := c.input(0), c.input(1)
	if a == nil || bv == nil {
		return fmt.Errorf("needs two inputs")
	}
	if a.Shape == nil || bv.Shape == nil {
		return unsupportedf("legacy broadcast with axis needs the input ranks, which are unknown")
	}
	ra, rb := int64(len(a.Shape)), int64(len(bv.Shape))
	axis := axisAttr.I
	if axis < 0 {
		axis += ra
	}
	trailing := ra - axis - rb
	if axis < 0 || trailing < 0 {
		return fmt.Errorf("broadcast axis %d does not fit ranks %d and %d", axisAttr.I, ra, rb)
	}
	if trailing == 0 {
		return nil
	}
	shape := append(append([]int64{}, bv.Shape...), make([]int64, trailing)...)
	axes := make([]int64, trailing)
	for i := range axes {
		shape[rb+int64(i)] = 1
		axes[i] = rb + int64(i)
	}
	if bv.IsConst() {
		t := *bv.Const
		t.Shape = shape
		c.in[1] = c.constant("b", &t)
		return nil
	}
	ax := c.constant("axes", ir.Int64Tensor([]int64{trailing}, axes...))
	c.in[1] = c.emit("Unsqueeze", []*ir.Value{bv, ax}, nil, c.out(false, "unsqueeze")).Outputs[0]
	return nil
}
