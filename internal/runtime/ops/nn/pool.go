package nn

/*
#include "im2col_dwconv.h"
#include "avgpool.h"
*/
import "C"

import (
	"math"
	"slices"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// poolGeom reads the window attributes of a pooling node on x.
func poolGeom(n *ir.Node, x *ir.Tensor) (*geom, error) {
	if len(x.Shape) < 3 {
		return nil, errf(n, "input %v must have rank >= 3", x.Shape)
	}
	ks := n.Attrs.Ints("kernel_shape", nil)
	if ks == nil {
		return nil, errf(n, "kernel_shape is required")
	}
	return windowAttrs(n, x.Shape[2:], ks, n.Attrs.Int("ceil_mode", 0) != 0)
}

// avgPool is ONNX AveragePool.
func avgPool(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := need(n, in, 1); err != nil {
		return err
	}
	x, y := in[0], out[0]
	if hasHalf(x) {
		return viaF32(ctx, n, in, out, avgPool)
	}
	g, err := poolGeom(n, x)
	if err != nil {
		return err
	}
	nc := int(x.Shape[0] * x.Shape[1])
	if err := g.checkOut(n, y, int(x.Shape[0]), int(x.Shape[1])); err != nil {
		return err
	}
	incl := n.Attrs.Int("count_include_pad", 0) != 0
	switch x.DType {
	case ir.Float32:
		if g.wholeWindow() {
			// MlasPool's global kernel, as onnxruntime runs this window
			mlasGlobalMeans(ctx, x.F32(), y.F32(), nc, g.inVol())
			break
		}
		if g.in[0] == 1 && g.k[0] == 1 && g.out[0] == 1 && g.pb[0] == 0 && g.pe[0] == 0 {
			avgPool2DF32(ctx, g, nc, incl, x.F32(), y.F32())
			break
		}
		avgPoolT(ctx, g, nc, incl, x.F32(), y.F32())
	case ir.Float64:
		avgPoolT(ctx, g, nc, incl, x.F64(), y.F64())
	default:
		return opkernel.Unsupportedf(n, "dtype %s", x.DType)
	}
	return nil
}

// windowRange returns the taps [k0, k1) of window o along dim j that land in
// [lo, hi) of the input coordinates.
func windowRange(g *geom, j, o, lo, hi int) (int, int) {
	start := o*g.s[j] - g.pb[j]
	k0, k1 := 0, g.k[j]
	for k0 < k1 && start+k0*g.d[j] < lo {
		k0++
	}
	for k1 > k0 && start+(k1-1)*g.d[j] >= hi {
		k1--
	}
	return k0, k1
}

func avgPoolT[T float](ctx *opkernel.Ctx, g *geom, nc int, countPad bool, x, y []T) {
	inVol, outVol := g.inVol(), g.outVol()
	opkernel.ParallelFor(ctx, nc, 1, func(s, e int) {
		for p := s; p < e; p++ {
			xp, yp := x[p*inVol:(p+1)*inVol], y[p*outVol:(p+1)*outVol]
			oi := 0
			for od := 0; od < g.out[0]; od++ {
				d0, d1 := windowRange(g, 0, od, 0, g.in[0])
				for oh := 0; oh < g.out[1]; oh++ {
					h0, h1 := windowRange(g, 1, oh, 0, g.in[1])
					for ow := 0; ow < g.out[2]; ow++ {
						w0, w1 := windowRange(g, 2, ow, 0, g.in[2])
						var sum T
						for kd := d0; kd < d1; kd++ {
							id := od*g.s[0] - g.pb[0] + kd*g.d[0]
							for kh := h0; kh < h1; kh++ {
								row := xp[(id*g.in[1]+oh*g.s[1]-g.pb[1]+kh*g.d[1])*g.in[2]:]
								base := ow*g.s[2] - g.pb[2]
								for kw := w0; kw < w1; kw++ {
									sum += row[base+kw*g.d[2]]
								}
							}
						}
						cnt := (d1 - d0) * (h1 - h0) * (w1 - w0)
						if countPad {
							// padding counts, the part of a ceil_mode window past it does not
							a0, a1 := windowRange(g, 0, od, -g.pb[0], g.in[0]+g.pe[0])
							b0, b1 := windowRange(g, 1, oh, -g.pb[1], g.in[1]+g.pe[1])
							c0, c1 := windowRange(g, 2, ow, -g.pb[2], g.in[2]+g.pe[2])
							cnt = (a1 - a0) * (b1 - b0) * (c1 - c0)
						}
						if cnt > 0 {
							yp[oi] = sum / T(cnt)
						} else {
							yp[oi] = T(math.NaN())
						}
						oi++
					}
				}
			}
		}
	})
}

// avgPool2DF32 is avgPoolT for 2-D float32 pools in C (avgpool.c), the same
// bits: each output sums its taps in avgPoolT's order.
func avgPool2DF32(ctx *opkernel.Ctx, g *geom, nc int, countPad bool, x, y []float32) {
	inVol, outVol, ow := g.inVol(), g.outVol(), g.out[2]
	if outVol == 0 || inVol == 0 {
		avgPoolT(ctx, g, nc, countPad, x, y)
		return
	}
	cp := 0
	if countPad {
		cp = 1
	}
	opkernel.ParallelFor(ctx, nc, 1, func(s, e int) {
		acc := getF32(ow)
		defer putF32(acc)
		cols := make([]C.int, 3*ow)
		C.avgpool2d_f32(cf(x[s*inVol:]), cf(y[s*outVol:]), C.int(e-s), C.int(g.in[1]), C.int(g.in[2]),
			C.int(g.k[1]), C.int(g.k[2]), C.int(g.s[1]), C.int(g.s[2]), C.int(g.pb[1]), C.int(g.pb[2]),
			C.int(g.pe[1]), C.int(g.pe[2]), C.int(g.d[1]), C.int(g.d[2]), C.int(g.out[1]), C.int(ow),
			C.int(cp), cf(*acc), &cols[0], &cols[ow], &cols[2*ow])
	})
}

// maxPool is ONNX MaxPool with the optional int64 Indices output.
func maxPool(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := need(n, in, 1); err != nil {
		return err
	}
	x, y, idx := in[0], out[0], output(out, 1)
	if hasHalf(x) {
		return viaF32(ctx, n, in, out, maxPool)
	}
	g, err := poolGeom(n, x)
	if err != nil {
		return err
	}
	if err := g.checkOut(n, y, int(x.Shape[0]), int(x.Shape[1])); err != nil {
		return err
	}
	if idx != nil && (idx.DType != ir.Int64 || !slices.Equal(idx.Shape, y.Shape)) {
		return errf(n, "Indices output must be int64%v, got %s", y.Shape, idx)
	}
	var ind []int64
	if idx != nil {
		ind = idx.I64()
	}
	colMajor := n.Attrs.Int("storage_order", 0) != 0
	nc := int(x.Shape[0] * x.Shape[1])
	switch x.DType {
	case ir.Float32:
		if ind == nil && g.in[0] == 1 && g.k[0] == 1 {
			maxPool2DF32(ctx, g, nc, x.F32(), y.F32())
			break
		}
		maxPoolT(ctx, g, nc, x.F32(), y.F32(), ind, colMajor, float32(math.Inf(-1)))
	case ir.Float64:
		maxPoolT(ctx, g, nc, x.F64(), y.F64(), ind, colMajor, math.Inf(-1))
	case ir.Int8:
		maxPoolT(ctx, g, nc, x.I8(), y.I8(), ind, colMajor, math.MinInt8)
	case ir.Uint8:
		maxPoolT(ctx, g, nc, x.U8(), y.U8(), ind, colMajor, 0)
	case ir.Int32:
		maxPoolT(ctx, g, nc, x.I32(), y.I32(), ind, colMajor, math.MinInt32)
	case ir.Int64:
		maxPoolT(ctx, g, nc, x.I64(), y.I64(), ind, colMajor, math.MinInt64)
	default:
		return opkernel.Unsupportedf(n, "dtype %s", x.DType)
	}
	return nil
}

func maxPoolT[T number](ctx *opkernel.Ctx, g *geom, nc int, x, y []T, ind []int64, colMajor bool, lowest T) {
	inVol, outVol := g.inVol(), g.outVol()
	opkernel.ParallelFor(ctx, nc, 1, func(s, e int) {
		for p := s; p < e; p++ {
			xp, yp := x[p*inVol:(p+1)*inVol], y[p*outVol:(p+1)*outVol]
			oi := 0
			for od := 0; od < g.out[0]; od++ {
				d0, d1 := windowRange(g, 0, od, 0, g.in[0])
				for oh := 0; oh < g.out[1]; oh++ {
					h0, h1 := windowRange(g, 1, oh, 0, g.in[1])
					for ow := 0; ow < g.out[2]; ow++ {
						w0, w1 := windowRange(g, 2, ow, 0, g.in[2])
						best, bd, bh, bw := lowest, -1, 0, 0
						for kd := d0; kd < d1; kd++ {
							id := od*g.s[0] - g.pb[0] + kd*g.d[0]
							for kh := h0; kh < h1; kh++ {
								ih := oh*g.s[1] - g.pb[1] + kh*g.d[1]
								row := xp[(id*g.in[1]+ih)*g.in[2]:]
								for kw := w0; kw < w1; kw++ {
									iw := ow*g.s[2] - g.pb[2] + kw*g.d[2]
									if v := row[iw]; v > best || bd < 0 {
										best, bd, bh, bw = v, id, ih, iw
									}
								}
							}
						}
						yp[oi] = best
						if ind != nil {
							var li int
							if bd < 0 {
								li = 0
							} else if colMajor {
								li = bd + g.in[0]*(bh+g.in[1]*bw)
							} else {
								li = (bd*g.in[1]+bh)*g.in[2] + bw
							}
							ind[p*outVol+oi] = int64(p*inVol + li)
						}
						oi++
					}
				}
			}
		}
	})
}

// maxPool2DF32 is the C fast path of a 1-D/2-D float32 max pool without
// indices; it gives exactly maxPoolT's results. With several threads, planes
// of 16 rows or more are split into bands of rows across all channels, not
// by channel: the op before (resnet50's stem conv) splits by bands of rows
// too, and the pool's caller and worker claim bands from the front and the
// back as the conv's did, so each reads mostly what its own core wrote (by
// channel, half of every plane came from the other core).
// Measurements, and what was tried and not kept:
// docs/performance.md#max-pool-split.
func maxPool2DF32(ctx *opkernel.Ctx, g *geom, nc int, x, y []float32) {
	oh := g.out[1]
	if threads := ctx.NumThreads(); threads > 1 && oh >= 16 {
		band := max(1, oh/(4*threads))
		opkernel.ParallelForShared(ctx, (oh+band-1)/band, 1, func(s, e int) {
			tp := getF32(g.in[2])
			defer putF32(tp)
			maxPool2DRows(g, nc, x, y, s*band, min(oh, e*band), *tp)
		})
		return
	}
	inVol, outVol := g.inVol(), g.outVol()
	opkernel.ParallelFor(ctx, nc, 4, func(s, e int) {
		tp := getF32(g.in[2])
		defer putF32(tp)
		maxPool2DRows(g, e-s, x[s*inVol:], y[s*outVol:], 0, oh, *tp)
	})
}

// maxPool2DRows pools output rows [oh0, oh1) of nc planes.
func maxPool2DRows(g *geom, nc int, x, y []float32, oh0, oh1 int, tmp []float32) {
	C.maxpool2d_f32(cf(x), cf(y), C.int(nc), C.int(g.in[1]), C.int(g.in[2]),
		C.int(g.k[1]), C.int(g.k[2]), C.int(g.s[1]), C.int(g.s[2]), C.int(g.pb[1]), C.int(g.pb[2]),
		C.int(g.d[1]), C.int(g.d[2]), C.int(g.out[1]), C.int(g.out[2]), C.int(oh0), C.int(oh1), cf(tmp))
}
