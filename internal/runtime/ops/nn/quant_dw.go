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

// qdwVNNIMinPlane is the output plane above which a QLinearConv's 3x3
// depthwise convolution runs on gk_qdw3x3_vnni even where dwFloatMaxPlane
// would take the float kernels: 1 thread, 28x28 79 -> 40 µs for 192
// channels, 14x14 58 -> 42 µs for 576; at 7x7 the two were even (960
// channels, 43-50 µs).
const qdwVNNIMinPlane = 10 * 10

// qdwVNNI says whether gk_qdw3x3_vnni takes this depthwise convolution.
func qdwVNNI(geo *[18]C.int, w *ir.Tensor, wSigned bool, wzp []int32, m int) bool {
	return len(wzp) >= m && len(w.Data) >= 9*m &&
		C.gk_qdw3x3_vnni_ok(&geo[0], (*C.uint8_t)(unsafe.Pointer(&w.Data[0])), cbool(wSigned), (*C.int32_t)(unsafe.Pointer(&wzp[0])), C.int(m)) != 0
}

// qdwChunkBytes bounds the float32 input and sums of the planes that
// qdwFloat converts, convolves and finishes in one go, so they stay in L2
// between the three steps (converting a whole 96 x 112 x 112 input first
// wrote 4.8 MB and read it back from memory).
const qdwChunkBytes = 256 << 10

// qdwFloat is the depthwise convolution as float32 sums: requantized
// straight from them (QLinearConv), or turned into ConvInteger's int32
// output acc; the same integers as gk_qdw_conv's. Planes go in chunks of
// about qdwChunkBytes: each chunk's bytes are turned into float32,
// convolved and finished while they are in cache.
func qdwFloat(ctx *opkernel.Ctx, n *ir.Node, in []*ir.Tensor, y *ir.Tensor, qlinear bool, x *ir.Tensor, xSigned bool, xz int32,
	w *ir.Tensor, wSigned bool, wzp []int32, g *geom, nb, c, m, group, iv, ov int, acc []int32) error {
	kv := g.kVol()
	xs, ws, ys := getF32(nb*c*iv), getF32(m*kv), getF32(nb*m*ov)
	defer putF32(xs)
	defer putF32(ws)
	defer putF32(ys)
	xf, wf, yf := (*xs)[:nb*c*iv], (*ws)[:m*kv], (*ys)[:nb*m*ov]
	C.gk_u8_to_f32((*C.uint8_t)(unsafe.Pointer(&w.Data[0])), cbool(wSigned), (*C.int32_t)(unsafe.Pointer(&wzp[0])), C.int(kv), C.int(m), cf(wf), C.long(len(wf)))
	sums := unsafe.Slice((*int32)(unsafe.Pointer(&yf[0])), len(yf))
	finish := func(s, e int) {
		C.gk_f32_to_i32(cf(yf[s*ov:]), (*C.int32_t)(unsafe.Pointer(&acc[s*ov])), C.long((e-s)*ov))
	}
	if qlinear {
		rq, err := planeRequantizer(n, in, y, sums, true, nb, m, ov)
		if err != nil {
			return err
		}
		finish = rq
	}
	chunk := max(1, qdwChunkBytes/(4*(iv+ov)))
	if chunk >= 16 {
		chunk -= chunk % 16 // whole groups for the channel-blocked kernels
	}
	opkernel.ParallelForShared(ctx, nb*c, chunk, func(s, e int) {
		for p := s; p < e; p += chunk {
			q := min(e, p+chunk)
			C.gk_u8_to_f32((*C.uint8_t)(unsafe.Pointer(&x.Data[p*iv])), cbool(xSigned), (*C.int32_t)(unsafe.Pointer(&xz)), 0, 1, cf(xf[p*iv:]), C.long((q-p)*iv))
			dwconvPlanes(g, c, xf, wf, nil, nil, yf, p, q, ir.ActNone)
			finish(p, q)
		}
	})
	return nil
}
