package nn

// The direct convolution for few input channels (conv_stem.c): the RGB
// stems of CNNs, where im2col + GEMM has a K of only 27-147.

/*
#cgo CFLAGS: -O3 -std=gnu11
#include "conv_stem.h"
*/
import "C"

import (
	"sync/atomic"

	"gkconv/internal/runtime/opkernel"
)

// stemMaxChannels is the most input channels the direct path takes: its
// input band buffer holds every channel of KH + SH*(band-1) rows.
const stemMaxChannels = 4

// stemConvFits says whether the direct few-channel path can run this conv
// (given group 1, 2-D and constant weights, which usePackedConv checks): at
// most stemMaxChannels input channels, a kernel width and stride that its
// tap table holds, and AVX2 or better.
func stemConvFits(g *geom, c int) bool {
	return c <= stemMaxChannels && convGEMMAvailable.Load() && C.conv_stem_supported(C.int(g.k[2]), C.int(g.s[2])) != 0
}

// stemBandRows is the output rows one work item computes: up to 16 (the
// band of input rows it copies stays in L2, and the rows shared with the
// next band, KH - SH, are copied twice), fewer so each thread gets about
// four bands.
func stemBandRows(oh, threads int) int {
	return max(1, min(16, (oh+4*threads-1)/(4*threads)))
}

// convStemF32 runs the conv on weights packed by conv_pack_w in slivers of STEM_BLOCK, in bands
// of output rows, with the residual z (laid out as y; nil: none) and act
// (see conv_stem_f32).
func convStemF32(ctx *opkernel.Ctx, g *geom, nb, c, m int, x, wp, b, z, y []float32, act int64) error {
	inVol, outVol := g.inVol(), g.outVol()
	oh, ow := g.out[1], g.out[2]
	band := stemBandRows(oh, ctx.NumThreads())
	bands := (oh + band - 1) / band
	bufLen := int(C.conv_stem_buf_floats(C.int(c), C.int(g.k[1]), C.int(g.k[2]), C.int(g.s[1]), C.int(g.s[2]),
		C.int(g.d[1]), C.int(g.d[2]), C.int(ow), C.int(band)))
	var fail atomic.Bool
	opkernel.ParallelForShared(ctx, nb*bands, 1, func(s, e int) {
		bp := getF32(bufLen)
		defer putF32(bp)
		for t := s; t < e; t++ {
			bi, oh0 := t/bands, t%bands*band
			oh1 := min(oh, oh0+band)
			if C.conv_stem_f32(cf(x[bi*c*inVol:]), cf(wp), cf(b), cf(from(z, bi*m*outVol)), cf(y[bi*m*outVol:]), C.int(c),
				C.int(g.in[1]), C.int(g.in[2]), C.int(m), C.int(g.k[1]), C.int(g.k[2]), C.int(g.s[1]), C.int(g.s[2]),
				C.int(g.pb[1]), C.int(g.pb[2]), C.int(g.d[1]), C.int(g.d[2]), C.int(oh), C.int(ow), C.int(oh0), C.int(oh1),
				C.int(act), cf(*bp)) != 0 {
				fail.Store(true) // every item fails alike: the ISA level or the geometry
				return
			}
		}
	})
	if fail.Load() {
		return errString("direct few-channel conv: no AVX2 on this CPU, or an unsupported kernel width or stride")
	}
	return nil
}
