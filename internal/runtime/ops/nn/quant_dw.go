package nn

// 8-bit depthwise convolutions of small planes on the float depthwise
// kernels (exact: see dwFloatMaxPlane).

/*
#cgo CFLAGS: -O3 -std=gnu11 -I${SRCDIR}/../../cpuisa
#include "qgemm.h"
*/
import "C"

import (
	"unsafe"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// dwFloatMaxPlane is the output plane (positions) up to which an 8-bit
// depthwise convolution runs as the float depthwise kernels (their
// channel-blocked small-plane paths) on x - xz and w - wz: float32 is exact
// there (each product at most 255*255, a sum of at most 256 of them under
// 2^24, any order), and on small planes the per-channel layout of the
// integer kernel cost 3-6x the float kernel's time (mobilenet_v2_bn's
// 14x14 and 7x7 depthwise convolutions).
const dwFloatMaxPlane = 28 * 28

// qdwFloat is the depthwise convolution as float32 sums: requantized
// straight from them (QLinearConv), or turned into ConvInteger's int32
// output acc; the same integers as gk_qdw_conv's.
func qdwFloat(ctx *opkernel.Ctx, n *ir.Node, in []*ir.Tensor, y *ir.Tensor, qlinear bool, x *ir.Tensor, xSigned bool, xz int32,
	w *ir.Tensor, wSigned bool, wzp []int32, g *geom, nb, c, m, group, iv, ov int, acc []int32) error {
	kv := g.kVol()
	xs, ws, ys := getF32(nb*c*iv), getF32(m*kv), getF32(nb*m*ov)
	defer putF32(xs)
	defer putF32(ws)
	defer putF32(ys)
	xf, wf, yf := (*xs)[:nb*c*iv], (*ws)[:m*kv], (*ys)[:nb*m*ov]
	C.gk_u8_to_f32((*C.uint8_t)(unsafe.Pointer(&x.Data[0])), cbool(xSigned), (*C.int32_t)(unsafe.Pointer(&xz)), 0, 1, cf(xf), C.long(len(xf)))
	C.gk_u8_to_f32((*C.uint8_t)(unsafe.Pointer(&w.Data[0])), cbool(wSigned), (*C.int32_t)(unsafe.Pointer(&wzp[0])), C.int(kv), C.int(m), cf(wf), C.long(len(wf)))
	convF32(ctx, g, nb, c, m, group, xf, wf, nil, nil, yf, ir.ActNone)
	sums := unsafe.Slice((*int32)(unsafe.Pointer(&yf[0])), len(yf))
	if qlinear {
		return requantPlanes(ctx, n, in, y, sums, true, nb, m, ov)
	}
	C.gk_f32_to_i32(cf(yf), (*C.int32_t)(unsafe.Pointer(&acc[0])), C.long(len(yf)))
	return nil
}
