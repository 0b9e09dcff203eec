package nn

/*
#cgo CFLAGS: -O3 -std=gnu11
#include "im2col_dwconv.h"
#include "dwconv_rows.h"
*/
import "C"

import (
	"runtime"
	"slices"
	"sync/atomic"
	"unsafe"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

func cf(p []float32) *C.float {
	if len(p) == 0 {
		return nil
	}
	return (*C.float)(unsafe.Pointer(&p[0]))
}

// conv is ONNX Conv: x [N, C, spatial...], w [M, C/group, k...], b [M]?,
// and the fused Conv2D's residual z (ir.ConvResidualInput, y's shape)?:
// y = act(conv(x, w) + b + z).
func conv(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	var p convPlan
	return convPlanned(&p, ctx, n, in, out)
}

// prepareConv gives each Conv2D node a convPlan of its own, so the checks,
// the path choice and the packed-weight lookup run once per input shape
// instead of at every call (efficientnet_b0 at 1 thread: convGeometry and
// the weight cache's lookup were ~2% of its samples).
func prepareConv(_ *opkernel.Prep, _ *ir.Node) (opkernel.Func, error) {
	p, h := new(convPlan), new(halfConsts)
	return func(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
		if len(in) > 0 && hasHalf(in[0]) {
			// float16 weights widened once: the float32 plan keeps its packing
			return h.viaF32(ctx, n, in, out, func(n *ir.Node, in, out []*ir.Tensor) error { return convPlanned(p, ctx, n, in, out) })
		}
		return convPlanned(p, ctx, n, in, out)
	}, nil
}

func convPlanned(p *convPlan, ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := need(n, in, 2); err != nil {
		return err
	}
	x, w, b, z, y := in[0], in[1], input(in, 2), input(in, ir.ConvResidualInput), out[0]
	if hasHalf(x) {
		return viaF32(ctx, n, in, out, conv)
	}
	if !p.matches(ctx, x, w, b, z, y) {
		if err := p.plan(ctx, n, x, w, b, z, y); err != nil {
			return err
		}
	}
	switch p.path {
	case convPathWinograd:
		convWinoF32(ctx, p.g, p.nb, p.c, p.m, p.nr, p.o, x.F32(), p.weights.data, slice[float32](b), slice[float32](z), y.F32(), p.act)
	case convPathPacked:
		if err := packedConvRun[p.form](ctx, p.g, p.nb, p.c, p.m, x.F32(), p.weights.data, slice[float32](b), slice[float32](z), y.F32(), p.act); err != nil {
			return errf(n, "%v", err)
		}
	case convPathF32:
		convF32(ctx, p.g, p.nb, p.c, p.m, p.group, x.F32(), w.F32(), slice[float32](b), slice[float32](z), y.F32(), p.act)
	case convPathF64:
		convDirect(ctx, p.g, p.nb, p.c, p.m, p.group, x.F64(), w.F64(), slice[float64](b), y.F64())
		epiSlice(y.F64(), slice[float64](z), p.act)
	}
	runtime.KeepAlive(p.weights) // its cleanup unmaps the packed weights' data
	return nil
}

// The paths a float conv runs on.
const (
	convPathF32      = iota // direct, im2col + OpenBLAS, or depthwise (convF32)
	convPathWinograd        // Winograd F(4x4) or F(2x2) on transformed weights
	convPathPacked          // packed weights in one of the forms of packedConvRun
	convPathF64             // float64 (convDirect)
)

// packedConvRun is the conv of each packed weight form.
var packedConvRun = [...]func(ctx *opkernel.Ctx, g *geom, nb, c, m int, x, wp, b, z, y []float32, act int64) error{
	packTransposed: convPackedF32,
	packSlivers:    convSliversF32,
	packStem:       convStemF32,
}

// convPlan is what a conv decides from its inputs' shapes and weights:
// geometry, path and packed weights, valid for calls whose key (the fields
// from xType to modes) matches.
type convPlan struct {
	valid          bool
	xType          ir.DType
	xShape, yShape []int64
	wShape         []int64
	zShape         []int64 // nil: no residual
	w              *ir.Tensor
	wData          *byte
	bLen           int64 // -1: no bias
	threads        int
	modes          [4]int64 // the ISA generation and the tests' path switches

	nb, c, m, group int
	g               *geom
	act             int64
	path            int
	form            int              // the packed weights' form (convPathPacked)
	nr, o           int              // Winograd's panel width and tile side
	weights         *packedConvEntry // the packed or transformed weights (nil on convPathF32/F64)
}

// convISAGen counts ISA level changes: a plan made at another level is
// made again.
var convISAGen atomic.Int64

func convModes() [4]int64 {
	return [4]int64{convISAGen.Load(), int64(packedConvMode.Load()), int64(winoMode.Load()), int64(winoTileMode.Load())}
}

func firstByte(t *ir.Tensor) *byte {
	if len(t.Data) == 0 {
		return nil
	}
	return &t.Data[0]
}

func (p *convPlan) matches(ctx *opkernel.Ctx, x, w, b, z, y *ir.Tensor) bool {
	if !p.valid || x.DType != p.xType || w != p.w || firstByte(w) != p.wData || ctx.NumThreads() != p.threads ||
		!slices.Equal(x.Shape, p.xShape) || !slices.Equal(y.Shape, p.yShape) || !slices.Equal(w.Shape, p.wShape) || p.modes != convModes() {
		return false
	}
	if (b == nil) != (p.bLen < 0) || (b != nil && b.NumElements() != p.bLen) {
		return false
	}
	return (z == nil) == (p.zShape == nil) && (z == nil || (z.DType == x.DType && slices.Equal(z.Shape, p.zShape)))
}

// plan checks the conv's inputs and chooses its path; on success p is
// valid for calls with the same key.
func (p *convPlan) plan(ctx *opkernel.Ctx, n *ir.Node, x, w, b, z, y *ir.Tensor) error {
	*p = convPlan{}
	nb, c, m, group, g, err := convGeometry(n, x, w)
	if err != nil {
		return err
	}
	if b != nil && b.NumElements() != int64(m) {
		return errf(n, "bias has %d elements, expected %d", b.NumElements(), m)
	}
	if !slices.Equal(n.Attrs.Ints("kernel_shape", w.Shape[2:]), w.Shape[2:]) {
		return errf(n, "kernel_shape %v does not match w %v", n.Attrs.Ints("kernel_shape", nil), w.Shape)
	}
	if err := g.checkOut(n, y, nb, m); err != nil {
		return err
	}
	if z != nil && (z.DType != x.DType || !slices.Equal(z.Shape, y.Shape)) {
		return errf(n, "residual %s %v must be the output's %s %v", z.DType, z.Shape, y.DType, y.Shape)
	}
	act, ok := ir.FusedActivation(n)
	if !ok {
		return opkernel.Unsupportedf(n, "activation_type %d", act)
	}
	p.nb, p.c, p.m, p.group, p.g, p.act = nb, c, m, group, g, act
	switch x.DType {
	case ir.Float32:
		p.path = convPathF32
		if useWinograd(n, w, g, group, c, m) {
			nr, o := winoNR(), winoTile(g)
			if u := winoWeights(w, c, m, nr, o); u != nil {
				p.path, p.nr, p.o, p.weights = convPathWinograd, nr, o, u
			}
		}
		if p.path == convPathF32 {
			if form := usePackedConv(n, w, g, group, c, m, ctx.NumThreads()); form != packNone {
				if wp := packedConvWeights(w, c*g.kVol(), m, form); wp != nil {
					p.path, p.form, p.weights = convPathPacked, form, wp
				}
			}
		}
	case ir.Float64:
		p.path = convPathF64
	default:
		return opkernel.Unsupportedf(n, "dtype %s", x.DType)
	}
	p.xType, p.xShape, p.yShape, p.wShape, p.w, p.wData = x.DType, slices.Clone(x.Shape), slices.Clone(y.Shape), slices.Clone(w.Shape), w, firstByte(w)
	p.bLen = -1
	if b != nil {
		p.bLen = b.NumElements()
	}
	if z != nil {
		p.zShape = slices.Clone(z.Shape)
		if p.zShape == nil {
			p.zShape = []int64{}
		}
	}
	p.threads, p.modes, p.valid = ctx.NumThreads(), convModes(), true
	return nil
}

// convTileBytes bounds the output tile of the convolution GEMM that gets its
// bias, its product and its epilogue (residual, activation) in one pass (see
// convF32): about a quarter of L2.
const convTileBytes = 256 << 10

// z is the residual (laid out as y; nil: none).
func convF32(ctx *opkernel.Ctx, g *geom, nb, c, m, group int, x, w, b, z, y []float32, act int64) {
	cg, mg := c/group, m/group
	inVol, outVol, kVol := g.inVol(), g.outVol(), g.kVol()
	if group == c && mg == 1 && g.in[0] == 1 && g.k[0] == 1 {
		// depthwise 2-D: direct kernel, parallel over (batch, channel) planes
		// chunks of whole 16-plane groups (the channel-blocked kernels' unit)
		opkernel.ParallelForShared(ctx, nb*c, 16, func(s, e int) { dwconvPlanes(g, c, x, w, b, z, y, s, e, act) })
		return
	}
	pointwise := g.pointwise()
	kk := cg * kVol
	// The output of a group, [mg, outVol], goes in blocks of rows x column
	// tiles, one parallel loop over all blocks: each block gets its bias, its
	// product (one single-threaded GEMM) and its epilogue (residual,
	// activation) while it is in L2. The tiles keep a block's output in about
	// a quarter of L2. With several threads the tiles are made equal and at
	// least two per thread (a 56x56 plane was one tile of 2688 columns and one
	// of 448, so one thread did six times the other's work), and rows are
	// split too when the plane is too small for that (7x7 planes).
	threads := ctx.NumThreads()
	tiles := (outVol + convTileCols(mg) - 1) / convTileCols(mg)
	if threads > 1 && tiles < 2*threads {
		tiles = max(tiles, min(2*threads, outVol/128))
	}
	tile, tiles := evenTiles(outVol, tiles)
	rowBlock := mg
	if threads > 1 && tiles < 2*threads {
		splits := min((mg+15)/16, (2*threads+tiles-1)/tiles)
		rowBlock = ((mg+splits-1)/splits + 15) &^ 15
	}
	rowBlocks := (mg + rowBlock - 1) / rowBlock
	// A 2-D conv with one row block unfolds each tile's columns inside the
	// loop (on the thread that multiplies them, while they are in cache); the
	// others unfold the whole plane first, in parallel over channels.
	tileUnfold := !pointwise && rowBlocks == 1 && g.rank == 2 && g.in[0] == 1 && g.k[0] == 1
	var col []float32
	if !pointwise && !tileUnfold {
		cp := getF32(kk * outVol)
		defer putF32(cp)
		col = *cp
	}
	grain := max(1, int(minParallelFMAs/max(int64(rowBlock)*int64(tile)*int64(kk), 1)))
	for bi := 0; bi < nb; bi++ {
		for gi := 0; gi < group; gi++ {
			xg := x[(bi*c+gi*cg)*inVol:]
			yg := y[(bi*m+gi*mg)*outVol : (bi*m+(gi+1)*mg)*outVol]
			zg := from(z, (bi*m+gi*mg)*outVol)
			wg := w[gi*mg*kk:]
			src, ldSrc := xg, outVol
			if col != nil {
				im2colF32(ctx, g, cg, xg, col)
				src = col
			}
			opkernel.ParallelForShared(ctx, tiles*rowBlocks, grain, func(s, e int) {
				var tcol []float32
				if tileUnfold {
					cp := getF32(kk * tile)
					defer putF32(cp)
					tcol = *cp
				}
				for it := s; it < e; it++ {
					r0, n0 := it%rowBlocks*rowBlock, it/rowBlocks*tile
					rows, nt := min(rowBlock, mg-r0), min(tile, outVol-n0)
					yb := yg[r0*outVol+n0:]
					var beta float32
					if b != nil {
						C.fill_rows_f32(cf(yb), cf(b[gi*mg+r0:]), C.int(rows), C.long(nt), C.long(outVol))
						beta = 1
					}
					bsrc, ldb := src[n0:], ldSrc
					if tileUnfold {
						im2colTile(g, xg, tcol, cg, n0, nt, nt)
						bsrc, ldb = tcol, nt
					}
					sgemm(false, false, rows, nt, kk, 1, wg[r0*kk:], kk, bsrc, ldb, beta, yb, outVol)
					epiRows(yb, from(zg, r0*outVol+n0), rows, nt, outVol, act)
				}
			})
		}
	}
}

// dwconvPlanes runs a 2-D depthwise convolution (one channel per group, c
// channels) on planes [s, e) of x (plane p: image p/c, channel p%c) into
// y, with the residual z (nil: none) and act, on one thread.
func dwconvPlanes(g *geom, c int, x, w, b, z, y []float32, s, e int, act int64) {
	inVol, outVol := g.inVol(), g.outVol()
	padH := (g.out[1]-1)*g.s[1] + (g.k[1]-1)*g.d[1] + 1
	padW := (g.out[2]-1)*g.s[2] + (g.k[2]-1)*g.d[2] + 1
	// padded plane, or the zero row and lane masks of the AVX-512 3x3 paths, or the row buffers of dw_rows_f32,
	// or the channel-last buffers of dw_cb16_f32
	pp := getF32(max(padH*padW, g.in[2]+48+int(C.dw_mask_floats(C.int(g.out[1]), C.int(g.out[2]))),
		int(C.dw_rows_floats(C.int(g.in[1]), C.int(g.in[2]), C.int(g.k[1]), C.int(g.s[1]), C.int(g.out[1]), C.int(g.out[2]))),
		int(C.dw_cb16_floats(C.int(g.in[2]), C.int(g.pb[2]), C.int(g.k[1]), C.int(g.s[1]), C.int(g.out[1]), C.int(g.out[2])))))
	defer putF32(pp)
	pad := *pp
	// The kernel applies the activation itself (in registers, or on
	// groups of planes while they are in cache), unless a residual
	// must be added first; then the epilogue adds it and applies the
	// activation, planes going in groups of about convTileBytes so
	// each is finished while it is still in cache.
	step, kernelAct := e-s, act
	epi := z != nil
	if epi {
		step, kernelAct = max(1, convTileBytes/(4*outVol)), ir.ActNone
		if step > 16 {
			step -= step % 16 // whole groups for the channel-blocked kernel
		}
	}
	for p := s; p < e; p += step {
		q := min(e, p+step)
		C.dwconv_f32(cf(x[p*inVol:]), cf(w), cf(b), cf(y[p*outVol:]), C.int(q-p), C.int(c),
			C.int(g.in[1]), C.int(g.in[2]), C.int(g.k[1]), C.int(g.k[2]), C.int(g.s[1]), C.int(g.s[2]),
			C.int(g.pb[1]), C.int(g.pb[2]), C.int(g.d[1]), C.int(g.d[2]), C.int(g.out[1]), C.int(g.out[2]), C.int(p%c), C.int(kernelAct), cf(pad))
		if epi {
			epiRows(y[p*outVol:], from(z, p*outVol), 1, (q-p)*outVol, 0, act)
		}
	}
}

// evenTiles cuts n output columns into about parts tiles of one width, a
// multiple of 16 (the last tile may be shorter), and returns the width and
// the tile count.
func evenTiles(n, parts int) (width, count int) {
	width = min(n, ((n+parts-1)/parts+15)&^15)
	return width, (n + width - 1) / width
}

// convTileCols is the widest column tile of the im2col + GEMM path for mg
// output rows: the block's output in about a quarter of L2.
func convTileCols(mg int) int { return max(256, convTileBytes/(4*mg)) &^ 63 }

// im2colF32 unfolds cg channels of x into col [cg*kVol, outVol], in parallel
// over channels.
func im2colF32(ctx *opkernel.Ctx, g *geom, cg int, x, col []float32) {
	inVol, rows := g.inVol(), g.kVol()*g.outVol()
	opkernel.ParallelFor(ctx, cg, 8, func(s, e int) {
		C.im2col_f32(cf(x[s*inVol:]), cf(col[s*rows:]), C.int(e-s), C.int(g.in[0]), C.int(g.in[1]), C.int(g.in[2]),
			C.int(g.k[0]), C.int(g.k[1]), C.int(g.k[2]), C.int(g.s[0]), C.int(g.s[1]), C.int(g.s[2]),
			C.int(g.pb[0]), C.int(g.pb[1]), C.int(g.pb[2]), C.int(g.d[0]), C.int(g.d[1]), C.int(g.d[2]),
			C.int(g.out[0]), C.int(g.out[1]), C.int(g.out[2]))
	})
}

// convDirect is the reference convolution: a plain loop, used for float64
// and as the oracle of the float32 tests.
func convDirect[T float](ctx *opkernel.Ctx, g *geom, nb, c, m, group int, x, w, b, y []T) {
	cg, mg := c/group, m/group
	inVol, outVol, kVol := g.inVol(), g.outVol(), g.kVol()
	opkernel.ParallelFor(ctx, nb*m, 1, func(s, e int) {
		for t := s; t < e; t++ {
			bi, oc := t/m, t%m
			gi := oc / mg
			yo := y[t*outVol : (t+1)*outVol]
			for od := 0; od < g.out[0]; od++ {
				for oh := 0; oh < g.out[1]; oh++ {
					for ow := 0; ow < g.out[2]; ow++ {
						var acc T
						if b != nil {
							acc = b[oc]
						}
						for ic := 0; ic < cg; ic++ {
							xc := x[(bi*c+gi*cg+ic)*inVol:]
							wc := w[(oc*cg+ic)*kVol:]
							for kd := 0; kd < g.k[0]; kd++ {
								id := od*g.s[0] - g.pb[0] + kd*g.d[0]
								if id < 0 || id >= g.in[0] {
									continue
								}
								for kh := 0; kh < g.k[1]; kh++ {
									ih := oh*g.s[1] - g.pb[1] + kh*g.d[1]
									if ih < 0 || ih >= g.in[1] {
										continue
									}
									for kw := 0; kw < g.k[2]; kw++ {
										iw := ow*g.s[2] - g.pb[2] + kw*g.d[2]
										if iw < 0 || iw >= g.in[2] {
											continue
										}
										acc += xc[(id*g.in[1]+ih)*g.in[2]+iw] * wc[(kd*g.k[1]+kh)*g.k[2]+kw]
									}
								}
							}
						}
						yo[(od*g.out[1]+oh)*g.out[2]+ow] = acc
					}
				}
			}
		}
	})
}

// convGeometry checks a convolution's x [N, C, D...] and w [M, C/group,
// k...] and reads its group and window geometry.
func convGeometry(n *ir.Node, x, w *ir.Tensor) (nb, c, m, group int, g *geom, err error) {
	if len(x.Shape) < 3 || len(w.Shape) != len(x.Shape) {
		return 0, 0, 0, 0, nil, errf(n, "x %v and w %v must have the same rank >= 3", x.Shape, w.Shape)
	}
	group = int(n.Attrs.Int("group", 1))
	nb, c, m = int(x.Shape[0]), int(x.Shape[1]), int(w.Shape[0])
	if group < 1 || c%group != 0 || m%group != 0 || int(w.Shape[1]) != c/group {
		return 0, 0, 0, 0, nil, errf(n, "group %d does not fit x %v and w %v", group, x.Shape, w.Shape)
	}
	g, err = windowAttrs(n, x.Shape[2:], w.Shape[2:], false)
	return nb, c, m, group, g, err
}
