package nn

/*
#cgo CFLAGS: -O3 -std=gnu11 -I${SRCDIR}/../../cpuisa
#include "norm.h"
*/
import "C"

import (
	"math"
	"unsafe"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// batchNorm is ONNX BatchNormalization in inference mode:
// y = (x - mean) / sqrt(var + epsilon) * scale + B, channel axis 1.
func batchNorm(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := need(n, in, 5); err != nil {
		return err
	}
	training := n.Attrs.Int("training_mode", 0) != 0
	if !training && len(out) > 1 && out[1] != nil {
		return opkernel.Unsupportedf(n, "running statistics outputs without training_mode")
	}
	x, y := in[0], out[0]
	if hasHalf(x) {
		return viaF32(ctx, n, in, out, batchNorm)
	}
	if len(x.Shape) < 2 {
		return errf(n, "input %v must have rank >= 2", x.Shape)
	}
	c := int(x.Shape[1])
	var p [4][]float64
	for i := range p {
		v, err := in[i+1].Float64s()
		if err != nil || len(v) != c {
			return errf(n, "input %d must hold %d numbers (%s)", i+1, c, in[i+1])
		}
		p[i] = v
	}
	eps := n.Attrs.Float("epsilon", 1e-5)
	if training {
		// ONNX training mode: normalise with the batch statistics (population
		// variance) and update the running ones with momentum.
		mean, variance, err := batchStats(n, x, c)
		if err != nil {
			return err
		}
		mom := n.Attrs.Float("momentum", 0.9)
		for i := 0; i < c; i++ {
			if len(out) > 1 && out[1] != nil {
				out[1].PutFloat(i, p[2][i]*mom+mean[i]*(1-mom))
			}
			if len(out) > 2 && out[2] != nil {
				out[2].PutFloat(i, p[3][i]*mom+variance[i]*(1-mom))
			}
		}
		p[2], p[3] = mean, variance
	}
	a, b := make([]float64, c), make([]float64, c)
	for i := 0; i < c; i++ {
		a[i] = p[0][i] / math.Sqrt(p[3][i]+eps)
		b[i] = p[1][i] - p[2][i]*a[i]
	}
	inner := prod(x.Shape[2:])
	planes := int(x.Shape[0]) * c
	switch x.DType {
	case ir.Float32:
		scaleShiftF32(ctx, planes, c, inner, x.F32(), y.F32(), a, b)
	case ir.Float64:
		scaleShift(ctx, planes, c, inner, x.F64(), y.F64(), a, b)
	default:
		return opkernel.Unsupportedf(n, "dtype %s", x.DType)
	}
	return nil
}

// scaleShiftF32 is scaleShift for float32 in C (gk_scale_shift_planes:
// the same two roundings per value, vectorised).
func scaleShiftF32(ctx *opkernel.Ctx, planes, c, inner int, x, y []float32, a, b []float64) {
	if planes == 0 || inner == 0 {
		return
	}
	af, bf := make([]float32, c), make([]float32, c)
	for i := range af {
		af[i], bf[i] = float32(a[i]), float32(b[i])
	}
	opkernel.ParallelFor(ctx, planes, max(1, 16384/max(inner, 1)), func(s, e int) {
		C.gk_scale_shift_planes((*C.float)(unsafe.Pointer(&x[0])), (*C.float)(unsafe.Pointer(&y[0])), C.long(s), C.long(e),
			C.long(c), C.long(inner), (*C.float)(unsafe.Pointer(&af[0])), (*C.float)(unsafe.Pointer(&bf[0])))
	})
}

// scaleShift computes y = x*a[c] + b[c] per channel plane.
func scaleShift[T float](ctx *opkernel.Ctx, planes, c, inner int, x, y []T, a, b []float64) {
	opkernel.ParallelFor(ctx, planes, max(1, 16384/max(inner, 1)), func(s, e int) {
		for p := s; p < e; p++ {
			av, bv := T(a[p%c]), T(b[p%c])
			xs, ys := x[p*inner:(p+1)*inner], y[p*inner:(p+1)*inner]
			for i, v := range xs {
				ys[i] = v*av + bv
			}
		}
	})
}

// instanceNorm is ONNX InstanceNormalization: every (n, c) plane normalised
// over its spatial elements, then scaled and shifted per channel.
func instanceNorm(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := need(n, in, 3); err != nil {
		return err
	}
	x, y := in[0], out[0]
	if hasHalf(x) {
		return viaF32(ctx, n, in, out, instanceNorm)
	}
	if len(x.Shape) < 3 {
		return errf(n, "input %v must have rank >= 3", x.Shape)
	}
	c := int(x.Shape[1])
	scale, err1 := in[1].Float64s()
	bias, err2 := in[2].Float64s()
	if err1 != nil || err2 != nil || len(scale) != c || len(bias) != c {
		return errf(n, "scale and B must hold %d numbers", c)
	}
	eps := n.Attrs.Float("epsilon", 1e-5)
	inner := prod(x.Shape[2:])
	planes := int(x.Shape[0]) * c
	switch x.DType {
	case ir.Float32:
		instanceNormT(ctx, planes, c, inner, x.F32(), y.F32(), scale, bias, eps)
	case ir.Float64:
		instanceNormT(ctx, planes, c, inner, x.F64(), y.F64(), scale, bias, eps)
	default:
		return opkernel.Unsupportedf(n, "dtype %s", x.DType)
	}
	return nil
}

func instanceNormT[T float](ctx *opkernel.Ctx, planes, c, inner int, x, y []T, scale, bias []float64, eps float64) {
	opkernel.ParallelFor(ctx, planes, 1, func(s, e int) {
		for p := s; p < e; p++ {
			xs, ys := x[p*inner:(p+1)*inner], y[p*inner:(p+1)*inner]
			mean, inv := meanInvStd(xs, eps)
			a := scale[p%c] * inv
			b := bias[p%c] - mean*a
			for i, v := range xs {
				ys[i] = T(float64(v)*a + b)
			}
		}
	})
}

// meanInvStd returns the mean of xs and 1/sqrt(variance + eps) (population
// variance, two passes for accuracy).
func meanInvStd[T float](xs []T, eps float64) (float64, float64) {
	if len(xs) == 0 {
		return 0, 1 / math.Sqrt(eps)
	}
	var sum float64
	for _, v := range xs {
		sum += float64(v)
	}
	mean := sum / float64(len(xs))
	var sq float64
	for _, v := range xs {
		d := float64(v) - mean
		sq += d * d
	}
	return mean, 1 / math.Sqrt(sq/float64(len(xs))+eps)
}

// layerNorm is ONNX LayerNormalization: normalise over the dims from axis
// on, y = (x - mean) * inv_std * Scale + B with Scale and B broadcast to
// those dims; outputs Mean and InvStdDev (shape [d0..d(axis-1), 1...]) are
// written when requested.
func layerNorm(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := need(n, in, 2); err != nil {
		return err
	}
	x, y := in[0], out[0]
	if hasHalf(x) {
		return viaF32(ctx, n, in, out, layerNorm)
	}
	r := len(x.Shape)
	axis := int(n.Attrs.Int("axis", -1))
	if axis < 0 {
		axis += r
	}
	if axis < 0 || axis >= r {
		return errf(n, "axis %d out of range for rank %d", n.Attrs.Int("axis", -1), r)
	}
	normShape := x.Shape[axis:]
	inner := prod(normShape)
	outer := prod(x.Shape[:axis])
	scale, err := broadcastParam(in[1], normShape)
	if err != nil {
		return errf(n, "Scale: %v", err)
	}
	var bias []float64
	if b := input(in, 2); b != nil {
		if bias, err = broadcastParam(b, normShape); err != nil {
			return errf(n, "B: %v", err)
		}
	}
	meanOut, invOut := output(out, 1), output(out, 2)
	for _, t := range []*ir.Tensor{meanOut, invOut} {
		if t != nil && (!t.DType.IsFloat() || t.NumElements() != int64(outer)) {
			return errf(n, "Mean/InvStdDev output %s must be float with %d elements", t, outer)
		}
	}
	eps := n.Attrs.Float("epsilon", 1e-5)
	means, invs := make([]float64, outer), make([]float64, outer)
	switch x.DType {
	case ir.Float32:
		layerNormT(ctx, outer, inner, x.F32(), y.F32(), scale, bias, eps, means, invs)
	case ir.Float64:
		layerNormT(ctx, outer, inner, x.F64(), y.F64(), scale, bias, eps, means, invs)
	default:
		return opkernel.Unsupportedf(n, "dtype %s", x.DType)
	}
	for i := 0; i < outer; i++ {
		if meanOut != nil {
			meanOut.PutFloat(i, means[i])
		}
		if invOut != nil {
			invOut.PutFloat(i, invs[i])
		}
	}
	return nil
}

func layerNormT[T float](ctx *opkernel.Ctx, outer, inner int, x, y []T, scale, bias []float64, eps float64, means, invs []float64) {
	opkernel.ParallelFor(ctx, outer, max(1, 8192/max(inner, 1)), func(s, e int) {
		for r := s; r < e; r++ {
			xs, ys := x[r*inner:(r+1)*inner], y[r*inner:(r+1)*inner]
			mean, inv := meanInvStd(xs, eps)
			means[r], invs[r] = mean, inv
			for i, v := range xs {
				z := (float64(v) - mean) * inv * scale[i]
				if bias != nil {
					z += bias[i]
				}
				ys[i] = T(z)
			}
		}
	})
}

// broadcastParam expands t (numpy-broadcastable to shape) to a dense
// row-major []float64 of shape.
func broadcastParam(t *ir.Tensor, shape []int64) ([]float64, error) {
	v, err := t.Float64s()
	if err != nil {
		return nil, err
	}
	if len(t.Shape) > len(shape) {
		// leading size-1 dims are harmless
		extra := len(t.Shape) - len(shape)
		for _, d := range t.Shape[:extra] {
			if d != 1 {
				return nil, errString("shape %v does not broadcast to %v", t.Shape, shape)
			}
		}
	}
	total := prod(shape)
	if len(v) == total {
		return v, nil
	}
	r := len(shape)
	strides := make([]int, r)
	s := 1
	for i := len(t.Shape) - 1; i >= 0; i-- {
		j := i + r - len(t.Shape)
		if j < 0 {
			break
		}
		switch t.Shape[i] {
		case 1:
		case shape[j]:
			strides[j] = s
		default:
			return nil, errString("shape %v does not broadcast to %v", t.Shape, shape)
		}
		s *= int(t.Shape[i])
	}
	out := make([]float64, total)
	idx := make([]int, r)
	off := 0
	for k := 0; k < total; k++ {
		out[k] = v[off]
		for d := r - 1; d >= 0; d-- {
			idx[d]++
			off += strides[d]
			if idx[d] < int(shape[d]) {
				break
			}
			off -= strides[d] * idx[d]
			idx[d] = 0
		}
	}
	return out, nil
}

// batchStats returns per-channel mean and population variance over every
// axis but 1, accumulated in float64.
func batchStats(n *ir.Node, x *ir.Tensor, c int) (mean, variance []float64, err error) {
	v, err := x.Float64s()
	if err != nil {
		return nil, nil, errf(n, "%v", err)
	}
	inner := prod(x.Shape[2:])
	batch := int(x.Shape[0])
	mean, variance = make([]float64, c), make([]float64, c)
	cnt := float64(batch * inner)
	if cnt == 0 {
		return mean, variance, nil
	}
	for b := 0; b < batch; b++ {
		for ch := 0; ch < c; ch++ {
			for _, e := range v[(b*c+ch)*inner : (b*c+ch+1)*inner] {
				mean[ch] += e
			}
		}
	}
	for ch := range mean {
		mean[ch] /= cnt
	}
	for b := 0; b < batch; b++ {
		for ch := 0; ch < c; ch++ {
			for _, e := range v[(b*c+ch)*inner : (b*c+ch+1)*inner] {
				d := e - mean[ch]
				variance[ch] += d * d
			}
		}
	}
	for ch := range variance {
		variance[ch] /= cnt
	}
	return mean, variance, nil
}
