package nn

/*
#include "resize.h"
*/
import "C"

import (
	"math"
	"unsafe"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// Resize in onnxruntime's rounding. onnxruntime's CPU kernel
// (core/providers/cpu/tensor/upsample.{h,cc}) computes every source
// coordinate in float32 and interpolates in float32 in a fixed order:
// bilinear for 2-D and 4-D inputs (NCHW when the two outer scales are 1,
// NHWC when the outer and inner ones are), trilinear for 3-D and 5-D, bicubic
// for 2-D and 4-D. A model that quantizes after a Resize (dynamic quantization
// of an upsampling decoder) turns one ulp into a different quantization level,
// so these paths follow that order operation by operation: every product is
// rounded to float32 before it is added (explicit conversions keep Go from
// contracting them into FMAs), sums run left to right.

// ortCoord is onnxruntime's GetOriginalCoordinateFromResizedCoordinate in
// float32 (two modes compute in double and round at the end, as there).
func ortCoord(mode string, x, scale, lenResized, lenOrig, roiS, roiE float32) float32 {
	switch mode {
	case "asymmetric":
		return x / scale
	case "pytorch_half_pixel":
		if lenResized > 1 {
			return (x+0.5)/scale - 0.5
		}
		return 0
	case "tf_half_pixel_for_nn":
		return (x + 0.5) / scale
	case "align_corners":
		if lenResized == 1 {
			return 0
		}
		return float32(x*(lenOrig-1)) / (lenResized - 1)
	case "tf_crop_and_resize":
		if lenResized > 1 {
			return float32(roiS*(lenOrig-1)) + float32(float32(x*(roiE-roiS))*(lenOrig-1))/(lenResized-1)
		}
		return float32(0.5 * float64(roiS+roiE) * float64(lenOrig-1))
	case "half_pixel_symmetric":
		outW := float32(scale * lenOrig)
		adj := lenResized / outW
		center := lenOrig / 2
		offset := float32(center * (1 - adj))
		return float32(float64(offset) + (float64(x)+0.5)/float64(scale) - 0.5)
	}
	return (x+0.5)/scale - 0.5 // half_pixel
}

// ortAxisCoord is the source coordinate of output index o on one axis; an
// axis whose scale is 1 maps straight through whatever the mode.
func ortAxisCoord(p *resizeParams, o, in, out int, scale, roiS, roiE float32) float32 {
	if scale == 1 {
		return float32(o)
	}
	return ortCoord(p.coord, float32(o), scale, float32(out), float32(in), roiS, roiE)
}

// ortNearestPixel is GetNearestPixelFromOriginal.
func ortNearestPixel(mode string, x float32, down bool) int64 {
	switch mode {
	case "simple":
		if down {
			return int64(math.Ceil(float64(x)))
		}
		return int64(x)
	case "round_prefer_ceil":
		return int64(math.Round(float64(x)))
	case "floor":
		return int64(math.Floor(float64(x)))
	case "ceil":
		return int64(math.Ceil(float64(x)))
	}
	// round_prefer_floor
	if x == float32(int64(x))+0.5 {
		return int64(math.Floor(float64(x)))
	}
	return int64(math.Round(float64(x)))
}

// ortNearestAxis is UpsampleNearestSetupInputMappings for one axis.
func ortNearestAxis(p *resizeParams, in, out int, scale, roiS, roiE float32) *resizeAxis {
	ax := &resizeAxis{in: in, out: out, taps: 1}
	if scale == 1 {
		ax.identity = true
		return ax
	}
	ax.idx = make([]int, out)
	ax.w = make([]float64, out)
	ax.outside = make([]bool, out)
	extrap := p.coord == "tf_crop_and_resize"
	for o := 0; o < out; o++ {
		x := ortCoord(p.coord, float32(o), scale, float32(out), float32(in), roiS, roiE)
		if extrap && (x < 0 || x > float32(in-1)) {
			ax.outside[o], ax.anyOutside = true, true
		}
		i := max(0, min(ortNearestPixel(p.nearest, x, scale < 1), int64(in-1)))
		ax.idx[o], ax.w[o] = int(i), 1
	}
	return ax
}

// ortLinearAxis holds SetupUpsampleBilinear's tables for one axis: source
// indexes i1/i2, weights d1 (of i2) and d2 (of i1), the unclamped coordinate
// for extrapolation, and the 10-bit fixed-point weights of the int8 path.
type ortLinearAxis struct {
	i1, i2       []int
	i1c, i2c     []int32 // i1, i2 for the C row kernel
	d1, d2       []float32
	d1q, d2q     []int32
	orig         []float32
	in, out      int
	extrapolates bool
}

func ortLinearSetup(p *resizeParams, in, out int, scale, roiS, roiE float32, fixed bool) *ortLinearAxis {
	a := &ortLinearAxis{in: in, out: out,
		i1: make([]int, out), i2: make([]int, out),
		d1: make([]float32, out), d2: make([]float32, out), orig: make([]float32, out)}
	if fixed {
		a.d1q, a.d2q = make([]int32, out), make([]int32, out)
	}
	hi := float32(in - 1)
	for o := 0; o < out; o++ {
		x := ortAxisCoord(p, o, in, out, scale, roiS, roiE)
		a.orig[o] = x
		if p.coord == "tf_crop_and_resize" && (x < 0 || x > hi) {
			a.extrapolates = true
		}
		x = max(0, min(x, hi))
		i1 := min(int(int32(x)), in-1)
		i2 := min(i1+1, in-1)
		a.i1[o], a.i2[o] = i1, i2
		if i1 == i2 {
			a.d1[o], a.d2[o] = 0.5, 0.5
		} else {
			a.d1[o] = float32(math.Abs(float64(x - float32(i1))))
			a.d2[o] = float32(math.Abs(float64(x - float32(i2))))
		}
		if fixed {
			xq := int32(x * 1024)
			if i1 == i2 {
				a.d1q[o], a.d2q[o] = 512, 512
			} else {
				a.d1q[o] = absInt32(xq - int32(i1)*1024)
				a.d2q[o] = absInt32(xq - int32(i2)*1024)
			}
		}
	}
	a.i1c, a.i2c = make([]int32, out), make([]int32, out)
	for o := range a.i1 {
		a.i1c[o], a.i2c[o] = int32(a.i1[o]), int32(a.i2[o])
	}
	return a
}

func absInt32(v int32) int32 {
	if v < 0 {
		return -v
	}
	return v
}

func (a *ortLinearAxis) outsideAt(o int) bool {
	return a.extrapolates && (a.orig[o] < 0 || a.orig[o] > float32(a.in-1))
}

// ortFloats is a float32 view of a tensor for the interpolating paths:
// float32 in place, other types widened as onnxruntime's implicit
// conversions widen them.
func ortFloats(t *ir.Tensor) ([]float32, bool) {
	switch {
	case t.DType == ir.Float32:
		return t.F32(), true
	case opkernel.IsHalf(t.DType):
		return opkernel.HalfToF32(t).F32(), true
	case t.DType == ir.Int32:
		s := t.I32()
		d := make([]float32, len(s))
		for i, v := range s {
			d[i] = float32(v)
		}
		return d, true
	case t.DType == ir.Int8:
		s := t.I8()
		d := make([]float32, len(s))
		for i, v := range s {
			d[i] = float32(v)
		}
		return d, true
	case t.DType == ir.Uint8:
		s := t.U8()
		d := make([]float32, len(s))
		for i, v := range s {
			d[i] = float32(v)
		}
		return d, true
	}
	return nil, false
}

// ortStore writes float32 results with static_cast<T>: float16 rounds to
// nearest even, integers truncate toward zero.
func ortStore(y *ir.Tensor, v []float32) {
	switch {
	case y.DType == ir.Float32:
		if len(y.F32()) > 0 && len(v) > 0 && &y.F32()[0] != &v[0] {
			copy(y.F32(), v)
		}
	case opkernel.IsHalf(y.DType):
		opkernel.F32ToHalf(y, v)
	case y.DType == ir.Int32:
		d := y.I32()
		for i, f := range v {
			d[i] = int32(max(min(f, math.MaxInt32), math.MinInt32))
		}
	case y.DType == ir.Int8:
		d := y.I8()
		for i, f := range v {
			d[i] = int8(int32(max(min(f, 127), -128)))
		}
	case y.DType == ir.Uint8:
		d := y.U8()
		for i, f := range v {
			d[i] = uint8(int32(max(min(f, 255), 0)))
		}
	}
}

// ortOutput is where a path writes its float32 results: the output itself
// for float32, a scratch buffer stored by ortStore otherwise.
func ortOutput(y *ir.Tensor) []float32 {
	if y.DType == ir.Float32 {
		return y.F32()
	}
	return make([]float32, y.NumElements())
}

// ortBilinear is UpsampleBilinear (planes = batch*channels of h*w) and, with
// nhwc, NhwcUpsampleBilinear (planes = batch, channels innermost): the same
// four products summed in the same order.
func ortBilinear(ctx *opkernel.Ctx, x []float32, dst []float32, planes, ch int, ay, ax *ortLinearAxis, extrap float32) {
	inPlane, outPlane := ay.in*ax.in*ch, ay.out*ax.out*ch
	opkernel.ParallelFor(ctx, planes*ay.out, 1, func(s, e int) {
		for r := s; r < e; r++ {
			pl, oy := r/ay.out, r%ay.out
			src := x[pl*inPlane : (pl+1)*inPlane]
			out := dst[pl*outPlane+oy*ax.out*ch : pl*outPlane+(oy+1)*ax.out*ch]
			row1, row2 := ay.i1[oy]*ax.in*ch, ay.i2[oy]*ax.in*ch
			dy1, dy2 := ay.d1[oy], ay.d2[oy]
			yOut := ay.outsideAt(oy)
			if !yOut && !ax.extrapolates {
				C.gk_resize_bilinear_row_f32((*C.float)(unsafe.Pointer(&out[0])), (*C.float)(unsafe.Pointer(&src[row1])),
					(*C.float)(unsafe.Pointer(&src[row2])), C.int(ax.out), C.int(ch),
					(*C.int32_t)(unsafe.Pointer(&ax.i1c[0])), (*C.int32_t)(unsafe.Pointer(&ax.i2c[0])),
					(*C.float)(unsafe.Pointer(&ax.d1[0])), (*C.float)(unsafe.Pointer(&ax.d2[0])), C.float(dy1), C.float(dy2))
				continue
			}
			for ox := 0; ox < ax.out; ox++ {
				o := out[ox*ch : (ox+1)*ch]
				if yOut || ax.outsideAt(ox) {
					for c := range o {
						o[c] = extrap
					}
					continue
				}
				c11 := float32(ax.d2[ox] * dy2)
				c21 := float32(ax.d1[ox] * dy2)
				c12 := float32(ax.d2[ox] * dy1)
				c22 := float32(ax.d1[ox] * dy1)
				x1, x2 := ax.i1[ox]*ch, ax.i2[ox]*ch
				for c := range o {
					v := float32(c11*src[row1+x1+c]) + float32(c21*src[row1+x2+c])
					v += float32(c12 * src[row2+x1+c])
					v += float32(c22 * src[row2+x2+c])
					o[c] = v
				}
			}
		}
	})
}

// ortBilinearNHWCInt is NhwcUpsampleBilinearInteger (int8/uint8 NHWC): the
// weights in 10-bit fixed point, the sum in int32 divided by 2^20.
func ortBilinearNHWCInt(ctx *opkernel.Ctx, x, y *ir.Tensor, planes, ch int, ay, ax *ortLinearAxis, extrap float32) {
	get := func(i int) int32 {
		if x.DType == ir.Int8 {
			return int32(x.I8()[i])
		}
		return int32(x.U8()[i])
	}
	put := func(i int, v int32) {
		if y.DType == ir.Int8 {
			y.I8()[i] = int8(v)
		} else {
			y.U8()[i] = uint8(v)
		}
	}
	ev := int32(extrap)
	inPlane, outPlane := ay.in*ax.in*ch, ay.out*ax.out*ch
	opkernel.ParallelFor(ctx, planes*ay.out, 1, func(s, e int) {
		for r := s; r < e; r++ {
			pl, oy := r/ay.out, r%ay.out
			base, obase := pl*inPlane, pl*outPlane+oy*ax.out*ch
			row1, row2 := base+ay.i1[oy]*ax.in*ch, base+ay.i2[oy]*ax.in*ch
			for ox := 0; ox < ax.out; ox++ {
				o := obase + ox*ch
				if ay.outsideAt(oy) || ax.outsideAt(ox) {
					for c := 0; c < ch; c++ {
						put(o+c, ev)
					}
					continue
				}
				c11 := ax.d2q[ox] * ay.d2q[oy]
				c21 := ax.d1q[ox] * ay.d2q[oy]
				c12 := ax.d2q[ox] * ay.d1q[oy]
				c22 := ax.d1q[ox] * ay.d1q[oy]
				x1, x2 := ax.i1[ox]*ch, ax.i2[ox]*ch
				for c := 0; c < ch; c++ {
					v := c11*get(row1+x1+c) + c21*get(row1+x2+c) + c12*get(row2+x1+c) + c22*get(row2+x2+c)
					put(o+c, v/(1<<20))
				}
			}
		}
	})
}

// ortTrilinear is UpsampleTrilinear: eight products of three weights each,
// summed in onnxruntime's order.
func ortTrilinear(ctx *opkernel.Ctx, x []float32, dst []float32, planes int, az, ay, ax *ortLinearAxis, extrap float32) {
	inPlane, outPlane := az.in*ay.in*ax.in, az.out*ay.out*ax.out
	hw := ay.in * ax.in
	opkernel.ParallelFor(ctx, planes*az.out, 1, func(s, e int) {
		for r := s; r < e; r++ {
			pl, oz := r/az.out, r%az.out
			src := x[pl*inPlane : (pl+1)*inPlane]
			out := dst[pl*outPlane+oz*ay.out*ax.out : pl*outPlane+(oz+1)*ay.out*ax.out]
			z1, z2 := az.i1[oz]*hw, az.i2[oz]*hw
			dz1, dz2 := az.d1[oz], az.d2[oz]
			for oy := 0; oy < ay.out; oy++ {
				y1, y2 := ay.i1[oy]*ax.in, ay.i2[oy]*ax.in
				dy1, dy2 := ay.d1[oy], ay.d2[oy]
				for ox := 0; ox < ax.out; ox++ {
					if az.outsideAt(oz) || ay.outsideAt(oy) || ax.outsideAt(ox) {
						out[oy*ax.out+ox] = extrap
						continue
					}
					x1, x2 := ax.i1[ox], ax.i2[ox]
					dx1, dx2 := ax.d1[ox], ax.d2[ox]
					w := func(a, b, c float32) float32 { return float32(float32(a*b) * c) }
					v := float32(w(dx2, dy2, dz2)*src[z1+y1+x1]) + float32(w(dx1, dy2, dz2)*src[z1+y1+x2])
					v += float32(w(dx2, dy1, dz2) * src[z1+y2+x1])
					v += float32(w(dx1, dy1, dz2) * src[z1+y2+x2])
					v += float32(w(dx2, dy2, dz1) * src[z2+y1+x1])
					v += float32(w(dx1, dy2, dz1) * src[z2+y1+x2])
					v += float32(w(dx2, dy1, dz1) * src[z2+y2+x1])
					v += float32(w(dx1, dy1, dz1) * src[z2+y2+x2])
					out[oy*ax.out+ox] = v
				}
			}
		}
	})
}

// ortCubicCoeffs is GetCubicCoeffs in float32.
func ortCubicCoeffs(s, a float32) [4]float32 {
	t := float32(math.Abs(float64(s)))
	t1, u, u1 := t+1, 1-t, 2-t
	var c [4]float32
	c[0] = float32(float32(float32(float32(float32(a*t1)-float32(5*a))*t1)+float32(8*a))*t1) - float32(4*a)
	c[1] = float32(float32(float32(float32(float32((a+2)*t)-(a+3))*t)*t)) + 1
	c[2] = float32(float32(float32(float32(float32((a+2)*u)-(a+3))*u)*u)) + 1
	c[3] = float32(float32(float32(float32(float32(a*u1)-float32(5*a))*u1)+float32(8*a))*u1) - float32(4*a)
	return c
}

// ortCubicAxis holds one axis of ResizeBiCubic: the coordinate, its floor
// and the (possibly edge-renormalised) coefficients with their sum.
type ortCubicAxis struct {
	orig  []float32
	base  []int
	coeff [][4]float32
	sum   []float32
	frac  []float32
	in    int
}

func ortCubicSetup(p *resizeParams, in, out int, scale, roiS, roiE float32) *ortCubicAxis {
	a := &ortCubicAxis{in: in, orig: make([]float32, out), base: make([]int, out),
		coeff: make([][4]float32, out), sum: make([]float32, out), frac: make([]float32, out)}
	ca := float32(p.cubicA)
	for o := 0; o < out; o++ {
		x := ortAxisCoord(p, o, in, out, scale, roiS, roiE)
		b := float32(math.Floor(float64(x)))
		s := x - b
		a.orig[o], a.base[o], a.frac[o] = x, int(b), s
		c := ortCubicCoeffs(s, ca)
		sum := float32(1)
		if p.exclude {
			sum = 0
			for i := range c {
				if v := int(b) - 1 + i; v < 0 || v >= in {
					c[i] = 0
				}
				sum += c[i]
			}
		}
		a.coeff[o], a.sum[o] = c, sum
	}
	return a
}

// ortBicubic is ResizeBiCubic: a 1-D pass along x for each of the four rows
// (coefficient divided by the sum, times the sample, accumulated), then the
// four row results times the y coefficient divided by its sum. onnxruntime
// caches the row results per fractional part and grid position; the cache
// changes nothing except where its key is ambiguous (a column left of the
// image and the last column of the row above share a key), and there it is
// replayed literally, plane by plane.
func ortBicubic(ctx *opkernel.Ctx, x []float32, dst []float32, planes int, ay, ax *ortCubicAxis, outH, outW int, extrap bool, ev float32) {
	b := &bicubic{x: x, dst: dst, ay: ay, ax: ax, outH: outH, outW: outW, extrap: extrap, ev: ev}
	if ortCubicCacheAmbiguous(ax) {
		for pl := 0; pl < planes; pl++ {
			b.rows(pl, 0, outH, map[bicubicKey]float32{})
		}
		return
	}
	opkernel.ParallelFor(ctx, planes*outH, 1, func(s, e int) {
		for r := s; r < e; r++ {
			b.rows(r/outH, r%outH, r%outH+1, nil)
		}
	})
}

type bicubicKey struct {
	frac float32
	pos  int
}

type bicubic struct {
	x, dst     []float32
	ay, ax     *ortCubicAxis
	outH, outW int
	extrap     bool
	ev         float32
}

// rows computes output rows [y0, y1) of plane pl; cache, when not nil, is
// onnxruntime's row-result cache of the plane (first value wins).
func (b *bicubic) rows(pl, y0, y1 int, cache map[bicubicKey]float32) {
	ay, ax := b.ay, b.ax
	h, w := ay.in, ax.in
	src := b.x[pl*h*w : (pl+1)*h*w]
	for oy := y0; oy < y1; oy++ {
		out := b.dst[(pl*b.outH+oy)*b.outW : (pl*b.outH+oy+1)*b.outW]
		if iy := ay.orig[oy]; b.extrap && (iy < 0 || iy > float32(h-1)) {
			for i := range out {
				out[i] = b.ev
			}
			continue
		}
		for ox := range out {
			if ix := ax.orig[ox]; b.extrap && (ix < 0 || ix > float32(w-1)) {
				out[ox] = b.ev
				continue
			}
			var res float32
			for i := 0; i < 4; i++ {
				yv := ay.base[oy] - 1 + i
				k := bicubicKey{ax.frac[ox], yv*w + ax.base[ox] - 1}
				xr, ok := cache[k]
				if !ok {
					row := clampInt(yv, 0, h-1) * w
					xr = cubicRow(src[row:row+w], ax.base[ox], &ax.coeff[ox], ax.sum[ox])
					if cache != nil {
						cache[k] = xr
					}
				}
				res += float32(float32(xr*ay.coeff[oy][i]) / ay.sum[oy])
			}
			out[ox] = res
		}
	}
}

// cubicRow is CubicInterpolation1D without the cache.
func cubicRow(row []float32, base int, c *[4]float32, sum float32) float32 {
	var r float32
	w := len(row)
	for j := 0; j < 4; j++ {
		r += float32(float32(c[j]/sum) * row[clampInt(base-1+j, 0, w-1)])
	}
	return r
}

func ortCubicCacheAmbiguous(ax *ortCubicAxis) bool {
	left := map[float32]bool{}
	for o, b := range ax.base {
		if b == -1 {
			left[ax.frac[o]] = true
		}
	}
	for o, b := range ax.base {
		if b == ax.in-1 && left[ax.frac[o]] {
			return true
		}
	}
	return false
}

// resizeORT runs the onnxruntime-order path when onnxruntime has one for
// this input (mode, rank, scales, dtype); it reports false otherwise.
func resizeORT(ctx *opkernel.Ctx, p *resizeParams, x, y *ir.Tensor, scales, roiS, roiE []float32) (bool, error) {
	if p.antialias && p.mode != "nearest" {
		return false, nil // upsample_aa's filters: the separable reference path
	}
	r := len(x.Shape)
	dims := func(axes ...int) (in, out []int) {
		for _, a := range axes {
			in = append(in, int(x.Shape[a]))
			out = append(out, int(y.Shape[a]))
		}
		return
	}
	extrap := float32(p.extrap)
	useExtrap := p.coord == "tf_crop_and_resize"
	switch p.mode {
	case "linear":
		var lead, sp []int // axes folded into planes, interpolated axes
		nhwc := false
		switch {
		case r == 2 || r == 3:
			sp = []int{0, 1, 2}[:r]
		case r == 4 && scales[0] == 1 && scales[1] == 1:
			lead, sp = []int{0, 1}, []int{2, 3}
		case r == 4 && scales[0] == 1 && scales[3] == 1:
			lead, sp, nhwc = []int{0}, []int{1, 2}, true
		case r == 5 && scales[0] == 1 && scales[1] == 1:
			lead, sp = []int{0, 1}, []int{2, 3, 4}
		default:
			return false, nil
		}
		planes := 1
		for _, a := range lead {
			planes *= int(x.Shape[a])
		}
		in, out := dims(sp...)
		intPath := nhwc && (x.DType == ir.Int8 || x.DType == ir.Uint8)
		axes := make([]*ortLinearAxis, len(sp))
		for i, a := range sp {
			axes[i] = ortLinearSetup(p, in[i], out[i], scales[a], roiS[a], roiE[a], intPath)
		}
		if intPath {
			ortBilinearNHWCInt(ctx, x, y, planes, int(x.Shape[3]), axes[0], axes[1], extrap)
			return true, nil
		}
		src, ok := ortFloats(x)
		if !ok {
			return false, nil
		}
		dst := ortOutput(y)
		switch {
		case len(sp) == 2 && nhwc:
			ortBilinear(ctx, src, dst, planes, int(x.Shape[3]), axes[0], axes[1], extrap)
		case len(sp) == 2:
			ortBilinear(ctx, src, dst, planes, 1, axes[0], axes[1], extrap)
		default:
			ortTrilinear(ctx, src, dst, planes, axes[0], axes[1], axes[2], extrap)
		}
		ortStore(y, dst)
		return true, nil
	case "cubic":
		var lead []int
		switch {
		case r == 2:
		case r == 4 && scales[0] == 1 && scales[1] == 1:
			lead = []int{0, 1}
		default:
			return false, nil
		}
		if x.DType != ir.Float32 {
			return false, nil // onnxruntime's bicubic is float32 only
		}
		planes := 1
		for _, a := range lead {
			planes *= int(x.Shape[a])
		}
		hA, wA := r-2, r-1
		ay := ortCubicSetup(p, int(x.Shape[hA]), int(y.Shape[hA]), scales[hA], roiS[hA], roiE[hA])
		ax := ortCubicSetup(p, int(x.Shape[wA]), int(y.Shape[wA]), scales[wA], roiS[wA], roiE[wA])
		ortBicubic(ctx, x.F32(), y.F32(), planes, ay, ax, int(y.Shape[hA]), int(y.Shape[wA]), useExtrap, extrap)
		return true, nil
	}
	return false, nil
}
