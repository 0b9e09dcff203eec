package nn

// The fused activation of Conv2D (ir.AttrActivation), applied by every
// convolution path to each output tile right after the tile is written.

/*
#cgo CFLAGS: -O3 -std=gnu11
#include "conv_act.h"
*/
import "C"

import "gkconv/internal/ir"

// actRows applies act to the first n floats of rows rows of y (row stride
// ld); a no-op for ir.ActNone.
func actRows(y []float32, rows, n, ld int, act int64) {
	if act == ir.ActNone || rows <= 0 || n <= 0 {
		return
	}
	C.act_rows_f32(cf(y), C.int(rows), C.long(n), C.long(ld), C.int(act))
}

// actSlice applies act to y (the float64 reference path).
func actSlice[T float](y []T, act int64) {
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
	}
}
