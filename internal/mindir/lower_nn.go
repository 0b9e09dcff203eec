package mindir

import (
	"fmt"
	"math"

	"gkconv/internal/ir"
	pb "gkconv/internal/mindir/mindirpb"
)

// NN, shape and data-movement ops: lowering (IR -> MindSpore primitive) and
// lifting (the primitive -> IR).
//
// Each lowering writes the primitive converter_lite's ONNX parser writes for
// the ONNX op the IR op stands for (mindspore-lite/tools/converter/parser/
// onnx/onnx_*_parser.cc, after onnx_inputs_adjust.cc / onnx_pad_adjust.cc
// moved attributes to inputs), with MindSpore's attribute names and MindIR
// types (ops/infer/cxx_api/*.cc, ops/op_def/op_name.h; enums of
// mindapi/base/types.h and format.h written as INT64, bools as BOOL, floats
// as FLOAT, int vectors as TUPLE of INT64). An instance the primitive cannot
// express exactly returns errNoPrimitive (then Custom "gkconv.<op>"); every
// lowering also refuses IR attributes it does not know, so nothing is lost.
// A form whose input count the primitive schema (what `converter check`
// enforces) does not allow falls back too (schemaGated), or, for Slice, Pad
// and Trilu, is written in another form the schema has.
// The lift of each primitive gives back the IR node; constant inputs that
// stay inputs are passed through as they are (same name, same dtype).

var lowerNNTable = schemaGated(map[string]lowerFunc{
	"Conv2D":          lowerConv2D,
	"Conv2DTranspose": lowerConvTranspose,
	"AvgPool":         lowerPool,
	"MaxPool":         lowerPool,
	"BatchNorm":       lowerBatchNorm,
	"InstanceNorm":    lowerInstanceNorm,
	"LayerNorm":       lowerLayerNorm,
	"Softmax":         lowerSoftmax,
	"LogSoftmax":      lowerLogSoftmax,
	"MatMul":          lowerMatMul,
	"Einsum":          lowerEinsum,
	"Transpose":       lowerTranspose,
	"Concat":          lowerConcat,
	"Split":           lowerSplit,
	"Slice":           lowerSlice,
	"Gather":          lowerGather,
	"GatherD":         lowerGatherD,
	"Pad":             lowerPad,
	"Tile":            lowerTile,
	"DepthToSpace":    lowerDepthToSpace,
	"SpaceToDepth":    lowerSpaceToDepth,
	"Reshape":         lowerReshape,
	"Flatten":         lowerFlatten,
	"Squeeze":         lowerSqueeze,
	"Unsqueeze":       lowerUnsqueeze,
	"Resize":          lowerResize,
	"TopK":            lowerTopK,
	"CumSum":          lowerCumSum,
	"Range":           lowerRange,
	"Shape":           lowerShape,
	"Size":            lowerSize,
	"ConstantOfShape": lowerConstantOfShape,
	"Trilu":           lowerTrilu,
})

// schemaGated wraps every lowering so that a node whose input count the
// primitive schema (schema.go, generated from MindSpore's sources) does not
// allow is written as Custom instead: `converter check` applies the same
// rule (check_rules.go checkInputCount), and converter_lite's Lite forms
// with extra inputs (a bias on Conv2DFusion/MatMulFusion, N tensors on
// Concat/Einsum, LayerNormFusion without beta, Conv2dTransposeFusion
// without input_sizes) are outside the MindSpore rows the schema has. Once
// the schema admits such a form, the lowering writes it unchanged.
func schemaGated(t map[string]lowerFunc) map[string]lowerFunc {
	for op, f := range t {
		t[op] = func(c *lowerCtx) (*msNode, error) {
			m, err := f(c)
			if err == nil && !schemaInputsOK(m.prim, m.nodeInputs()) {
				return nil, errNoPrimitive
			}
			return m, err
		}
	}
	return t
}

// schemaInputsOK reports whether the schema row of prim allows n node
// inputs (primitive-init arguments as attributes, this writer's
// convention); a primitive without a row or without listed inputs is not
// checked.
func schemaInputsOK(prim string, n int) bool {
	s, ok := LookupPrim(prim)
	if !ok || s == nil {
		return true
	}
	ins := s.Inputs()
	if len(ins) == 0 {
		return true
	}
	req := 0
	for _, a := range ins {
		if !a.Optional() {
			req++
		}
	}
	return n >= req && n <= len(ins)
}

// liftNNTable: the primitives above that ops.go's dispatch does not already
// map to the same IR (Transpose, Concat, Softmax, LogSoftmax, Gather,
// Squeeze, Shape and Size are read there), plus forms of shared primitives
// (StridedSlice with ONNX inputs, Reshape's allowzero, Flatten's axis).
var liftNNTable = map[string]func(*mnode) (any, error){
	"Conv2DFusion":          liftConv2DFusion,
	"Conv2dTransposeFusion": liftConvTransposeFusion,
	"AvgPoolFusion":         liftPoolFusion,
	"MaxPoolFusion":         liftPoolFusion,
	"FusedBatchNorm":        liftFusedBatchNorm,
	"InstanceNorm":          liftInstanceNorm,
	"LayerNormFusion":       liftLayerNormFusion,
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

// MindSpore enum values (mindapi/base/types.h, format.h) and converter_lite's
// FmkType (include/registry/converter_context.h).
const (
	msPadModePad   = 0 // PadMode::PAD
	msPadModeSame  = 1 // PadMode::SAME (the odd padding at the end: ONNX SAME_UPPER)
	msPadModeValid = 2 // PadMode::VALID

	msFormatNCHW = 0 // Format::NCHW

	msActNone  = 0 // ActivationType::NO_ACTIVATION
	msActReLU  = 1 // ActivationType::RELU
	msActReLU6 = 3 // ActivationType::RELU6

	msRoundFloor = 0 // RoundMode::FLOOR
	msRoundCeil  = 1 // RoundMode::CEIL

	msPaddingConstant  = 0 // PaddingMode::CONSTANT
	msPaddingReflect   = 1 // PaddingMode::REFLECT
	msPaddingSymmetric = 2 // PaddingMode::SYMMETRIC

	fmkTypeOnnx = 2 // converter::FmkType::kFmkTypeOnnx
)

// Resize enums: ResizeMethod, CoordinateTransformMode, NearestMode.
var (
	resizeMethods = map[string]int64{"linear": 0, "nearest": 1, "cubic": 2}
	resizeCoords  = map[string]int64{"asymmetric": 0, "align_corners": 1, "half_pixel": 2}
	resizeNearest = map[string]int64{"round_prefer_floor": 1, "round_prefer_ceil": 2, "floor": 3, "ceil": 4}
)

// aInt32 is an INT32 attribute: MakeValue of a C++ int (converter_lite's
// `int fmk_type`, Reshape's allowzero, Range's d_type).
func aInt32(name string, v int64) *pb.AttributeProto {
	return &pb.AttributeProto{Name: ptr(name), Type: pb.AttributeProto_INT32.Enum(), I: ptr(v)}
}

// attrsOnly reports whether every IR attribute of n is one of names.
func attrsOnly(n *ir.Node, names ...string) bool {
	for k := range n.Attrs {
		found := false
		for _, x := range names {
			if k == x {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// emptyValue reports whether v is absent or an empty 1-D tensor (ONNX
// exporters pass empty tensors for absent optional inputs).
func emptyValue(v *ir.Value) bool {
	return v == nil || (len(v.Shape) == 1 && v.Shape[0] == 0)
}

// inputsUpTo returns the node's inputs up to the last present one, refusing
// a missing one in the middle (MindSpore's None only stands for optional
// trailing arguments of these primitives).
func inputsUpTo(n *ir.Node, max int) ([]*ir.Value, bool) {
	ins := n.Inputs
	for len(ins) > 0 && ins[len(ins)-1] == nil {
		ins = ins[:len(ins)-1]
	}
	if len(ins) > max {
		return nil, false
	}
	for _, v := range ins {
		if v == nil {
			return nil, false
		}
	}
	return ins, true
}

func i32Tensor(shape []int64, v ...int64) (*ir.Tensor, bool) {
	t := ir.NewTensor(ir.Int32, shape)
	for i, x := range v {
		if x < math.MinInt32 || x > math.MaxInt32 {
			return nil, false
		}
		t.I32()[i] = int32(x)
	}
	return t, true
}

// ---- convolutions and pools ----

// window2 is a 2-D ONNX window in MindSpore's terms: kernel [kh, kw],
// strides, dilations, pad_mode and pad list [top, bottom, left, right].
type window2 struct {
	kernel, strides, dilations, padList []int64
	padMode                             int64
}

// readWindow2 reads the ONNX window attributes of a node with two spatial
// dims; kernel defaults to defKernel (the weights' spatial dims). ok is
// false for forms MindSpore has no pad_mode for (SAME_LOWER puts the odd
// padding at the start; MindSpore's SAME at the end).
func readWindow2(n *ir.Node, defKernel []int64) (w window2, ok bool) {
	w.kernel = n.Attrs.Ints("kernel_shape", defKernel)
	w.strides = n.Attrs.Ints("strides", []int64{1, 1})
	w.dilations = n.Attrs.Ints("dilations", []int64{1, 1})
	pads := n.Attrs.Ints("pads", []int64{0, 0, 0, 0})
	if len(w.kernel) != 2 || len(w.strides) != 2 || len(w.dilations) != 2 || len(pads) != 4 {
		return w, false
	}
	for i := 0; i < 2; i++ {
		if w.kernel[i] <= 0 || w.strides[i] <= 0 || w.dilations[i] <= 0 {
			return w, false
		}
	}
	for _, p := range pads {
		if p < 0 {
			return w, false
		}
	}
	switch n.Attrs.String("auto_pad", "NOTSET") {
	case "NOTSET":
		w.padMode = msPadModePad
		w.padList = []int64{pads[0], pads[2], pads[1], pads[3]} // ONNX [t, l, b, r] -> [t, b, l, r]
	case "VALID":
		w.padMode = msPadModeValid
		w.padList = []int64{0, 0, 0, 0}
	case "SAME_UPPER":
		w.padMode = msPadModeSame
		w.padList = []int64{0, 0, 0, 0}
	default:
		return w, false
	}
	return w, true
}

// spatialRank2 reports whether x (or w) says the op has two spatial dims.
func spatialRank2(n *ir.Node, vs ...*ir.Value) bool {
	for _, v := range vs {
		if v != nil && v.Shape != nil {
			return len(v.Shape) == 4
		}
	}
	return len(n.Attrs.Ints("kernel_shape", nil)) == 2
}

// weightKernel is the spatial dims of a 4-D weight, nil when unknown.
func weightKernel(w *ir.Value) []int64 {
	if w == nil || len(w.Shape) != 4 || w.Shape[2] <= 0 || w.Shape[3] <= 0 {
		return nil
	}
	return []int64{w.Shape[2], w.Shape[3]}
}

// lowerConv2D: ONNX Conv -> Conv2DFusion (onnx_conv_parser.cc). 1-D and 3-D
// convolutions have other primitives (converter_lite rewrites 1-D ones
// around a Conv2DFusion and writes Conv3D), so only two spatial dims here.
func lowerConv2D(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !attrsOnly(n, "pads", "strides", "dilations", "group", "kernel_shape", "auto_pad") || len(n.Outputs) != 1 {
		return nil, errNoPrimitive
	}
	ins, ok := inputsUpTo(n, 3)
	if !ok || len(ins) < 2 || !spatialRank2(n, ins[0], ins[1]) {
		return nil, errNoPrimitive
	}
	x, w := ins[0], ins[1]
	win, ok := readWindow2(n, weightKernel(w))
	if !ok {
		return nil, errNoPrimitive
	}
	group := n.Attrs.Int("group", 1)
	if group <= 0 {
		return nil, errNoPrimitive
	}
	m := &msNode{prim: "Conv2DFusion", inputs: ins}
	m.attrs = append(m.attrs,
		aInt("OriginalFormat", msFormatNCHW),
		aInts("kernel_size", win.kernel...),
		aInts("stride", win.strides...),
		aInts("dilation", win.dilations...),
		aInt("pad_mode", win.padMode),
		aInts("pad", 0, 0, 0, 0),
		aInts("pad_list", win.padList...),
		aInt("group", group),
		aInt("mode", 1),
		aInt("format", msFormatNCHW),
		aInt("activation_type", msActNone))
	// in_channel/out_channel come from the weights (GetConvChannel); when
	// their shape is unknown converter_lite leaves them out too.
	if len(w.Shape) == 4 && w.Shape[0] >= 0 && w.Shape[1] >= 0 {
		cin, cout := w.Shape[1]*group, w.Shape[0]
		if len(x.Shape) == 4 && x.Shape[1] >= 0 && x.Shape[1] != cin {
			return nil, errNoPrimitive
		}
		m.attrs = append(m.attrs, aInt("in_channel", cin), aInt("out_channel", cout),
			aBool("is_depth_wise", group == cin && cin == cout))
	}
	return m, nil
}

// lowerConvTranspose: ONNX ConvTranspose -> Conv2dTransposeFusion
// (onnx_conv_transpose_parser.cc). output_shape has no MindSpore attribute
// (the parser drops it), and ONNX's SAME padding of a transposed
// convolution is not MindSpore's, so both fall back.
func lowerConvTranspose(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !attrsOnly(n, "pads", "strides", "dilations", "group", "kernel_shape", "auto_pad", "output_padding") || len(n.Outputs) != 1 {
		return nil, errNoPrimitive
	}
	ins, ok := inputsUpTo(n, 3)
	if !ok || len(ins) < 2 || !spatialRank2(n, ins[0], ins[1]) {
		return nil, errNoPrimitive
	}
	w := ins[1]
	win, ok := readWindow2(n, weightKernel(w))
	if !ok || win.padMode == msPadModeSame {
		return nil, errNoPrimitive
	}
	outPad := n.Attrs.Ints("output_padding", []int64{0, 0})
	if len(outPad) != 2 || outPad[0] < 0 || outPad[1] < 0 {
		return nil, errNoPrimitive
	}
	group := n.Attrs.Int("group", 1)
	if group <= 0 {
		return nil, errNoPrimitive
	}
	m := &msNode{prim: "Conv2dTransposeFusion", inputs: ins}
	m.attrs = append(m.attrs,
		aInt("OriginalFormat", msFormatNCHW),
		aInts("pad", 0, 0, 0, 0),
		aInt("group", group),
		aInt("pad_mode", win.padMode),
		aInts("dilation", win.dilations...),
		aInts("pad_list", win.padList...),
		aInts("kernel_size", win.kernel...),
		aInts("stride", win.strides...),
		aInts("output_paddings", outPad...),
		aInt("format", msFormatNCHW),
		aInt("activation_type", msActNone))
	if len(ins) == 3 {
		m.attrs = append(m.attrs, aBool("has_bias", true))
	}
	if len(w.Shape) == 4 && w.Shape[0] >= 0 && w.Shape[1] >= 0 {
		m.attrs = append(m.attrs, aInt("in_channel", w.Shape[0]), aInt("out_channel", w.Shape[1]*group))
		if group != 1 && w.Shape[1] == 1 {
			m.attrs = append(m.attrs, aBool("is_depth_wise", true))
		}
	}
	return m, nil
}

// lowerPool: ONNX AveragePool / MaxPool -> AvgPoolFusion / MaxPoolFusion
// (onnx_pool_parser.cc). Falls back for: other spatial ranks; dilations
// (MindSpore's pools have none); MaxPool's Indices output (ONNX indexes the
// whole tensor, MindSpore's MaxPoolWithArgmax each plane); ceil_mode where
// ONNX drops a last window that starts in the end padding (MindSpore's CEIL
// keeps it) and, for AvgPool, where ceil adds a partial window at all;
// count_include_pad=1 with padding (MindSpore Lite's AvgPool divides by the
// elements inside the input).
func lowerPool(c *lowerCtx) (*msNode, error) {
	n := c.n
	allowed := []string{"kernel_shape", "strides", "pads", "auto_pad", "ceil_mode", "dilations"}
	if n.Op == "MaxPool" {
		allowed = append(allowed, "storage_order") // only about Indices
	} else {
		allowed = append(allowed, "count_include_pad")
	}
	if !attrsOnly(n, allowed...) || len(n.Inputs) != 1 || n.Inputs[0] == nil || len(n.Outputs) != 1 {
		return nil, errNoPrimitive
	}
	x := n.Inputs[0]
	if x.Shape != nil && len(x.Shape) != 4 {
		return nil, errNoPrimitive
	}
	for _, d := range n.Attrs.Ints("dilations", nil) {
		if d != 1 {
			return nil, errNoPrimitive
		}
	}
	if !n.Attrs.Has("kernel_shape") {
		return nil, errNoPrimitive
	}
	win, ok := readWindow2(n, nil)
	if !ok {
		return nil, errNoPrimitive
	}
	ceil := n.Attrs.Int("ceil_mode", 0) != 0
	if ceil && win.padMode == msPadModePad {
		if len(x.Shape) != 4 {
			return nil, errNoPrimitive
		}
		for i := 0; i < 2; i++ {
			in := x.Shape[2+i]
			if in < 0 {
				return nil, errNoPrimitive
			}
			pb, pe := win.padList[2*i], win.padList[2*i+1]
			span := in + pb + pe - win.kernel[i]
			if span < 0 {
				return nil, errNoPrimitive
			}
			s := win.strides[i]
			floorOut, ceilOut := span/s+1, (span+s-1)/s+1
			if (ceilOut-1)*s >= in+pb { // ONNX drops this window
				return nil, errNoPrimitive
			}
			if n.Op == "AvgPool" && ceilOut != floorOut {
				return nil, errNoPrimitive
			}
		}
	}
	countPad := n.Attrs.Has("count_include_pad")
	if n.Attrs.Int("count_include_pad", 0) != 0 {
		padded := win.padMode == msPadModeSame
		for _, p := range win.padList {
			padded = padded || p != 0
		}
		if padded {
			return nil, errNoPrimitive
		}
	}
	round := int64(msRoundFloor)
	if ceil {
		round = msRoundCeil
	}
	m := &msNode{prim: n.Op + "Fusion", inputs: n.Inputs}
	m.attrs = append(m.attrs,
		aInt("OriginalFormat", msFormatNCHW),
		aInts("kernel_size", win.kernel...),
		aInt("pad_mode", win.padMode),
		aInt("round_mode", round),
		aInts("pad", win.padList...),
		aInts("strides", win.strides...),
		aBool("global", false),
		aInt("format", msFormatNCHW),
		aInt("activation_type", msActNone),
		aInt32("fmk_type", fmkTypeOnnx))
	if countPad {
		m.attrs = append(m.attrs, aBool("count_include_pad", n.Attrs.Int("count_include_pad", 0) != 0))
	}
	return m, nil
}

// ---- normalizations ----

// lowerBatchNorm: ONNX BatchNormalization (inference) -> FusedBatchNorm
// (onnx_batchnorm_parser.cc), whose five outputs are y, batch mean and
// variance and two reserve spaces: only y is the IR's. A node with the
// training outputs falls back.
func lowerBatchNorm(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !attrsOnly(n, "epsilon", "momentum") || len(n.Outputs) != 1 {
		return nil, errNoPrimitive
	}
	ins, ok := inputsUpTo(n, 5)
	if !ok || len(ins) != 5 {
		return nil, errNoPrimitive
	}
	x := ins[0]
	m := &msNode{prim: "FusedBatchNorm", inputs: ins}
	m.attrs = append(m.attrs, aFloat("epsilon", float32(n.Attrs.Float("epsilon", 1e-5))))
	if n.Attrs.Has("momentum") {
		m.attrs = append(m.attrs, aFloat("momentum", float32(n.Attrs.Float("momentum", 0.9))))
	}
	var ch []int64
	if len(x.Shape) >= 2 {
		ch = []int64{x.Shape[1]}
	}
	m.outs = []msOut{{v: n.Outputs[0]}}
	for i := 0; i < 4; i++ {
		m.outs = append(m.outs, msOut{dt: x.DType, shape: ch})
	}
	return m, nil
}

// lowerInstanceNorm: ONNX InstanceNormalization -> InstanceNorm.
func lowerInstanceNorm(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !attrsOnly(n, "epsilon") || len(n.Outputs) != 1 {
		return nil, errNoPrimitive
	}
	ins, ok := inputsUpTo(n, 3)
	if !ok || len(ins) != 3 {
		return nil, errNoPrimitive
	}
	m := &msNode{prim: "InstanceNorm", inputs: ins}
	m.attrs = append(m.attrs, aFloat("epsilon", float32(n.Attrs.Float("epsilon", 1e-5))))
	return m, nil
}

// lowerLayerNorm: ONNX LayerNormalization -> LayerNormFusion
// (onnx_layer_norm_parser.cc: begin_norm_axis = begin_params_axis = axis).
// MindSpore's outputs are y, mean and variance; the IR's second and third
// are mean and 1/std, so a node using them falls back, as does a scale or
// bias that only broadcasts to the normalized dims (MindSpore's gamma and
// beta have exactly x.shape[axis:]).
func lowerLayerNorm(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !attrsOnly(n, "axis", "epsilon", "stash_type") || len(n.Outputs) != 1 {
		return nil, errNoPrimitive
	}
	if n.Attrs.Int("stash_type", int64(ir.Float32)) != int64(ir.Float32) {
		return nil, errNoPrimitive
	}
	ins, ok := inputsUpTo(n, 3)
	if !ok || len(ins) < 2 {
		return nil, errNoPrimitive
	}
	x := ins[0]
	if x.Shape == nil {
		return nil, errNoPrimitive
	}
	axis := n.Attrs.Int("axis", -1)
	r := int64(len(x.Shape))
	if axis < -r || axis >= r {
		return nil, errNoPrimitive
	}
	a := axis
	if a < 0 {
		a += r
	}
	norm := x.Shape[a:]
	for _, p := range ins[1:] {
		if len(p.Shape) != len(norm) {
			return nil, errNoPrimitive
		}
		for i, d := range p.Shape {
			if d < 0 || (norm[i] >= 0 && norm[i] != d) {
				return nil, errNoPrimitive
			}
		}
	}
	m := &msNode{prim: "LayerNormFusion", inputs: ins}
	m.attrs = append(m.attrs, aInt("begin_norm_axis", axis), aInt("begin_params_axis", axis),
		aFloat("epsilon", float32(n.Attrs.Float("epsilon", 1e-5))))
	stat := append([]int64{}, x.Shape...)
	for i := a; i < r; i++ {
		stat[i] = 1
	}
	m.outs = []msOut{{v: n.Outputs[0]}, {dt: ir.Float32, shape: stat}, {dt: ir.Float32, shape: stat}}
	return m, nil
}

// lowerSoftmax: Softmax with axis as a tuple (set_axis({axis})).
func lowerSoftmax(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !attrsOnly(n, "axis") || len(n.Inputs) != 1 || n.Inputs[0] == nil {
		return nil, errNoPrimitive
	}
	m := &msNode{prim: "Softmax", inputs: n.Inputs}
	m.attrs = append(m.attrs, aInts("axis", n.Attrs.Int("axis", -1)))
	return m, nil
}

// lowerLogSoftmax: LogSoftmax with an int axis.
func lowerLogSoftmax(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !attrsOnly(n, "axis") || len(n.Inputs) != 1 || n.Inputs[0] == nil {
		return nil, errNoPrimitive
	}
	m := &msNode{prim: "LogSoftmax", inputs: n.Inputs}
	m.attrs = append(m.attrs, aInt("axis", n.Attrs.Int("axis", -1)))
	return m, nil
}

// ---- MatMul, Einsum ----

// lowerMatMul: MatMul / Gemm -> MatMulFusion (onnx_matmul_parser.cc) with
// the IR's bias as MatMulFusion's third input. Other IR attributes (the
// pack_b hint, ...) are kept as extra primitive attributes, which MindSpore
// keeps as they are and the lift reads back.
func lowerMatMul(c *lowerCtx) (*msNode, error) {
	n := c.n
	ins, ok := inputsUpTo(n, 3)
	if !ok || len(ins) < 2 || len(n.Outputs) != 1 {
		return nil, errNoPrimitive
	}
	m := &msNode{prim: "MatMulFusion", inputs: ins}
	m.attrs = append(m.attrs,
		aBool("transpose_a", n.Attrs.Int("transpose_a", 0) != 0),
		aBool("transpose_b", n.Attrs.Int("transpose_b", 0) != 0),
		aInt("activation_type", msActNone))
	for _, k := range n.Attrs.Keys() {
		switch k {
		case "transpose_a", "transpose_b":
			continue
		case "activation_type", "input_names", "output_names", "shape":
			return nil, errNoPrimitive // would read back as MatMulFusion's own
		case ir.AttrPackB:
			// A MindSpore bool, like transpose_a (the IR keeps 0/1).
			m.attrs = append(m.attrs, aBool(k, n.Attrs.Int(k, 0) != 0))
			continue
		}
		a, err := irAttrProto(k, n.Attrs[k])
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", k, err)
		}
		m.attrs = append(m.attrs, a)
	}
	return m, nil
}

// lowerEinsum: Einsum with the equation as a string attribute
// (onnx_einsum_parser.cc).
func lowerEinsum(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !attrsOnly(n, "equation") || !n.Attrs.Has("equation") || len(n.Outputs) != 1 {
		return nil, errNoPrimitive
	}
	for _, v := range n.Inputs {
		if v == nil {
			return nil, errNoPrimitive
		}
	}
	m := &msNode{prim: "Einsum", inputs: n.Inputs, pack: &[2]int{0, len(n.Inputs)}}
	m.attrs = append(m.attrs, aStr("equation", n.Attrs.String("equation", "")))
	return m, nil
}

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

// lowerSliceCore writes an ONNX Slice as MindSpore's own StridedSlice(x,
// begin, end, strides) over every axis, with begin_mask/end_mask for the
// whole-axis ends, when the primitive schema has no ONNX form. It needs
// constant starts/ends/axes/steps and the sliced dims: ONNX clamps starts
// and ends to the axis (to -1 for a negative step), and a negative step
// that runs to the start of the axis has no end index MindSpore would not
// wrap, so it becomes an end_mask bit.
func lowerSliceCore(c *lowerCtx) (*msNode, error) {
	n := c.n
	x := n.Inputs[0]
	if x.Shape == nil {
		return nil, errNoPrimitive
	}
	r := len(x.Shape)
	starts, ok1 := c.constInts(1)
	ends, ok2 := c.constInts(2)
	if !ok1 || !ok2 || len(starts) != len(ends) {
		return nil, errNoPrimitive
	}
	axes := make([]int64, len(starts))
	for i := range axes {
		axes[i] = int64(i)
	}
	if c.in(3) != nil {
		a, ok := c.constInts(3)
		if !ok || len(a) != len(starts) {
			return nil, errNoPrimitive
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
			return nil, errNoPrimitive
		}
		steps = st
	}
	if r > 63 {
		return nil, errNoPrimitive
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
			return nil, errNoPrimitive
		}
		seen[a] = true
		d, st := x.Shape[a], steps[i]
		if d <= 0 || st == 0 {
			return nil, errNoPrimitive
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
	var axes []int64
	if c.in(1) != nil {
		a, ok := c.constInts(1)
		if !ok {
			return nil, errNoPrimitive
		}
		axes = a
		if len(axes) == 0 {
			return nil, errNoPrimitive // an empty axes input; the empty attribute means "all"
		}
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
func lowerCumSum(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !attrsOnly(n, "exclusive", "reverse") || len(n.Inputs) != 2 || n.Inputs[0] == nil || n.Inputs[1] == nil {
		return nil, errNoPrimitive
	}
	m := &msNode{prim: "CumSum", inputs: n.Inputs}
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
	if m.arg(-1, "pad_mode") == nil {
		return "PAD", nil
	}
	return m.padModeArg(-1, "pad_mode")
}

// liftWindow sets the ONNX window attributes from MindSpore's kernel,
// stride, dilation (the names given) and pad list [top, bottom, left, right].
func (m *mnode) liftWindow(attrs ir.Attrs, strideName, dilationName, padName string) error {
	k, ok, err := m.intsArg(-1, "kernel_size")
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
		v, ok, err := m.intsArg(-1, p[0])
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
		list, ok, err := m.intsArg(-1, padName)
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
	group, err := m.intArg(-1, 1, "group")
	if err != nil {
		return nil, err
	}
	attrs["group"] = ir.IntAttr(group)
	ins := []*ir.Value{x, w}
	if b != nil {
		ins = append(ins, b)
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
	group, err := m.intArg(-1, 1, "group")
	if err != nil {
		return nil, err
	}
	attrs["group"] = ir.IntAttr(group)
	op, ok, err := m.intsArg(-1, "output_paddings", "output_padding")
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
	global, err := m.intArg(-1, 0, "global")
	if err != nil {
		return nil, err
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
	round, err := m.intArg(-1, msRoundFloor, "round_mode")
	if err != nil {
		return nil, err
	}
	if round == msRoundCeil {
		attrs["ceil_mode"] = ir.IntAttr(1)
	}
	if op == "AvgPool" {
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
	eps, err := m.floatArg(-1, 1e-5, "epsilon")
	if err != nil {
		return nil, err
	}
	attrs := ir.Attrs{"epsilon": ir.FloatAttr(eps)}
	if m.arg(-1, "momentum") != nil {
		mom, err := m.floatArg(-1, 0.9, "momentum")
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
	eps, err := m.floatArg(-1, 1e-5, "epsilon")
	if err != nil {
		return nil, err
	}
	return m.emit1("InstanceNorm", ir.Attrs{"epsilon": ir.FloatAttr(eps)}, in[:]...), nil
}

func liftLayerNormFusion(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	gamma, err := m.tensor(1)
	if err != nil {
		return nil, err
	}
	beta, err := m.optTensor(2)
	if err != nil {
		return nil, err
	}
	axis, err := m.intArg(-1, 1, "begin_norm_axis")
	if err != nil {
		return nil, err
	}
	paxis, err := m.intArg(-1, axis, "begin_params_axis")
	if err != nil {
		return nil, err
	}
	if paxis != axis {
		return nil, unsupported("begin_params_axis %d differs from begin_norm_axis %d", paxis, axis)
	}
	if ea, err := m.intArg(-1, 1, "elementwise_affine"); err != nil || ea == 0 {
		if err != nil {
			return nil, err
		}
		return nil, unsupported("elementwise_affine false")
	}
	eps, err := m.floatArg(-1, 1e-5, "epsilon")
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
		v, err := m.intArg(-1, 0, k)
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

func liftSplit(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	axis, err := m.intArg(-1, 0, "axis")
	if err != nil {
		return nil, err
	}
	num, err := m.intArg(-1, 0, "output_num")
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

func liftCumSum(m *mnode) (any, error) {
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
	for _, k := range []string{"exclusive", "reverse"} {
		if m.arg(-1, k) != nil {
			v, err := m.intArg(-1, 0, k)
			if err != nil {
				return nil, err
			}
			attrs[k] = ir.IntAttr(b2i(v != 0))
		}
	}
	return m.emit1("CumSum", attrs, x, axis), nil
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
