package elementwise

import (
	"math"
	"math/rand"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

func run(t *testing.T, op string, attrs ir.Attrs, in []*ir.Tensor, out ...*ir.Tensor) error {
	t.Helper()
	f, ok := opkernel.Lookup(op)
	if !ok {
		t.Fatalf("op %s not registered", op)
	}
	if attrs == nil {
		attrs = ir.Attrs{}
	}
	return f(&opkernel.Ctx{Threads: 3}, &ir.Node{Name: "n", Op: op, Attrs: attrs}, in, out)
}

func f32(shape []int64, v ...float32) *ir.Tensor { return ir.Float32Tensor(shape, v...) }
func i64(shape []int64, v ...int64) *ir.Tensor   { return ir.Int64Tensor(shape, v...) }
func i32(shape []int64, v ...int32) *ir.Tensor {
	t := ir.NewTensor(ir.Int32, shape)
	copy(t.I32(), v)
	return t
}
func boolT(shape []int64, v ...bool) *ir.Tensor {
	t := ir.NewTensor(ir.Bool, shape)
	for i, b := range v {
		t.Data[i] = b2u(b)
	}
	return t
}

func sh(d ...int64) []int64 { return d }

func wantF(t *testing.T, got *ir.Tensor, want []float64, tol float64) {
	t.Helper()
	g, err := got.Float64s()
	if err != nil {
		t.Fatal(err)
	}
	if len(g) != len(want) {
		t.Fatalf("got %d elements, want %d", len(g), len(want))
	}
	for i := range want {
		if math.IsNaN(want[i]) && math.IsNaN(g[i]) || g[i] == want[i] {
			continue
		}
		if math.Abs(g[i]-want[i]) > tol*(1+math.Abs(want[i])) {
			t.Fatalf("element %d = %v, want %v (all: %v)", i, g[i], want[i], g)
		}
	}
}

func TestBinaryTable(t *testing.T) {
	inf := math.Inf(1)
	cases := []struct {
		name  string
		op    string
		attrs ir.Attrs
		a, b  *ir.Tensor
		outDT ir.DType
		shape []int64
		want  []float64
	}{
		{"add same", "Add", nil, f32(sh(2, 2), 1, 2, 3, 4), f32(sh(2, 2), 10, 20, 30, 40), ir.Float32, sh(2, 2), []float64{11, 22, 33, 44}},
		{"add scalar", "Add", nil, f32(sh(3), 1, 2, 3), f32(nil, 0.5), ir.Float32, sh(3), []float64{1.5, 2.5, 3.5}},
		{"sub row", "Sub", nil, f32(sh(2, 3), 1, 2, 3, 4, 5, 6), f32(sh(3), 1, 1, 2), ir.Float32, sh(2, 3), []float64{0, 1, 1, 3, 4, 4}},
		{"mul col", "Mul", nil, f32(sh(2, 3), 1, 2, 3, 4, 5, 6), f32(sh(2, 1), 2, 3), ir.Float32, sh(2, 3), []float64{2, 4, 6, 12, 15, 18}},
		{"mul outer", "Mul", nil, f32(sh(3, 1), 1, 2, 3), f32(sh(1, 2), 10, 100), ir.Float32, sh(3, 2), []float64{10, 100, 20, 200, 30, 300}},
		{"div f32", "RealDiv", nil, f32(sh(3), 1, -1, 0), f32(nil, 0), ir.Float32, sh(3), []float64{inf, -inf, math.NaN()}},
		{"div int trunc", "RealDiv", nil, i32(sh(4), 7, -7, 7, 5), i32(sh(4), 2, 2, -2, 0), ir.Int32, sh(4), []float64{3, -3, -3, 0}},
		{"mod python", "Mod", nil, i64(sh(4), 7, -7, 7, -7), i64(sh(4), 3, 3, -3, -3), ir.Int64, sh(4), []float64{1, 2, -2, -1}},
		{"mod fmod int", "Mod", ir.Attrs{"fmod": ir.IntAttr(1)}, i64(sh(4), 7, -7, 7, -7), i64(sh(4), 3, 3, -3, -3), ir.Int64, sh(4), []float64{1, -1, 1, -1}},
		{"mod fmod f32", "Mod", ir.Attrs{"fmod": ir.IntAttr(1)}, f32(sh(2), 5.5, -5.5), f32(sh(2), 2, 2), ir.Float32, sh(2), []float64{1.5, -1.5}},
		{"pow f32", "Pow", nil, f32(sh(3), 2, 3, 4), f32(nil, 2), ir.Float32, sh(3), []float64{4, 9, 16}},
		{"pow f32 int exp", "Pow", nil, f32(sh(2), 2, 3), i64(sh(2), 3, -1), ir.Float32, sh(2), []float64{8, 1.0 / 3}},
		{"pow int float exp", "Pow", nil, i32(sh(3), 1, 2, 3), f32(sh(3), 4, 5, 0.5), ir.Int32, sh(3), []float64{1, 32, 1}},
		{"pow int int", "Pow", nil, i64(sh(3), 3, -2, 5), i64(sh(3), 3, 3, 0), ir.Int64, sh(3), []float64{27, -8, 1}},
		{"max nan", "Maximum", nil, f32(sh(2), 1, float32(math.NaN())), f32(sh(2), 2, 0), ir.Float32, sh(2), []float64{2, math.NaN()}},
		{"min int", "Minimum", nil, i32(sh(3), 1, 5, -3), i32(nil, 2), ir.Int32, sh(3), []float64{1, 2, -3}},
		{"prelu", "PReLU", nil, f32(sh(2, 2), -1, 2, -3, 4), f32(sh(2, 1), 0.5, 0.1), ir.Float32, sh(2, 2), []float64{-0.5, 2, -0.3, 4}},
		{"sqdiff", "SquaredDifference", nil, f32(sh(2), 1, 5), f32(sh(2), 4, 1), ir.Float32, sh(2), []float64{9, 16}},
		{"equal", "Equal", nil, i64(sh(3), 1, 2, 3), i64(nil, 2), ir.Bool, sh(3), []float64{0, 1, 0}},
		{"greater", "Greater", nil, f32(sh(3), 1, 2, 3), f32(nil, 2), ir.Bool, sh(3), []float64{0, 0, 1}},
		{"greaterequal", "GreaterEqual", nil, f32(sh(3), 1, 2, 3), f32(nil, 2), ir.Bool, sh(3), []float64{0, 1, 1}},
		{"less", "Less", nil, i32(sh(3), 1, 2, 3), i32(nil, 2), ir.Bool, sh(3), []float64{1, 0, 0}},
		{"lessequal", "LessEqual", nil, i32(sh(3), 1, 2, 3), i32(nil, 2), ir.Bool, sh(3), []float64{1, 1, 0}},
		{"and", "LogicalAnd", nil, boolT(sh(4), true, true, false, false), boolT(sh(4), true, false, true, false), ir.Bool, sh(4), []float64{1, 0, 0, 0}},
		{"or", "LogicalOr", nil, boolT(sh(4), true, true, false, false), boolT(sh(4), true, false, true, false), ir.Bool, sh(4), []float64{1, 1, 1, 0}},
		{"xor", "LogicalXor", nil, boolT(sh(2, 2), true, true, false, false), boolT(sh(2), true, false), ir.Bool, sh(2, 2), []float64{0, 1, 1, 0}},
		{"biasadd nchw", "BiasAdd", nil, f32(sh(1, 2, 2), 1, 1, 1, 1), f32(sh(2), 10, 20), ir.Float32, sh(1, 2, 2), []float64{11, 11, 21, 21}},
		{"biasadd nhwc", "BiasAdd", ir.Attrs{"format": ir.StringAttr("NHWC")}, f32(sh(1, 2, 2), 1, 1, 1, 1), f32(sh(2), 10, 20), ir.Float32, sh(1, 2, 2), []float64{11, 21, 11, 21}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := ir.NewTensor(c.outDT, c.shape)
			if err := run(t, c.op, c.attrs, []*ir.Tensor{c.a, c.b}, out); err != nil {
				t.Fatal(err)
			}
			wantF(t, out, c.want, 1e-6)
		})
	}
}

func TestVariadic(t *testing.T) {
	out := ir.NewTensor(ir.Float32, sh(2, 2))
	if err := run(t, "Mean", nil, []*ir.Tensor{f32(sh(2, 1), 1, 2), f32(sh(2), 3, 5), f32(nil, 2)}, out); err != nil {
		t.Fatal(err)
	}
	wantF(t, out, []float64{2, 8.0 / 3, 7.0 / 3, 3}, 1e-6)
	if err := run(t, "Maximum", nil, []*ir.Tensor{f32(sh(2), 1, 9)}, out); err != nil {
		t.Fatal(err)
	}
	wantF(t, out, []float64{1, 9, 1, 9}, 0)
	sum := ir.NewTensor(ir.Int64, sh(3))
	if err := run(t, "AddN", nil, []*ir.Tensor{i64(sh(3), 1, 2, 3), i64(nil, 10), i64(sh(3), 100, 200, 300)}, sum); err != nil {
		t.Fatal(err)
	}
	wantF(t, sum, []float64{111, 212, 313}, 0)
}

func TestSelectBroadcastTo(t *testing.T) {
	out := ir.NewTensor(ir.Int64, sh(2, 2))
	c := boolT(sh(2, 1), true, false)
	if err := run(t, "Select", nil, []*ir.Tensor{c, i64(sh(2), 1, 2), i64(nil, 9)}, out); err != nil {
		t.Fatal(err)
	}
	wantF(t, out, []float64{1, 2, 9, 9}, 0)
	b := ir.NewTensor(ir.Float32, sh(2, 3))
	if err := run(t, "BroadcastTo", nil, []*ir.Tensor{f32(sh(2, 1), 1, 2), i64(sh(2), 2, 3)}, b); err != nil {
		t.Fatal(err)
	}
	wantF(t, b, []float64{1, 1, 1, 2, 2, 2}, 0)
	if err := run(t, "BroadcastTo", nil, []*ir.Tensor{f32(sh(2), 1, 2), i64(sh(2), 2, 3)}, b); err == nil {
		t.Fatal("broadcasting [2] to [2,3] must fail")
	}
}

// TestBroadcastRandom checks the iterator against naive index arithmetic
// over many shape pairs, large enough to be split across threads.
func TestBroadcastRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for iter := 0; iter < 300; iter++ {
		rank := 1 + rng.Intn(4)
		out := make([]int64, rank)
		for i := range out {
			out[i] = int64(1 + rng.Intn(5))
			if rng.Intn(6) == 0 {
				out[i] = int64(20 + rng.Intn(60))
			}
		}
		mk := func() []int64 {
			r := rng.Intn(rank + 1)
			s := make([]int64, r)
			for i := range s {
				s[i] = out[rank-r+i]
				if rng.Intn(2) == 0 {
					s[i] = 1
				}
			}
			return s
		}
		as, bs := mk(), mk()
		a, b := ir.NewTensor(ir.Float32, as), ir.NewTensor(ir.Float32, bs)
		for i := range a.F32() {
			a.F32()[i] = float32(rng.Intn(100))
		}
		for i := range b.F32() {
			b.F32()[i] = float32(rng.Intn(100))
		}
		shape, err := broadcastShape(as, bs)
		if err != nil {
			t.Fatal(err)
		}
		o := ir.NewTensor(ir.Float32, shape)
		o64 := ir.NewTensor(ir.Float64, shape)
		a64, _ := castTensor(a, ir.Float64)
		b64, _ := castTensor(b, ir.Float64)
		if err := run(t, "Sub", nil, []*ir.Tensor{a, b}, o); err != nil {
			t.Fatal(err)
		}
		if err := run(t, "Sub", nil, []*ir.Tensor{a64, b64}, o64); err != nil {
			t.Fatal(err)
		}
		n := int(ir.NumElements(shape))
		idx := make([]int64, len(shape))
		at := func(s []int64, d []float32) float32 {
			off, st := 0, 1
			for i := len(s) - 1; i >= 0; i-- {
				j := idx[len(shape)-len(s)+i]
				if s[i] == 1 {
					j = 0
				}
				off += int(j) * st
				st *= int(s[i])
			}
			return d[off]
		}
		for p := 0; p < n; p++ {
			r := p
			for i := len(shape) - 1; i >= 0; i-- {
				idx[i] = int64(r) % shape[i]
				r /= int(shape[i])
			}
			want := at(as, a.F32()) - at(bs, b.F32())
			if o.F32()[p] != want || o64.F64()[p] != float64(want) {
				t.Fatalf("%v - %v: element %d = %v / %v, want %v", as, bs, p, o.F32()[p], o64.F64()[p], want)
			}
		}
	}
}

func TestUnaryTable(t *testing.T) {
	x := f32(sh(5), -2, -0.5, 0, 0.5, 2)
	cases := []struct {
		op    string
		attrs ir.Attrs
		f     func(float64) float64
	}{
		{"Abs", nil, math.Abs},
		{"ReLU", nil, func(v float64) float64 { return math.Max(v, 0) }},
		{"ReLU6", nil, func(v float64) float64 { return math.Min(math.Max(v, 0), 6) }},
		{"Sigmoid", nil, func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }},
		{"Tanh", nil, math.Tanh},
		{"Exp", nil, math.Exp},
		{"Erf", nil, math.Erf},
		{"GeLU", nil, func(v float64) float64 { return v * 0.5 * (1 + math.Erf(v/math.Sqrt2)) }},
		{"GeLU", ir.Attrs{"approximate": ir.StringAttr("tanh")}, func(v float64) float64 {
			return 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v)))
		}},
		{"LeakyReLU", ir.Attrs{"alpha": ir.FloatAttr(0.1)}, func(v float64) float64 { return math.Max(v, 0.1*v) }},
		{"Elu", nil, func(v float64) float64 { return map[bool]float64{true: v, false: math.Exp(v) - 1}[v >= 0] }},
		{"HSigmoid", nil, func(v float64) float64 { return math.Max(0, math.Min(1, 0.2*v+0.5)) }},
		{"HSwish", nil, func(v float64) float64 { return v * math.Max(0, math.Min(1, v/6+0.5)) }},
		{"Softplus", nil, func(v float64) float64 { return math.Log(1 + math.Exp(v)) }},
		{"Softsign", nil, func(v float64) float64 { return v / (1 + math.Abs(v)) }},
		{"Mish", nil, func(v float64) float64 { return v * math.Tanh(math.Log(1+math.Exp(v))) }},
		{"Round", nil, math.RoundToEven},
		{"Sign", nil, func(v float64) float64 {
			return map[bool]float64{true: 1, false: -1}[v > 0] * map[bool]float64{true: 0, false: 1}[v == 0]
		}},
		{"Square", nil, func(v float64) float64 { return v * v }},
		{"Neg", nil, func(v float64) float64 { return -v }},
		{"ThresholdedReLU", ir.Attrs{"alpha": ir.FloatAttr(0.4)}, func(v float64) float64 { return map[bool]float64{true: v, false: 0}[v > 0.4] }},
		{"CeLU", nil, func(v float64) float64 { return math.Max(0, v) + math.Min(0, math.Exp(v)-1) }},
		{"SeLU", nil, func(v float64) float64 {
			if v > 0 {
				return 1.0507009873554805 * v
			}
			return 1.0507009873554805 * 1.6732632423543772 * (math.Exp(v) - 1)
		}},
	}
	for _, c := range cases {
		t.Run(c.op, func(t *testing.T) {
			out := ir.NewTensor(ir.Float32, sh(5))
			if err := run(t, c.op, c.attrs, []*ir.Tensor{x}, out); err != nil {
				t.Fatal(err)
			}
			want := make([]float64, 5)
			for i, v := range x.F32() {
				want[i] = c.f(float64(v))
			}
			wantF(t, out, want, 1e-6)
		})
	}
	// Round is half to even.
	out := ir.NewTensor(ir.Float32, sh(4))
	if err := run(t, "Round", nil, []*ir.Tensor{f32(sh(4), 0.5, 1.5, 2.5, -2.5)}, out); err != nil {
		t.Fatal(err)
	}
	wantF(t, out, []float64{0, 2, 2, -2}, 0)
	// Integer Abs/Neg/Sign.
	oi := ir.NewTensor(ir.Int32, sh(3))
	if err := run(t, "Sign", nil, []*ir.Tensor{i32(sh(3), -5, 0, 7)}, oi); err != nil {
		t.Fatal(err)
	}
	wantF(t, oi, []float64{-1, 0, 1}, 0)
	if err := run(t, "Sin", nil, []*ir.Tensor{i32(sh(3), -5, 0, 7)}, oi); err == nil {
		t.Fatal("Sin on int32 should be unsupported")
	}
}

// TestFastUnaryAccuracy sweeps the C float32 kernels (long enough inputs to
// take the C path) against float64 math.
func TestFastUnaryAccuracy(t *testing.T) {
	const n = 20001
	x := ir.NewTensor(ir.Float32, sh(n))
	for i := range x.F32() {
		x.F32()[i] = float32(-30 + 60*float64(i)/float64(n-1))
	}
	x.F32()[0] = float32(math.Inf(-1))
	x.F32()[1] = -100
	x.F32()[n-1] = 100
	x.F32()[n-2] = float32(math.Inf(1))
	x.F32()[n/2] = 1e-6
	refs := map[string]func(float64) float64{
		"Sigmoid": sigmoid64, "Tanh": math.Tanh, "Exp": math.Exp, "Erf": math.Erf, "GeLU": gelu64, "ReLU": relu64,
	}
	for op, f := range refs {
		out := ir.NewTensor(ir.Float32, sh(n))
		if err := run(t, op, nil, []*ir.Tensor{x}, out); err != nil {
			t.Fatal(err)
		}
		for i, v := range x.F32() {
			want := f(float64(v))
			got := float64(out.F32()[i])
			if math.IsNaN(want) && math.IsNaN(got) {
				continue
			}
			if math.IsInf(want, 0) || want > math.MaxFloat32 {
				if got != math.Inf(1) && !(op == "Exp" && got > 1e38) {
					t.Fatalf("%s(%v) = %v, want %v", op, v, got, want)
				}
				continue
			}
			abs := 1e-7
			if op == "Sigmoid" {
				// onnxruntime's MLAS rational approximation, followed bit for bit
				// (TestSigmoidBitsOfOnnxruntime): p/q + 0.5 carries the absolute
				// rounding of numbers near 0.5 down to the tail
				abs = 2e-7
			}
			if math.IsNaN(got) || math.Abs(got-want) > 2e-6*math.Abs(want)+abs {
				t.Fatalf("%s(%v) = %v, want %v", op, v, got, want)
			}
		}
	}
	// Exp of NaN stays NaN.
	out := ir.NewTensor(ir.Float32, sh(100))
	nan := ir.NewTensor(ir.Float32, sh(100))
	for i := range nan.F32() {
		nan.F32()[i] = float32(math.NaN())
	}
	if err := run(t, "Exp", nil, []*ir.Tensor{nan}, out); err != nil || !math.IsNaN(float64(out.F32()[50])) {
		t.Fatalf("exp(NaN) = %v, %v", out.F32()[50], err)
	}
}

func TestHalf(t *testing.T) {
	a := ir.NewTensor(ir.Float16, sh(3))
	b := ir.NewTensor(ir.BFloat16, sh(3))
	for i, v := range []float32{1, 2.5, -3} {
		a.U16()[i] = ir.F32ToF16(v)
		b.U16()[i] = ir.F32ToBF16(v)
	}
	out := ir.NewTensor(ir.Float16, sh(3))
	if err := run(t, "Mul", nil, []*ir.Tensor{a, a}, out); err != nil {
		t.Fatal(err)
	}
	wantF(t, out, []float64{1, 6.25, 9}, 0)
	ob := ir.NewTensor(ir.BFloat16, sh(3))
	if err := run(t, "ReLU", nil, []*ir.Tensor{b}, ob); err != nil {
		t.Fatal(err)
	}
	wantF(t, ob, []float64{1, 2.5, 0}, 0)
}

func TestCast(t *testing.T) {
	cases := []struct {
		in   *ir.Tensor
		to   ir.DType
		want []float64
	}{
		{f32(sh(4), 1.7, -1.7, 300, float32(math.NaN())), ir.Int32, []float64{1, -1, 300, 0}},
		{f32(sh(3), 1.7, -200, 300), ir.Int8, []float64{1, -128, 127}},
		{f32(sh(3), 0, 0.1, -2), ir.Bool, []float64{0, 1, 1}},
		{i64(sh(2), -3, 1<<40), ir.Float64, []float64{-3, 1 << 40}},
		{f32(sh(2), 1.5, 65536), ir.Float16, []float64{1.5, math.Inf(1)}},
		{boolT(sh(2), true, false), ir.Float32, []float64{1, 0}},
		{i32(sh(2), 300, -1), ir.Uint8, []float64{44, 255}},
	}
	for _, c := range cases {
		out := ir.NewTensor(c.to, c.in.Shape)
		if err := run(t, "Cast", ir.Attrs{"to": ir.IntAttr(int64(c.to))}, []*ir.Tensor{c.in}, out); err != nil {
			t.Fatal(err)
		}
		wantF(t, out, c.want, 0)
	}
	s := ir.NewTensor(ir.String, sh(3))
	copy(s.Strings, []string{"1.5", "-INF", "NaN"})
	out := ir.NewTensor(ir.Float32, sh(3))
	if err := run(t, "Cast", ir.Attrs{"to": ir.IntAttr(int64(ir.Float32))}, []*ir.Tensor{s}, out); err != nil {
		t.Fatal(err)
	}
	wantF(t, out, []float64{1.5, math.Inf(-1), math.NaN()}, 0)
}

func TestClip(t *testing.T) {
	out := ir.NewTensor(ir.Float32, sh(4))
	if err := run(t, "Clip", nil, []*ir.Tensor{f32(sh(4), -5, 0, 3, 9), f32(nil, -1), f32(nil, 4)}, out); err != nil {
		t.Fatal(err)
	}
	wantF(t, out, []float64{-1, 0, 3, 4}, 0)
	if err := run(t, "Clip", nil, []*ir.Tensor{f32(sh(4), -5, 0, 3, 9), nil, f32(nil, 4)}, out); err != nil {
		t.Fatal(err)
	}
	wantF(t, out, []float64{-5, 0, 3, 4}, 0)
	oi := ir.NewTensor(ir.Int64, sh(3))
	if err := run(t, "Clip", nil, []*ir.Tensor{i64(sh(3), -5, 2, 9), i64(nil, 0)}, oi); err != nil {
		t.Fatal(err)
	}
	wantF(t, oi, []float64{0, 2, 9}, 0)
}

func TestPredicates(t *testing.T) {
	x := f32(sh(4), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1)
	out := ir.NewTensor(ir.Bool, sh(4))
	if err := run(t, "IsInf", ir.Attrs{"detect_negative": ir.IntAttr(0)}, []*ir.Tensor{x}, out); err != nil {
		t.Fatal(err)
	}
	wantF(t, out, []float64{1, 0, 0, 0}, 0)
	if err := run(t, "IsNan", nil, []*ir.Tensor{x}, out); err != nil {
		t.Fatal(err)
	}
	wantF(t, out, []float64{0, 0, 1, 0}, 0)
	if err := run(t, "LogicalNot", nil, []*ir.Tensor{boolT(sh(4), true, false, true, true)}, out); err != nil {
		t.Fatal(err)
	}
	wantF(t, out, []float64{0, 1, 0, 0}, 0)
}

func TestDropoutIdentity(t *testing.T) {
	y, mask := ir.NewTensor(ir.Float32, sh(2)), ir.NewTensor(ir.Bool, sh(2))
	if err := run(t, "Dropout", nil, []*ir.Tensor{f32(sh(2), 3, 4)}, y, mask); err != nil {
		t.Fatal(err)
	}
	wantF(t, y, []float64{3, 4}, 0)
	wantF(t, mask, []float64{1, 1}, 0)
}

// naiveReduce reduces x over the marked axes in float64 (sum or max).
func naiveReduce(x []float32, shape []int64, red []bool, isMax bool) []float64 {
	var outShape []int64
	for i, d := range shape {
		if !red[i] {
			outShape = append(outShape, d)
		}
	}
	out := make([]float64, ir.NumElements(outShape))
	if isMax {
		for i := range out {
			out[i] = math.Inf(-1)
		}
	}
	idx := make([]int64, len(shape))
	for p := range x {
		r := p
		for i := len(shape) - 1; i >= 0; i-- {
			idx[i] = int64(r) % shape[i]
			r /= int(shape[i])
		}
		o, st := 0, 1
		for i := len(shape) - 1; i >= 0; i-- {
			if !red[i] {
				o += int(idx[i]) * st
				st *= int(shape[i])
			}
		}
		if isMax {
			out[o] = math.Max(out[o], float64(x[p]))
		} else {
			out[o] += float64(x[p])
		}
	}
	return out
}

func TestReduceRandomAxes(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	shape := sh(3, 4, 5, 70)
	x := ir.NewTensor(ir.Float32, shape)
	for i := range x.F32() {
		x.F32()[i] = rng.Float32()*2 - 1
	}
	for mask := 0; mask < 16; mask++ {
		red := make([]bool, 4)
		var axes []int64
		var outShape []int64
		for i := range red {
			red[i] = mask&(1<<i) != 0
			if red[i] {
				axes = append(axes, int64(i)-4) // negative axes
				outShape = append(outShape, 1)
			} else {
				outShape = append(outShape, shape[i])
			}
		}
		for _, op := range []string{"ReduceSum", "ReduceMax", "ReduceMean"} {
			out := ir.NewTensor(ir.Float32, outShape)
			var in []*ir.Tensor
			if len(axes) > 0 {
				in = []*ir.Tensor{x, i64(sh(int64(len(axes))), axes...)}
			} else {
				in = []*ir.Tensor{x}
				for i := range red {
					red[i] = true
				}
				for i := range outShape {
					outShape[i] = 1
				}
				out = ir.NewTensor(ir.Float32, outShape)
			}
			if err := run(t, op, nil, in, out); err != nil {
				t.Fatal(err)
			}
			want := naiveReduce(x.F32(), shape, red, op == "ReduceMax")
			if op == "ReduceMean" {
				cnt := float64(x.NumElements()) / float64(len(want))
				for i := range want {
					want[i] /= cnt
				}
			}
			wantF(t, out, want, 1e-5)
		}
	}
}

func TestReduceEdge(t *testing.T) {
	empty := ir.NewTensor(ir.Float32, sh(2, 0))
	for op, want := range map[string]float64{"ReduceSum": 0, "ReduceProd": 1, "ReduceMax": math.Inf(-1),
		"ReduceMin": math.Inf(1), "ReduceLogSumExp": math.Inf(-1), "ReduceL2": 0} {
		out := ir.NewTensor(ir.Float32, sh(2, 1))
		if err := run(t, op, nil, []*ir.Tensor{empty, i64(sh(1), 1)}, out); err != nil {
			t.Fatal(err)
		}
		wantF(t, out, []float64{want, want}, 0)
	}
	// noop_with_empty_axes copies.
	x := f32(sh(2), 3, 4)
	out := ir.NewTensor(ir.Float32, sh(2))
	if err := run(t, "ReduceSum", ir.Attrs{"noop_with_empty_axes": ir.IntAttr(1)}, []*ir.Tensor{x}, out); err != nil {
		t.Fatal(err)
	}
	wantF(t, out, []float64{3, 4}, 0)
	// Integer reductions and the float64-computed ones.
	xi := i32(sh(2, 3), 1, -2, 3, 4, 5, -6)
	for op, want := range map[string][]float64{"ReduceSum": {2, 3}, "ReduceProd": {-6, -120}, "ReduceMax": {3, 5},
		"ReduceL1": {6, 15}, "ReduceSumSquare": {14, 77}, "ReduceMin": {-2, -6}} {
		oi := ir.NewTensor(ir.Int32, sh(2))
		if err := run(t, op, ir.Attrs{"keepdims": ir.IntAttr(0)}, []*ir.Tensor{xi, i64(sh(1), -1)}, oi); err != nil {
			t.Fatal(err)
		}
		wantF(t, oi, want, 0)
	}
	xf := f32(sh(2, 2), 1, 2, 3, 4)
	for op, want := range map[string][]float64{
		"ReduceLogSumExp": {math.Log(math.E + math.Exp(2)), math.Log(math.Exp(3) + math.Exp(4))},
		"ReduceLogSum":    {math.Log(3), math.Log(7)}, "ReduceL2": {math.Sqrt(5), 5}} {
		o := ir.NewTensor(ir.Float32, sh(2, 1))
		if err := run(t, op, nil, []*ir.Tensor{xf, i64(sh(1), 1)}, o); err != nil {
			t.Fatal(err)
		}
		wantF(t, o, want, 1e-6)
	}
}

func TestReduceSumAccuracy(t *testing.T) {
	// 1 + 1e7 ones of 1e-3 each: naive float32 accumulation drifts badly.
	const n = 1 << 22
	x := ir.NewTensor(ir.Float32, sh(n))
	for i := range x.F32() {
		x.F32()[i] = 0.1
	}
	out := ir.NewTensor(ir.Float32, nil)
	if err := run(t, "ReduceSum", nil, []*ir.Tensor{x}, out); err != nil {
		t.Fatal(err)
	}
	want := float64(float32(0.1)) * n
	if math.Abs(float64(out.F32()[0])-want) > 1e-6*want {
		t.Fatalf("sum = %v, want %v", out.F32()[0], want)
	}
}

func TestArg(t *testing.T) {
	x := f32(sh(2, 3), 1, 5, 5, 7, 0, 7)
	for _, c := range []struct {
		op    string
		attrs ir.Attrs
		shape []int64
		want  []float64
	}{
		{"Argmax", ir.Attrs{"axis": ir.IntAttr(1)}, sh(2, 1), []float64{1, 0}},
		{"Argmax", ir.Attrs{"axis": ir.IntAttr(1), "select_last_index": ir.IntAttr(1)}, sh(2, 1), []float64{2, 2}},
		{"Argmin", ir.Attrs{"axis": ir.IntAttr(0), "keepdims": ir.IntAttr(0)}, sh(3), []float64{0, 1, 0}},
		{"Argmin", ir.Attrs{"axis": ir.IntAttr(-1)}, sh(2, 1), []float64{0, 1}},
	} {
		out := ir.NewTensor(ir.Int64, c.shape)
		if err := run(t, c.op, c.attrs, []*ir.Tensor{x}, out); err != nil {
			t.Fatal(err)
		}
		wantF(t, out, c.want, 0)
	}
}

func TestSoftmax(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, shape := range [][]int64{{3, 1000}, {2, 7, 3}, {4, 17}} {
		x := ir.NewTensor(ir.Float32, shape)
		for i := range x.F32() {
			x.F32()[i] = rng.Float32()*40 - 20
		}
		for _, axis := range []int64{-1, 1} {
			for _, logsm := range []bool{false, true} {
				op := "Softmax"
				if logsm {
					op = "LogSoftmax"
				}
				out := ir.NewTensor(ir.Float32, shape)
				if err := run(t, op, ir.Attrs{"axis": ir.IntAttr(axis)}, []*ir.Tensor{x}, out); err != nil {
					t.Fatal(err)
				}
				ax, _ := normAxis(&ir.Node{}, axis, len(shape))
				outer, k, inner := split3(shape, ax)
				want := make([]float64, len(x.F32()))
				x64, _ := castTensor(x, ir.Float64)
				softmaxGeneric(nil, want, x64.F64(), outer, k, inner, logsm)
				wantF(t, out, want, 1e-5)
			}
		}
	}
	// Stability: huge logits do not overflow.
	out := ir.NewTensor(ir.Float32, sh(3))
	if err := run(t, "Softmax", nil, []*ir.Tensor{f32(sh(3), 1000, 1000, -1000)}, out); err != nil {
		t.Fatal(err)
	}
	wantF(t, out, []float64{0.5, 0.5, 0}, 1e-6)
}

func TestCumSum(t *testing.T) {
	x := f32(sh(2, 3), 1, 2, 3, 4, 5, 6)
	for _, c := range []struct {
		attrs ir.Attrs
		axis  int64
		want  []float64
	}{
		{nil, 1, []float64{1, 3, 6, 4, 9, 15}},
		{nil, 0, []float64{1, 2, 3, 5, 7, 9}},
		{ir.Attrs{"exclusive": ir.IntAttr(1)}, -1, []float64{0, 1, 3, 0, 4, 9}},
		{ir.Attrs{"reverse": ir.IntAttr(1)}, 1, []float64{6, 5, 3, 15, 11, 6}},
		{ir.Attrs{"reverse": ir.IntAttr(1), "exclusive": ir.IntAttr(1)}, 1, []float64{5, 3, 0, 11, 6, 0}},
	} {
		out := ir.NewTensor(ir.Float32, sh(2, 3))
		if err := run(t, "CumSum", c.attrs, []*ir.Tensor{x, i32(nil, int32(c.axis))}, out); err != nil {
			t.Fatal(err)
		}
		wantF(t, out, c.want, 0)
	}
}

func TestErrors(t *testing.T) {
	out := ir.NewTensor(ir.Float32, sh(3))
	if err := run(t, "Add", nil, []*ir.Tensor{f32(sh(3), 1, 2, 3), f32(sh(2), 1, 2)}, out); err == nil {
		t.Fatal("incompatible shapes must fail")
	}
	if err := run(t, "Add", nil, []*ir.Tensor{f32(sh(3), 1, 2, 3)}, out); err == nil {
		t.Fatal("missing input must fail")
	}
	if err := run(t, "Add", nil, []*ir.Tensor{f32(sh(3), 1, 2, 3), i64(sh(3), 1, 2, 3)}, out); err == nil {
		t.Fatal("mixed dtypes must fail")
	}
}

// TestMulRowsBroadcast checks the [rows, n] x [rows, 1] fast path (both
// operand orders, planes below and above the C threshold, Sub for order)
// against the element-by-element definition.
func TestMulRowsBroadcast(t *testing.T) {
	for _, hw := range []int64{1, 7, 49, 100} {
		for _, op := range []string{"Mul", "Sub"} {
			for _, fullFirst := range []bool{true, false} {
				c := int64(5)
				x := randF32(2, c, hw)
				s := randF32(2, c, 1)
				a, b := x, s
				if !fullFirst {
					a, b = s, x
				}
				out := &ir.Tensor{DType: ir.Float32, Shape: []int64{2, c, hw}, Data: make([]byte, 4*2*c*hw)}
				if err := run(t, op, nil, []*ir.Tensor{a, b}, out); err != nil {
					t.Fatal(err)
				}
				xf, sf, of := x.F32(), s.F32(), out.F32()
				for i := range of {
					u, v := xf[i], sf[i/int(hw)]
					if !fullFirst {
						u, v = v, u
					}
					want := u * v
					if op == "Sub" {
						want = u - v
					}
					if of[i] != want {
						t.Fatalf("%s hw=%d fullFirst=%v: out[%d] = %v, want %v", op, hw, fullFirst, i, of[i], want)
					}
				}
			}
		}
	}
}
