package mindir

// Lowerings of the IR's convolutions and pools to MindSpore primitives:
// Conv2D -> Conv2DFusion, Conv2DTranspose -> Conv2dTransposeFusion and
// AvgPool/MaxPool -> AvgPoolFusion/MaxPoolFusion, with the 2-D window
// helpers they share (window2, readWindow2, spatialRank2, weightKernel).
// The tables, MindSpore enums and shared helpers are in lower_nn.go, the
// lifts of these primitives in lift_nn.go.

import (
	"gkconv/internal/ir"
)

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
	if !attrsOnly(n, "pads", "strides", "dilations", "group", "kernel_shape", "auto_pad", ir.AttrActivation) || len(n.Outputs) != 1 {
		return nil, errNoPrimitive
	}
	act, ok := ir.FusedActivation(n)
	if !ok || ir.IsEpilogueActivation(act) { // the writer writes these as Conv2DFusion + Activation (convApart)
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
		aInt("activation_type", act)) // ir.ActReLU/ActReLU6 are MindSpore's values
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

// lowerGlobalAvgPool: ONNX GlobalAveragePool -> AvgPoolFusion with
// global=true, as converter_lite's OnnxAvgPoolParser writes it (no
// kernel_size; pad_mode PAD, strides 1, pads 0, round_mode FLOOR). MindSpore
// Lite's AvgPoolFusion is 2-D: other spatial ranks fall back to Custom.
func lowerGlobalAvgPool(c *lowerCtx) (*msNode, error) {
	n := c.n
	if len(n.Attrs) != 0 || len(n.Inputs) != 1 || n.Inputs[0] == nil || len(n.Outputs) != 1 {
		return nil, errNoPrimitive
	}
	if x := n.Inputs[0]; len(x.Shape) != 4 {
		return nil, errNoPrimitive
	}
	m := &msNode{prim: "AvgPoolFusion", inputs: n.Inputs}
	m.attrs = append(m.attrs,
		aInt("OriginalFormat", msFormatNCHW),
		aInt("pad_mode", msPadModePad),
		aInt("round_mode", msRoundFloor),
		aInts("pad", 0, 0, 0, 0),
		aInts("strides", 1, 1),
		aBool("global", true),
		aInt("format", msFormatNCHW),
		aInt("activation_type", msActNone),
		aInt32("fmk_type", fmkTypeOnnx))
	return m, nil
}
