package elementwise

import (
	"math"
	"testing"

	"gkconv/internal/ir"
)

// TestClipF32Fast covers the vectorised float32 path: lengths that leave a
// scalar tail, NaN passing through, min > max (everything becomes max),
// infinities, and in-place operation.
func TestClipF32Fast(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	ref := func(x, lo, hi float32) float32 {
		if x < lo {
			x = lo
		}
		if x > hi {
			x = hi
		}
		return x
	}
	for _, n := range []int{1, 15, 16, 37, 100003} {
		for _, b := range [][2]float32{{0, 6}, {2, -1}, {-inf, 0}, {-1, inf}} {
			x := ir.NewTensor(ir.Float32, sh(int64(n)))
			xs := x.F32()
			for i := range xs {
				xs[i] = float32(i%23)*0.7 - 8
			}
			xs[0] = nan
			xs[n/2] = -inf
			xs[n-1] = inf
			want := make([]float64, n)
			for i, v := range xs {
				want[i] = float64(ref(v, b[0], b[1]))
			}
			out := ir.NewTensor(ir.Float32, sh(int64(n)))
			if err := run(t, "Clip", nil, []*ir.Tensor{x, f32(nil, b[0]), f32(nil, b[1])}, out); err != nil {
				t.Fatal(err)
			}
			wantF(t, out, want, 0)
			if err := run(t, "Clip", nil, []*ir.Tensor{x, f32(nil, b[0]), f32(nil, b[1])}, x); err != nil {
				t.Fatal(err)
			}
			wantF(t, x, want, 0)
		}
	}
}
