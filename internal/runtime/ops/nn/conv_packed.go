package nn

// Packed-weight 2-D convolution: for float32 convs with constant weights and
// group 1, out^T[pixels, Cout] = im2col^T[pixels, K] x W^T[K, Cout] by the
// packed-B SGEMM of packed_gemm.c, with W^T packed once per weight tensor.
// Output pixels go in tiles (im2col tile and GEMM tile stay in L2) and each
// GEMM tile is transposed into NCHW with the bias added in the same pass.

/*
#cgo CFLAGS: -O3 -std=gnu11
#include "conv_packed_gemm.h"
#include "conv_packed_tile.h"
#include "conv_stem.h"
#include "packed_gemm.h"
*/
import "C"

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
	"weak"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// packedConvMaxBytes caps the packed weights held per process; convs beyond
// it keep the im2col + OpenBLAS path.
const packedConvMaxBytes = 256 << 20

// packedConvTile is the number of output pixels per tile: the packed GEMM's
// M block, so one tile is one pass over the weights.
const packedConvTile = 240

// The two packed forms of the weights W[m, k].
const (
	packNone       = 0
	packTransposed = 1 // B = W^T in ir.PackB panels: out^T = im2col^T x W^T by packed_sgemm, then transposed
	packSlivers    = 2 // A = W in slivers of 12 rows (conv_pack_w): out = W x im2col, written in place
	packStem       = 3 // W in slivers of 8 rows (conv_pack_w): the direct few-channel conv (conv_stem.c)
)

// packedConvMode forces the path for tests and benchmarks: 0 lets
// usePackedConv choose, packTransposed, packSlivers or packStem force that
// path (where it can run), -1 disables them all.
var packedConvMode atomic.Int32

// convGEMMAvailable: conv_gemm_f32 runs at the current ISA level (AVX-512
// or AVX2; set by isa.go whenever the level changes).
var convGEMMAvailable atomic.Bool

// packedConvEntry is one packed weight. Its data lives in a mapping of its
// own (hugeFloats) that is unmapped once the entry is unreachable, so a conv
// keeps the entry alive (runtime.KeepAlive) while it runs on data: the
// cache may drop or replace the entry meanwhile.
type packedConvEntry struct {
	src        *float32 // data the packing was made from (a tensor's Data may be replaced)
	k, m, form int
	data       []float32
}

// The cache is keyed weakly by the weight tensor, so a dropped model frees
// its packed weights (see the cleanup in packedConvWeights) and a recycled
// address can never hit a stale entry.
var packedConvCache = struct {
	sync.Mutex
	m     map[weak.Pointer[ir.Tensor]]*packedConvEntry
	bytes int
}{m: map[weak.Pointer[ir.Tensor]]*packedConvEntry{}}

// packedConvWeights returns w [m, k] packed in the given form, packing it at
// first use; nil when the cap is reached.
func packedConvWeights(w *ir.Tensor, k, m, form int) *packedConvEntry {
	n := ir.PackedLen(k, m, ir.PackNR)
	switch form {
	case packSlivers:
		n = (m + 11) / 12 * 12 * k
	case packStem:
		n = (m + C.STEM_BLOCK - 1) / C.STEM_BLOCK * C.STEM_BLOCK * k
	}
	return cachedConvWeights(w, k, m, form, n, func(wf, data []float32) {
		switch form {
		case packSlivers:
			C.conv_pack_w(cf(wf), cf(data), C.int(m), C.int(k), 12)
			return
		case packStem:
			C.conv_pack_w(cf(wf), cf(data), C.int(m), C.int(k), C.STEM_BLOCK)
			return
		}
		ir.PackBInto(data, wf[:k*m], k, m, ir.PackNR, true)
	})
}

// cachedConvWeights returns the cached transform of w [m, k] in the given
// form (n floats), written by pack from w's data into zeroed memory at first
// use (or when the data was replaced); nil when the cap is reached.
func cachedConvWeights(w *ir.Tensor, k, m, form, n int, pack func(wf, data []float32)) *packedConvEntry {
	wf := w.F32()
	if len(wf) < k*m || k*m == 0 {
		return nil
	}
	key := weak.Make(w)
	c := &packedConvCache
	c.Lock()
	defer c.Unlock()
	e, seen := c.m[key]
	if seen && e.src == &wf[0] && e.k == k && e.m == m && e.form == form {
		return e
	}
	old := 0
	if seen {
		old = len(e.data) * 4
	}
	if c.bytes-old+n*4 > packedConvMaxBytes {
		return nil
	}
	e = &packedConvEntry{src: &wf[0], k: k, m: m, form: form}
	e.data = hugeFloats(e, n)
	pack(wf, e.data)
	// The packed copy is what runs from now on: drop the original's pages when
	// it lies in the model file's mapping (read back from the file if needed).
	ir.ReleaseMapped(w.Data)
	c.bytes += n*4 - old
	c.m[key] = e
	if !seen {
		runtime.AddCleanup(w, func(key weak.Pointer[ir.Tensor]) {
			c.Lock()
			if e := c.m[key]; e != nil {
				c.bytes -= len(e.data) * 4
				delete(c.m, key)
			}
			c.Unlock()
		}, key)
	}
	return e
}

// usePackedConv says which packed path runs this conv (packNone: the
// im2col + OpenBLAS path): float32, 2-D, group 1, constant weights, and a
// shape class where it measured faster than im2col + OpenBLAS.
func usePackedConv(n *ir.Node, w *ir.Tensor, g *geom, group, c, m, threads int) int {
	mode := int(packedConvMode.Load())
	if mode < 0 || group != 1 || g.rank != 2 || g.in[0] != 1 || g.k[0] != 1 {
		return packNone
	}
	if len(n.Inputs) < 2 || n.Inputs[1] == nil || n.Inputs[1].Const != w {
		return packNone
	}
	if (mode == packSlivers && !convGEMMAvailable.Load()) || (mode == packStem && !stemConvFits(g, c)) {
		return packNone
	}
	if mode > 0 {
		return mode
	}
	return packedConvFaster(g, c, m, threads)
}

// packedConvFaster is the shape rule, from BenchmarkConvPackedVsBLAS and
// per-node medians in resnet50, mobilenet_v2 and efficientnet_b0 at one and
// two threads:
//   - few input channels (the RGB stems): the direct stem conv;
//   - small planes (7x7, and 14x14 with a deep K x Cout): the transposed
//     form, pixels as the GEMM's M, because OpenBLAS's N = pixels is too
//     short for its blocking; at two threads every plane of at most 256
//     pixels, but the narrow pointwise ones below;
//   - at two threads, 1x1 convs on planes of 196 to 256 pixels with K x Cout
//     below 2^17: the sliver form, its output channels split between the
//     threads (convSliversF32), so no thread reads lines the other core wrote
//     in the transposed form's NCHW transpose;
//   - planes of 28x28 and more, and large kernels: the sliver form, which
//     needs no transpose, reads a 1x1 stride-1 conv's input in place, unfolds
//     the others per tile and prefetches its output lines;
//   - 1x1 convs on planes of 14x14 to 27x27 at one thread: the sliver form
//     too (the three paths are close there; slivers won in the model);
//   - at the AVX-512 level, 1x1 convs with more input than output channels
//     on planes of 196 to 256 pixels: the transposed form, since pixels as M
//     fill the 12 x 32 micro-kernel better than the sliver form's ragged last
//     panel (AVX2's 6 x 16 sliver kernel stays ahead there);
//   - otherwise (mid-size planes, and portable code but the small planes)
//     im2col + OpenBLAS.
//
// Measurements: docs/performance.md#packed-conv-path-rule.
func packedConvFaster(g *geom, c, m, threads int) int {
	outVol, kk := g.outVol(), c*g.kVol()
	switch {
	case stemConvFits(g, c):
		return packStem
	case outVol <= 64 || (outVol <= 256 && kk*m >= 1<<17):
		return packTransposed
	case outVol <= 256 && threads > 1 && !(outVol >= 196 && g.pointwise() && convGEMMAvailable.Load()):
		return packTransposed
	case outVol >= 196 && outVol <= 256 && g.pointwise() && c > m && level512.Load():
		return packTransposed
	case !convGEMMAvailable.Load():
		return packNone
	case outVol >= 784, g.kVol() >= 25, outVol >= 196 && g.pointwise():
		return packSlivers
	}
	return packNone
}

// convPackedF32 runs the conv on packed weights wp (from packedConvWeights);
// z is the residual (laid out as y; nil: none), added in the transpose.
func convPackedF32(ctx *opkernel.Ctx, g *geom, nb, c, m int, x, wp, b, z, y []float32, act int64) error {
	inVol, outVol, kk := g.inVol(), g.outVol(), c*g.kVol()
	pointwise := g.pointwise()
	mt := packedConvTile
	threads := ctx.NumThreads()
	panels := (m + ir.PackNR - 1) / ir.PackNR
	// Work items are (image, pixel tile, group of weight panels). With fewer
	// tiles than threads (planes of 7x7 and 14x14) the threads split either
	// the pixels or the output channels. By pixels, each thread reads its
	// share of the input and all the weights; by channels, all the input and
	// its share of the weights: so channels when there are fewer pixels than
	// channels and the panels divide evenly enough. Only 1x1 convs, of any
	// stride (a strided one unfolds no more than a pointwise one reads); a
	// larger kernel stays split by pixels, since each thread would unfold it
	// all. One group per thread, not two: each group packs all of the tile's
	// input as the GEMM's A. But pixels when the input is deep (K >= 2 x
	// channels) and the pixels at least half the channels: each thread then
	// packs half of a large input instead of all of it.
	// Measurements: docs/performance.md#packed-conv-work-split.
	pgroups := 1
	if tiles := (outVol + mt - 1) / mt; nb*tiles < threads {
		byChannels := outVol < m && (2*outVol < m || kk < 2*m)
		if g.kVol() == 1 && byChannels && (panels >= 4*threads || (panels >= threads && panels%threads == 0)) {
			pgroups = min(panels, threads)
		} else {
			// An even share of the pixels per thread, not whole 12-row
			// micro-kernel blocks: a ragged last block costs less than an
			// uneven split (docs/performance.md#packed-conv-work-split).
			mt = (outVol + threads - 1) / threads
		}
	}
	tiles := (outVol + mt - 1) / mt
	var fail atomic.Bool
	opkernel.ParallelForShared(ctx, nb*tiles*pgroups, 1, func(s, e int) {
		tp := getF32(mt * m)
		defer putF32(tp)
		var col []float32
		if !pointwise {
			cp := getF32(kk * mt)
			defer putF32(cp)
			col = *cp
		}
		for t := s; t < e; t++ {
			grp, bi, p0 := t%pgroups, t/pgroups/tiles, t/pgroups%tiles*mt
			q0, q1 := grp*panels/pgroups, (grp+1)*panels/pgroups
			c0, c1 := q0*ir.PackNR, min(m, q1*ir.PackNR)
			rows := min(mt, outVol-p0)
			xb := x[bi*c*inVol:]
			a, lda := &xb[p0], outVol
			if !pointwise {
				im2colTile(g, xb, col, c, p0, rows, rows)
				a, lda = &col[0], rows
			}
			if C.packed_sgemm(C.int(rows), C.int(m), C.int(kk), (*C.float)(unsafe.Pointer(a)), C.int(lda), 1,
				cf(wp), C.int(ir.PackNR), nil, 0, cf(*tp), C.int(m), C.int(q0), C.int(q1)) != 0 {
				fail.Store(true)
				return
			}
			yb := y[bi*m*outVol+c0*outVol:]
			C.tile_to_nchw_f32(cf((*tp)[c0:]), C.int(m), cf(yb), cf(from(b, c0)), cf(from(z, bi*m*outVol+c0*outVol)),
				C.int(rows), C.int(c1-c0), C.long(outVol), C.long(p0), C.int(act))
		}
	})
	if fail.Load() {
		return errString("packed conv: out of memory for the packed A buffer")
	}
	return nil
}

// im2colTile unfolds output pixels [p0, p0+rows) of a 2-D conv over c
// channels of x into col [c*kVol][ld] (im2col_tile_f32).
func im2colTile(g *geom, x, col []float32, c, p0, rows, ld int) {
	C.im2col_tile_f32(cf(x), cf(col), C.int(c), C.int(g.in[1]), C.int(g.in[2]), C.int(g.k[1]), C.int(g.k[2]),
		C.int(g.s[1]), C.int(g.s[2]), C.int(g.pb[1]), C.int(g.pb[2]), C.int(g.d[1]), C.int(g.d[2]),
		C.int(g.out[2]), C.int(p0), C.int(rows), C.int(ld))
}

// convSliversTile is the number of output pixels per tile of the sliver path
// (8 micro-kernel panels).
const convSliversTile = 256

// convSliversLd is the row stride of the im2col tile: 256 floats (1 KiB)
// would map the rows of a KC x 32 slice of B onto a quarter of the L1 sets;
// 17 cache lines spread them over all sets.
const convSliversLd = convSliversTile + 16

// convSliversF32 runs the conv on weights packed by conv_pack_w: per tile of
// output pixels (and group of output channels), y[:, tile] = W x
// im2col(tile) + bias, with a 1x1 stride-1 conv reading x in place, then the
// residual z (nil: none) and act on the tile.
func convSliversF32(ctx *opkernel.Ctx, g *geom, nb, c, m int, x, ap, b, z, y []float32, act int64) error {
	inVol, outVol, kk := g.inVol(), g.outVol(), c*g.kVol()
	pointwise := g.pointwise()
	mt := convSliversTile
	tiles := (outVol + mt - 1) / mt
	// groups of output channels (whole 12-row slivers) per work item: a
	// pointwise conv on a plane of one tile splits its channels between the
	// threads, each reading all of the input in place and its share of the
	// weights (by pixels each would read all the weights and run ragged
	// column blocks).
	slivers, cgroups := (m+11)/12, 1
	threads := ctx.NumThreads()
	if threads > 1 && nb*tiles < threads && pointwise && slivers >= 2*threads {
		cgroups = threads
	} else if threads > 1 && nb == 1 && tiles < 4*threads {
		// Few tiles: make them equal and their count a multiple of the
		// threads (a 28x28 plane was 3 full tiles and one of 16 pixels, so
		// one thread did 512 pixels and the other 272).
		mt, tiles = evenTiles(outVol, (tiles+threads-1)/threads*threads)
	}
	// The residual, RELU and RELU6 are applied in the GEMM's registers
	// before the store; other activations by the epilogue pass over the
	// tile. (With the residual in that pass too, reading the tile back,
	// resnet50's seven 1x1 + residual + ReLU convs on 56x56 and 28x28 took
	// 4.8-6.5 ms per run, sum of per-node medians; in registers 4.4-5.9,
	// lower in 5 of 5 alternations, 1 thread, AVX-512.)
	gemmAct := C.int(0)
	if kernelActivation(act) {
		gemmAct = C.int(act)
	}
	var fail atomic.Bool
	opkernel.ParallelForShared(ctx, nb*tiles*cgroups, 1, func(s, e int) {
		var col []float32
		if !pointwise {
			cp := getF32(kk * convSliversLd)
			defer putF32(cp)
			col = *cp
		}
		for t := s; t < e; t++ {
			grp, bi, p0 := t%cgroups, t/cgroups/tiles, t/cgroups%tiles*mt
			c0, c1 := grp*slivers/cgroups*12, min(m, (grp+1)*slivers/cgroups*12)
			rows := min(mt, outVol-p0)
			xb := x[bi*c*inVol:]
			src, ldb := &xb[p0], outVol
			if !pointwise {
				im2colTile(g, xb, col, c, p0, rows, convSliversLd)
				src, ldb = &col[0], convSliversLd
			}
			yo := bi*m*outVol + c0*outVol + p0
			if C.conv_gemm_f32(C.int(c1-c0), C.int(rows), C.int(kk), cf(ap[c0*kk:]), (*C.float)(unsafe.Pointer(src)), C.long(ldb),
				cf(y[yo:]), C.long(outVol), cf(from(b, c0)), cf(from(z, yo)), gemmAct) != 0 {
				fail.Store(true)
				return
			}
			if gemmAct == 0 {
				epiRows(y[yo:], nil, c1-c0, rows, outVol, act) // this tile, still in L2
			}
		}
	})
	if fail.Load() {
		return errString("packed conv: no AVX2 on this CPU")
	}
	return nil
}
