package opkernel

import (
	"math"
	"testing"

	"gkconv/internal/ir"
)

func TestHalfRoundTrip(t *testing.T) {
	vals := []float32{0, 1, -2.5, 65504, float32(math.Inf(-1))}
	for _, dt := range []ir.DType{ir.Float16, ir.BFloat16} {
		if !IsHalf(dt) {
			t.Fatalf("IsHalf(%s) = false", dt)
		}
		h := ir.NewTensor(dt, []int64{int64(len(vals))})
		F32ToHalf(h, vals)
		back := HalfToF32(h)
		if back.DType != ir.Float32 || back.NumElements() != int64(len(vals)) {
			t.Fatalf("%s: widened to %s", dt, back)
		}
		for i, v := range back.F32() {
			want := vals[i]
			if dt == ir.BFloat16 && want == 65504 {
				want = 65536 // bfloat16 keeps 8 significant bits
			}
			if v != want {
				t.Errorf("%s element %d: %g, want %g", dt, i, v, want)
			}
		}
	}
	if IsHalf(ir.Float32) {
		t.Error("IsHalf(float32) = true")
	}
}
