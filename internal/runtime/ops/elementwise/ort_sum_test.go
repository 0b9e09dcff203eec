package elementwise

import (
	"math"
	"math/rand"
	"testing"
)

// Values onnxruntime 1.30 computes (CPU, x86-64 with FMA; printed as float32
// bits by scripts/realmodels-style one-node models): this converter's
// float32 Erf and trailing-axis ReduceMean give the same bits, in the C
// kernels and in the pure-Go fallbacks (issue 33 item 2).
func TestErfBitsOfOnnxruntime(t *testing.T) {
	cases := [][2]uint32{
		{0x3dcccccd, 0x3de652f5}, {0x3f000000, 0x3f053f7b}, {0x3f6c0000, 0x3f4ec3b4}, {0x3f733333, 0x3f5225e6},
		{0x3fd9999a, 0x3f7bd9b1}, {0x40200000, 0x3f7fe555}, {0x40400000, 0x3f7ffe8d}, {0x406ccccd, 0x3f7ffffd},
		{0x40733333, 0x3f7fffff}, {0x407abc17, 0x3f7fffff}, {0x40945f41, 0x3f800000}, {0xbe99999a, 0xbea841c5},
		{0xbf99999a, 0xbf690a56}, {0xc079999a, 0xbf7fffff}, {0x322bcc77, 0x3241daa4}, {0x00000000, 0x00000000},
		{0x80000000, 0x80000000}, {0x3f6b851f, 0x3f4e8854},
	}
	checkUnaryBits(t, "erf", uErf, ortErf, cases)
}

func TestReduceMeanBitsOfOnnxruntime(t *testing.T) {
	// rows of 63: the second starts off the 16-byte grid (Eigen's head)
	x := make([]float32, 2*63)
	for i := range x {
		x[i] = float32((i*37)%101-50) / float32(7.3)
	}
	want := []uint32{0x3d70783a, 0xbe26fe2d}
	d := make([]float32, 2)
	goSumRowsF32(d, x, 2, 63, 0, true)
	for i, w := range want {
		if math.Float32bits(d[i]) != w {
			t.Errorf("row %d: mean %#x, onnxruntime %#x", i, math.Float32bits(d[i]), w)
		}
	}
}

// The C kernels and their Go fallbacks make the same additions.
func TestOrtOrderCMatchesGo(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, n := range []int{1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 63, 64, 255, 1000} {
		rows := 5000/n + 2
		s := make([]float32, rows*n)
		for i := range s {
			s[i] = float32(rng.NormFloat64() * 10)
		}
		c, g := make([]float32, rows), make([]float32, rows)
		for _, off := range []int{0, 1, 2, 3} {
			f32SumRows(c, s, rows, n, off, true)
			goSumRowsF32(g, s, rows, n, off, true)
			for i := range c {
				if math.Float32bits(c[i]) != math.Float32bits(g[i]) {
					t.Fatalf("n=%d off=%d row %d: C %v, Go %v", n, off, i, c[i], g[i])
				}
			}
		}
	}
	in := make([]float32, 1<<16)
	for i := range in {
		in[i] = float32(rng.NormFloat64() * 2.5)
	}
	out := make([]float32, len(in))
	f32Unary(uErf, out, in)
	for i, x := range in {
		if math.Float32bits(out[i]) != math.Float32bits(ortErf(x)) {
			t.Fatalf("erf(%v): C %v, Go %v", x, out[i], ortErf(x))
		}
	}
}

// onnxruntime 1.30's float32 Sigmoid (MlasLogisticKernelFma3) on values
// across its range, the clamp at ±18 included (a single-node model).
func TestSigmoidBitsOfOnnxruntime(t *testing.T) {
	cases := [][2]uint32{
		{0x3dcccccd, 0x3f066509}, {0x3f000000, 0x3f1f597e}, {0xbf000000, 0x3ec14d04}, {0x3fa66666, 0x3f492c7a},
		{0xc02ccccd, 0x3d80f82c}, {0x40533333, 0x3f76e4cf}, {0x40bccccd, 0x3f7f4cf6}, {0xc0e33333, 0x3a581e00},
		{0x41280000, 0x3f7ffe33}, {0xc18f3333, 0x33000000}, {0x41940000, 0x3f800000}, {0xc1980000, 0x00000000},
		{0x41c80000, 0x3f800000}, {0x3a83126f, 0x3f001062}, {0xb58637bd, 0x3efffff8}, {0x00000000, 0x3f000000},
		{0x80000000, 0x3f000000}, {0x40000000, 0x3f617beb}, {0xc08ccccd, 0x3c46b680}, {0x410ccccd, 0x3f7ff61f},
		{0x41440000, 0x3f7fffb0}, {0xc1780000, 0x34600000}, {0x3f3ae148, 0x3f2cc00a}, {0xbe99999a, 0x3ed9e2ac},
		{0xc131eca4, 0x37780000}, {0x416d44c8, 0x3f7ffffa}, {0xc13bb322, 0x37080000}, {0x4185f49b, 0x3f7ffffe},
		{0xbeed56bf, 0x3ec5b498}, {0x408f083b, 0x3f7d1a1a}, {0x412a2e58, 0x3f7ffe6c}, {0x3f3c99a6, 0x3f2d208f},
		{0xc1020c35, 0x399ab400}, {0xc147dbc1, 0x367e0000}, {0xc18629ad, 0x34000000}, {0x41189a0f, 0x3f7ffb46},
		{0xc0163f96, 0x3db2b258}, {0xc15aae83, 0x359c0000}, {0x417328e2, 0x3f7ffffc}, {0xc11095ad, 0x38f99000},
		{0xc05b8ef0, 0x3d006bb8}, {0xc1028244, 0x39965400}, {0x40a4d939, 0x3f7e86b0}, {0x404c6282, 0x3f75e930},
		{0x407fd199, 0x3f7b61f9}, {0xc115e032, 0x38b34000}, {0xc109cd11, 0x393e9000}, {0xc11db41c, 0x385bc000},
		{0xc0dcb7d8, 0x3a844c00}, {0xc163bc1f, 0x35380000}, {0xc15601fd, 0x35d40000}, {0x41947530, 0x3f800000},
		{0xc1476a25, 0x36810000}, {0xc19838ce, 0x00000000}, {0x4132e3ab, 0x3f7fff16}, {0x3f1e7086, 0x3f266464},
	}
	checkUnaryBits(t, "sigmoid", uSigmoid, ortLogistic, cases)
	if v := ortLogistic(float32(math.NaN())); v == v {
		t.Fatalf("sigmoid(NaN) = %v", v)
	}
}

// checkUnaryBits runs the C kernel (over 4096 elements, the cases repeated)
// and the Go function on the {input, onnxruntime output} bit pairs.
func checkUnaryBits(t *testing.T, name string, op int, goFn func(float32) float32, cases [][2]uint32) {
	t.Helper()
	in := make([]float32, 0, 4096)
	for len(in) < 4096 {
		for _, c := range cases {
			in = append(in, math.Float32frombits(c[0]))
		}
	}
	in = in[:4096]
	out := make([]float32, len(in))
	f32Unary(op, out, in)
	for i, x := range in {
		want := cases[i%len(cases)][1]
		if got := math.Float32bits(out[i]); got != want {
			t.Fatalf("C %s(%g) = %#x, onnxruntime %#x", name, x, got, want)
		}
		if got := math.Float32bits(goFn(x)); got != want {
			t.Fatalf("Go %s(%g) = %#x, onnxruntime %#x", name, x, got, want)
		}
	}
}
