package nn

import (
	"math"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// resizeAxis is the interpolation along one axis: output index o reads
// input indexes idx[o*taps+j] with weights w[o*taps+j]; outside[o] marks
// tf_crop_and_resize coordinates outside the input (extrapolation_value).
type resizeAxis struct {
	in, out, taps int
	idx           []int
	w             []float64
	outside       []bool
	anyOutside    bool
	identity      bool
}

type resizeParams struct {
	mode, coord, nearest string
	cubicA, extrap       float64
	exclude, antialias   bool
}

// resize is ONNX Resize (opset 11-19): inputs X, roi?, scales?, sizes?.
func resize(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := need(n, in, 1); err != nil {
		return err
	}
	x, y := in[0], out[0]
	r := len(x.Shape)
	if len(y.Shape) != r || y.DType != x.DType {
		return errf(n, "output %s does not match input %s", y, x)
	}
	p := resizeParams{
		mode:      n.Attrs.String("mode", "nearest"),
		coord:     n.Attrs.String("coordinate_transformation_mode", "half_pixel"),
		nearest:   n.Attrs.String("nearest_mode", "round_prefer_floor"),
		cubicA:    n.Attrs.Float("cubic_coeff_a", -0.75),
		extrap:    n.Attrs.Float("extrapolation_value", 0),
		exclude:   n.Attrs.Int("exclude_outside", 0) != 0,
		antialias: n.Attrs.Int("antialias", 0) != 0,
	}
	switch p.mode {
	case "nearest", "linear", "cubic":
	default:
		return opkernel.Unsupportedf(n, "mode %q", p.mode)
	}
	axes := make([]int, 0, r)
	if a := n.Attrs.Ints("axes", nil); a != nil {
		for _, v := range a {
			if v < 0 {
				v += int64(r)
			}
			if v < 0 || v >= int64(r) {
				return errf(n, "axis %d out of range", v)
			}
			axes = append(axes, int(v))
		}
	} else {
		for i := 0; i < r; i++ {
			axes = append(axes, i)
		}
	}
	// Scales and roi in float32, as onnxruntime reads them; the separable
	// reference path widens them.
	scales := make([]float32, r)
	roiS, roiE := make([]float32, r), make([]float32, r)
	for i := range scales {
		scales[i], roiE[i] = 1, 1
	}
	if t := input(in, 1); t != nil && t.NumElements() > 0 {
		roi, err := t.Float64s()
		if err != nil || len(roi) != 2*len(axes) {
			return errf(n, "roi must hold %d numbers", 2*len(axes))
		}
		for j, a := range axes {
			roiS[a], roiE[a] = float32(roi[j]), float32(roi[j+len(axes)])
		}
	}
	if t := input(in, 2); t != nil && t.NumElements() > 0 {
		s, err := t.Float64s()
		if err != nil || len(s) != len(axes) {
			return errf(n, "scales must hold %d numbers", len(axes))
		}
		for j, a := range axes {
			scales[a] = float32(s[j])
		}
	} else if t := input(in, 3); t != nil && t.NumElements() > 0 {
		sz, err := t.Int64s()
		if err != nil || len(sz) != len(axes) {
			return errf(n, "sizes must hold %d integers", len(axes))
		}
		policy := n.Attrs.String("keep_aspect_ratio_policy", "stretch")
		var uni float32
		for j, a := range axes {
			s := float32(1)
			if x.Shape[a] != 0 {
				s = float32(sz[j]) / float32(x.Shape[a])
			}
			switch {
			case policy == "stretch":
				scales[a] = s
			case j == 0:
				uni = s
			case policy == "not_larger":
				uni = min(uni, s)
			case policy == "not_smaller":
				uni = max(uni, s)
			default:
				return errf(n, "unknown keep_aspect_ratio_policy %q", policy)
			}
		}
		if policy != "stretch" {
			for _, a := range axes {
				scales[a] = uni
			}
		}
	} else {
		return errf(n, "one of scales and sizes is required")
	}
	for a := 0; a < r; a++ {
		if !(scales[a] > 0) {
			return errf(n, "scale %g on axis %d must be positive", scales[a], a)
		}
	}
	if y.NumElements() == 0 {
		return nil
	}
	// Output dims equal to the input's: onnxruntime copies the input,
	// whatever the scales and mode say.
	same := true
	for a := 0; a < r; a++ {
		same = same && x.Shape[a] == y.Shape[a]
	}
	if same {
		copy(y.Data, x.Data)
		return nil
	}
	if p.mode == "nearest" {
		plan := make([]*resizeAxis, r)
		for a := 0; a < r; a++ {
			plan[a] = ortNearestAxis(&p, int(x.Shape[a]), int(y.Shape[a]), scales[a], roiS[a], roiE[a])
		}
		return resizeNearest(ctx, n, plan, x, y, p.extrap)
	}
	if done, err := resizeORT(ctx, &p, x, y, scales, roiS, roiE); done || err != nil {
		return err
	}
	plan := make([]*resizeAxis, r)
	for a := 0; a < r; a++ {
		plan[a] = resizePlanAxis(&p, int(x.Shape[a]), int(y.Shape[a]), float64(scales[a]), float64(roiS[a]), float64(roiE[a]))
	}
	return resizeInterp(ctx, n, plan, x, y, p.extrap)
}

// resizePlanAxis builds the linear/cubic taps of one axis, following the ONNX
// reference implementation (op_resize.py) coordinate by coordinate in
// float64: the path for what onnxruntime's kernel does not cover (antialias,
// other ranks and layouts).
func resizePlanAxis(p *resizeParams, in, out int, scale, roiS, roiE float64) *resizeAxis {
	ax := &resizeAxis{in: in, out: out}
	outW := scale * float64(in) // the reference uses the unrounded output length
	if in == out && scale == 1 && p.coord != "tf_crop_and_resize" {
		ax.identity = true
		return ax
	}
	aaScale := 1.0
	if p.antialias && scale < 1 {
		aaScale = scale
	}
	switch {
	case p.mode == "linear":
		start := int(math.Floor(-1/aaScale)) + 1
		ax.taps = 2 - 2*start
	default: // cubic
		start := int(math.Floor(-2/aaScale)) + 1
		ax.taps = 2 - 2*start
	}
	ax.idx = make([]int, out*ax.taps)
	ax.w = make([]float64, out*ax.taps)
	ax.outside = make([]bool, out)
	coeffs := make([]float64, ax.taps)
	for o := 0; o < out; o++ {
		xf := float64(o)
		var xo float64
		switch p.coord {
		case "align_corners":
			if outW == 1 {
				xo = 0
			} else {
				xo = xf * float64(in-1) / (outW - 1)
			}
		case "asymmetric":
			xo = xf / scale
		case "tf_crop_and_resize":
			if outW == 1 {
				xo = (roiE - roiS) * float64(in-1) / 2
			} else {
				xo = xf * (roiE - roiS) * float64(in-1) / (outW - 1)
			}
			xo += roiS * float64(in-1)
			if xo < 0 || xo > float64(in-1) {
				ax.outside[o], ax.anyOutside = true, true
			}
		case "pytorch_half_pixel":
			if outW == 1 {
				xo = -0.5
			} else {
				xo = (xf+0.5)/scale - 0.5
			}
		case "half_pixel_symmetric":
			adj := float64(out) / outW
			center := float64(in) / 2
			xo = center*(1-adj) + (xf+0.5)/scale - 0.5
		default: // half_pixel
			xo = (xf+0.5)/scale - 0.5
		}
		// base is the input index just left of xo, ratio in (0, 1]
		base := math.Ceil(xo) - 1
		ratio := xo - base
		row := ax.idx[o*ax.taps : (o+1)*ax.taps]
		wr := ax.w[o*ax.taps : (o+1)*ax.taps]
		first := int(base) - ax.taps/2 + 1
		switch {
		case p.mode == "linear" && ax.taps == 2:
			coeffs[0], coeffs[1] = 1-ratio, ratio
		case p.mode == "linear":
			var sum float64
			for j := range coeffs {
				v := 1 - math.Abs((float64(first+j)-base-ratio)*aaScale)
				coeffs[j] = math.Max(0, math.Min(1, v))
				sum += coeffs[j]
			}
			for j := range coeffs {
				coeffs[j] /= sum
			}
		case ax.taps == 4 && aaScale == 1:
			a := p.cubicA
			r1, r0 := ratio+1, 1-ratio
			coeffs[0] = ((a*r1-5*a)*r1+8*a)*r1 - 4*a
			coeffs[1] = ((a+2)*ratio-(a+3))*ratio*ratio + 1
			coeffs[2] = ((a+2)*r0-(a+3))*r0*r0 + 1
			coeffs[3] = ((a*(r0+1)-5*a)*(r0+1)+8*a)*(r0+1) - 4*a
		default: // antialiased cubic
			var sum float64
			for j := range coeffs {
				coeffs[j] = cubicKernel(math.Abs((float64(first+j)-base-ratio)*aaScale), p.cubicA)
				sum += coeffs[j]
			}
			for j := range coeffs {
				coeffs[j] /= sum
			}
		}
		if p.exclude {
			var sum float64
			for j := range coeffs {
				if i := first + j; i < 0 || i >= in {
					coeffs[j] = 0
				}
				sum += coeffs[j]
			}
			if sum != 0 {
				for j := range coeffs {
					coeffs[j] /= sum
				}
			}
		}
		for j := range coeffs {
			row[j], wr[j] = clampInt(first+j, 0, in-1), coeffs[j]
		}
	}
	return ax
}

func cubicKernel(x, a float64) float64 {
	switch {
	case x <= 1:
		return ((a+2)*x-(a+3))*x*x + 1
	case x < 2:
		return ((a*x-5*a)*x+8*a)*x - 4*a
	}
	return 0
}

func clampInt(v, lo, hi int) int {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}

// resizeNearest gathers elements (any dtype, bit-exact).
func resizeNearest(ctx *opkernel.Ctx, n *ir.Node, plan []*resizeAxis, x, y *ir.Tensor, extrap float64) error {
	es := x.DType.Size()
	if es == 0 {
		return opkernel.Unsupportedf(n, "dtype %s", x.DType)
	}
	r := len(plan)
	total := int(y.NumElements())
	if total == 0 {
		return nil
	}
	if r == 0 {
		copy(y.Data, x.Data)
		return nil
	}
	inStr := make([]int, r)
	s := 1
	for a := r - 1; a >= 0; a-- {
		inStr[a] = s
		s *= plan[a].in
	}
	switch es {
	case 1:
		nearestRows(ctx, plan, inStr, x.Data, y.Data, total)
	case 2:
		nearestRows(ctx, plan, inStr, viewAs[uint16](x.Data), viewAs[uint16](y.Data), total)
	case 4:
		nearestRows(ctx, plan, inStr, viewAs[uint32](x.Data), viewAs[uint32](y.Data), total)
	case 8:
		nearestRows(ctx, plan, inStr, viewAs[uint64](x.Data), viewAs[uint64](y.Data), total)
	case 16:
		nearestRows(ctx, plan, inStr, viewAs[[16]byte](x.Data), viewAs[[16]byte](y.Data), total)
	default:
		return opkernel.Unsupportedf(n, "dtype %s", x.DType)
	}
	fillOutside(plan, y, extrap)
	return nil
}

// nearestRows is resizeNearest's copy for elements of one machine type:
// each output row (innermost axis) is gathered from its input row, or,
// when it reads the same input row as the row before it (an upscaled
// axis), copied from that output row: the same elements, a fraction of
// the work (the byte-wise copy was ~8% of ocr_det_tiny_dynq's run). Rows
// are split between the threads, each range starting from its first row's
// coordinates.
func nearestRows[T any](ctx *opkernel.Ctx, plan []*resizeAxis, inStr []int, xs, ys []T, total int) {
	r := len(plan)
	last := plan[r-1]
	w := last.out
	src := func(a, o int) int {
		if plan[a].identity {
			return o
		}
		return plan[a].idx[o]
	}
	opkernel.ParallelFor(ctx, total/w, max(1, 16384/w), func(lo, hi int) {
		idx := make([]int, r)
		off := 0 // the input offset of the current row, innermost axis at 0
		for a, q := r-2, lo; a >= 0; a-- {
			idx[a] = q % plan[a].out
			q /= plan[a].out
			off += src(a, idx[a]) * inStr[a]
		}
		prevBase, prevT := -1, 0
		for t := lo * w; t < hi*w; t += w {
			row := ys[t : t+w]
			switch {
			case off == prevBase:
				copy(row, ys[prevT:prevT+w])
			case last.identity:
				copy(row, xs[off:off+w])
			default:
				in := xs[off:]
				for o, i := range last.idx[:w] {
					row[o] = in[i]
				}
			}
			if off != prevBase {
				prevBase, prevT = off, t
			}
			for a := r - 2; a >= 0; a-- {
				off -= src(a, idx[a]) * inStr[a]
				idx[a]++
				if idx[a] < plan[a].out {
					off += src(a, idx[a]) * inStr[a]
					break
				}
				idx[a] = 0
				off += src(a, 0) * inStr[a]
			}
		}
	})
}

// fillOutside writes extrapolation_value wherever any axis coordinate fell
// outside the input (tf_crop_and_resize).
func fillOutside(plan []*resizeAxis, y *ir.Tensor, v float64) {
	any := false
	for _, ax := range plan {
		any = any || ax.anyOutside
	}
	if !any {
		return
	}
	r := len(plan)
	idx := make([]int, r)
	total := int(y.NumElements())
	for t := 0; t < total; t++ {
		for a, ax := range plan {
			if ax.anyOutside && ax.outside[idx[a]] {
				putNumber(y, t, v)
				break
			}
		}
		for a := r - 1; a >= 0; a-- {
			idx[a]++
			if idx[a] < plan[a].out {
				break
			}
			idx[a] = 0
		}
	}
}

// putNumber stores v as element i of a numeric tensor (integers rounded and
// saturated).
func putNumber(t *ir.Tensor, i int, v float64) {
	if t.DType.IsFloat() {
		t.PutFloat(i, v)
		return
	}
	v = math.Round(v)
	switch t.DType {
	case ir.Int8:
		t.I8()[i] = int8(math.Max(math.MinInt8, math.Min(math.MaxInt8, v)))
	case ir.Uint8:
		t.U8()[i] = uint8(math.Max(0, math.Min(math.MaxUint8, v)))
	case ir.Int16:
		t.I16()[i] = int16(math.Max(math.MinInt16, math.Min(math.MaxInt16, v)))
	case ir.Uint16:
		t.U16()[i] = uint16(math.Max(0, math.Min(math.MaxUint16, v)))
	case ir.Int32:
		t.I32()[i] = int32(math.Max(math.MinInt32, math.Min(math.MaxInt32, v)))
	case ir.Uint32:
		t.U32()[i] = uint32(math.Max(0, math.Min(math.MaxUint32, v)))
	case ir.Int64:
		t.I64()[i] = int64(v)
	case ir.Uint64:
		t.U64()[i] = uint64(math.Max(0, v))
	}
}

// resizeInterp applies linear/cubic interpolation one axis at a time in
// float64 (the 1-D kernels are separable, as in the reference).
func resizeInterp(ctx *opkernel.Ctx, n *ir.Node, plan []*resizeAxis, x, y *ir.Tensor, extrap float64) error {
	if x.DType != ir.Float32 && x.DType != ir.Float64 && !opkernel.IsHalf(x.DType) && !x.DType.IsInt() {
		return opkernel.Unsupportedf(n, "dtype %s", x.DType)
	}
	cur, err := x.Float64s()
	if err != nil {
		return errf(n, "%v", err)
	}
	r := len(plan)
	shape := make([]int, r)
	for a := range plan {
		shape[a] = plan[a].in
	}
	for a, ax := range plan {
		if ax.identity {
			continue
		}
		outer, inner := 1, 1
		for i := 0; i < a; i++ {
			outer *= shape[i]
		}
		for i := a + 1; i < r; i++ {
			inner *= shape[i]
		}
		next := make([]float64, outer*ax.out*inner)
		opkernel.ParallelFor(ctx, outer, 1, func(s, e int) {
			for ob := s; ob < e; ob++ {
				src := cur[ob*ax.in*inner : (ob+1)*ax.in*inner]
				for o := 0; o < ax.out; o++ {
					dst := next[(ob*ax.out+o)*inner : (ob*ax.out+o+1)*inner]
					for j := 0; j < ax.taps; j++ {
						wv := ax.w[o*ax.taps+j]
						if wv == 0 {
							continue
						}
						sr := src[ax.idx[o*ax.taps+j]*inner:]
						for i := range dst {
							dst[i] += wv * sr[i]
						}
					}
				}
			}
		})
		cur = next
		shape[a] = ax.out
	}
	switch y.DType {
	case ir.Float32:
		d := y.F32()
		for i, v := range cur {
			d[i] = float32(v)
		}
	case ir.Float64:
		copy(y.F64(), cur)
	default:
		for i, v := range cur {
			putNumber(y, i, v)
		}
	}
	fillOutside(plan, y, extrap)
	return nil
}
