package nn

/*
#include "im2col_dwconv.h"
#include "gemm_seqk.h"
*/
import "C"

import (
	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
	"slices"
)

func floorDiv(a, b int) int {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// convTransposeGeom computes the geometry of ONNX ConvTranspose as the conv
// it is the adjoint of: g.in holds y's spatial dims, g.out x's.
func convTransposeGeom(n *ir.Node, xSp, kernelSp []int64) (*geom, error) {
	r := len(xSp)
	if r < 1 || r > 3 {
		return nil, errf(n, "spatial rank %d not supported (1-3)", r)
	}
	ks := n.Attrs.Ints("kernel_shape", kernelSp)
	strides := n.Attrs.Ints("strides", nil)
	dil := n.Attrs.Ints("dilations", nil)
	pads := n.Attrs.Ints("pads", nil)
	outPad := n.Attrs.Ints("output_padding", nil)
	outShape := n.Attrs.Ints("output_shape", nil)
	if len(outShape) > r {
		outShape = outShape[len(outShape)-r:]
	}
	if len(ks) != r || (strides != nil && len(strides) != r) || (dil != nil && len(dil) != r) ||
		(pads != nil && len(pads) != 2*r) || (outPad != nil && len(outPad) != r) ||
		(outShape != nil && len(outShape) != r) {
		return nil, errf(n, "kernel_shape/strides/dilations/pads/output_padding/output_shape do not match spatial rank %d", r)
	}
	autoPad := n.Attrs.String("auto_pad", "NOTSET")
	g := &geom{rank: r}
	for i := 0; i < 3; i++ {
		g.in[i], g.out[i], g.k[i], g.s[i], g.d[i] = 1, 1, 1, 1, 1
	}
	off := 3 - r
	for i := 0; i < r; i++ {
		j := i + off
		g.out[j], g.k[j] = int(xSp[i]), int(ks[i])
		if strides != nil {
			g.s[j] = int(strides[i])
		}
		if dil != nil {
			g.d[j] = int(dil[i])
		}
		if g.k[j] < 1 || g.s[j] < 1 || g.d[j] < 1 {
			return nil, errf(n, "kernel, strides and dilations must be positive")
		}
		op := 0
		if outPad != nil {
			op = int(outPad[i])
		}
		dk := (g.k[j]-1)*g.d[j] + 1
		full := g.s[j]*(g.out[j]-1) + op + dk
		switch {
		case outShape != nil || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER":
			var o int
			if outShape != nil {
				o = int(outShape[i])
			} else {
				o = g.out[j] * g.s[j]
			}
			total := full - o
			if autoPad == "SAME_UPPER" {
				g.pb[j] = floorDiv(total, 2)
			} else {
				g.pb[j] = total - floorDiv(total, 2)
			}
			g.pe[j] = total - g.pb[j]
			g.in[j] = o
		case autoPad == "NOTSET" || autoPad == "" || autoPad == "VALID":
			if pads != nil && autoPad != "VALID" {
				g.pb[j], g.pe[j] = int(pads[i]), int(pads[i+r])
			}
			g.in[j] = full - g.pb[j] - g.pe[j]
		default:
			return nil, errf(n, "unknown auto_pad %q", autoPad)
		}
		if g.in[j] < 1 {
			return nil, errf(n, "output dim %d would be %d", i, g.in[j])
		}
	}
	return g, nil
}

// convTranspose is ONNX ConvTranspose: x [N, C, in...], w [C, M/group, k...],
// b [M]?, y [N, M, out...].
func convTranspose(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := need(n, in, 2); err != nil {
		return err
	}
	x, w, b, y := in[0], in[1], input(in, 2), out[0]
	if hasHalf(x) {
		return viaF32(ctx, n, in, out, convTranspose)
	}
	if len(x.Shape) < 3 || len(w.Shape) != len(x.Shape) {
		return errf(n, "x %v and w %v must have the same rank >= 3", x.Shape, w.Shape)
	}
	group := int(n.Attrs.Int("group", 1))
	nb, c := int(x.Shape[0]), int(x.Shape[1])
	if group < 1 || c%group != 0 || int(w.Shape[0]) != c {
		return errf(n, "group %d does not fit x %v and w %v", group, x.Shape, w.Shape)
	}
	m := int(w.Shape[1]) * group
	if b != nil && b.NumElements() != int64(m) {
		return errf(n, "bias has %d elements, expected %d", b.NumElements(), m)
	}
	g, err := convTransposeGeom(n, x.Shape[2:], w.Shape[2:])
	if err != nil {
		return err
	}
	want := []int64{int64(nb), int64(m)}
	for i := 3 - g.rank; i < 3; i++ {
		want = append(want, int64(g.in[i]))
	}
	if !slices.Equal(want, y.Shape) {
		return errf(n, "output shape %v, expected %v", y.Shape, want)
	}
	switch x.DType {
	case ir.Float32:
		gemm := sgemm
		if c/group <= mlasStrideK {
			gemm = sgemmSeqK // onnxruntime's MLAS order
		}
		// the column buffer (kernel taps x input pixels) is pooled: fresh
		// memory for it on every run cost as much as the GEMM
		col := getF32(int(w.Shape[1]) * g.kVol() * g.outVol())
		defer putF32(col)
		convTransposeGEMM(g, nb, c, m, group, x.F32(), w.F32(), slice[float32](b), y.F32(), *col, gemmOn(ctx, gemm), col2imF32)
	case ir.Float64:
		col := make([]float64, int(w.Shape[1])*g.kVol()*g.outVol())
		convTransposeGEMM(g, nb, c, m, group, x.F64(), w.F64(), slice[float64](b), y.F64(), col, gemmOn(ctx, dgemm), col2imGeneric[float64])
	default:
		return opkernel.Unsupportedf(n, "dtype %s", x.DType)
	}
	return nil
}

// convTransposeGEMM computes per (batch, group) col = W_g^T X_g, folds col
// into y (zeroed) with col2im in tap order, then adds the bias: onnxruntime's
// order (conv_transpose.cc: MlasGemm, math::Col2im, then Y += B). col holds
// (m/group) x kernel taps x input pixels.
func convTransposeGEMM[T float](g *geom, nb, c, m, group int, x, w, b, y, col []T, gemm gemmFunc[T], col2im func(*geom, int, []T, []T)) {
	cg, mg := c/group, m/group
	yVol, xVol, kVol := g.inVol(), g.outVol(), g.kVol()
	rows := mg * kVol
	for bi := 0; bi < nb; bi++ {
		for gi := 0; gi < group; gi++ {
			yg := y[(bi*m+gi*mg)*yVol : (bi*m+(gi+1)*mg)*yVol]
			clear(yg)
			gemm(true, false, rows, xVol, cg, 1, w[gi*cg*rows:], rows, x[(bi*c+gi*cg)*xVol:], xVol, 0, col, xVol)
			col2im(g, mg, col, yg)
			// the bias last, as onnxruntime adds it to the folded sums
			if b != nil {
				for j := 0; j < mg; j++ {
					bv := b[gi*mg+j]
					row := yg[j*yVol : (j+1)*yVol]
					for i := range row {
						row[i] += bv
					}
				}
			}
		}
	}
}

func col2imF32(g *geom, ch int, col, y []float32) {
	C.col2im_f32(cf(col), cf(y), C.int(ch), C.int(g.in[0]), C.int(g.in[1]), C.int(g.in[2]),
		C.int(g.k[0]), C.int(g.k[1]), C.int(g.k[2]), C.int(g.s[0]), C.int(g.s[1]), C.int(g.s[2]),
		C.int(g.pb[0]), C.int(g.pb[1]), C.int(g.pb[2]), C.int(g.d[0]), C.int(g.d[1]), C.int(g.d[2]),
		C.int(g.out[0]), C.int(g.out[1]), C.int(g.out[2]))
}

// col2imGeneric is col2im_f32 in Go, for the other float types.
func col2imGeneric[T float](g *geom, ch int, col, y []T) {
	inVol, outVol := g.inVol(), g.outVol()
	r := 0
	for c := 0; c < ch; c++ {
		yc := y[c*inVol:]
		for kd := 0; kd < g.k[0]; kd++ {
			for kh := 0; kh < g.k[1]; kh++ {
				for kw := 0; kw < g.k[2]; kw++ {
					src := col[r*outVol:]
					r++
					for od := 0; od < g.out[0]; od++ {
						id := od*g.s[0] - g.pb[0] + kd*g.d[0]
						if id < 0 || id >= g.in[0] {
							continue
						}
						for oh := 0; oh < g.out[1]; oh++ {
							ih := oh*g.s[1] - g.pb[1] + kh*g.d[1]
							if ih < 0 || ih >= g.in[1] {
								continue
							}
							for ow := 0; ow < g.out[2]; ow++ {
								iw := ow*g.s[2] - g.pb[2] + kw*g.d[2]
								if iw < 0 || iw >= g.in[2] {
									continue
								}
								yc[(id*g.in[1]+ih)*g.in[2]+iw] += src[(od*g.out[1]+oh)*g.out[2]+ow]
							}
						}
					}
				}
			}
		}
	}
}

// mlasStrideK is the K block of MLAS's SGEMM (MLAS_SGEMM_STRIDEK; it only
// grows for narrow products): a product with k <= mlasStrideK is one fused
// multiply-add chain per element there.
const mlasStrideK = 128

// sgemmSeqK is sgemm for C = A^T B (alpha 1, beta 0) in MLAS's order for
// k <= mlasStrideK (gemm_seqk.c); other forms go to OpenBLAS.
func sgemmSeqK(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if !transA || transB || alpha != 1 || beta != 0 || k > mlasStrideK || m == 0 || n == 0 || k == 0 {
		sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	C.sgemm_tn_seqk_f32(cf(a), C.long(lda), cf(b), C.long(ldb), cf(c), C.long(ldc), C.long(m), C.long(n), C.long(k))
}
