package opkernel

import "gkconv/internal/ir"

// Op packages compute float16/bfloat16 in float32: these helpers widen the
// inputs and narrow the results, with the rounding of ir.F32ToF16/F32ToBF16.

// FastF16ToF32 and FastF32ToF16, when set (by the elementwise package's
// vector kernels), convert whole slices with the values of
// ir.F16ToF32/F32ToF16.
var (
	FastF16ToF32 func(d []float32, s []uint16)
	FastF32ToF16 func(d []uint16, s []float32)
)

// IsHalf reports a 16-bit float dtype (float16 or bfloat16).
func IsHalf(dt ir.DType) bool { return dt == ir.Float16 || dt == ir.BFloat16 }

// HalfToF32 returns a new float32 tensor holding the values of a
// float16/bfloat16 tensor.
func HalfToF32(t *ir.Tensor) *ir.Tensor {
	o := ir.NewTensor(ir.Float32, t.Shape)
	d, s := o.F32(), t.U16()
	if t.DType == ir.Float16 && FastF16ToF32 != nil {
		FastF16ToF32(d, s)
		return o
	}
	if t.DType == ir.BFloat16 {
		for i := range d {
			d[i] = ir.BF16ToF32(s[i])
		}
	} else {
		for i := range d {
			d[i] = ir.F16ToF32(s[i])
		}
	}
	return o
}

// HalfToF32Into widens a float16/bfloat16 tensor into d (its length).
func HalfToF32Into(d []float32, t *ir.Tensor) {
	s := t.U16()
	switch {
	case t.DType == ir.Float16 && FastF16ToF32 != nil:
		FastF16ToF32(d, s)
	case t.DType == ir.BFloat16:
		for i := range d {
			d[i] = ir.BF16ToF32(s[i])
		}
	default:
		for i := range d {
			d[i] = ir.F16ToF32(s[i])
		}
	}
}

// F32ToHalf rounds float32 values into a float16/bfloat16 tensor.
func F32ToHalf(dst *ir.Tensor, src []float32) {
	d := dst.U16()
	if dst.DType == ir.Float16 && FastF32ToF16 != nil {
		FastF32ToF16(d, src[:len(d)])
		return
	}
	if dst.DType == ir.BFloat16 {
		for i := range d {
			d[i] = ir.F32ToBF16(src[i])
		}
	} else {
		for i := range d {
			d[i] = ir.F32ToF16(src[i])
		}
	}
}
