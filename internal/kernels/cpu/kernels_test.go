package cpu

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/testkit"
)

func keep(k int64) ir.Attrs { return ir.Attrs{"keepdims": ir.IntAttr(k)} }

func TestAffine(t *testing.T) {
	b := testkit.New(t, "affine")
	x := b.Input("", 1000, 37)
	y := b.Op("Add", nil, b.Op("Mul", nil, x, b.Scalar(2)), b.Scalar(1))
	n := b.GraphKernel("affine", y)
	build(t, t.TempDir(), n)
	in := randTensor(rand.New(rand.NewSource(1)), x.Shape, -1, 1)
	for _, threads := range []int{1, 2} {
		out := runKernel(t, n, threads, in)
		want := make([]float64, len(in.F32()))
		for i, v := range in.F32() {
			want[i] = float64(v)*2 + 1
		}
		checkClose(t, "y", out[0].F32(), want, 1e-6)
	}
}

func TestPowChain(t *testing.T) {
	// ((x*2)^3 - y) * (x*2)^3: the cube is computed once, in a register.
	b := testkit.New(t, "powchain")
	x := b.Input("", 17, 33)
	y := b.Input("", 17, 33)
	c := b.Op("Pow", nil, b.Op("Mul", nil, x, b.Scalar(2)), b.Scalar(3))
	out := b.Op("Mul", nil, b.Op("Sub", nil, c, y), c)
	n := b.GraphKernel("powchain", out)
	build(t, t.TempDir(), n)
	r := rand.New(rand.NewSource(2))
	xi, yi := randTensor(r, x.Shape, -2, 2), randTensor(r, y.Shape, -2, 2)
	got := runKernel(t, n, 1, xi, yi)
	want := make([]float64, len(xi.F32()))
	scale := make([]float64, len(want))
	for i := range want {
		c := math.Pow(float64(xi.F32()[i])*2, 3)
		want[i] = (c - float64(yi.F32()[i])) * c
		scale[i] = math.Abs(c) * (math.Abs(c) + math.Abs(float64(yi.F32()[i])))
	}
	checkClose(t, "out", got[0].F32(), want, 1e-5, scale...)
}

func TestBroadcastAdd(t *testing.T) {
	b := testkit.New(t, "bcast")
	x := b.Input("", 4, 1, 8)
	y := b.Input("", 8)
	z := b.Input("", 3, 1)
	s := b.Op("Add", nil, x, y)                      // [4,1,8]
	u := b.Op("Mul", nil, b.Op("Add", nil, x, z), y) // [4,3,8]
	n := b.GraphKernel("bcast", s, u)
	build(t, t.TempDir(), n)
	r := rand.New(rand.NewSource(3))
	xi, yi, zi := randTensor(r, x.Shape, -1, 1), randTensor(r, y.Shape, -1, 1), randTensor(r, z.Shape, -1, 1)
	got := runKernel(t, n, 1, xi, yi, zi)
	var ws, wu []float64
	for i := 0; i < 4; i++ {
		for k := 0; k < 8; k++ {
			ws = append(ws, float64(xi.F32()[i*8+k])+float64(yi.F32()[k]))
		}
	}
	for i := 0; i < 4; i++ {
		for j := 0; j < 3; j++ {
			for k := 0; k < 8; k++ {
				wu = append(wu, (float64(xi.F32()[i*8+k])+float64(zi.F32()[j]))*float64(yi.F32()[k]))
			}
		}
	}
	checkClose(t, "x+y", got[0].F32(), ws, 1e-6)
	checkClose(t, "(x+z)*y", got[1].F32(), wu, 1e-6)
}

// layerNormBody is MindSpore's LayerNorm expansion over the last axis.
func layerNormBody(t testing.TB, rows, cols int64) *ir.Node {
	b := testkit.New(t, "layernorm")
	x := b.Input("", rows, cols)
	gamma := b.Input("", cols)
	beta := b.Input("", cols)
	mean := b.Op("ReduceMean", keep(1), x, b.Ints(-1))
	d := b.Op("Sub", nil, x, mean)
	v := b.Op("ReduceMean", keep(1), b.Op("Mul", nil, d, d), b.Ints(-1))
	rs := b.Op("Rsqrt", nil, b.Op("Add", nil, v, b.Scalar(1e-5)))
	y := b.Op("Add", nil, b.Op("Mul", nil, b.Op("Mul", nil, d, rs), gamma), beta)
	return b.GraphKernel("layernorm", y, mean)
}

func layerNormRef(x, gamma, beta []float32, rows, cols int) (y, mean []float64) {
	for r := 0; r < rows; r++ {
		row := x[r*cols : (r+1)*cols]
		var m float64
		for _, v := range row {
			m += float64(v)
		}
		m /= float64(cols)
		var s float64
		for _, v := range row {
			s += (float64(v) - m) * (float64(v) - m)
		}
		inv := 1 / math.Sqrt(s/float64(cols)+float64(float32(1e-5)))
		for c, v := range row {
			y = append(y, (float64(v)-m)*inv*float64(gamma[c])+float64(beta[c]))
		}
		mean = append(mean, m)
	}
	return y, mean
}

func TestLayerNorm(t *testing.T) {
	n := layerNormBody(t, 64, 768)
	build(t, t.TempDir(), n)
	src := n.Attrs.String(ir.GKKernelSource, "")
	if !contains(src, "row-wise") {
		t.Errorf("LayerNorm did not use the row-wise strategy:\n%s", src)
	}
	r := rand.New(rand.NewSource(4))
	x := randTensor(r, []int64{64, 768}, -3, 5) // offset mean: catches naive variance
	g, be := randTensor(r, []int64{768}, 0.5, 1.5), randTensor(r, []int64{768}, -1, 1)
	wy, wm := layerNormRef(x.F32(), g.F32(), be.F32(), 64, 768)
	for _, threads := range []int{1, 2} {
		got := runKernel(t, n, threads, x, g, be)
		checkClose(t, "y", got[0].F32(), wy, 1e-5, 1) // y = n*gamma + beta: terms of size 1
		checkClose(t, "mean", got[1].F32(), wm, 1e-5)
	}
}

func softmaxBody(t testing.TB, rows, cols int64) *ir.Node {
	b := testkit.New(t, "softmax")
	x := b.Input("", rows, cols)
	m := b.Op("ReduceMax", keep(1), x, b.Ints(-1))
	e := b.Op("Exp", nil, b.Op("Sub", nil, x, m))
	s := b.Op("ReduceSum", keep(1), e, b.Ints(-1))
	// the CPU expander's form: e scaled by 1/s, as onnxruntime's softmax
	return b.GraphKernel("softmax", b.Op("Mul", nil, e, b.Op("RealDiv", nil, b.Scalar(1), s)))
}

func softmaxRef(x []float32, rows, cols int) []float64 {
	var out []float64
	for r := 0; r < rows; r++ {
		row := x[r*cols : (r+1)*cols]
		m := math.Inf(-1)
		for _, v := range row {
			m = math.Max(m, float64(v))
		}
		var s float64
		for _, v := range row {
			s += math.Exp(float64(v) - m)
		}
		for _, v := range row {
			out = append(out, math.Exp(float64(v)-m)/s)
		}
	}
	return out
}

func TestSoftmax(t *testing.T) {
	n := softmaxBody(t, 33, 1000)
	build(t, t.TempDir(), n)
	src := n.Attrs.String(ir.GKKernelSource, "")
	if !contains(src, "row-wise") || !contains(src, "rb0[") {
		t.Errorf("Softmax should run row-wise with exp(x-max) kept in a row buffer:\n%s", src)
	}
	x := randTensor(rand.New(rand.NewSource(5)), []int64{33, 1000}, -10, 10)
	got := runKernel(t, n, 2, x)
	checkClose(t, "softmax", got[0].F32(), softmaxRef(x.F32(), 33, 1000), 1e-5)
}

func contains(s, sub string) bool { return len(sub) == 0 || len(s) >= len(sub) && indexOf(s, sub) >= 0 }

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

func TestExpAccuracy(t *testing.T) {
	b := testkit.New(t, "exp")
	x := b.Input("", 1<<16)
	n := b.GraphKernel("exp", b.Op("Exp", nil, x))
	build(t, t.TempDir(), n)
	xi := ir.NewTensor(ir.Float32, x.Shape)
	r := rand.New(rand.NewSource(9))
	special := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 88.7, 88.8, -87.3, -100, -103, -104.5, -200, 200, 1e-8, -1e-8,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}
	for i := range xi.F32() {
		if i < len(special) {
			xi.F32()[i] = special[i]
		} else {
			xi.F32()[i] = float32(r.Float64()*190 - 102)
		}
	}
	got := runKernel(t, n, 1, xi)[0].F32()
	for i, v := range xi.F32() {
		w := float32(math.Exp(float64(v)))
		g := got[i]
		switch {
		case math.IsNaN(float64(w)):
			if !math.IsNaN(float64(g)) {
				t.Errorf("exp(%g) = %g, want NaN", v, g)
			}
		case w == 0 || math.IsInf(float64(w), 0) || w < 1.2e-38:
			if math.Abs(float64(g-w)) > 1e-44 && g != w {
				t.Errorf("exp(%g) = %g, want %g", v, g, w)
			}
		default:
			if rel := math.Abs(float64(g)-float64(w)) / float64(w); rel > 3e-7 {
				t.Errorf("exp(%g) = %g, want %g (rel %.3g)", v, g, w, rel)
			}
		}
	}
}

// TestSoftmaxShiftUsesNonposExp: the exp of x - max(x) (Softmax's
// expansion) compiles to gk_expf_nonpos, an exp of anything else to
// gk_expf.
func TestSoftmaxShiftUsesNonposExp(t *testing.T) {
	b := testkit.New(t, "sm")
	x := b.Input("", 4, 33)
	e := b.Op("Exp", nil, b.Op("Sub", nil, x, b.Op("ReduceMax", keep(1), x, b.Ints(-1))))
	y := b.Op("Mul", nil, e, b.Op("RealDiv", nil, b.Scalar(1), b.Op("ReduceSum", keep(1), e, b.Ints(-1))))
	other := b.Op("Exp", nil, x)
	n := b.GraphKernel("sm", y, other)
	src, err := GenerateC("sm", n.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(src, "GK_EXPF_NONPOS(") || !strings.Contains(src, "GK_EXPF(") {
		t.Fatalf("want GK_EXPF_NONPOS (the shifted exp) and GK_EXPF (the plain one):\n%s", src)
	}
	build(t, t.TempDir(), n)
	xi := randTensor(rand.New(rand.NewSource(4)), x.Shape, -30, 30)
	got := runKernel(t, n, 1, xi)
	for r := 0; r < 4; r++ {
		row := xi.F32()[r*33 : (r+1)*33]
		mx := math.Inf(-1)
		for _, v := range row {
			mx = math.Max(mx, float64(v))
		}
		var sum float64
		for _, v := range row {
			sum += math.Exp(float64(v) - mx)
		}
		for j, v := range row {
			want := math.Exp(float64(v)-mx) / sum
			if d := math.Abs(float64(got[0].F32()[r*33+j]) - want); d > 1e-6*math.Max(want, 1e-3) {
				t.Fatalf("softmax[%d][%d] = %g, want %g", r, j, got[0].F32()[r*33+j], want)
			}
			if w := math.Exp(float64(v)); math.Abs(float64(got[1].F32()[r*33+j])-w) > 3e-7*w {
				t.Fatalf("exp[%d][%d] = %g, want %g", r, j, got[1].F32()[r*33+j], w)
			}
		}
	}
}
