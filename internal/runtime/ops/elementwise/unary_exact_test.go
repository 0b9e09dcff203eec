package elementwise

import (
	"math"
	"math/rand"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/cpuisa"
	"gkconv/internal/runtime/opkernel"
)

// exactUnaryInputs: random values over many binades, the halves Round
// ties on, and the special values (±0, ±Inf, NaN, denormals, the
// thresholds of the piecewise ops).
func exactUnaryInputs() []float32 {
	rng := rand.New(rand.NewSource(11))
	var in []float32
	for _, v := range []float32{0, float32(math.Copysign(0, -1)), 1, -1, 0.5, -0.5, 1.5, 2.5, -2.5, 3, -3, 6, -6, 7,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1e-45, -1e-45, 1e-38, 3.4e38, -3.4e38,
		-2.5000002, 0.49999997, 8388607.5, -8388607.5} {
		in = append(in, v)
	}
	for len(in) < 8192 {
		e := rng.Intn(40) - 20
		v := float32(math.Ldexp(rng.Float64()*2-1, e))
		if rng.Intn(8) == 0 {
			v = float32(math.Round(float64(v)*4) / 4)
		}
		in = append(in, v)
	}
	return in
}

// TestExactUnaryMatchesGo: every op of the C exact-unary path gives
// floatUnary's bits (ortHardSigmoid's for HSigmoid, ortSoftsign's for
// Softsign) at every ISA level the
// CPU has, with default and unusual attributes.
func TestExactUnaryMatchesGo(t *testing.T) {
	if _, ok := exactUnaryF32(&ir.Node{Op: "Abs"}, 1<<20); !ok {
		t.Skip("built without cgo: no C path")
	}
	in := exactUnaryInputs()
	nodes := []*ir.Node{}
	for op := range exactUnaryCodes {
		nodes = append(nodes, &ir.Node{Op: op, Attrs: ir.Attrs{}})
	}
	nodes = append(nodes,
		&ir.Node{Op: "LeakyReLU", Attrs: ir.Attrs{"alpha": ir.FloatAttr(0.1)}},
		&ir.Node{Op: "LeakyReLU", Attrs: ir.Attrs{"alpha": ir.FloatAttr(1.0 / 3)}},
		&ir.Node{Op: "ThresholdedReLU", Attrs: ir.Attrs{"alpha": ir.FloatAttr(0.3)}},
		&ir.Node{Op: "HSigmoid", Attrs: ir.Attrs{"alpha": ir.FloatAttr(1.0 / 6), "beta": ir.FloatAttr(0.5)}})
	defer cpuisa.Force(cpuisa.Detected())
	for _, lv := range []cpuisa.Level{cpuisa.Portable, cpuisa.AVX2, cpuisa.AVX512} {
		if err := cpuisa.Force(lv); err != nil {
			t.Logf("%v: %v", lv, err)
			continue
		}
		for _, n := range nodes {
			var ref func(float32) float32
			if n.Op == "HSigmoid" {
				ref = ortHardSigmoid(float32(n.Attrs.Float("alpha", 0.2)), float32(n.Attrs.Float("beta", 0.5)))
			} else if n.Op == "Softsign" {
				ref = ortSoftsign
			} else {
				f := floatUnary[n.Op](n.Attrs)
				ref = func(x float32) float32 { return float32(f(float64(x))) }
			}
			c, _ := exactUnaryF32(n, len(in))
			out := make([]float32, len(in))
			c(out, in)
			for i, x := range in {
				want := ref(x)
				if math.Float32bits(out[i]) != math.Float32bits(want) && !(want != want && out[i] != out[i]) {
					t.Fatalf("%v %s%v(%g = %#x) = %g (%#x), Go %g (%#x)", lv, n.Op, n.Attrs, x, math.Float32bits(x),
						out[i], math.Float32bits(out[i]), want, math.Float32bits(want))
				}
			}
		}
	}
}

// TestCubeMatchesPow: Pow(x, 3) on the C path is arith's math.Pow bits.
func TestCubeMatchesPow(t *testing.T) {
	in := exactUnaryInputs()
	for i := 0; i < 2000; i++ { // also values whose cubes are subnormal or overflow
		in = append(in, float32(math.Ldexp(float64(in[i]), 30-i%90)))
	}
	out := make([]float32, len(in))
	if !cubeF32(&opkernel.Ctx{Threads: 1}, out, in) {
		t.Skip("built without cgo: no C path")
	}
	pow := floatArith[float32](opPow, false)
	for i, x := range in {
		w := pow(x, 3)
		if math.Float32bits(out[i]) != math.Float32bits(w) && !(w != w && out[i] != out[i]) {
			t.Fatalf("cube(%g = %#x) = %g (%#x), math.Pow %g (%#x)", x, math.Float32bits(x), out[i], math.Float32bits(out[i]), w, math.Float32bits(w))
		}
	}
}

// TestPReLUCMatchesGo: the C PReLU (full, scalar slope, per-row slope)
// gives arith's bits, NaN and -0 included.
func TestPReLUCMatchesGo(t *testing.T) {
	in := exactUnaryInputs()
	slopes := make([]float32, len(in))
	for i := range slopes {
		slopes[i] = in[(i*7+3)%len(in)]
	}
	ref := floatArith[float32](opPReLU, false)
	check := func(what string, got []float32, want func(i int) float32) {
		t.Helper()
		for i := range got {
			w := want(i)
			if math.Float32bits(got[i]) != math.Float32bits(w) && !(w != w && got[i] != got[i]) {
				t.Fatalf("%s: PReLU(%g, ·) at %d = %g, Go %g", what, in[i], i, got[i], w)
			}
		}
	}
	out := make([]float32, len(in))
	f32Binary(bPReLU, out, in, 1, slopes, 1)
	check("full", out, func(i int) float32 { return ref(in[i], slopes[i]) })
	f32Binary(bPReLU, out, in, 1, []float32{0.25}, 0)
	check("scalar slope", out, func(i int) float32 { return ref(in[i], 0.25) })
	rows, n := 64, len(in)/64
	f32BinaryRows(bPReLU, out, in, slopes[:rows], true, rows, n)
	check("per-row slope", out, func(i int) float32 { return ref(in[i], slopes[i/n]) })
}

// TestThresholdedReLUEdges: the C ThresholdedReLU's float compare against
// the least float above alpha gives float64(v) > alpha exactly, for alphas
// that are and are not float32 values, beyond float32's range, infinite and
// NaN, on inputs a few ulps around the threshold and the special values, at
// every ISA level.
func TestThresholdedReLUEdges(t *testing.T) {
	defer cpuisa.Force(cpuisa.Detected())
	alphas := []float64{0.3, 1, -2.5, 0, math.Copysign(0, -1), 1e39, -1e39, math.Inf(1), math.Inf(-1), math.NaN(),
		float64(math.MaxFloat32), 1e-46}
	for _, lv := range []cpuisa.Level{cpuisa.Portable, cpuisa.AVX2, cpuisa.AVX512} {
		if err := cpuisa.Force(lv); err != nil {
			continue
		}
		for _, a := range alphas {
			n := &ir.Node{Op: "ThresholdedReLU", Attrs: ir.Attrs{"alpha": ir.FloatAttr(a)}}
			var in []float32
			f := float32(a)
			for k := 0; k < 8; k++ {
				in = append(in, f, -f)
				f = math.Nextafter32(f, float32(math.Inf(1)))
			}
			f = float32(a)
			for k := 0; k < 8; k++ {
				f = math.Nextafter32(f, float32(math.Inf(-1)))
				in = append(in, f)
			}
			in = append(in, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 0, float32(math.Copysign(0, -1)),
				math.MaxFloat32, -math.MaxFloat32, 1e-45)
			for len(in) < 4*cMin {
				in = append(in, in...)
			}
			fn, ok := exactUnaryF32(n, len(in))
			if !ok {
				t.Skip("built without cgo: no C path")
			}
			out := make([]float32, len(in))
			fn(out, in)
			for i, v := range in {
				want := float32(0)
				if float64(v) > a {
					want = v
				}
				if math.Float32bits(out[i]) != math.Float32bits(want) {
					t.Fatalf("%v alpha %g: ThresholdedReLU(%g) = %g, want %g", lv, a, v, out[i], want)
				}
			}
		}
	}
}
