package elementwise

import (
	"math"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// TestFastHalfConversionsMatchIR: the vector float16 conversions give
// ir.F16ToF32/F32ToF16's values for every float16 and for float32 values
// around every rounding case (ties, subnormals, overflow, NaN payloads).
func TestFastHalfConversionsMatchIR(t *testing.T) {
	if opkernel.FastF16ToF32 == nil {
		t.Skip("no vector conversions in this build (cgo off)")
	}
	hs := make([]uint16, 1<<16)
	for i := range hs {
		hs[i] = uint16(i)
	}
	fs := make([]float32, len(hs))
	opkernel.FastF16ToF32(fs, hs)
	for i, h := range hs {
		if w := ir.F16ToF32(h); math.Float32bits(fs[i]) != math.Float32bits(w) {
			t.Fatalf("f16 %#x: %#x, want %#x", h, math.Float32bits(fs[i]), math.Float32bits(w))
		}
	}
	var xs []float32
	for _, f := range fs {
		b := math.Float32bits(f)
		xs = append(xs, f, math.Float32frombits(b+0x1000), math.Float32frombits(b+0xfff), math.Float32frombits(b+0x1001))
	}
	xs = append(xs, 1e-9, -1e-9, 70000, -70000, float32(math.Inf(1)), math.Float32frombits(0x7f812345), math.Float32frombits(0xffc00001))
	got := make([]uint16, len(xs))
	opkernel.FastF32ToF16(got, xs)
	for i, x := range xs {
		if w := ir.F32ToF16(x); got[i] != w {
			t.Fatalf("f32 %#x: %#x, want %#x", math.Float32bits(x), got[i], w)
		}
	}
}
