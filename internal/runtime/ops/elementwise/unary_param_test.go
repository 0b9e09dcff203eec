package elementwise

import (
	"math"
	"math/rand"
	"testing"
)

// TestParamUnaryAccuracy: Elu, Selu and Celu on the C path (gk_exp, as
// onnxruntime's exp(x) - 1) are within a few float32 ulps of the float64
// formula, plus the absolute error the "- 1" leaves near zero, over the
// whole range: underflow to -alpha, overflow on the positive side, NaN and
// infinities.
func TestParamUnaryAccuracy(t *testing.T) {
	rng := rand.New(rand.NewSource(35))
	xs := make([]float32, 1<<16)
	for i := range xs {
		xs[i] = float32((rng.Float64()*2 - 1) * math.Exp2(rng.Float64()*14-10))
	}
	copy(xs, []float32{0, float32(math.Copysign(0, -1)), -1e-30, -88, -104, -200, 60, 89, 100,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())})
	cases := []struct {
		name string
		op   int
		a, b float32
		ref  func(x, a, b float64) float64
	}{
		{"Elu", upElu, 1, 0, func(x, a, _ float64) float64 {
			if x < 0 {
				return a * (math.Exp(x) - 1)
			}
			return x
		}},
		{"Elu alpha 0.3", upElu, 0.3, 0, func(x, a, _ float64) float64 {
			if x < 0 {
				return a * (math.Exp(x) - 1)
			}
			return x
		}},
		{"Selu", upSelu, 1.6732632, 1.050701, func(x, a, g float64) float64 {
			if x > 0 {
				return g * x
			}
			return g * (a*math.Exp(x) - a)
		}},
		{"Celu alpha 2.5", upCelu, 2.5, 0, func(x, a, _ float64) float64 {
			return math.Max(0, x) + math.Min(0, a*(math.Exp(x/a)-1))
		}},
	}
	for _, c := range cases {
		got := make([]float32, len(xs))
		f32UnaryParam(c.op, got, xs, c.a, c.b)
		for i, x := range xs {
			want := c.ref(float64(x), float64(c.a), float64(c.b))
			g := float64(got[i])
			if math.IsNaN(want) || math.IsNaN(g) {
				if math.IsNaN(want) != math.IsNaN(g) {
					t.Fatalf("%s(%g) = %g, want %g", c.name, x, g, want)
				}
				continue
			}
			if math.IsInf(want, 0) || math.IsInf(g, 0) {
				if float32(want) != got[i] {
					t.Fatalf("%s(%g) = %g, want %g", c.name, x, g, want)
				}
				continue
			}
			ulp := float64(math.Nextafter32(float32(math.Abs(want)), float32(math.Inf(1)))) - math.Abs(float64(float32(want)))
			if tol := 4*ulp + 3e-7*float64(c.a)*(1+float64(c.b)); math.Abs(g-want) > tol {
				t.Fatalf("%s(%g) = %.9g, want %.9g (error %.3g > %.3g)", c.name, x, g, want, math.Abs(g-want), tol)
			}
		}
	}
}
