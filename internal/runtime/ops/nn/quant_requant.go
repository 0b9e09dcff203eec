package nn

// The requantization of QLinearConv's output planes from their sums.

/*
#cgo CFLAGS: -O3 -std=gnu11 -I${SRCDIR}/../../cpuisa
#include "qgemm.h"

// gk_requant_planes requantizes planes [t0, t1) of ov sums each (plane t
// is output channel t % m: its bias and, per channel, its multiplier) in
// one call: a call per plane cost more than the arithmetic on 7x7 planes.
// With fsum the sums are float32 (exact integers: qdwFloat's).
static void gk_requant_planes(const int32_t *acc, int fsum, int t0, int t1, int m, long ov, const int32_t *bias,
                              const float *mult, int perch, int zp, int ysigned, uint8_t *y) {
    if (fsum) {
        gk_requant_f32_planes((const float *)acc, t0, t1, m, ov, bias, mult, perch, zp, ysigned, y);
        return;
    }
    const int lo = ysigned ? -128 : 0, hi = ysigned ? 127 : 255;
    for (int t = t0; t < t1; t++) {
        const int oc = t % m;
        gk_requant_b(acc + (long)t * ov, bias ? bias[oc] : 0, (int)ov, mult + (perch ? oc : 0), 0, zp, lo, hi,
                     y + (long)t * ov, ysigned);
    }
}
*/
import "C"

import (
	"unsafe"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// qconvEpilogue finishes a QLinearConv from its int32 accumulators (bias,
// requantization); ConvInteger's accumulators are its output.
func qconvEpilogue(ctx *opkernel.Ctx, n *ir.Node, in []*ir.Tensor, y *ir.Tensor, acc []int32, qlinear bool, nb, m, ov int) error {
	if !qlinear {
		return nil
	}
	return requantPlanes(ctx, n, in, y, acc, false, nb, m, ov)
}

// requantPlanes requantizes a QLinearConv's sums (acc: int32, or float32
// exact integers with fsum) into y.
func requantPlanes(ctx *opkernel.Ctx, n *ir.Node, in []*ir.Tensor, y *ir.Tensor, acc []int32, fsum bool, nb, m, ov int) error {
	rq, err := planeRequantizer(n, in, y, acc, fsum, nb, m, ov)
	if err != nil {
		return err
	}
	opkernel.ParallelFor(ctx, nb*m, max(1, 4096/max(ov, 1)), rq)
	return nil
}

// planeRequantizer returns the requantization of output planes [s, e) of
// acc (float32 sums when fsum) into y, for requantPlanes or a caller that
// finishes planes while they are in cache.
func planeRequantizer(n *ir.Node, in []*ir.Tensor, y *ir.Tensor, acc []int32, fsum bool, nb, m, ov int) (func(s, e int), error) {
	var bias []int32
	if bt := input(in, 8); bt != nil && bt.NumElements() > 0 {
		if bt.DType != ir.Int32 || bt.NumElements() != int64(m) {
			return nil, errf(n, "B must be int32 with %d values, got %s %v", m, bt.DType, bt.Shape)
		}
		bias = bt.I32()
	}
	mult, perCh, err := qlinearMultipliers(n, in[1], in[4], in[6], m)
	if err != nil {
		return nil, err
	}
	yzp, ySigned, err := outputQuant(n, in[7], y)
	if err != nil {
		return nil, err
	}
	if ov == 0 || nb*m == 0 {
		return func(int, int) {}, nil
	}
	var bp *C.int32_t
	if bias != nil {
		bp = (*C.int32_t)(unsafe.Pointer(&bias[0]))
	}
	return func(s, e int) {
		C.gk_requant_planes((*C.int32_t)(unsafe.Pointer(&acc[0])), cbool(fsum), C.int(s), C.int(e), C.int(m), C.long(ov), bp,
			(*C.float)(unsafe.Pointer(&mult[0])), cbool(perCh), C.int(yzp), cbool(ySigned), (*C.uint8_t)(unsafe.Pointer(&y.Data[0])))
	}, nil
}
