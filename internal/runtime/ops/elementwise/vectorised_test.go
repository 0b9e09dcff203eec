package elementwise

import (
	"math"
	"math/rand"
	"testing"

	"gkconv/internal/runtime/cpuisa"
	"gkconv/internal/runtime/opkernel"
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

// TestLogMishAccuracy: the C Log (Cephes logf) is within 1 ulp of the
// float64 log on every exponent, subnormals included, with log's special
// values (0.83 ulps at most over all positive float32, checked once in C);
// the C Mish within 5 ulps (4.5 at most over every 7th float32; plus 1e-30
// absolute where the result underflows) of x tanh(softplus(x)).
func TestLogMishAccuracy(t *testing.T) {
	rng := rand.New(rand.NewSource(36))
	xs := make([]float32, 1<<17)
	for i := range xs {
		xs[i] = math.Float32frombits(rng.Uint32() & 0x7fffffff) // every positive float32
	}
	copy(xs, []float32{0, 1, 1e-45, 1.1754942e-38, 0.70710677, 1.4142135, 2, float32(math.Inf(1)), -1,
		float32(math.Copysign(0, -1)), float32(math.NaN())})
	ulpOf := func(v float64) float64 {
		f := float32(math.Abs(v))
		return float64(math.Nextafter32(f, float32(math.Inf(1)))) - float64(f)
	}
	got := make([]float32, len(xs))
	f32Unary(uLog, got, xs)
	for i, x := range xs {
		want := math.Log(float64(x))
		g := float64(got[i])
		switch {
		case math.IsNaN(want) || math.IsInf(want, 0):
			if !(math.IsNaN(want) && math.IsNaN(g)) && float32(want) != got[i] {
				t.Fatalf("Log(%g) = %g, want %g", x, g, want)
			}
		case math.Abs(g-want) > ulpOf(want):
			t.Fatalf("Log(%g) = %.9g, want %.9g (%.2f ulps)", x, g, want, math.Abs(g-want)/ulpOf(want))
		}
	}
	for i := range xs {
		xs[i] = float32((rng.Float64()*2 - 1) * math.Exp2(rng.Float64()*10-4))
	}
	copy(xs, []float32{0, -100, -88, -30, 19.99, 20, 20.01, 100, float32(math.Inf(1)), float32(math.NaN())})
	f32Unary(uMish, got, xs)
	for i, x := range xs {
		xf := float64(x)
		want := xf * math.Tanh(softplus64(xf))
		g := float64(got[i])
		switch {
		case math.IsNaN(want) || math.IsInf(want, 0):
			if !(math.IsNaN(want) && math.IsNaN(g)) && float32(want) != got[i] {
				t.Fatalf("Mish(%g) = %g, want %g", x, g, want)
			}
		case math.Abs(g-want) > 5*ulpOf(want)+1e-30:
			t.Fatalf("Mish(%g) = %.9g, want %.9g (%.2f ulps)", x, g, want, math.Abs(g-want)/ulpOf(want))
		}
	}
}

// TestSinCosAccuracy: the C Sin and Cos are within 2 ulps, or 2^-24 absolute
// near their zeros, of the float64 functions for |x| <= 8192 and exact libm
// values beyond (the second pass), with NaN for infinities and NaN.
func TestSinCosAccuracy(t *testing.T) {
	rng := rand.New(rand.NewSource(37))
	xs := make([]float32, 1<<17)
	for i := range xs {
		xs[i] = float32((rng.Float64()*2 - 1) * math.Exp2(rng.Float64()*16-3))
	}
	copy(xs, []float32{0, float32(math.Copysign(0, -1)), 1e-30, math.Pi / 4, math.Pi / 2, math.Pi, 3 * math.Pi / 2,
		8192, -8192, 8193, 1e6, -3e7, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())})
	for _, c := range []struct {
		name string
		op   int
		f    func(float64) float64
	}{{"Sin", uSin, math.Sin}, {"Cos", uCos, math.Cos}} {
		got := make([]float32, len(xs))
		f32Unary(c.op, got, xs)
		for i, x := range xs {
			want := c.f(float64(x))
			g := float64(got[i])
			if math.IsNaN(want) {
				if !math.IsNaN(g) {
					t.Fatalf("%s(%g) = %g, want NaN", c.name, x, g)
				}
				continue
			}
			f := float32(math.Abs(want))
			ulp := float64(math.Nextafter32(f, 2)) - float64(f)
			if math.Abs(float64(x)) > 8192 {
				ulp = 0.5 * ulp // libm in double, rounded once
			}
			if math.Abs(g-want) > math.Max(2*ulp, 0x1p-24) {
				t.Fatalf("%s(%g) = %.9g, want %.9g", c.name, x, g, want)
			}
		}
	}
}

// TestArgRowsMatchesPositions: ArgMax/ArgMin over an axis with inner dims
// (argRows, by blocks of rows) pick the indices the per-position loop
// picks, ties (select_last_index both ways) and NaN included.
func TestArgRowsMatchesPositions(t *testing.T) {
	rng := rand.New(rand.NewSource(38))
	outer, k, inner := 3, 9, 2*argBlock+37
	s := make([]float32, outer*k*inner)
	for i := range s {
		if rng.Intn(30) == 0 {
			s[i] = float32(math.NaN())
		} else {
			s[i] = float32(rng.Intn(6))
		}
	}
	ctx := &opkernel.Ctx{Threads: 2}
	for _, isMax := range []bool{true, false} {
		for _, last := range []bool{true, false} {
			got, want := make([]int64, outer*inner), make([]int64, outer*inner)
			argRows(ctx, got, s, outer, k, inner, isMax, last)
			for oi := range want {
				o, j := oi/inner, oi%inner
				base := o*k*inner + j
				best, bv := 0, s[base]
				for i := 1; i < k; i++ {
					v := s[base+i*inner]
					better := v < bv || last && v == bv
					if isMax {
						better = v > bv || last && v == bv
					}
					if better {
						best, bv = i, v
					}
				}
				want[oi] = int64(best)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("isMax %v last %v: position %d got %d want %d", isMax, last, i, got[i], want[i])
				}
			}
		}
	}
}

// TestTanhExpAccuracy: the C Tanh (onnxruntime's rational form,
// gk_ort_tanh) is within 5.5 ulps of the float64 tanh for |x| >= 2^-118
// (5.46 at most over every positive float32, checked once in C: the worst
// are near saturation, x ~ 8.5) and within 2^-140 absolute below, where
// its alpha_1 x product is subnormal; the C Exp (gk_exp) within 1.02 ulps
// of the float64 exp over every float32 whose result is normal (1.013 at
// most, checked once in C) and within 1 ulp of the subnormal spacing
// below. A dense sample plus the edges (signed zeros, subnormals, the
// overflow and underflow thresholds, infinities, NaN), at every ISA
// level, with the same bits at each (fmaf is exact at every level).
func TestTanhExpAccuracy(t *testing.T) {
	defer cpuisa.Force(cpuisa.Detected())
	rng := rand.New(rand.NewSource(34))
	xs := make([]float32, 1<<18+7) // +7: the vector loops' masked tails
	for i := range xs {
		xs[i] = math.Float32frombits(rng.Uint32()) // every float32 pattern, NaNs included
	}
	for i := 0; i < len(xs)/4; i++ { // and dense over the interesting range
		xs[i] = float32((rng.Float64()*2 - 1) * 110)
	}
	edges := []float32{0, float32(math.Copysign(0, -1)), 1e-45, -1e-45, 1e-40, -1e-40, 1.1754942e-38, -1.1754942e-38,
		0x1p-118, -0x1p-118, 1e-7, 0.625, -0.625, 1, -1, 8.47, 9, -9, 9.01, 20, -20,
		88.72283, 88.72284, 88.8, 89, 100, -87.33654, -87.4, -100, -103.97, -104, -110, 1e30, -1e30,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}
	copy(xs, edges)
	ulpOf := func(v float64) float64 {
		f := float32(math.Abs(v))
		if f < 0x1p-126 {
			return 0x1p-149
		}
		return float64(math.Nextafter32(f, float32(math.Inf(1)))) - float64(f)
	}
	var first map[int][]float32
	for _, lv := range []cpuisa.Level{cpuisa.Portable, cpuisa.AVX2, cpuisa.AVX512} {
		if err := cpuisa.Force(lv); err != nil {
			continue
		}
		// Erf and Sigmoid: only compared across levels (their accuracy is
		// onnxruntime's: TestErfBitsOfOnnxruntime, the backend suites)
		got := map[int][]float32{}
		for _, op := range []int{uTanh, uExp, uErf, uSigmoid} {
			got[op] = make([]float32, len(xs))
			f32Unary(op, got[op], xs)
		}
		for i, x := range xs {
			xf := float64(x)
			if x != x {
				if g := got[uTanh][i]; g == g {
					t.Fatalf("%v: Tanh(NaN) = %g", lv, g)
				}
				if g := got[uExp][i]; g == g {
					t.Fatalf("%v: Exp(NaN) = %g", lv, g)
				}
				continue
			}
			wt, gt := math.Tanh(xf), float64(got[uTanh][i])
			tol := 5.5 * ulpOf(wt)
			if math.Abs(xf) < 0x1p-118 {
				tol = 0x1p-140
			}
			if math.Abs(gt-wt) > tol || math.Signbit(gt) != math.Signbit(wt) {
				t.Fatalf("%v: Tanh(%g) = %.9g, want %.9g (%.2f ulps)", lv, x, gt, wt, math.Abs(gt-wt)/ulpOf(wt))
			}
			we, ge := math.Exp(xf), float64(got[uExp][i])
			switch {
			case we > math.MaxFloat32:
				if !math.IsInf(ge, 1) {
					t.Fatalf("%v: Exp(%g) = %g, want +Inf", lv, x, ge)
				}
			case we < 0x1p-126 && math.Abs(ge-we) > 0x1p-149:
				t.Fatalf("%v: Exp(%g) = %g, want %g (subnormal)", lv, x, ge, we)
			case we >= 0x1p-126 && math.Abs(ge-we) > 1.02*ulpOf(we):
				t.Fatalf("%v: Exp(%g) = %.9g, want %.9g (%.2f ulps)", lv, x, ge, we, math.Abs(ge-we)/ulpOf(we))
			}
		}
		if first == nil {
			first = got
			continue
		}
		for op, g := range got {
			for i := range g {
				if math.Float32bits(g[i]) != math.Float32bits(first[op][i]) && g[i] == g[i] {
					t.Fatalf("%v: op %d of %g: %g, the first level gave %g", lv, op, xs[i], g[i], first[op][i])
				}
			}
		}
	}
}

// TestSoftmaxRowsSameAtEveryLevel: Softmax and LogSoftmax rows give the same
// bits at every ISA level (the AVX-512 sums on gk_exp16, AVX2's exps on
// gk_exp8 before the lane sums, the portable loops), for row lengths around
// the 16-lane blocks, with -inf entries and an all -inf row.
func TestSoftmaxRowsSameAtEveryLevel(t *testing.T) {
	defer cpuisa.Force(cpuisa.Detected())
	rng := rand.New(rand.NewSource(41))
	for _, n := range []int{1, 7, 15, 16, 17, 33, 100, 768, 1001} {
		rows := 5
		x := make([]float32, rows*n)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * 8)
			if rng.Intn(40) == 0 {
				x[i] = float32(math.Inf(-1))
			}
		}
		for j := 0; j < n; j++ {
			x[2*n+j] = float32(math.Inf(-1))
		}
		for _, logsm := range []bool{false, true} {
			var first []float32
			for _, lv := range []cpuisa.Level{cpuisa.Portable, cpuisa.AVX2, cpuisa.AVX512} {
				if err := cpuisa.Force(lv); err != nil {
					continue
				}
				d := make([]float32, len(x))
				f32SoftmaxRows(d, x, rows, n, logsm)
				if first == nil {
					first = d
					continue
				}
				for i := range d {
					if math.Float32bits(d[i]) != math.Float32bits(first[i]) && !(d[i] != d[i] && first[i] != first[i]) {
						t.Fatalf("n %d logsm %v %v: element %d = %g, portable %g", n, logsm, lv, i, d[i], first[i])
					}
				}
			}
		}
	}
}
