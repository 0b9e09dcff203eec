package nn

import (
	"math"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// DeformConv (2-D), RoiAlign and MaxUnpool with ONNX semantics
// (DeformConv as torchvision's deform_conv2d, RoiAlign as onnxruntime's).

func init() {
	opkernel.Register("DeformConv", deformConv)
	opkernel.Register("RoiAlign", roiAlign)
	opkernel.Register("MaxUnpool", maxUnpool)
}

func deformConv(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := need(n, in, 3); err != nil {
		return err
	}
	if hasHalf(in...) {
		return viaF32(ctx, n, in, out, deformConv)
	}
	switch in[0].DType {
	case ir.Float32:
		return deformConvT[float32](ctx, n, in, out[0])
	case ir.Float64:
		return deformConvT[float64](ctx, n, in, out[0])
	}
	return opkernel.Unsupportedf(n, "dtype %s", in[0].DType)
}

// bilinearZero samples plane [h, w] at (y, x), reading zeros outside it
// (torchvision's bilinear_interpolate).
func bilinearZero[T float](p []T, h, w int, y, x T) T {
	if y <= -1 || y >= T(h) || x <= -1 || x >= T(w) {
		return 0
	}
	y0, x0 := int(math.Floor(float64(y))), int(math.Floor(float64(x)))
	ly, lx := y-T(y0), x-T(x0)
	at := func(i, j int) T {
		if i < 0 || j < 0 || i >= h || j >= w {
			return 0
		}
		return p[i*w+j]
	}
	return (1-ly)*(1-lx)*at(y0, x0) + (1-ly)*lx*at(y0, x0+1) + ly*(1-lx)*at(y0+1, x0) + ly*lx*at(y0+1, x0+1)
}

func deformConvT[T float](ctx *opkernel.Ctx, n *ir.Node, in []*ir.Tensor, y *ir.Tensor) error {
	x, w, off := in[0], in[1], in[2]
	b, mask := input(in, 3), input(in, 4)
	if len(x.Shape) != 4 || len(w.Shape) != 4 {
		return opkernel.Unsupportedf(n, "only 2-D DeformConv (X %v)", x.Shape)
	}
	g, err := windowAttrs(n, x.Shape[2:], w.Shape[2:], false)
	if err != nil {
		return err
	}
	nb, c, hIn, wIn := int(x.Shape[0]), int(x.Shape[1]), int(x.Shape[2]), int(x.Shape[3])
	m, cg, kh, kw := int(w.Shape[0]), int(w.Shape[1]), g.k[1], g.k[2]
	oh, ow := g.out[1], g.out[2]
	group := int(n.Attrs.Int("group", 1))
	og := int(n.Attrs.Int("offset_group", 1))
	if group < 1 || og < 1 || c != cg*group || m%group != 0 || c%og != 0 {
		return errf(n, "channels: X %v, W %v, group %d, offset_group %d", x.Shape, w.Shape, group, og)
	}
	if err := g.checkOut(n, y, nb, m); err != nil {
		return err
	}
	kk := kh * kw
	if prod(off.Shape) != nb*og*2*kk*oh*ow {
		return errf(n, "offset %v does not fit output [%d, %d, %d, %d]", off.Shape, nb, m, oh, ow)
	}
	if mask != nil && prod(mask.Shape) != nb*og*kk*oh*ow {
		return errf(n, "mask %v does not fit", mask.Shape)
	}
	if b != nil && prod(b.Shape) != m {
		return errf(n, "bias %v does not fit %d channels", b.Shape, m)
	}
	xs, ws, os, ys := slice[T](x), slice[T](w), slice[T](off), slice[T](y)
	var ms, bs []T
	if mask != nil {
		ms = slice[T](mask)
	}
	if b != nil {
		bs = slice[T](b)
	}
	ohw := oh * ow
	mg := m / group
	cpo := c / og
	// col[ic*kk + k][p]: the sampled (and masked) input of tap k at output p
	opkernel.ParallelFor(ctx, nb*group, 1, func(s, e int) {
		col := make([]T, cg*kk*ohw)
		for u := s; u < e; u++ {
			bi, gi := u/group, u%group
			for icg := 0; icg < cg; icg++ {
				ic := gi*cg + icg
				o := ic / cpo
				plane := xs[(bi*c+ic)*hIn*wIn : (bi*c+ic+1)*hIn*wIn]
				for i := 0; i < kh; i++ {
					for j := 0; j < kw; j++ {
						k := i*kw + j
						offH := os[((bi*og+o)*2*kk+2*k)*ohw:]
						offW := os[((bi*og+o)*2*kk+2*k+1)*ohw:]
						var mk []T
						if ms != nil {
							mk = ms[((bi*og+o)*kk+k)*ohw:]
						}
						dst := col[(icg*kk+k)*ohw : (icg*kk+k+1)*ohw]
						for py := 0; py < oh; py++ {
							for px := 0; px < ow; px++ {
								p := py*ow + px
								yy := T(py*g.s[1]-g.pb[1]+i*g.d[1]) + offH[p]
								xx := T(px*g.s[2]-g.pb[2]+j*g.d[2]) + offW[p]
								v := bilinearZero(plane, hIn, wIn, yy, xx)
								if mk != nil {
									v *= mk[p]
								}
								dst[p] = v
							}
						}
					}
				}
			}
			for mo := 0; mo < mg; mo++ {
				oc := gi*mg + mo
				dst := ys[(bi*m+oc)*ohw : (bi*m+oc+1)*ohw]
				var bias T
				if bs != nil {
					bias = bs[oc]
				}
				for p := range dst {
					dst[p] = bias
				}
				wr := ws[oc*cg*kk : (oc+1)*cg*kk]
				for q, wv := range wr {
					src := col[q*ohw : (q+1)*ohw]
					for p := range dst {
						dst[p] += wv * src[p]
					}
				}
			}
		}
	})
	return nil
}

func roiAlign(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := need(n, in, 3); err != nil {
		return err
	}
	if hasHalf(in[0], in[1]) {
		return viaF32(ctx, n, in, out, roiAlign)
	}
	if in[0].DType != in[1].DType {
		return opkernel.Unsupportedf(n, "X %s with rois %s", in[0].DType, in[1].DType)
	}
	switch in[0].DType {
	case ir.Float32:
		return roiAlignT[float32](ctx, n, in, out[0])
	case ir.Float64:
		return roiAlignT[float64](ctx, n, in, out[0])
	}
	return opkernel.Unsupportedf(n, "dtype %s", in[0].DType)
}

// roiTap is one bilinear sample: four positions and their weights.
type roiTap[T float] struct {
	pos [4]int
	w   [4]T
}

// roiSample computes the bilinear tap at (y, x) of an [h, w] plane as
// onnxruntime's RoiAlign does (no contribution outside [-1, size]).
func roiSample[T float](h, w int, y, x T) roiTap[T] {
	var t roiTap[T]
	if y < -1 || y > T(h) || x < -1 || x > T(w) {
		return t
	}
	y, x = max(y, 0), max(x, 0)
	y0, x0 := int(y), int(x)
	var y1, x1 int
	if y0 >= h-1 {
		y0, y1, y = h-1, h-1, T(h-1)
	} else {
		y1 = y0 + 1
	}
	if x0 >= w-1 {
		x0, x1, x = w-1, w-1, T(w-1)
	} else {
		x1 = x0 + 1
	}
	ly, lx := y-T(y0), x-T(x0)
	hy, hx := 1-ly, 1-lx
	t.pos = [4]int{y0*w + x0, y0*w + x1, y1*w + x0, y1*w + x1}
	t.w = [4]T{hy * hx, hy * lx, ly * hx, ly * lx}
	return t
}

func roiAlignT[T float](ctx *opkernel.Ctx, n *ir.Node, in []*ir.Tensor, y *ir.Tensor) error {
	x, rois, bi := in[0], in[1], in[2]
	if len(x.Shape) != 4 || len(rois.Shape) != 2 || rois.Shape[1] != 4 {
		return errf(n, "X %v must be 4-D and rois %v [R, 4]", x.Shape, rois.Shape)
	}
	nr := int(rois.Shape[0])
	bidx, err := bi.Int64s()
	if err != nil || len(bidx) != nr {
		return errf(n, "batch_indices must be %d integers", nr)
	}
	nb, c, h, w := int(x.Shape[0]), int(x.Shape[1]), int(x.Shape[2]), int(x.Shape[3])
	oh, ow := int(n.Attrs.Int("output_height", 1)), int(n.Attrs.Int("output_width", 1))
	if y.DType != x.DType || len(y.Shape) != 4 || int(y.Shape[0]) != nr || int(y.Shape[1]) != c || int(y.Shape[2]) != oh || int(y.Shape[3]) != ow {
		return errf(n, "output %s, expected [%d, %d, %d, %d]", y, nr, c, oh, ow)
	}
	scale := T(n.Attrs.Float("spatial_scale", 1))
	ratio := int(n.Attrs.Int("sampling_ratio", 0))
	isMax := n.Attrs.String("mode", "avg") == "max"
	halfPixel := n.Attrs.String("coordinate_transformation_mode", "half_pixel") == "half_pixel"
	var shift T
	if halfPixel {
		shift = 0.5
	}
	xs, rs, ys := slice[T](x), slice[T](rois), slice[T](y)
	for r := 0; r < nr; r++ {
		if bidx[r] < 0 || bidx[r] >= int64(nb) {
			return errf(n, "batch index %d out of range [0, %d)", bidx[r], nb)
		}
	}
	opkernel.ParallelFor(ctx, nr, 1, func(s, e int) {
		var taps []roiTap[T]
		for r := s; r < e; r++ {
			b := int(bidx[r])
			rr := rs[r*4 : r*4+4]
			x0, y0 := rr[0]*scale-shift, rr[1]*scale-shift
			x1, y1 := rr[2]*scale-shift, rr[3]*scale-shift
			rw, rh := x1-x0, y1-y0
			if !halfPixel {
				rw, rh = max(rw, 1), max(rh, 1)
			}
			bh, bw := rh/T(oh), rw/T(ow)
			gh, gw := ratio, ratio
			if ratio <= 0 {
				gh, gw = int(math.Ceil(float64(rh/T(oh)))), int(math.Ceil(float64(rw/T(ow))))
			}
			count := T(max(gh*gw, 1))
			// the taps of every output cell, shared by all channels
			taps = taps[:0]
			for py := 0; py < oh; py++ {
				for px := 0; px < ow; px++ {
					for iy := 0; iy < gh; iy++ {
						yy := y0 + T(py)*bh + (T(iy)+0.5)*bh/T(gh)
						for ix := 0; ix < gw; ix++ {
							xx := x0 + T(px)*bw + (T(ix)+0.5)*bw/T(gw)
							taps = append(taps, roiSample[T](h, w, yy, xx))
						}
					}
				}
			}
			per := gh * gw
			for ch := 0; ch < c; ch++ {
				plane := xs[(b*c+ch)*h*w : (b*c+ch+1)*h*w]
				dst := ys[(r*c+ch)*oh*ow : (r*c+ch+1)*oh*ow]
				for cell := range dst {
					var acc T
					for q, t := range taps[cell*per : (cell+1)*per] {
						if isMax {
							v := max(t.w[0]*plane[t.pos[0]], t.w[1]*plane[t.pos[1]], t.w[2]*plane[t.pos[2]], t.w[3]*plane[t.pos[3]])
							if q == 0 || v > acc {
								acc = v
							}
						} else {
							acc += t.w[0]*plane[t.pos[0]] + t.w[1]*plane[t.pos[1]] + t.w[2]*plane[t.pos[2]] + t.w[3]*plane[t.pos[3]]
						}
					}
					if !isMax {
						acc /= count
					}
					dst[cell] = acc
				}
			}
		}
	})
	return nil
}

// maxUnpool: zeros, then the output element at the position of I[j] gets
// X[j]. I indexes the flattened tensor MaxPool read, whose shape is the
// default output shape ((in-1)*stride - pads + kernel); with a larger
// output_shape each index is moved to the same coordinates in the output.
func maxUnpool(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := need(n, in, 2); err != nil {
		return err
	}
	x, it, y := in[0], in[1], out[0]
	r := len(x.Shape)
	if y.DType != x.DType || x.DType == ir.String || prod(it.Shape) != prod(x.Shape) || r < 3 || len(y.Shape) != r {
		return errf(n, "X %s, I %s and output %s do not agree", x, it, y)
	}
	kernel, strides, pads, err := ir.MaxUnpoolGeom(n, r-2)
	if err != nil {
		return errf(n, "%v", err)
	}
	def := append([]int64(nil), x.Shape...)
	for i := 0; i < r-2; i++ {
		def[2+i] = (x.Shape[2+i]-1)*strides[i] - pads[i] - pads[r-2+i] + kernel[i]
	}
	idx, err := it.Int64s()
	if err != nil {
		return errf(n, "indices: %v", err)
	}
	sz := x.DType.Size()
	total, defTotal := prod(y.Shape), prod(def)
	clear(y.Data[:total*sz])
	for j, v := range idx {
		if v < 0 || v >= int64(defTotal) {
			return errf(n, "index %d out of range [0, %d)", v, defTotal)
		}
		// re-encode the coordinates of v in def as an offset into y
		o, scale, rem := int64(0), int64(1), v
		for d := r - 1; d >= 0; d-- {
			c := rem % def[d]
			rem /= def[d]
			if c >= y.Shape[d] {
				return errf(n, "index %d lies outside output %v", v, y.Shape)
			}
			o += c * scale
			scale *= y.Shape[d]
		}
		copy(y.Data[int(o)*sz:(int(o)+1)*sz], x.Data[j*sz:(j+1)*sz])
	}
	return nil
}
