package nn

/*
#include "conv_act.h"
*/
import "C"

import (
	"gkconv/internal/runtime/opkernel"
)

// PReLUPlanes applies PRelu in place to y, an [N, C, H, W]-ordered output of
// planes of plane floats each: plane p's slope is slope[p % len(slope)]
// (one slope: all planes), y < 0 ? y*slope : y as the separate PRelu op
// computes it, bit for bit. The runtime binds it behind a Conv whose only
// reader is a PRelu (runtime's load-time Conv+PRelu fusion); the planes are
// split over ctx's threads.
func PReLUPlanes(ctx *opkernel.Ctx, y, slope []float32, plane int) {
	planes := len(y) / max(plane, 1)
	c := len(slope)
	if planes == 0 || c == 0 {
		return
	}
	opkernel.ParallelFor(ctx, planes, max(1, 65536/max(plane, 1)), func(p0, p1 int) {
		C.epi_prelu_planes_f32(cf(y[p0*plane:]), cf(slope), C.long(c), C.long(p0), C.long(p1-p0), C.long(plane), 0)
	})
}

// LeakyReLUInPlace applies LeakyRelu(alpha) in place to y as the separate
// op computes it: (float32)(alpha * float64(v)) for v < 0, v otherwise.
func LeakyReLUInPlace(ctx *opkernel.Ctx, y []float32, alpha float64) {
	const chunk = 65536
	n := len(y)
	if n == 0 {
		return
	}
	opkernel.ParallelFor(ctx, (n+chunk-1)/chunk, 1, func(c0, c1 int) {
		lo, hi := c0*chunk, min(c1*chunk, n)
		C.epi_prelu_planes_f32(cf(y[lo:]), nil, 1, 0, 1, C.long(hi-lo), C.double(alpha))
	})
}
