package nn

/*
#include "avgpool.h"
*/
import "C"

import (
	"fmt"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// GlobalAveragePool in onnxruntime's order of operations. onnxruntime's CPU
// provider runs it (and an AveragePool whose window is the whole input,
// stride 1, no padding) through MlasPool, which takes MLAS's global pooling
// kernel for it (pooling.cpp, MlasPoolGlobalKernel): per plane, one 4-lane
// accumulator starting at zero takes the plane 4 elements at a time from
// the plane's first element (no alignment step, unlike Eigen's ReduceMean);
// the lanes are reduced as (l0+l2)+(l1+l3) (MlasReduceAddFloat32x4's two
// shuffles); the remaining 0-3 elements are added one by one; the sum is
// divided by the plane size as a float (not multiplied by its reciprocal).
// A model quantized after the pool (squeeze-excite blocks feeding
// DynamicQuantizeLinear) turns one ulp of difference into another
// quantization level, so this is the order followed, not a more accurate
// one. Checked bit for bit against onnxruntime 1.30 (globalpool_test.go).
//
// onnxruntime's ORT_ENABLE_ALL may rewrite the node to its NCHWc form
// (channels a multiple of the NCHWc block: 8 on AVX2, 16 on AVX-512), which
// sums each channel in plane order; the unoptimised graph (ORT_DISABLE_ALL,
// the reference of the real-model checks) is MlasPool's.

func init() {
	opkernel.Register("GlobalAveragePool", globalAvgPool)
}

func globalAvgPool(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := need(n, in, 1); err != nil {
		return err
	}
	x, y := in[0], out[0]
	if hasHalf(x) {
		return viaF32(ctx, n, in, out, globalAvgPool)
	}
	if len(x.Shape) < 3 {
		return fmt.Errorf("node %s (GlobalAveragePool): input %v has no spatial dims", n.Name, x.Shape)
	}
	nc := int(x.Shape[0] * x.Shape[1])
	plane := int(ir.NumElements(x.Shape[2:]))
	if int(ir.NumElements(y.Shape)) != nc {
		return fmt.Errorf("node %s (GlobalAveragePool): output %v for input %v", n.Name, y.Shape, x.Shape)
	}
	switch x.DType {
	case ir.Float32:
		mlasGlobalMeans(ctx, x.F32(), y.F32(), nc, plane)
	case ir.Float64:
		// onnxruntime has no float64 kernel; a plain sum in plane order.
		xs, ys := x.F64(), y.F64()
		opkernel.ParallelFor(ctx, nc, planeGrain(plane), func(s, e int) {
			for p := s; p < e; p++ {
				var sum float64
				for _, v := range xs[p*plane : (p+1)*plane] {
					sum += v
				}
				ys[p] = sum / float64(plane)
			}
		})
	default:
		return opkernel.Unsupportedf(n, "dtype %s", x.DType)
	}
	return nil
}

// planeGrain: a task of planes reads at least ~16K elements.
func planeGrain(plane int) int { return max(1, 16384/max(plane, 1)) }

// mlasGlobalMeans writes the mean of each of the nc planes of x into y.
// (gk_global_means_f32, eight planes at a time; mlasGlobalMeanF32 is the
// same sums one plane at a time).
func mlasGlobalMeans(ctx *opkernel.Ctx, x, y []float32, nc, plane int) {
	if nc == 0 {
		return
	}
	if plane == 0 {
		for p := range y[:nc] {
			y[p] = mlasGlobalMeanF32(nil)
		}
		return
	}
	opkernel.ParallelFor(ctx, nc, max(8, planeGrain(plane)), func(s, e int) {
		C.gk_global_means_f32(cf(x[s*plane:]), cf(y[s:]), C.long(e-s), C.long(plane))
	})
}

// mlasGlobalMeanF32 is MlasPoolGlobalKernel's average of one plane (the
// order is described above). An empty plane gives 0/0, NaN, as MLAS's does.
func mlasGlobalMeanF32(x []float32) float32 {
	var l0, l1, l2, l3 float32 // the accumulator starts at +0, as MLAS's
	i := 0
	for ; i+4 <= len(x); i += 4 {
		l0 += x[i]
		l1 += x[i+1]
		l2 += x[i+2]
		l3 += x[i+3]
	}
	s := (l0 + l2) + (l1 + l3)
	for ; i < len(x); i++ {
		s += x[i]
	}
	return s / float32(len(x))
}

// wholeWindow reports a float32 AveragePool whose one window is the whole
// input (kernel = input dims, strides 1, no padding, no dilation): MlasPool
// runs it with its global kernel, the same additions as GlobalAveragePool.
func (g *geom) wholeWindow() bool {
	for j := 0; j < 3; j++ {
		if g.k[j] != g.in[j] || g.out[j] != 1 || g.s[j] != 1 || g.pb[j] != 0 || g.pe[j] != 0 || (g.k[j] > 1 && g.d[j] != 1) {
			return false
		}
	}
	return true
}
