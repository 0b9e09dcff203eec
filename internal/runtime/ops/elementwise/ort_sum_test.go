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
	// long enough for the C kernel, the cases repeated
	in := make([]float32, 0, 4096)
	for len(in) < 4096 {
		for _, c := range cases {
			in = append(in, math.Float32frombits(c[0]))
		}
	}
	in = in[:4096]
	out := make([]float32, len(in))
	f32Unary(uErf, out, in)
	for i, x := range in {
		want := cases[i%len(cases)][1]
		if got := math.Float32bits(out[i]); got != want {
			t.Fatalf("C erf(%g) = %#x, onnxruntime %#x", x, got, want)
		}
		if got := math.Float32bits(ortErf(x)); got != want {
			t.Fatalf("Go erf(%g) = %#x, onnxruntime %#x", x, got, want)
		}
	}
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
