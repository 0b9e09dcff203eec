package nn

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
	_ "gkconv/internal/runtime/ops/elementwise" // Sigmoid, Tanh, HSwish, Mul, Add
)

// TestConvEpilogueActivations runs Conv2D with activation_type SIGMOID,
// TANH, HSWISH and SWISH, with and without a residual, on every convolution
// path and compares with the plain conv followed by the op library's Add,
// Sigmoid, Tanh, HSwish, and Mul(y, Sigmoid(y)) for SWISH.
func TestConvEpilogueActivations(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	acts := map[int64]string{ir.ActSigmoid: "Sigmoid", ir.ActTanh: "Tanh", ir.ActHSwish: "HSwish", ir.ActSwish: "SiLU"}
	for _, c := range convEpilogueCases {
		if (c.mode == packSlivers || c.mode == packStem) && !convGEMMAvailable.Load() {
			t.Logf("%s: no AVX2, not tested", c.name)
			continue
		}
		for _, act := range []int64{ir.ActSigmoid, ir.ActTanh, ir.ActHSwish, ir.ActSwish} {
			for _, resid := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/residual=%v", c.name, acts[act], resid), func(t *testing.T) {
					convEpilogueLibCase(t, rng, c.mode, c.cin, c.cout, c.grp, c.k, c.hw, c.bias, act, resid)
				})
			}
		}
	}
}

// runLib runs the op library's kernel of op on in.
func runLib(t *testing.T, op string, in ...*ir.Tensor) *ir.Tensor {
	t.Helper()
	f, ok := opkernel.Lookup(op)
	if !ok {
		t.Fatalf("no %s kernel", op)
	}
	n := &ir.Node{Name: op, Op: op}
	for i := range in {
		n.Inputs = append(n.Inputs, &ir.Value{Name: fmt.Sprint("in", i), DType: ir.Float32, Shape: in[i].Shape})
	}
	out := ir.NewTensor(ir.Float32, in[0].Shape)
	n.Outputs = []*ir.Value{{Name: "out", DType: ir.Float32, Shape: out.Shape}}
	if err := f(&opkernel.Ctx{Threads: 1}, n, in, []*ir.Tensor{out}); err != nil {
		t.Fatal(err)
	}
	return out
}

func convEpilogueLibCase(t *testing.T, rng *rand.Rand, mode int32, cin, cout, grp int, k, hw int64, bias bool, act int64, resid bool) {
	packedConvMode.Store(mode)
	defer packedConvMode.Store(0)
	pad := (k - 1) / 2
	x := randTensor(rng, 2, int64(cin), hw, hw)
	for i := range x.F32() {
		x.F32()[i] *= 6 // outputs well past the saturation of sigmoid, tanh and hswish
	}
	w := randTensor(rng, int64(cout), int64(cin/grp), k, k)
	out := hw + 2*pad - k + 1
	var b *ir.Tensor
	if bias {
		b = randTensor(rng, int64(cout))
	}
	attrs := ir.Attrs{"group": ir.IntAttr(int64(grp)), "pads": ir.IntsAttr(pad, pad, pad, pad)}
	fa := attrs.Clone()
	fa[ir.AttrActivation] = ir.IntAttr(act)
	n := constConvNode(fa, w)
	in := []*ir.Tensor{x, w, b}
	var z *ir.Tensor
	if resid {
		z = randTensor(rng, 2, int64(cout), out, out)
		for i := range z.F32() {
			z.F32()[i] *= 8
		}
		n.Inputs = append(n.Inputs, &ir.Value{Name: "z"})
		in = append(in, z)
	}
	worst := 0.0
	// 1 thread gives a kernel call all planes at once, 2 split them; the
	// plain conv runs on as many (the GEMM's sums depend on them)
	for _, threads := range []int{1, 2} {
		plain := ir.NewTensor(ir.Float32, []int64{2, int64(cout), out, out})
		if err := conv(&opkernel.Ctx{Threads: threads}, constConvNode(attrs, w), []*ir.Tensor{x, w, b}, []*ir.Tensor{plain}); err != nil {
			t.Fatal(err)
		}
		want := plain
		if resid {
			want = runLib(t, "Add", plain, z)
		}
		switch act {
		case ir.ActSigmoid:
			want = runLib(t, "Sigmoid", want)
		case ir.ActTanh:
			want = runLib(t, "Tanh", want)
		case ir.ActHSwish:
			want = runLib(t, "HSwish", want)
		case ir.ActSwish:
			want = runLib(t, "Mul", want, runLib(t, "Sigmoid", want))
		}
		fused := ir.NewTensor(ir.Float32, plain.Shape)
		for i := range fused.F32() {
			fused.F32()[i] = float32(math.NaN())
		}
		if err := conv(&opkernel.Ctx{Threads: threads}, n, in, []*ir.Tensor{fused}); err != nil {
			t.Fatal(err)
		}
		for i, wv := range want.F32() {
			got := float64(fused.F32()[i])
			d := math.Abs(got - float64(wv))
			if d > 1e-6*math.Abs(float64(wv))+1e-37 || math.IsNaN(got) {
				t.Fatalf("%d threads: element %d: fused %g, conv then the op library %g", threads, i, got, wv)
			}
			worst = max(worst, d/max(math.Abs(float64(wv)), 1e-30))
		}
	}
	if testing.Verbose() && resid {
		t.Logf("worst relative difference %.3g", worst)
	}
}

// TestEpiRowsExtremes checks the epilogue's activations against float64 at
// the edges: zero, tiny, large and huge magnitudes, infinities and NaN
// (below exp's range, e.g. SWISH(-89) = -2e-37, 0 is accepted).
func TestEpiRowsExtremes(t *testing.T) {
	xs := []float32{0, float32(math.Copysign(0, -1)), 1e-30, -1e-30, 1e-6, -1e-6, 0.3, -0.3, 0.62, 0.63, -0.63, 1, -1, 3, -3, 9, -9,
		20, -20, 40, -40, 87, -87, 88.7, -88.7, 89, -89, 100, -100, 1e30, -1e30, float32(math.Inf(1)), float32(math.Inf(-1))}
	ref := map[int64]func(float64) float64{
		ir.ActSigmoid: func(v float64) float64 { return 1 / (1 + math.Exp(-v)) },
		ir.ActTanh:    math.Tanh,
		ir.ActHSwish:  func(v float64) float64 { return v * math.Min(math.Max(v+3, 0), 6) / 6 },
		ir.ActSwish: func(v float64) float64 {
			if math.IsInf(v, -1) {
				return math.NaN() // -inf * sigmoid(-inf) = -inf * 0
			}
			return v / (1 + math.Exp(-v))
		},
	}
	for act, f := range ref {
		y := append([]float32(nil), xs...)
		y = append(y, float32(math.NaN()))
		epiRows(y, nil, 1, len(y), len(y), act)
		if !math.IsNaN(float64(y[len(y)-1])) {
			t.Errorf("act %d: NaN gave %g", act, y[len(y)-1])
		}
		for i, x := range xs {
			want := float32(f(float64(x)))
			got := y[i]
			if math.IsNaN(float64(want)) && math.IsNaN(float64(got)) {
				continue
			}
			if d := math.Abs(float64(got) - float64(want)); d > 3e-7*math.Abs(float64(want))+logisticAbsErr(act, x) {
				t.Errorf("act %d: x = %g: got %g, want %g", act, x, got, want)
			}
		}
	}
}

// logisticAbsErr is the absolute error of onnxruntime's logistic, which the
// epilogue follows bit for bit (MLAS's p/q + 0.5 rounds near 0.5, so the
// tail below sigmoid ~1e-7 is off by up to that much, and 0 beyond -18);
// swish multiplies it by |x|.
func logisticAbsErr(act int64, x float32) float64 {
	switch act {
	case ir.ActSigmoid:
		return 2e-7
	case ir.ActSwish:
		if math.IsInf(float64(x), 0) {
			return 0
		}
		return 2e-7 * math.Abs(float64(x))
	}
	return 1e-35
}

// TestLogisticRowsAccuracy checks sigmoid and swish over a dense range of
// inputs (lengths that leave a masked tail) against float64.
func TestLogisticRowsAccuracy(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	xs := make([]float32, 40000+13)
	for i := range xs {
		switch i % 3 {
		case 0:
			xs[i] = rng.Float32()*60 - 30
		case 1:
			xs[i] = rng.Float32()*4 - 2
		default:
			xs[i] = float32(rng.NormFloat64() * 40)
		}
	}
	for _, act := range []int64{ir.ActSigmoid, ir.ActSwish} {
		y := append([]float32(nil), xs...)
		epiRows(y, nil, 1, len(y), len(y), act)
		worst := 0.0
		for i, x := range xs {
			s := 1 / (1 + math.Exp(-float64(x)))
			if act == ir.ActSwish {
				s *= float64(x)
			}
			want := float64(float32(s))
			d := math.Abs(float64(y[i]) - want)
			if d > 3e-7*math.Abs(want)+logisticAbsErr(act, x) {
				t.Fatalf("act %d: x = %g: got %g, want %g", act, x, y[i], want)
			}
			if math.Abs(want) > 1e-30 {
				worst = max(worst, d/math.Abs(want))
			}
		}
		t.Logf("act %d: worst relative error %.3g", act, worst)
	}
}

// BenchmarkEpiRowsSwish times the SiLU epilogue on 64K floats (in L2).
func BenchmarkEpiRowsSwish(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	y := make([]float32, 1<<16)
	for i := range y {
		y[i] = rng.Float32()*16 - 8
	}
	b.SetBytes(int64(8 * len(y)))
	for b.Loop() {
		epiRows(y, nil, 1, len(y), len(y), ir.ActSwish)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(y)), "ns/elem")
}
