package mindir

// Lowerings of the IR's shape and data-movement ops to MindSpore
// primitives: Transpose, Concat, Split, Slice (StridedSlice), Gather,
// GatherD, Pad, Tile, DepthToSpace, SpaceToDepth, Reshape, Flatten,
// Squeeze, Unsqueeze, Resize, TopK, CumSum, Range, Shape, Size,
// ConstantOfShape and Trilu. The tables and shared helpers are in
// lower_nn.go, the lifts in lift_shape.go.

import (
	"math"

	"gkconv/internal/ir"
	pb "gkconv/internal/mindir/mindirpb"
)

// ---- shape and data movement ----

// lowerTranspose: Transpose(x, perm) with perm an int32 constant input (the
// parser's perm attribute, moved to an input for MindSpore's Transpose).
func lowerTranspose(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !attrsOnly(n, "perm") || len(n.Inputs) != 1 || n.Inputs[0] == nil {
		return nil, errNoPrimitive
	}
	perm := n.Attrs.Ints("perm", nil)
	if !n.Attrs.Has("perm") {
		x := n.Inputs[0]
		if x.Shape == nil {
			return nil, errNoPrimitive // the default (reversed axes) needs the rank
		}
		r := int64(len(x.Shape))
		perm = make([]int64, r)
		for i := range perm {
			perm[i] = r - 1 - int64(i)
		}
	}
	t, ok := i32Tensor([]int64{int64(len(perm))}, perm...)
	if !ok {
		return nil, errNoPrimitive
	}
	return &msNode{prim: "Transpose", inputs: []*ir.Value{n.Inputs[0], c.konst("perm", t)}}, nil
}

// lowerConcat: Concat with the tensors as inputs and an int axis.
func lowerConcat(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !attrsOnly(n, "axis") || len(n.Inputs) == 0 {
		return nil, errNoPrimitive
	}
	for _, v := range n.Inputs {
		if v == nil {
			return nil, errNoPrimitive
		}
	}
	m := &msNode{prim: "Concat", inputs: n.Inputs, pack: &[2]int{0, len(n.Inputs)}}
	m.attrs = append(m.attrs, aInt("axis", n.Attrs.Int("axis", 0)))
	return m, nil
}

// lowerSplit: Split with axis, output_num and size_splits attributes
// (onnx_split_parser.cc); always a tuple. The ONNX-18 uneven split (ceil
// chunks) is written as explicit size_splits when the dim is known.
func lowerSplit(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !attrsOnly(n, "axis", "num_outputs") || len(n.Inputs) == 0 || n.Inputs[0] == nil {
		return nil, errNoPrimitive
	}
	x := n.Inputs[0]
	nout := int64(len(n.Outputs))
	axis := n.Attrs.Int("axis", 0)
	var sizes []int64
	if v := c.in(1); !emptyValue(v) {
		s, ok := c.constInts(1)
		if !ok || int64(len(s)) != nout {
			return nil, errNoPrimitive
		}
		sizes = s
	} else if len(n.Inputs) > 2 {
		return nil, errNoPrimitive
	} else if x.Shape != nil {
		r := int64(len(x.Shape))
		if axis < -r || axis >= r {
			return nil, errNoPrimitive
		}
		a := axis
		if a < 0 {
			a += r
		}
		if d := x.Shape[a]; d >= 0 && d%nout != 0 {
			chunk := (d + nout - 1) / nout
			for i := int64(0); i < nout; i++ {
				sizes = append(sizes, min(chunk, max(d-i*chunk, 0)))
			}
		}
	}
	m := &msNode{prim: "Split", inputs: []*ir.Value{x}, tuple: true}
	m.attrs = append(m.attrs, aInt("axis", axis), aInt("output_num", nout))
	if sizes != nil {
		m.attrs = append(m.attrs, aInts("size_splits", sizes...))
	}
	return m, nil
}

// lowerSlice: ONNX Slice -> StridedSlice(x, starts, ends, axes, steps) in
// converter_lite's ONNX form (onnx_slice_parser.cc + AdjustStridedSlice,
// which fills absent axes and steps), marked fmk_type ONNX.
func lowerSlice(c *lowerCtx) (*msNode, error) {
	n := c.n
	if len(n.Attrs) > 0 || len(n.Inputs) < 3 || len(n.Inputs) > 5 {
		return nil, errNoPrimitive
	}
	for i := 0; i < 3; i++ {
		if n.Inputs[i] == nil {
			return nil, errNoPrimitive
		}
	}
	starts := n.Inputs[1]
	count := int64(-1)
	if len(starts.Shape) == 1 {
		count = starts.Shape[0]
	}
	if count < 0 {
		return nil, errNoPrimitive
	}
	dt := starts.DType
	if dt != ir.Int32 && dt != ir.Int64 {
		return nil, errNoPrimitive
	}
	// fill makes axes 0..count-1 (step 1) or steps 1 (step 0), in the dtype
	// of starts (AdjustStridedSlice's keep_origin_dtype).
	fill := func(suffix string, first, step int64) *ir.Value {
		t := ir.NewTensor(dt, []int64{count})
		for i := int64(0); i < count; i++ {
			if dt == ir.Int32 {
				t.I32()[i] = int32(first + i*step)
			} else {
				t.I64()[i] = first + i*step
			}
		}
		return c.konst(suffix, t)
	}
	if !schemaInputsOK("StridedSlice", 5) {
		return lowerSliceCore(c)
	}
	ins := []*ir.Value{n.Inputs[0], starts, n.Inputs[2], c.in(3), c.in(4)}
	if ins[3] == nil {
		ins[3] = fill("axes", 0, 1)
	}
	if ins[4] == nil {
		ins[4] = fill("steps", 1, 0)
	}
	m := &msNode{prim: "StridedSlice", inputs: ins}
	m.attrs = append(m.attrs, aInt("fmk_type", fmkTypeOnnx))
	return m, nil
}

// sliceArgs are StridedSlice's begin, end, strides and masks over every axis.
type sliceArgs struct {
	begin, end, strides []int64
	beginMask, endMask  int64
}

// coreSliceArgs computes an ONNX Slice's StridedSlice arguments over every
// axis (see lowerSliceCore).
func coreSliceArgs(c *lowerCtx) (sliceArgs, bool) {
	n := c.n
	x := n.Inputs[0]
	if x.Shape == nil {
		return sliceArgs{}, false
	}
	r := len(x.Shape)
	starts, ok1 := c.constInts(1)
	ends, ok2 := c.constInts(2)
	if !ok1 || !ok2 || len(starts) != len(ends) {
		return sliceArgs{}, false
	}
	axes := make([]int64, len(starts))
	for i := range axes {
		axes[i] = int64(i)
	}
	if c.in(3) != nil {
		a, ok := c.constInts(3)
		if !ok || len(a) != len(starts) {
			return sliceArgs{}, false
		}
		axes = a
	}
	steps := make([]int64, len(starts))
	for i := range steps {
		steps[i] = 1
	}
	if c.in(4) != nil {
		st, ok := c.constInts(4)
		if !ok || len(st) != len(starts) {
			return sliceArgs{}, false
		}
		steps = st
	}
	if r > 63 {
		return sliceArgs{}, false
	}
	begin, end, strides := make([]int64, r), make([]int64, r), make([]int64, r)
	var beginMask, endMask int64
	for i := range strides {
		strides[i] = 1
		beginMask |= 1 << i
		endMask |= 1 << i
	}
	seen := make([]bool, r)
	for i, a := range axes {
		if a < 0 {
			a += int64(r)
		}
		if a < 0 || a >= int64(r) || seen[a] {
			return sliceArgs{}, false
		}
		seen[a] = true
		d, st := x.Shape[a], steps[i]
		if d <= 0 || st == 0 {
			return sliceArgs{}, false
		}
		b, e := starts[i], ends[i]
		if b < 0 {
			b += d
		}
		if e < 0 {
			e += d
		}
		if st > 0 {
			b, e = min(max(b, 0), d), min(max(e, 0), d)
		} else {
			b, e = min(max(b, 0), d-1), min(max(e, -1), d-1)
		}
		bit := int64(1) << a
		beginMask &^= bit
		endMask &^= bit
		begin[a], end[a], strides[a] = b, e, st
		if st < 0 && e == -1 {
			end[a] = 0
			endMask |= bit
		}
	}
	return sliceArgs{begin, end, strides, beginMask, endMask}, true
}

// lowerSliceCore writes an ONNX Slice as MindSpore's own StridedSlice(x,
// begin, end, strides) over every axis, with begin_mask/end_mask for the
// whole-axis ends, when the primitive schema has no ONNX form. It needs
// constant starts/ends/axes/steps and the sliced dims: ONNX clamps starts
// and ends to the axis (to -1 for a negative step), and a negative step
// that runs to the start of the axis has no end index MindSpore would not
// wrap, so it becomes an end_mask bit.
func lowerSliceCore(c *lowerCtx) (*msNode, error) {
	sl, ok := coreSliceArgs(c)
	if !ok {
		return nil, errNoPrimitive
	}
	x, r := c.n.Inputs[0], len(sl.begin)
	begin, end, strides, beginMask, endMask := sl.begin, sl.end, sl.strides, sl.beginMask, sl.endMask

	m := &msNode{prim: "StridedSlice", inputs: []*ir.Value{x,
		c.konst("begin", ir.Int64Tensor([]int64{int64(r)}, begin...)),
		c.konst("end", ir.Int64Tensor([]int64{int64(r)}, end...)),
		c.konst("strides", ir.Int64Tensor([]int64{int64(r)}, strides...))}}
	m.attrs = append(m.attrs, aInt("begin_mask", beginMask), aInt("end_mask", endMask), aInt("ellipsis_mask", 0),
		aInt("new_axis_mask", 0), aInt("shrink_axis_mask", 0))
	return m, nil
}

// lowerGather: Gather(x, indices, axis) with the axis an int32 scalar input.
func lowerGather(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !attrsOnly(n, "axis") || len(n.Inputs) != 2 || n.Inputs[0] == nil || n.Inputs[1] == nil {
		return nil, errNoPrimitive
	}
	t, ok := i32Tensor([]int64{}, n.Attrs.Int("axis", 0))
	if !ok {
		return nil, errNoPrimitive
	}
	return &msNode{prim: "Gather", inputs: []*ir.Value{n.Inputs[0], n.Inputs[1], c.konst("axis", t)}}, nil
}

// lowerGatherD: ONNX GatherElements -> GatherD(x, dim, index)
// (onnx_gather_element_parser.cc + AdjustGatherD: dim an int32 scalar).
func lowerGatherD(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !attrsOnly(n, "axis") || len(n.Inputs) != 2 || n.Inputs[0] == nil || n.Inputs[1] == nil {
		return nil, errNoPrimitive
	}
	t, ok := i32Tensor([]int64{}, n.Attrs.Int("axis", 0))
	if !ok {
		return nil, errNoPrimitive
	}
	return &msNode{prim: "GatherD", inputs: []*ir.Value{n.Inputs[0], c.konst("dim", t), n.Inputs[1]}}, nil
}

// lowerPad: ONNX Pad -> PadFusion(x) with paddings a tuple of (begin, end)
// pairs per axis, padding_mode and constant_value (onnx_pad_parser.cc's
// form for pads given as an attribute; the primitive schema has no
// paddings input). Falls back for: pads or a constant value computed at
// run time (converter_lite inserts Reshape/Transpose nodes), a constant
// value float32 cannot hold, negative pads (cropping), wrap mode, and edge
// mode with a pad above 1 (converter_lite writes edge as SYMMETRIC, the
// same only for pads of 0 or 1).
func lowerPad(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !attrsOnly(n, "mode") || len(n.Inputs) < 2 || len(n.Inputs) > 4 || n.Inputs[0] == nil {
		return nil, errNoPrimitive
	}
	x := n.Inputs[0]
	pads, ok := c.constInts(1)
	if !ok || len(pads)%2 != 0 {
		return nil, errNoPrimitive
	}
	k := len(pads) / 2
	begins, ends := pads[:k], pads[k:]
	if v := c.in(3); v != nil {
		axes, ok := c.constInts(3)
		if !ok || len(axes) != k || x.Shape == nil {
			return nil, errNoPrimitive
		}
		r := len(x.Shape)
		b, e := make([]int64, r), make([]int64, r)
		seen := make([]bool, r)
		for i, a := range axes {
			if a < 0 {
				a += int64(r)
			}
			if a < 0 || a >= int64(r) || seen[a] {
				return nil, errNoPrimitive
			}
			seen[a] = true
			b[a], e[a] = begins[i], ends[i]
		}
		begins, ends, k = b, e, r
	}
	if x.Shape != nil && len(x.Shape) != k {
		return nil, errNoPrimitive
	}
	maxPad := int64(0)
	paddings := &pb.AttributeProto{Name: ptr("paddings"), Type: pb.AttributeProto_TUPLE.Enum()}
	for i := 0; i < k; i++ {
		if begins[i] < 0 || ends[i] < 0 {
			return nil, errNoPrimitive
		}
		maxPad = max(maxPad, begins[i], ends[i])
		paddings.Values = append(paddings.Values, &pb.AttributeProto{Type: pb.AttributeProto_TUPLE.Enum(), Values: []*pb.AttributeProto{
			{Type: pb.AttributeProto_INT64.Enum(), Ints: []int64{begins[i]}},
			{Type: pb.AttributeProto_INT64.Enum(), Ints: []int64{ends[i]}},
		}})
	}
	var mode int64
	switch n.Attrs.String("mode", "constant") {
	case "constant":
		mode = msPaddingConstant
	case "reflect":
		mode = msPaddingReflect
	case "edge":
		if maxPad > 1 {
			return nil, errNoPrimitive
		}
		mode = msPaddingSymmetric
	default:
		return nil, errNoPrimitive
	}
	cv := float32(0)
	if v := c.in(2); !emptyValue(v) {
		if mode != msPaddingConstant || v.Const == nil {
			return nil, errNoPrimitive
		}
		f, err := v.Const.Float64s()
		if err != nil || len(f) != 1 || float64(float32(f[0])) != f[0] {
			return nil, errNoPrimitive
		}
		cv = float32(f[0])
	}
	m := &msNode{prim: "PadFusion", inputs: []*ir.Value{x}}
	m.attrs = append(m.attrs, paddings, aInt("padding_mode", mode), aFloat("constant_value", cv))
	return m, nil
}

// lowerTile: ONNX Tile -> TileFusion(x, repeats) (onnx_tile_parser.cc).
func lowerTile(c *lowerCtx) (*msNode, error) {
	n := c.n
	if len(n.Attrs) > 0 || len(n.Inputs) != 2 || n.Inputs[0] == nil || n.Inputs[1] == nil {
		return nil, errNoPrimitive
	}
	return &msNode{prim: "TileFusion", inputs: n.Inputs}, nil
}

// lowerDepthToSpace: DepthToSpace with block_size, the ONNX mode string and
// fmk_type (onnx_depth_to_space_parser.cc).
func lowerDepthToSpace(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !attrsOnly(n, "blocksize", "mode") || len(n.Inputs) != 1 || n.Inputs[0] == nil {
		return nil, errNoPrimitive
	}
	mode := n.Attrs.String("mode", "DCR")
	if mode != "DCR" && mode != "CRD" {
		return nil, errNoPrimitive
	}
	m := &msNode{prim: "DepthToSpace", inputs: n.Inputs}
	m.attrs = append(m.attrs, aInt("block_size", n.Attrs.Int("blocksize", 0)))
	if n.Attrs.Has("mode") {
		m.attrs = append(m.attrs, aStr("mode", mode))
	}
	m.attrs = append(m.attrs, aInt("fmk_type", fmkTypeOnnx))
	return m, nil
}

// lowerSpaceToDepth: SpaceToDepth with block_size and fmk_type.
func lowerSpaceToDepth(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !attrsOnly(n, "blocksize") || len(n.Inputs) != 1 || n.Inputs[0] == nil {
		return nil, errNoPrimitive
	}
	m := &msNode{prim: "SpaceToDepth", inputs: n.Inputs}
	m.attrs = append(m.attrs, aInt("block_size", n.Attrs.Int("blocksize", 0)), aInt("fmk_type", fmkTypeOnnx))
	return m, nil
}

// lowerReshape: Reshape(x, shape) marked fmk_type ONNX (0 copies a dim), with
// allowzero when given (onnx_reshape_parser.cc; both C++ ints: INT32).
func lowerReshape(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !attrsOnly(n, "allowzero") || len(n.Inputs) != 2 || n.Inputs[0] == nil || n.Inputs[1] == nil {
		return nil, errNoPrimitive
	}
	m := &msNode{prim: "Reshape", inputs: n.Inputs}
	m.attrs = append(m.attrs, aInt32("fmk_type", fmkTypeOnnx))
	if n.Attrs.Has("allowzero") {
		m.attrs = append(m.attrs, aInt32("allowzero", n.Attrs.Int("allowzero", 0)))
	}
	return m, nil
}

// lowerFlatten: Flatten with axis when given (onnx_flatten_parser.cc).
func lowerFlatten(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !attrsOnly(n, "axis") || len(n.Inputs) != 1 || n.Inputs[0] == nil {
		return nil, errNoPrimitive
	}
	m := &msNode{prim: "Flatten", inputs: n.Inputs}
	if n.Attrs.Has("axis") {
		m.attrs = append(m.attrs, aInt("axis", n.Attrs.Int("axis", 1)))
	}
	return m, nil
}

// lowerSqueeze: Squeeze with a constant axes input as the axis attribute;
// no axes is an empty axis (squeeze every unit dim).
func lowerSqueeze(c *lowerCtx) (*msNode, error) {
	n := c.n
	if len(n.Attrs) > 0 || len(n.Inputs) < 1 || len(n.Inputs) > 2 || n.Inputs[0] == nil {
		return nil, errNoPrimitive
	}
	axes, ok := c.optConstInts(1)
	if !ok || c.in(1) != nil && len(axes) == 0 {
		return nil, errNoPrimitive // an empty axes input; the empty attribute means "all"
	}
	m := &msNode{prim: "Squeeze", inputs: n.Inputs[:1]}
	m.attrs = append(m.attrs, aInts("axis", axes...))
	return m, nil
}

// lowerUnsqueeze: Unsqueeze with the constant axes as the axis attribute
// (onnx_unsqueeze_parser.cc reads the axes input's data).
func lowerUnsqueeze(c *lowerCtx) (*msNode, error) {
	n := c.n
	if len(n.Attrs) > 0 || len(n.Inputs) != 2 || n.Inputs[0] == nil {
		return nil, errNoPrimitive
	}
	axes, ok := c.constInts(1)
	if !ok {
		return nil, errNoPrimitive
	}
	m := &msNode{prim: "Unsqueeze", inputs: n.Inputs[:1]}
	m.attrs = append(m.attrs, aInts("axis", axes...))
	return m, nil
}

// lowerResize: ONNX Resize -> Resize(x, scales or sizes) (onnx_resize_parser.cc
// + AdjustResize, which drops roi). MindSpore's Resize scales H and W of an
// NCHW tensor with the methods linear, nearest, cubic and the coordinate
// modes asymmetric, align_corners, half_pixel. Falls back for: other ranks,
// N or C resized, scales/sizes computed at run time (they could resize N or
// C), pytorch_half_pixel (converter_lite maps it to half_pixel, which
// differs for an output size of 1), tf_crop_and_resize,
// half_pixel_symmetric, antialias, axes and keep_aspect_ratio_policy.
func lowerResize(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !attrsOnly(n, "mode", "coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a", "exclude_outside",
		"extrapolation_value", "antialias", "keep_aspect_ratio_policy") || len(n.Outputs) != 1 {
		return nil, errNoPrimitive
	}
	if n.Attrs.Int("antialias", 0) != 0 || n.Attrs.String("keep_aspect_ratio_policy", "stretch") != "stretch" {
		return nil, errNoPrimitive
	}
	if len(n.Inputs) < 2 || len(n.Inputs) > 4 || n.Inputs[0] == nil {
		return nil, errNoPrimitive
	}
	x := n.Inputs[0]
	if len(x.Shape) != 4 || x.Shape[0] < 0 || x.Shape[1] < 0 {
		return nil, errNoPrimitive
	}
	method, ok1 := resizeMethods[n.Attrs.String("mode", "nearest")]
	coord, ok2 := resizeCoords[n.Attrs.String("coordinate_transformation_mode", "half_pixel")]
	nearest, ok3 := resizeNearest[n.Attrs.String("nearest_mode", "round_prefer_floor")]
	if !ok1 || !ok2 || !ok3 {
		return nil, errNoPrimitive
	}
	scales, sizes := c.in(2), c.in(3)
	var arg *ir.Value
	bySize := false
	switch {
	case !emptyValue(sizes) && emptyValue(scales):
		s, ok := c.constInts(3)
		if !ok || len(s) != 4 || s[0] != x.Shape[0] || s[1] != x.Shape[1] {
			return nil, errNoPrimitive
		}
		arg, bySize = sizes, true
	case !emptyValue(scales) && emptyValue(sizes):
		if scales.Const == nil {
			return nil, errNoPrimitive
		}
		f, err := scales.Const.Float64s()
		if err != nil || len(f) != 4 || f[0] != 1 || f[1] != 1 {
			return nil, errNoPrimitive
		}
		arg = scales
	default:
		return nil, errNoPrimitive
	}
	m := &msNode{prim: "Resize", inputs: []*ir.Value{x, arg}}
	m.attrs = append(m.attrs,
		aInt("OriginalFormat", msFormatNCHW),
		aInt("format", msFormatNCHW),
		aInt("method", method),
		aInt("coordinate_transform_mode", coord),
		aInt("nearest_mode", nearest))
	if n.Attrs.Has("cubic_coeff_a") {
		m.attrs = append(m.attrs, aFloat("cubic_coeff", float32(n.Attrs.Float("cubic_coeff_a", -0.75))))
	}
	if n.Attrs.Has("exclude_outside") {
		m.attrs = append(m.attrs, aInt("exclude_outside", n.Attrs.Int("exclude_outside", 0)))
	}
	if bySize {
		m.attrs = append(m.attrs, aBool("bysize", true))
	}
	return m, nil
}

// lowerTopK: TopK -> TopKFusion(x, k) with axis, largest (INT64) and sorted
// (BOOL) (onnx_topk_parser.cc); two outputs, values and indices.
func lowerTopK(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !attrsOnly(n, "axis", "largest", "sorted") || len(n.Inputs) != 2 || n.Inputs[0] == nil || n.Inputs[1] == nil {
		return nil, errNoPrimitive
	}
	m := &msNode{prim: "TopKFusion", inputs: n.Inputs, tuple: true}
	m.attrs = append(m.attrs, aInt("axis", n.Attrs.Int("axis", -1)), aInt("largest", n.Attrs.Int("largest", 1)),
		aBool("sorted", n.Attrs.Int("sorted", 1) != 0))
	if len(n.Outputs) == 1 {
		v := n.Outputs[0]
		m.outs = []msOut{{v: v}, {dt: ir.Int64, shape: v.Shape}}
	}
	return m, nil
}

// lowerCumSum: CumSum(x, axis) with exclusive and reverse as BOOL when given.
func lowerCumSum(c *lowerCtx) (*msNode, error) { return lowerScan(c, "CumSum") }

// lowerScan writes CumSum or CumProd (the same operands and attributes).
func lowerScan(c *lowerCtx, prim string) (*msNode, error) {
	n := c.n
	if !attrsOnly(n, "exclusive", "reverse") || len(n.Inputs) != 2 || n.Inputs[0] == nil || n.Inputs[1] == nil {
		return nil, errNoPrimitive
	}
	m := &msNode{prim: prim, inputs: n.Inputs}
	for _, k := range []string{"exclusive", "reverse"} {
		if n.Attrs.Has(k) {
			m.attrs = append(m.attrs, aBool(k, n.Attrs.Int(k, 0) != 0))
		}
	}
	return m, nil
}

// lowerRange: Range(start, limit, delta) with d_type 0 (onnx_range_parser.cc).
func lowerRange(c *lowerCtx) (*msNode, error) {
	n := c.n
	if len(n.Attrs) > 0 || len(n.Inputs) != 3 {
		return nil, errNoPrimitive
	}
	for _, v := range n.Inputs {
		if v == nil {
			return nil, errNoPrimitive
		}
	}
	m := &msNode{prim: "Range", inputs: n.Inputs}
	m.attrs = append(m.attrs, aInt32("d_type", 0))
	return m, nil
}

// lowerShape: Shape; MindSpore's has no start/end.
func lowerShape(c *lowerCtx) (*msNode, error) {
	n := c.n
	if len(n.Inputs) != 1 || n.Inputs[0] == nil {
		return nil, errNoPrimitive
	}
	if !attrsOnly(n, "start", "end") || n.Attrs.Int("start", 0) != 0 || n.Attrs.Has("end") {
		return nil, errNoPrimitive
	}
	return &msNode{prim: "Shape", inputs: n.Inputs}, nil
}

func lowerSize(c *lowerCtx) (*msNode, error) {
	n := c.n
	if len(n.Attrs) > 0 || len(n.Inputs) != 1 || n.Inputs[0] == nil {
		return nil, errNoPrimitive
	}
	return &msNode{prim: "Size", inputs: n.Inputs}, nil
}

// msTypeIDs is the inverse of mindTypeIDs (ops.go): IR dtype -> TypeId.
var msTypeIDs = func() map[ir.DType]int64 {
	m := map[ir.DType]int64{}
	for id, dt := range mindTypeIDs {
		m[dt] = id
	}
	return m
}()

// lowerConstantOfShape: ConstantOfShape(shape) with value a tuple of one
// float and data_type a TypeId (onnx_constant_of_shape_parser.cc). A value
// float32 cannot hold exactly falls back.
func lowerConstantOfShape(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !attrsOnly(n, "value") || len(n.Inputs) != 1 || n.Inputs[0] == nil {
		return nil, errNoPrimitive
	}
	dt, val := ir.Float32, 0.0
	if n.Attrs.Has("value") {
		t := n.Attrs.Tensor("value")
		if t == nil || t.NumElements() != 1 {
			return nil, errNoPrimitive
		}
		f, err := t.Float64s()
		if err != nil {
			return nil, errNoPrimitive
		}
		dt, val = t.DType, f[0]
		if dt.IsInt() {
			if iv, err := t.Int64s(); err != nil || float64(iv[0]) != val {
				return nil, errNoPrimitive
			}
		}
	}
	id, ok := msTypeIDs[dt]
	if !ok || (float64(float32(val)) != val && !math.IsNaN(val)) {
		return nil, errNoPrimitive
	}
	m := &msNode{prim: "ConstantOfShape", inputs: n.Inputs}
	m.attrs = append(m.attrs, aFloats("value", float32(val)), aInt("data_type", id))
	return m, nil
}

// lowerTrilu: Trilu -> Triu (upper) or Tril with inputs x and k as given
// (onnx_trilu_parser.cc), or, where the primitive schema has no k input,
// a constant k as MindSpore's diagonal attribute.
func lowerTrilu(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !attrsOnly(n, "upper") || len(n.Outputs) != 1 {
		return nil, errNoPrimitive
	}
	ins, ok := inputsUpTo(n, 2)
	if !ok || len(ins) == 0 {
		return nil, errNoPrimitive
	}
	prim := "Triu"
	if n.Attrs.Int("upper", 1) == 0 {
		prim = "Tril"
	}
	if len(ins) == 2 && !schemaInputsOK(prim, 2) {
		// MindSpore's own form: the diagonal as a primitive attribute.
		k, ok := c.constInts(1)
		if !ok || len(k) != 1 {
			return nil, errNoPrimitive
		}
		m := &msNode{prim: prim, inputs: ins[:1]}
		m.attrs = append(m.attrs, aInt("diagonal", k[0]))
		return m, nil
	}
	return &msNode{prim: prim, inputs: ins}, nil
}
