package ir

import (
	"fmt"
	"sort"
)

// Shape functions of the sampling and detection ops (ops_indexing.go):
// NonMaxSuppression, GridSample, AffineGrid, RoiAlign, MaxUnpool and
// DeformConv. NonMaxSuppression's selection lives here too: the number of
// boxes it selects is its output's shape, which the runtime learns by
// running the shape function on the actual inputs, and the CPU kernel runs
// the same selection to fill the output.

// NMSSelect runs ONNX NonMaxSuppression. boxes is [B, S, 4] and scores
// [B, C, S] (float32 values); maxOut, iou and scoreThr are the optional
// scalar inputs (nil when absent). It returns the selected (batch, class,
// box) triples, flattened, in ONNX's order: by batch, then class, then
// descending score (ties: lower box index first).
func NMSSelect(n *Node, boxes, scores []float32, bshape, sshape []int64, maxOut, iou, scoreThr *Tensor) ([]int64, error) {
	if err := nmsShapes(bshape, sshape); err != nil {
		return nil, err
	}
	nb, nc, ns := int(sshape[0]), int(sshape[1]), int(sshape[2])
	if len(boxes) < nb*ns*4 || len(scores) < nb*nc*ns {
		return nil, fmt.Errorf("boxes or scores hold fewer values than their shapes say")
	}
	limit := int64(0)
	if maxOut != nil && maxOut.NumElements() > 0 {
		if err := tensorDataOK(maxOut); err != nil {
			return nil, fmt.Errorf("max_output_boxes_per_class: %w", err)
		}
		v, err := maxOut.Int64s()
		if err != nil || len(v) != 1 {
			return nil, fmt.Errorf("max_output_boxes_per_class must be one integer")
		}
		limit = v[0]
	}
	thr, err := scalarOf(iou, 0)
	if err != nil {
		return nil, fmt.Errorf("iou_threshold: %w", err)
	}
	if thr < 0 || thr > 1 {
		return nil, fmt.Errorf("iou_threshold %g is not in [0, 1]", thr)
	}
	hasScore := scoreThr != nil && scoreThr.NumElements() > 0
	sthr, err := scalarOf(scoreThr, 0)
	if err != nil {
		return nil, fmt.Errorf("score_threshold: %w", err)
	}
	center := n.Attrs.Int("center_point_box", 0)
	if center != 0 && center != 1 {
		return nil, fmt.Errorf("attribute center_point_box %d is not 0 or 1", center)
	}
	if limit <= 0 || ns == 0 {
		return []int64{}, nil
	}
	iouT, sT := float32(thr), float32(sthr)
	var out []int64
	order := make([]int, 0, ns)
	var sel []int
	for b := 0; b < nb; b++ {
		bx := boxes[b*ns*4 : (b+1)*ns*4]
		for c := 0; c < nc; c++ {
			sc := scores[(b*nc+c)*ns : (b*nc+c+1)*ns]
			order = order[:0]
			for i, s := range sc {
				if !hasScore || s > sT {
					order = append(order, i)
				}
			}
			sort.SliceStable(order, func(i, j int) bool { return sc[order[i]] > sc[order[j]] })
			sel = sel[:0]
			for _, i := range order {
				if int64(len(sel)) >= limit {
					break
				}
				keep := true
				for _, j := range sel {
					if nmsSuppress(bx[i*4:i*4+4], bx[j*4:j*4+4], center == 1, iouT) {
						keep = false
						break
					}
				}
				if keep {
					sel = append(sel, i)
					out = append(out, int64(b), int64(c), int64(i))
				}
			}
		}
	}
	return out, nil
}

// nmsShapes checks boxes [B, S, 4] against scores [B, C, S].
func nmsShapes(b, s []int64) error {
	if len(b) != 3 || len(s) != 3 {
		return fmt.Errorf("boxes %v and scores %v must be 3-D", b, s)
	}
	if b[2] >= 0 && b[2] != 4 {
		return fmt.Errorf("boxes %v: last dim must be 4", b)
	}
	if b[0] >= 0 && s[0] >= 0 && b[0] != s[0] {
		return fmt.Errorf("boxes %v and scores %v differ in batch", b, s)
	}
	if b[1] >= 0 && s[2] >= 0 && b[1] != s[2] {
		return fmt.Errorf("boxes %v and scores %v differ in box count", b, s)
	}
	return nil
}

// scalarOf reads a one-element tensor; def when t is nil or empty.
func scalarOf(t *Tensor, def float64) (float64, error) {
	if t == nil || t.NumElements() == 0 {
		return def, nil
	}
	if err := tensorDataOK(t); err != nil {
		return 0, err
	}
	v, err := t.Float64s()
	if err != nil {
		return 0, err
	}
	if len(v) != 1 {
		return 0, fmt.Errorf("expected a scalar, got %d elements", len(v))
	}
	return v[0], nil
}

// nmsSuppress reports whether boxes a and b overlap with IoU above thr.
// Corner boxes are [y1, x1, y2, x2] in any corner order; center boxes
// [x, y, w, h].
func nmsSuppress(a, b []float32, center bool, thr float32) bool {
	ay0, ax0, ay1, ax1 := nmsCorners(a, center)
	by0, bx0, by1, bx1 := nmsCorners(b, center)
	iw := min(ax1, bx1) - max(ax0, bx0)
	ih := min(ay1, by1) - max(ay0, by0)
	inter := max(iw, 0) * max(ih, 0)
	if inter <= 0 {
		return false
	}
	areaA := (ax1 - ax0) * (ay1 - ay0)
	areaB := (bx1 - bx0) * (by1 - by0)
	union := areaA + areaB - inter
	if areaA <= 0 || areaB <= 0 || union <= 0 {
		return false
	}
	return inter/union > thr
}

// nmsCorners returns y0 <= y1 and x0 <= x1 of a box.
func nmsCorners(b []float32, center bool) (y0, x0, y1, x1 float32) {
	if center {
		x, y, w, h := b[0], b[1], b[2]/2, b[3]/2
		return y - h, x - w, y + h, x + w
	}
	return min(b[0], b[2]), min(b[1], b[3]), max(b[0], b[2]), max(b[1], b[3])
}

// tensorF32 reads a float tensor as float32 values.
func tensorF32(t *Tensor) ([]float32, error) {
	if err := tensorDataOK(t); err != nil {
		return nil, err
	}
	if t.DType == Float32 {
		return t.F32()[:t.NumElements()], nil
	}
	if !t.DType.IsFloat() {
		return nil, fmt.Errorf("expected a float tensor, got %s", t.DType)
	}
	v, err := t.Float64s()
	if err != nil {
		return nil, err
	}
	f := make([]float32, len(v))
	for i, x := range v {
		f[i] = float32(x)
	}
	return f, nil
}

// NMSSelectTensors runs NMSSelect on tensors (inputs in ONNX order, absent
// optional ones nil).
func NMSSelectTensors(n *Node, in []*Tensor) ([]int64, error) {
	if len(in) < 2 || in[0] == nil || in[1] == nil {
		return nil, fmt.Errorf("boxes and scores are required")
	}
	opt := func(i int) *Tensor {
		if i < len(in) {
			return in[i]
		}
		return nil
	}
	boxes, err := tensorF32(in[0])
	if err != nil {
		return nil, fmt.Errorf("boxes: %w", err)
	}
	scores, err := tensorF32(in[1])
	if err != nil {
		return nil, fmt.Errorf("scores: %w", err)
	}
	return NMSSelect(n, boxes, scores, in[0].Shape, in[1].Shape, opt(2), opt(3), opt(4))
}

// inferNonMaxSuppression: int64 [selected, 3]; selected is known when every
// input's data is.
func inferNonMaxSuppression(n *Node) error {
	b, s := n.Inputs[0], n.Inputs[1]
	if b.Shape != nil && s.Shape != nil {
		if err := nmsShapes(b.Shape, s.Shape); err != nil {
			return err
		}
	}
	for i := 2; i < len(n.Inputs); i++ {
		if v := n.Input(i); v != nil && v.Shape != nil && NumElements(v.Shape) > 1 {
			return fmt.Errorf("%s: expected a scalar, got shape %v", inputDesc(n, i), v.Shape)
		}
	}
	cnt := int64(unknownDim)
	known := true
	ts := make([]*Tensor, len(n.Inputs))
	for i, v := range n.Inputs {
		if v != nil {
			if v.Const == nil {
				known = false
				break
			}
			ts[i] = v.Const
		}
	}
	if known {
		sel, err := NMSSelectTensors(n, ts)
		if err != nil {
			return err
		}
		cnt = int64(len(sel) / 3)
	}
	setOutput(n, 0, Int64, []int64{cnt, 3})
	return nil
}

// GridSampleMode returns GridSample's interpolation mode as the opset-20
// name (linear, nearest, cubic), accepting the opset-16 names.
func GridSampleMode(n *Node) (string, error) {
	switch m := n.Attrs.String("mode", "linear"); m {
	case "linear", "bilinear":
		return "linear", nil
	case "nearest":
		return "nearest", nil
	case "cubic", "bicubic":
		return "cubic", nil
	default:
		return "", fmt.Errorf("attribute mode %q is not linear, nearest or cubic", m)
	}
}

// inferGridSample: X [N, C, D1..Dr], grid [N, O1..Or, r] -> [N, C, O1..Or].
func inferGridSample(n *Node) error {
	mode, err := GridSampleMode(n)
	if err != nil {
		return err
	}
	switch p := n.Attrs.String("padding_mode", "zeros"); p {
	case "zeros", "border", "reflection":
	default:
		return fmt.Errorf("attribute padding_mode %q is not zeros, border or reflection", p)
	}
	x, g := n.Inputs[0], n.Inputs[1]
	if g.DType != Undefined && !g.DType.IsFloat() {
		return fmt.Errorf("%s: grid must be float, got %s", inputDesc(n, 1), g.DType)
	}
	r := -1
	if x.Shape != nil {
		r = len(x.Shape) - 2
	} else if g.Shape != nil {
		r = len(g.Shape) - 2
	}
	if r < 0 {
		setOutput(n, 0, x.DType, nil)
		return nil
	}
	if r < 1 {
		return fmt.Errorf("X must have rank >= 3, got %v", x.Shape)
	}
	if mode == "cubic" && r != 2 {
		return fmt.Errorf("cubic mode needs 4-D input, got %d spatial dims", r)
	}
	gs := g.Shape
	if gs == nil {
		gs = unknownShape(r + 2)
	}
	if len(gs) != r+2 || (gs[r+1] >= 0 && gs[r+1] != int64(r)) {
		return fmt.Errorf("grid %v does not match X %v: want [N, out dims..., %d]", g.Shape, x.Shape, r)
	}
	xs := x.Shape
	if xs == nil {
		xs = unknownShape(r + 2)
	}
	if err := sameDims("batch", xs[0], gs[0]); err != nil {
		return err
	}
	out := []int64{xs[0], xs[1]}
	if out[0] < 0 {
		out[0] = gs[0]
	}
	out = append(out, gs[1:r+1]...)
	setOutput(n, 0, x.DType, out)
	return nil
}

// inferAffineGrid: theta [N, 2, 3] with size (N, C, H, W) -> [N, H, W, 2];
// theta [N, 3, 4] with size (N, C, D, H, W) -> [N, D, H, W, 3].
func inferAffineGrid(n *Node) error {
	th := n.Inputs[0]
	if th.DType != Undefined && !th.DType.IsFloat() {
		return fmt.Errorf("%s: theta must be float, got %s", inputDesc(n, 0), th.DType)
	}
	size, ok, err := constInts(n, 1)
	if err != nil {
		return err
	}
	r := -1 // spatial rank
	if ok {
		if len(size) != 4 && len(size) != 5 {
			return fmt.Errorf("%s: size %v must have 4 or 5 entries", inputDesc(n, 1), size)
		}
		r = len(size) - 2
	} else if l := vecLen(n.Inputs[1]); l == 4 || l == 5 {
		r = int(l) - 2
	} else if th.Shape != nil && len(th.Shape) == 3 && th.Shape[1] >= 2 {
		r = int(th.Shape[1])
	}
	if th.Shape != nil {
		if len(th.Shape) != 3 {
			return fmt.Errorf("%s: theta %v must be 3-D", inputDesc(n, 0), th.Shape)
		}
		if r > 0 && ((th.Shape[1] >= 0 && th.Shape[1] != int64(r)) || (th.Shape[2] >= 0 && th.Shape[2] != int64(r+1))) {
			return fmt.Errorf("%s: theta %v does not fit %d spatial dims", inputDesc(n, 0), th.Shape, r)
		}
	}
	if r < 0 {
		setOutput(n, 0, th.DType, nil)
		return nil
	}
	out := unknownShape(r + 2)
	out[r+1] = int64(r)
	if th.Shape != nil {
		out[0] = th.Shape[0]
	}
	if ok {
		for _, d := range size {
			if d < 0 {
				return fmt.Errorf("%s: size %v has a negative entry", inputDesc(n, 1), size)
			}
		}
		if out[0] >= 0 && size[0] != out[0] {
			return fmt.Errorf("size %v and theta %v differ in batch", size, th.Shape)
		}
		out[0] = size[0]
		copy(out[1:r+1], size[2:])
	}
	setOutput(n, 0, th.DType, out)
	return nil
}

// inferRoiAlign: X [N, C, H, W], rois [R, 4], batch_indices [R] ->
// [R, C, output_height, output_width].
func inferRoiAlign(n *Node) error {
	switch m := n.Attrs.String("mode", "avg"); m {
	case "avg", "max":
	default:
		return fmt.Errorf("attribute mode %q is not avg or max", m)
	}
	switch m := n.Attrs.String("coordinate_transformation_mode", "half_pixel"); m {
	case "half_pixel", "output_half_pixel":
	default:
		return fmt.Errorf("attribute coordinate_transformation_mode %q is not half_pixel or output_half_pixel", m)
	}
	oh, ow := n.Attrs.Int("output_height", 1), n.Attrs.Int("output_width", 1)
	if oh < 1 || ow < 1 {
		return fmt.Errorf("attributes output_height %d and output_width %d must be positive", oh, ow)
	}
	if err := checkIndices(n, 2); err != nil {
		return err
	}
	x, rois, bi := n.Inputs[0], n.Inputs[1], n.Inputs[2]
	if x.Shape != nil && len(x.Shape) != 4 {
		return fmt.Errorf("X %v must be 4-D", x.Shape)
	}
	if rois.Shape != nil && (len(rois.Shape) != 2 || (rois.Shape[1] >= 0 && rois.Shape[1] != 4)) {
		return fmt.Errorf("rois %v must be [R, 4]", rois.Shape)
	}
	if bi.Shape != nil && len(bi.Shape) != 1 {
		return fmt.Errorf("batch_indices %v must be 1-D", bi.Shape)
	}
	r := int64(unknownDim)
	if rois.Shape != nil {
		r = rois.Shape[0]
	}
	if bi.Shape != nil {
		if err := sameDims("roi count", r, bi.Shape[0]); err != nil {
			return err
		}
		if r < 0 {
			r = bi.Shape[0]
		}
	}
	c := int64(unknownDim)
	if x.Shape != nil {
		c = x.Shape[1]
	}
	setOutput(n, 0, x.DType, []int64{r, c, oh, ow})
	return nil
}

// MaxUnpoolGeom reads MaxUnpool's kernel_shape, strides and pads for nsp
// spatial dims (pads: all begins, then all ends).
func MaxUnpoolGeom(n *Node, nsp int) (kernel, strides, pads []int64, err error) {
	kernel = n.Attrs.Ints("kernel_shape", nil)
	if len(kernel) != nsp {
		return nil, nil, nil, fmt.Errorf("attribute kernel_shape %v must have %d entries", kernel, nsp)
	}
	strides = n.Attrs.Ints("strides", nil)
	if strides == nil {
		strides = make([]int64, nsp)
		for i := range strides {
			strides[i] = 1
		}
	}
	pads = n.Attrs.Ints("pads", make([]int64, 2*nsp))
	if len(strides) != nsp || len(pads) != 2*nsp {
		return nil, nil, nil, fmt.Errorf("attributes strides %v and pads %v do not fit %d spatial dims", strides, pads, nsp)
	}
	for i := 0; i < nsp; i++ {
		if kernel[i] <= 0 || strides[i] <= 0 || pads[i] < 0 || pads[nsp+i] < 0 {
			return nil, nil, nil, fmt.Errorf("bad geometry: kernel_shape %v, strides %v, pads %v", kernel, strides, pads)
		}
	}
	return kernel, strides, pads, nil
}

// inferMaxUnpool: output_shape when given, else (in-1)*stride - pads + kernel
// per spatial dim.
func inferMaxUnpool(n *Node) error {
	if err := checkIndices(n, 1); err != nil {
		return err
	}
	x, idx := n.Inputs[0], n.Inputs[1]
	if x.Shape != nil && idx.Shape != nil && !shapesMayMatch(x.Shape, idx.Shape) {
		return fmt.Errorf("X %v and I %v must have the same shape", x.Shape, idx.Shape)
	}
	if x.Shape == nil {
		setOutput(n, 0, x.DType, nil)
		return nil
	}
	if len(x.Shape) < 3 {
		return fmt.Errorf("X %v must have rank >= 3", x.Shape)
	}
	nsp := len(x.Shape) - 2
	kernel, strides, pads, err := MaxUnpoolGeom(n, nsp)
	if err != nil {
		return err
	}
	if n.Input(2) != nil {
		os, ok, err := constInts(n, 2)
		if err != nil {
			return err
		}
		if !ok {
			setOutput(n, 0, x.DType, unknownShape(len(x.Shape)))
			return nil
		}
		if len(os) != len(x.Shape) {
			return fmt.Errorf("%s: output_shape %v must have %d entries", inputDesc(n, 2), os, len(x.Shape))
		}
		for _, d := range os {
			if d < 0 {
				return fmt.Errorf("%s: output_shape %v has a negative entry", inputDesc(n, 2), os)
			}
		}
		setOutput(n, 0, x.DType, os)
		return nil
	}
	out := cloneShape(x.Shape)
	for i := 0; i < nsp; i++ {
		if d := x.Shape[2+i]; d >= 0 {
			out[2+i] = (d-1)*strides[i] - pads[i] - pads[nsp+i] + kernel[i]
			if out[2+i] < 0 {
				return fmt.Errorf("output dim %d is negative for X %v", 2+i, x.Shape)
			}
		}
	}
	setOutput(n, 0, x.DType, out)
	return nil
}

// inferDeformConv (ONNX DeformConv): X [N, C, H, W], W [M, C/group, kH, kW],
// offset [N, offset_group*2*kH*kW, oH, oW], B? [M], mask? [N,
// offset_group*kH*kW, oH, oW] -> [N, M, oH, oW] (Conv's arithmetic).
func inferDeformConv(n *Node) error {
	dt, nsp, xs, ws, c, group, err := convOperands(n)
	if err != nil || nsp < 0 {
		return err
	}
	if c.autoPad != "NOTSET" && c.autoPad != "" {
		return fmt.Errorf("DeformConv has no auto_pad")
	}
	if xs[1] >= 0 && ws[1] >= 0 && xs[1] != ws[1]*group {
		return fmt.Errorf("%s has %d channels, but W %v with group %d expects %d", inputDesc(n, 0), xs[1], ws, group, ws[1]*group)
	}
	og := n.Attrs.Int("offset_group", 1)
	if og <= 0 {
		return fmt.Errorf("attribute offset_group must be positive, got %d", og)
	}
	out := make([]int64, nsp+2)
	out[0], out[1] = xs[0], ws[0]
	for i := 0; i < nsp; i++ {
		if out[2+i], err = c.outDim(i, xs[2+i], false); err != nil {
			return err
		}
	}
	kk := int64(1)
	for _, k := range c.kernel {
		kk = mulDims(kk, k)
	}
	check := func(i int, ch int64, what string) error {
		v := n.Input(i)
		if v == nil || v.Shape == nil {
			return nil
		}
		want := append([]int64{out[0], mulDims(og, ch, kk)}, out[2:]...)
		if !shapesMayMatch(v.Shape, want) {
			return fmt.Errorf("%s: %s %v, expected %v", inputDesc(n, i), what, v.Shape, want)
		}
		return nil
	}
	if err := check(2, int64(nsp), "offset"); err != nil {
		return err
	}
	if err := check(4, 1, "mask"); err != nil {
		return err
	}
	if b := n.Input(3); b != nil && b.Shape != nil {
		if len(b.Shape) != 1 || (b.Shape[0] >= 0 && ws[0] >= 0 && b.Shape[0] != ws[0]) {
			return fmt.Errorf("%s: bias shape %v does not match %d output channels", inputDesc(n, 3), b.Shape, ws[0])
		}
	}
	setOutput(n, 0, dt, out)
	return nil
}
