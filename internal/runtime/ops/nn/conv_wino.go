package nn

// Winograd F(4x4, 3x3) convolution for float32 2-D convs with a constant
// 3x3 kernel, stride 1, dilation 1, group 1 (any padding, any batch): per
// 4x4 output tile, y = A^T [(G g G^T) . (B^T d B)] A, the elementwise
// product summed over input channels as 36 GEMMs. 36 multiply-adds per
// tile and channel pair instead of 144: 4x fewer than the direct product,
// at the price of the input and output transforms. Planes under 28x28 take
// F(2x2, 3x3) instead (16 GEMMs, 2.25x fewer): F(4x4)'s transformed
// weights are 4x the kernel's, and a 7x7 plane has only 4 tiles to use
// each of them on (a 14x14 one 16), so its GEMMs ran at the speed weights
// stream from memory (resnet50's 512 -> 512 on 7x7: 37.7 MB per conv);
// F(2x2) has 16 tiles there (49 on 14x14) and 1.8x the kernel's weights.
// The weights are transformed once per weight tensor (in float64) and kept
// in the packed conv cache (packedConvCache: the same cap, weak keys). The
// kernels are in conv_wino.c.

/*
#cgo CFLAGS: -O3 -std=gnu11 -I${SRCDIR}/../../cpuisa
#include "conv_wino.h"
*/
import "C"

import (
	"os"
	"sync/atomic"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// winoMode forces the Winograd path for tests and benchmarks: 0 lets
// winoFaster choose, 1 takes it for every conv it can run, -1 never.
// GKCONV_WINOGRAD=0 (or off) / 1 (or on) sets it at start-up.
var winoMode atomic.Int32

func init() {
	switch os.Getenv("GKCONV_WINOGRAD") {
	case "0", "off":
		winoMode.Store(-1)
	case "1", "on":
		winoMode.Store(1)
	}
}

// packWino is the packedConvCache form of F(4x4, 3x3) weights for panels
// of nr channels: packWino + nr (the panel width follows the ISA level);
// packWino2 + nr those of F(2x2, 3x3).
const (
	packWino  = 16
	packWino2 = 64
)

// winoTileMode forces the output tile side for tests (4 or 2; 0: winoTile).
var winoTileMode atomic.Int32

// winoTile is the output tile side of the Winograd form for g: 2 (F(2x2,
// 3x3)) on planes under 28x28, else 4 (see the file comment; measurements:
// docs/performance.md#winograd-tile-size-and-shape-rule).
func winoTile(g *geom) int {
	if t := int(winoTileMode.Load()); t == 2 || t == 4 {
		return t
	}
	if min(g.out[1], g.out[2]) < 28 {
		return 2
	}
	return 4
}

// useWinograd says whether the Winograd path runs this conv: a shape it can
// run (float32 2-D 3x3, stride 1, dilation 1, group 1, constant weights, at
// the AVX2 level or above) and, unless winoMode forces it, winoFaster.
func useWinograd(n *ir.Node, w *ir.Tensor, g *geom, group, c, m int) bool {
	mode := winoMode.Load()
	if mode < 0 || group != 1 || g.rank != 2 || g.k != [3]int{1, 3, 3} || g.s != [3]int{1, 1, 1} || g.d != [3]int{1, 1, 1} {
		return false
	}
	if len(n.Inputs) < 2 || n.Inputs[1] == nil || n.Inputs[1].Const != w || C.wino_nr() == 0 {
		return false
	}
	return mode > 0 || winoFaster(g, c, m)
}

// winoFaster is the shape rule, from BenchmarkConvWinograd against the path
// each conv takes without Winograd: it won on every measured shape of 64
// channels and more on planes of 7x7 and more (resnet50's convs), and on
// every measured shape of 16 to 64 input and output channels on planes of
// 28x28 and more (a small detector's), at both ISA levels. Narrower convs
// and smaller planes of fewer channels were not measured: they keep the
// other paths. Measurements:
// docs/performance.md#winograd-tile-size-and-shape-rule.
//
// F(2x2)'s transformed weights (16 c m floats) above winoMaxWeightBytes
// stream from memory on every run of a model, where the direct path's 9 c
// m stay nearer: resnet50's 512 -> 512 on 7x7 (16.8 MB against 9.4 MB) ran
// 2.6 ms in Winograd and 1.8 ms on the transposed path on the Sapphire
// Rapids VM (sum of layer4.1/4.2: 5.1-5.2 -> 3.6-3.7 ms at 1 thread,
// 2.7-2.8 -> 2.1 at 2), although alone, weights warm, the two tie.
func winoFaster(g *geom, c, m int) bool {
	side := min(g.out[1], g.out[2])
	if winoTile(g) == 2 && 16*c*m*4 > winoMaxWeightBytes {
		return false
	}
	switch {
	case c >= 64 && m >= 64:
		return side >= 7
	case c >= 16 && m >= 16:
		return side >= 28
	}
	return false
}

// winoMaxWeightBytes caps F(2x2)'s transformed weights (winoFaster).
const winoMaxWeightBytes = 8 << 20

// winoG is G of F(4x4, 3x3): the 6 weight-transform rows.
var winoG = [][3]float64{
	{1.0 / 4, 0, 0},
	{-1.0 / 6, -1.0 / 6, -1.0 / 6},
	{-1.0 / 6, 1.0 / 6, -1.0 / 6},
	{1.0 / 24, 1.0 / 12, 1.0 / 6},
	{1.0 / 24, -1.0 / 12, 1.0 / 6},
	{0, 0, 1},
}

// winoG2 is G of F(2x2, 3x3): the 4 weight-transform rows.
var winoG2 = [][3]float64{
	{1, 0, 0},
	{0.5, 0.5, 0.5},
	{0.5, -0.5, 0.5},
	{0, 0, 1},
}

// winoPack transforms w [m][c][3][3] into U = G g G^T for output tiles of
// side o (4 or 2; G is winoG or winoG2, n = o+2 rows) laid out for the
// GEMMs: [n*n][mp/nr][cp][nr], channels padded with zeros to cp (a
// multiple of 16) and mp (a multiple of nr); u arrives zeroed.
func winoPack(w, u []float32, c, m, nr, o int) {
	G := winoG
	if o == 2 {
		G = winoG2
	}
	n := len(G)
	cp, mp := winoCp(c), (m+nr-1)/nr*nr
	panels := mp / nr
	for oc := range m {
		p, l := oc/nr, oc%nr
		for ic := range c {
			g := w[(oc*c+ic)*9:]
			var t [6][3]float64 // G g
			for i := range n {
				for b := range 3 {
					t[i][b] = G[i][0]*float64(g[b]) + G[i][1]*float64(g[3+b]) + G[i][2]*float64(g[6+b])
				}
			}
			for i := range n {
				for k := range n {
					v := t[i][0]*G[k][0] + t[i][1]*G[k][1] + t[i][2]*G[k][2]
					u[(((i*n+k)*panels+p)*cp+ic)*nr+l] = float32(v)
				}
			}
		}
	}
}

func winoCp(c int) int { return (c + 15) / 16 * 16 }

// winoWeights returns w's Winograd transform for output tiles of side o
// and panels of nr, made at first use and held in packedConvCache under its
// cap; nil when the cap is reached.
func winoWeights(w *ir.Tensor, c, m, nr, o int) *packedConvEntry {
	form := packWino + nr
	if o == 2 {
		form = packWino2 + nr
	}
	n := (o + 2) * (o + 2) * ((m + nr - 1) / nr * nr) * winoCp(c)
	return cachedConvWeights(w, 9*c, m, form, n, func(wf, u []float32) { winoPack(wf, u, c, m, nr, o) })
}

// Blocking of convWinoF32 (see BenchmarkConvWinograd): a task takes bands
// of about winoTiles tiles (whole tile rows) and output channels in groups
// whose GEMM output [36 or 16][tiles][group] stays within winoGroupBytes.
var (
	winoTiles      = 24
	winoGroupBytes = 256 << 10
)

// convWinoF32 runs the conv by Winograd with output tiles of side o on
// u = winoWeights(w, c, m, nr, o); z is the residual (laid out as y; nil:
// none).
func convWinoF32(ctx *opkernel.Ctx, g *geom, nb, c, m, nr, o int, x, u, b, z, y []float32, act int64) {
	cp, mp := winoCp(c), (m+nr-1)/nr*nr
	oh, ow := g.out[1], g.out[2]
	th, tw := (oh+o-1)/o, (ow+o-1)/o
	rows := max(1, min(th, (winoTiles+tw-1)/tw))
	threads := ctx.NumThreads()
	// Several threads and tile rows of 7 tiles or more: bands of fewer rows
	// (at least two per thread), so the threads split the work by bands, each
	// transforming its own input, and not by channel groups, each of which
	// redoes the band's input transform. Planes of 4 tiles a row (7x7) stay
	// as they were: 1-row bands there were slower.
	// Measurements: docs/performance.md#winograd-band-split.
	bandSplit := threads > 1 && tw >= 7
	if bandSplit {
		rows = max(1, min(rows, th/(2*threads)))
	}
	bands := (th + rows - 1) / rows
	tiles := rows * tw
	mg := max(nr, winoGroupBytes/((o+2)*(o+2)*4*tiles)/nr*nr)
	groups := (m + mg - 1) / mg
	// Otherwise, with few tasks, more channel groups so the tasks split
	// evenly over the threads (each group redoes the input transform: cheap
	// next to its GEMMs while a group has at least nr channels).
	for !bandSplit && threads > 1 && nb*bands*groups < 8*threads && (nb*bands*groups)%threads != 0 && (m+groups)/(groups+1) >= nr {
		groups++
	}
	mg = min(mp, ((m+groups-1)/groups+nr-1)/nr*nr)
	groups = (m + mg - 1) / mg
	inVol, outVol := g.inVol(), g.outVol()
	scratch := int(C.wino_scratch_floats(C.int(o), C.int(cp), C.int(ow), C.int(rows), C.int(mg), C.int(nr)))
	opkernel.ParallelForShared(ctx, nb*bands*groups, 1, func(s, e int) {
		sp := getF32(scratch)
		defer putF32(sp)
		for t := s; t < e; t++ {
			bi, band, grp := t/(bands*groups), t/groups%bands, t%groups
			m0 := grp * mg
			r := min(rows, th-band*rows)
			C.wino_task(C.int(o), cf(x[bi*c*inVol:]), C.int(c), C.int(g.in[1]), C.int(g.in[2]), C.int(g.pb[1]), C.int(g.pb[2]),
				C.int(oh), C.int(ow), C.int(band*rows), C.int(r), cf(u), C.int(cp), C.int(mp), C.int(nr),
				C.int(m0), C.int(min(mg, m-m0)), cf(y[bi*m*outVol:]), cf(b), cf(from(z, bi*m*outVol)), C.int(act), cf(*sp))
		}
	})
}

// winoNR is the Winograd panel width at the current ISA level (0: no
// Winograd path).
func winoNR() int { return int(C.wino_nr()) }
