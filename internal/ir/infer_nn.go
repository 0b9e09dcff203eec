package ir

import "fmt"

// Shape functions of the nn ops: MatMul, convolutions, pooling,
// normalizations and softmax. Convolutions and pools follow ONNX Conv,
// ConvTranspose, AveragePool and MaxPool for any spatial rank.

// inferMatMul: numpy matmul with optional transposes of the last two dims;
// 1-D operands are promoted and their added dim removed again.
func inferMatMul(n *Node) error {
	a, b := n.Inputs[0], n.Inputs[1]
	if err := sameDType(n, 0, 1); err != nil {
		return err
	}
	dt := firstDType(a, b)
	if a.Shape == nil || b.Shape == nil {
		setOutput(n, 0, dt, nil)
		return nil
	}
	if len(a.Shape) == 0 || len(b.Shape) == 0 {
		return fmt.Errorf("MatMul operands must have rank >= 1, got %v and %v", a.Shape, b.Shape)
	}
	as, bs := cloneShape(a.Shape), cloneShape(b.Shape)
	aVec, bVec := len(as) == 1, len(bs) == 1
	if aVec {
		as = []int64{1, as[0]}
	} else if n.Attrs.Int("transpose_a", 0) != 0 {
		as[len(as)-2], as[len(as)-1] = as[len(as)-1], as[len(as)-2]
	}
	if bVec {
		bs = []int64{bs[0], 1}
	} else if n.Attrs.Int("transpose_b", 0) != 0 {
		bs[len(bs)-2], bs[len(bs)-1] = bs[len(bs)-1], bs[len(bs)-2]
	}
	m, ka := as[len(as)-2], as[len(as)-1]
	kb, nn := bs[len(bs)-2], bs[len(bs)-1]
	if ka >= 0 && kb >= 0 && ka != kb {
		return fmt.Errorf("inner dims differ: %s %v gives K=%d, %s %v gives K=%d",
			inputDesc(n, 0), a.Shape, ka, inputDesc(n, 1), b.Shape, kb)
	}
	batch, err := broadcastShapes(as[:len(as)-2], bs[:len(bs)-2])
	if err != nil {
		return fmt.Errorf("batch dims: %w", err)
	}
	out := batch
	if !aVec {
		out = append(out, m)
	}
	if !bVec {
		out = append(out, nn)
	}
	if len(n.Inputs) == 3 && n.Inputs[2] != nil { // bias: one value per output column
		c := n.Inputs[2]
		if bVec || len(c.Shape) == 0 || (nn >= 0 && c.Shape[len(c.Shape)-1] >= 0 && c.Shape[len(c.Shape)-1] != nn) {
			return fmt.Errorf("%s %v must be [..., %d] (one value per output column)", inputDesc(n, 2), c.Shape, nn)
		}
		for _, d := range c.Shape[:len(c.Shape)-1] {
			if d != 1 {
				return fmt.Errorf("%s %v must be [..., %d] (one value per output column)", inputDesc(n, 2), c.Shape, nn)
			}
		}
	}
	setOutput(n, 0, dt, out)
	return nil
}

// convAttrs are the window attributes shared by Conv, ConvTranspose and the pools.
type convAttrs struct {
	kernel, strides, dilations, pads []int64
	autoPad                          string
}

// readConvAttrs reads and checks the window attrs for nsp spatial dims;
// kernel comes from kernel_shape, else from defKernel (the weights).
func readConvAttrs(n *Node, nsp int, defKernel []int64) (*convAttrs, error) {
	c := &convAttrs{autoPad: n.Attrs.String("auto_pad", "NOTSET")}
	switch c.autoPad {
	case "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID":
	default:
		return nil, fmt.Errorf("attribute auto_pad %q is not NOTSET, SAME_UPPER, SAME_LOWER or VALID", c.autoPad)
	}
	ones := func() []int64 {
		s := make([]int64, nsp)
		for i := range s {
			s[i] = 1
		}
		return s
	}
	c.kernel = n.Attrs.Ints("kernel_shape", defKernel)
	if c.kernel == nil {
		return nil, fmt.Errorf("attribute kernel_shape is missing")
	}
	c.strides = n.Attrs.Ints("strides", ones())
	c.dilations = n.Attrs.Ints("dilations", ones())
	c.pads = n.Attrs.Ints("pads", make([]int64, 2*nsp))
	for _, l := range []struct {
		name string
		v    []int64
		want int
	}{{"kernel_shape", c.kernel, nsp}, {"strides", c.strides, nsp}, {"dilations", c.dilations, nsp}, {"pads", c.pads, 2 * nsp}} {
		if len(l.v) != l.want {
			return nil, fmt.Errorf("attribute %s %v has %d entries, want %d for %d spatial dims", l.name, l.v, len(l.v), l.want, nsp)
		}
	}
	for i := 0; i < nsp; i++ {
		if c.strides[i] <= 0 || c.dilations[i] <= 0 {
			return nil, fmt.Errorf("strides %v and dilations %v must be positive", c.strides, c.dilations)
		}
		// Unknown kernel dims (from weights without a shape) are allowed.
		if c.kernel[i] == 0 || c.kernel[i] < unknownDim {
			return nil, fmt.Errorf("kernel shape %v must be positive", c.kernel)
		}
		if c.pads[i] < 0 || c.pads[i+nsp] < 0 {
			return nil, fmt.Errorf("attribute pads %v must not be negative", c.pads)
		}
	}
	return c, nil
}

// outDim is the output size of spatial dim i of a Conv or pool over input size in.
func (c *convAttrs) outDim(i int, in int64, ceilMode bool) (int64, error) {
	k := c.kernel[i]
	if in < 0 || k < 0 {
		return unknownDim, nil
	}
	s := c.strides[i]
	dk := (k-1)*c.dilations[i] + 1
	var out int64
	switch c.autoPad {
	case "SAME_UPPER", "SAME_LOWER":
		out = ceilDiv(in, s)
	case "VALID":
		out = floorDiv(in-dk, s) + 1
	default:
		pb, pe := c.pads[i], c.pads[i+len(c.kernel)]
		span := in + pb + pe - dk
		if ceilMode {
			out = ceilDiv(span, s) + 1
			// A last window that would start in the end padding is dropped.
			if (out-1)*s >= in+pb {
				out--
			}
		} else {
			out = floorDiv(span, s) + 1
		}
	}
	if out <= 0 {
		return 0, fmt.Errorf("spatial dim %d: input size %d is too small for kernel %d (dilated %d) with pads %v, stride %d",
			i, in, k, dk, c.pads, s)
	}
	return out, nil
}

// spatialRank gets the number of spatial dims from x or w (rank - 2).
func spatialRank(n *Node, vs ...*Value) (int, error) {
	for i, v := range vs {
		if v != nil && v.Shape != nil {
			if len(v.Shape) < 3 {
				return 0, fmt.Errorf("%s must have rank >= 3 (N, C, spatial...), got %v", inputDesc(n, i), v.Shape)
			}
			return len(v.Shape) - 2, nil
		}
	}
	if k := n.Attrs.Ints("kernel_shape", nil); k != nil {
		return len(k), nil
	}
	return -1, nil
}

// convOperands is what Conv and ConvTranspose inference share: spatial rank, full-rank shapes (unknown dims -1), the geometry
// attributes and group. With the spatial rank unknown it types the output
// (rank unknown) and returns nsp < 0.
func convOperands(n *Node) (dt DType, nsp int, xs, ws []int64, c *convAttrs, group int64, err error) {
	x, w := n.Inputs[0], n.Inputs[1]
	dt = firstDType(x, w)
	nsp, err = spatialRank(n, x, w)
	if err != nil {
		return dt, nsp, xs, ws, c, group, err
	}
	if nsp < 0 {
		setOutput(n, 0, dt, nil)
		return dt, nsp, xs, ws, c, group, nil
	}
	xs, ws = x.Shape, w.Shape
	if xs == nil {
		xs = unknownShape(nsp + 2)
	}
	if ws == nil {
		ws = unknownShape(nsp + 2)
	}
	if len(xs) != nsp+2 || len(ws) != nsp+2 {
		return dt, nsp, xs, ws, c, group, fmt.Errorf("x %v and w %v must have the same rank", x.Shape, w.Shape)
	}
	c, err = readConvAttrs(n, nsp, ws[2:])
	if err != nil {
		return dt, nsp, xs, ws, c, group, err
	}
	group = n.Attrs.Int("group", 1)
	if group <= 0 {
		return dt, nsp, xs, ws, c, group, fmt.Errorf("attribute group must be positive, got %d", group)
	}
	return dt, nsp, xs, ws, c, group, nil
}

// inferConv (ONNX Conv): x [N, C, D...], w [M, C/group, k...], b? [M].
func inferConv(n *Node) error {
	dt, nsp, xs, ws, c, group, err := convOperands(n)
	if err != nil || nsp < 0 {
		return err
	}
	if xs[1] >= 0 && ws[1] >= 0 && xs[1] != ws[1]*group {
		return fmt.Errorf("%s has %d channels, but w %v with group %d expects %d", inputDesc(n, 0), xs[1], ws, group, ws[1]*group)
	}
	if ws[0] >= 0 && ws[0]%group != 0 {
		return fmt.Errorf("%s: %d output channels not divisible by group %d", inputDesc(n, 1), ws[0], group)
	}
	if b := n.Input(2); b != nil && b.Shape != nil {
		if len(b.Shape) != 1 || (b.Shape[0] >= 0 && ws[0] >= 0 && b.Shape[0] != ws[0]) {
			return fmt.Errorf("%s: bias shape %v does not match %d output channels", inputDesc(n, 2), b.Shape, ws[0])
		}
	}
	for i := 0; i < nsp; i++ {
		if wk := ws[2+i]; wk >= 0 && c.kernel[i] >= 0 && wk != c.kernel[i] {
			return fmt.Errorf("attribute kernel_shape %v differs from w %v", c.kernel, ws)
		}
	}
	out := make([]int64, nsp+2)
	out[0], out[1] = xs[0], ws[0]
	for i := 0; i < nsp; i++ {
		if out[2+i], err = c.outDim(i, xs[2+i], false); err != nil {
			return err
		}
	}
	if z := ConvResidual(n); z != nil {
		if z.DType != Undefined && dt != Undefined && z.DType != dt {
			return fmt.Errorf("%s: residual dtype %s differs from the output's %s", inputDesc(n, ConvResidualInput), z.DType, dt)
		}
		if z.Shape != nil && !shapesMayMatch(z.Shape, out) {
			return fmt.Errorf("%s: residual shape %v differs from the output's %v (it is not broadcast)", inputDesc(n, ConvResidualInput), z.Shape, out)
		}
	}
	setOutput(n, 0, dt, out)
	return nil
}

// shapesMayMatch says whether two shapes, with -1 for an unknown dim, can be
// the same shape.
func shapesMayMatch(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] >= 0 && b[i] >= 0 && a[i] != b[i] {
			return false
		}
	}
	return true
}

// inferConvTranspose (ONNX ConvTranspose): x [N, C, D...], w [C, M/group, k...].
func inferConvTranspose(n *Node) error {
	dt, nsp, xs, ws, c, group, err := convOperands(n)
	if err != nil || nsp < 0 {
		return err
	}
	if xs[1] >= 0 && ws[0] >= 0 && xs[1] != ws[0] {
		return fmt.Errorf("%s has %d channels, but w %v expects %d", inputDesc(n, 0), xs[1], ws, ws[0])
	}
	outPad := n.Attrs.Ints("output_padding", make([]int64, nsp))
	if len(outPad) != nsp {
		return fmt.Errorf("attribute output_padding %v has %d entries, want %d", outPad, len(outPad), nsp)
	}
	out := make([]int64, nsp+2)
	out[0], out[1] = xs[0], mulDims(ws[1], group)
	if b := n.Input(2); b != nil && b.Shape != nil {
		if len(b.Shape) != 1 || (b.Shape[0] >= 0 && out[1] >= 0 && b.Shape[0] != out[1]) {
			return fmt.Errorf("%s: bias shape %v does not match %d output channels", inputDesc(n, 2), b.Shape, out[1])
		}
	}
	if os := n.Attrs.Ints("output_shape", nil); os != nil {
		// Some exporters give the full N, C, spatial... shape.
		if len(os) == nsp+2 {
			os = os[2:]
		}
		if len(os) != nsp {
			return fmt.Errorf("attribute output_shape %v has %d entries, want %d", os, len(os), nsp)
		}
		for i, d := range os {
			if d <= 0 {
				return fmt.Errorf("attribute output_shape %v must be positive", os)
			}
			out[2+i] = d
		}
		setOutput(n, 0, dt, out)
		return nil
	}
	for i := 0; i < nsp; i++ {
		in, k := xs[2+i], c.kernel[i]
		if in < 0 || k < 0 {
			out[2+i] = unknownDim
			continue
		}
		s := c.strides[i]
		var d int64
		switch c.autoPad {
		case "SAME_UPPER", "SAME_LOWER":
			d = in * s
		default:
			d = s*(in-1) + outPad[i] + (k-1)*c.dilations[i] + 1
			if c.autoPad == "NOTSET" {
				d -= c.pads[i] + c.pads[i+nsp]
			}
		}
		if d <= 0 {
			return fmt.Errorf("spatial dim %d: output size %d is not positive (input %d, kernel %d, pads %v)", i, d, in, k, c.pads)
		}
		out[2+i] = d
	}
	setOutput(n, 0, dt, out)
	return nil
}

// inferPool (ONNX AveragePool / MaxPool): kernel_shape required; MaxPool
// may have an int64 Indices output (its row allows two outputs).
func inferPool(n *Node) error {
	x := n.Inputs[0]
	kernel := n.Attrs.Ints("kernel_shape", nil)
	if kernel == nil {
		return fmt.Errorf("attribute kernel_shape is missing")
	}
	nsp := len(kernel)
	if x.Shape == nil {
		setOutput(n, 0, x.DType, unknownShape(nsp+2))
		setOutput(n, 1, Int64, unknownShape(nsp+2))
		return nil
	}
	if len(x.Shape) != nsp+2 {
		return fmt.Errorf("%s %v must have rank %d for kernel_shape %v", inputDesc(n, 0), x.Shape, nsp+2, kernel)
	}
	c, err := readConvAttrs(n, nsp, nil)
	if err != nil {
		return err
	}
	ceilMode := n.Attrs.Int("ceil_mode", 0) != 0
	out := make([]int64, nsp+2)
	out[0], out[1] = x.Shape[0], x.Shape[1]
	for i := 0; i < nsp; i++ {
		if out[2+i], err = c.outDim(i, x.Shape[2+i], ceilMode); err != nil {
			return err
		}
	}
	setOutput(n, 0, x.DType, out)
	setOutput(n, 1, Int64, out)
	return nil
}

// inferGlobalPool (ONNX GlobalAveragePool): [N, C, 1, ...] for an input
// [N, C, spatial...] of rank at least 3.
func inferGlobalPool(n *Node) error {
	x := n.Inputs[0]
	if x.Shape == nil {
		setOutput(n, 0, x.DType, nil)
		return nil
	}
	if len(x.Shape) < 3 {
		return fmt.Errorf("%s %v must have N, C and spatial dims", inputDesc(n, 0), x.Shape)
	}
	out := make([]int64, len(x.Shape))
	out[0], out[1] = x.Shape[0], x.Shape[1]
	for i := 2; i < len(out); i++ {
		out[i] = 1
	}
	setOutput(n, 0, x.DType, out)
	return nil
}

// checkChannelVec checks that input i is 1-D of length c when both are known.
func checkChannelVec(n *Node, i int, c int64) error {
	v := n.Input(i)
	if v == nil || v.Shape == nil {
		return nil
	}
	if len(v.Shape) != 1 || (v.Shape[0] >= 0 && c >= 0 && v.Shape[0] != c) {
		return fmt.Errorf("%s has shape %v, want [%d] (channels of x)", inputDesc(n, i), v.Shape, c)
	}
	return nil
}

// channels returns dim 1 of x (unknown when x's shape is), checking rank >= 2.
func channels(n *Node) (int64, error) {
	x := n.Inputs[0]
	if x.Shape == nil {
		return unknownDim, nil
	}
	if len(x.Shape) < 2 {
		return 0, fmt.Errorf("%s must have rank >= 2, got %v", inputDesc(n, 0), x.Shape)
	}
	return x.Shape[1], nil
}

// inferBatchNorm: inference form, inputs x, scale, bias, mean, var; the
// optional running mean/var outputs are [C].
func inferBatchNorm(n *Node) error {
	c, err := channels(n)
	if err != nil {
		return err
	}
	for i := 1; i < 5; i++ {
		if err := checkChannelVec(n, i, c); err != nil {
			return err
		}
	}
	x := n.Inputs[0]
	setOutputLike(n, 0, x.DType, x)
	for i := 1; i < 3; i++ {
		setOutput(n, i, firstDType(n.Inputs[3], x), []int64{c})
	}
	return nil
}

// inferInstanceNorm: inputs x, scale [C], bias [C]; same shape.
func inferInstanceNorm(n *Node) error {
	c, err := channels(n)
	if err != nil {
		return err
	}
	for i := 1; i < 3; i++ {
		if err := checkChannelVec(n, i, c); err != nil {
			return err
		}
	}
	x := n.Inputs[0]
	setOutputLike(n, 0, x.DType, x)
	return nil
}

// inferLayerNorm (ONNX LayerNormalization): outputs Y, Mean?, InvStdDev?;
// the statistics keep x's dims before axis and are 1 from it on, in the
// stash_type dtype (float32 by default).
func inferLayerNorm(n *Node) error {
	x := n.Inputs[0]
	stash := DType(n.Attrs.Int("stash_type", int64(Float32)))
	if !validDType(stash) {
		return fmt.Errorf("attribute stash_type %d is not a known dtype", int32(stash))
	}
	setOutputLike(n, 0, x.DType, x)
	if x.Shape == nil {
		setOutput(n, 1, stash, nil)
		setOutput(n, 2, stash, nil)
		return nil
	}
	ax, err := normAxis(n.Attrs.Int("axis", -1), len(x.Shape))
	if err != nil {
		return fmt.Errorf("attribute axis: %w", err)
	}
	// scale (and bias) must broadcast to the normalized dims.
	norm := x.Shape[ax:]
	for i := 1; i < 3; i++ {
		v := n.Input(i)
		if v == nil || v.Shape == nil {
			continue
		}
		if _, err := broadcastShapes(norm, v.Shape); err != nil || len(v.Shape) > len(norm) {
			return fmt.Errorf("%s has shape %v, which does not fit normalized dims %v", inputDesc(n, i), v.Shape, norm)
		}
	}
	stat := cloneShape(x.Shape)
	for i := ax; i < len(stat); i++ {
		stat[i] = 1
	}
	setOutput(n, 1, stash, stat)
	setOutput(n, 2, stash, stat)
	return nil
}

// inferSoftmax: attr axis (default -1); same shape.
func inferSoftmax(n *Node) error {
	x := n.Inputs[0]
	if x.Shape != nil {
		if _, err := normAxis(n.Attrs.Int("axis", -1), len(x.Shape)); err != nil {
			return fmt.Errorf("attribute axis: %w", err)
		}
	}
	setOutputLike(n, 0, x.DType, x)
	return nil
}
