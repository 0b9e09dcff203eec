package nn

// The epilogue of Conv2D after its bias: the residual input
// (ir.ConvResidualInput) and the fused activation (ir.AttrActivation),
// applied by every convolution path to each output tile right after the
// tile is written.

/*
#cgo CFLAGS: -O3 -std=gnu11 -I${SRCDIR}/../../cpuisa
#include "conv_act.h"
*/
import "C"

import (
	"math"

	"gkconv/internal/ir"
)

// epiRows adds the residual z (laid out as y; nil: none) to the first n
// floats of rows rows of y (row stride ld) and applies act; a no-op without
// residual and activation.
func epiRows(y, z []float32, rows, n, ld int, act int64) {
	if (act == ir.ActNone && z == nil) || rows <= 0 || n <= 0 {
		return
	}
	C.epi_rows_f32(cf(y), cf(z), C.int(rows), C.long(n), C.long(ld), C.int(act))
}

// from returns z[off:], nil when z is nil (no residual).
func from[T any](z []T, off int) []T {
	if z == nil {
		return nil
	}
	return z[off:]
}

// epiSlice adds z (nil: none) to y and applies act (the float64 reference
// path, which has no output tiles).
func epiSlice[T float](y, z []T, act int64) {
	for i := range z {
		y[i] += z[i]
	}
	switch act {
	case ir.ActReLU:
		for i, v := range y {
			if v < 0 {
				y[i] = 0
			}
		}
	case ir.ActReLU6:
		for i, v := range y {
			if v < 0 {
				y[i] = 0
			} else if v > 6 {
				y[i] = 6
			}
		}
	case ir.ActSigmoid:
		for i, v := range y {
			y[i] = T(1 / (1 + math.Exp(-float64(v))))
		}
	case ir.ActSwish:
		for i, v := range y {
			y[i] = T(float64(v) / (1 + math.Exp(-float64(v))))
		}
	case ir.ActTanh:
		for i, v := range y {
			y[i] = T(math.Tanh(float64(v)))
		}
	case ir.ActHSwish:
		for i, v := range y {
			y[i] = v * min(max(v+3, 0), 6) / 6
		}
	}
}

// kernelActivation is the activation a depthwise kernel or the sliver conv
// GEMM applies itself (RELU, RELU6); the others are left to the epilogue.
func kernelActivation(act int64) bool {
	return act == ir.ActReLU || act == ir.ActReLU6
}
