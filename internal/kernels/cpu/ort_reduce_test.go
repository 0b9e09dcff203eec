package cpu

import (
	"math"
	"strings"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/testkit"
)

// onnxruntime 1.30's ReduceMean over trailing axes (CPU, ORT_DISABLE_ALL;
// one-node models, float32 bits) on x[i] = ((i*37)%101-50)/7.3: rows shorter
// than a packet, rows whose start is off the 16-byte grid (Eigen's head),
// two reduced dims, and rows past Eigen's and the lanes' block sizes.
var reduceMeanOrtBits = []struct {
	shape, axes []int64
	want        []uint32
}{
	{[]int64{2, 63}, []int64{-1}, []uint32{0x3d70783a, 0xbe26fe2d}},
	{[]int64{3, 1000}, []int64{-1}, []uint32{0x3ab38d37, 0xbb72646f, 0x3ba615ae}},
	{[]int64{2, 48, 64}, []int64{1, 2}, []uint32{0xbade195b, 0xba3b0791}},
	{[]int64{4, 5}, []int64{-1}, []uint32{0xc00fc7e4, 0x3f757abd, 0xbfaf57ab, 0x3feaf57a}},
	{[]int64{5, 3}, []int64{-1}, []uint32{0xbfe3f1f8, 0xbed26935, 0x3f757abc, 0xc0121e64, 0xbf69ca39}},
	{[]int64{3, 1}, []int64{-1}, []uint32{0xc0db2d96, 0xbfe3f1f9, 0x40526934}},
	{[]int64{2, 13, 17}, []int64{1, 2}, []uint32{0xbd437eb9, 0x3cf8cfb4}},
	{[]int64{1, 4099}, []int64{-1}, []uint32{0xbab397c9}},
	{[]int64{2, 30000}, []int64{-1}, []uint32{0xb93ab868, 0xb82c56c4}},
	{[]int64{3, 7, 7}, []int64{-1}, []uint32{0xbfc361b1, 0x3eb45a2e, 0x3e82411f, 0x3e205027, 0x3d707830,
		0xbd205025, 0xbe0c4623, 0xbe70783e, 0x3fd26935, 0xbedc6e37, 0xbf0743a0, 0xbf205028, 0x3fa05028, 0xbf526935,
		0xbf6b75ba, 0x3f757abd, 0xbf8ec763, 0x3f4361b0, 0x3f2a552a, 0x3f1148a3, 0xbfc0e071}},
}

func ortPattern(shape []int64) *ir.Tensor {
	t := ir.NewTensor(ir.Float32, shape)
	for i := range t.F32() {
		t.F32()[i] = float32((i*37)%101-50) / float32(7.3)
	}
	return t
}

func checkBits(t *testing.T, what string, got []float32, want []uint32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	bad := 0
	for i, w := range want {
		if g := math.Float32bits(got[i]); g != w {
			if bad < 4 {
				t.Errorf("%s[%d] = %#08x (%g), onnxruntime %#08x (%g)", what, i, g, got[i], w, math.Float32frombits(w))
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d values differ from onnxruntime", what, bad, len(want))
	}
}

// TestFusedReduceMeanBitsOfOnnxruntime: a ReduceMean as the CPU expander
// leaves it (ReduceSum, then RealDiv by the count), and one left whole
// (disable_expand_ops=ReduceMean), compile to onnxruntime's bits, in row
// mode and in general mode (where a sum over the leading axis in the same
// kernel breaks the row plan), at one and two threads.
func TestFusedReduceMeanBitsOfOnnxruntime(t *testing.T) {
	for _, c := range reduceMeanOrtBits {
		for _, v := range []struct{ general, whole bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
			general := v.general
			b := testkit.New(t, "mean")
			x := b.Input("", c.shape...)
			count := int64(1)
			for _, a := range c.axes {
				if a < 0 {
					a += int64(len(c.shape))
				}
				count *= c.shape[a]
			}
			mean := b.Op("RealDiv", nil, b.Op("ReduceSum", keep(1), x, b.Ints(c.axes...)), b.Scalar(float32(count)))
			if v.whole {
				mean = b.Op("ReduceMean", keep(1), x, b.Ints(c.axes...))
			}
			outs := []*ir.Value{mean}
			if general {
				outs = append(outs, b.Op("ReduceSum", keep(1), x, b.Ints(0)))
			}
			n := b.GraphKernel("mean", outs...)
			build(t, t.TempDir(), n)
			src := n.Attrs.String(ir.GKKernelSource, "")
			mode := "row-wise"
			if general {
				mode = "onnxruntime's order"
			}
			if !strings.Contains(src, mode) || !strings.Contains(src, "gk_ort_sum_row_f32(") {
				t.Fatalf("%v %+v: expected a %s kernel calling gk_ort_sum_row_f32:\n%s", c.shape, v, mode, src)
			}
			for _, threads := range []int{1, 2} {
				got := runKernel(t, n, threads, ortPattern(c.shape))
				checkBits(t, "mean", got[0].F32(), c.want)
			}
		}
	}
}

// onnxruntime's bits of a LayerNorm written in basic ops (an opset < 17
// export): mean, d = x - mean, mean of d*d, d / sqrt(var + 1e-5) * g + b with
// g[j] = j/n + 0.5 and b[j] = j/-3, over the last axis.
var layerNormOrtBits = []struct {
	shape []int64
	want  []uint32
}{
	{[]int64{2, 45}, []uint32{
		0xbf522a34, 0xbf09e0d8, 0xbe4d8778, 0xbfde9c6a, 0xbfaed9be, 0xbf6ff886, 0xc0273082, 0xc009802d, 0xbfd084e2,
		0xc05c3176, 0xc038b221, 0xc09a08fd, 0xc0872887, 0xc06502bc, 0xc0b48f9b, 0xc09ec7a6, 0xc08738fe, 0xc0cda58d,
		0xc0b4f618, 0xc09a7ff0, 0xc0e54ad1, 0xc0c9b3dc, 0xc10c1b94, 0xc0fb7f68, 0xc0dd00f4, 0xc117f148, 0xc10821a9,
		0xc0eedd5e, 0xc1230ea6, 0xc111cb47, 0xc0ff491b, 0xc12d73ae, 0xc11abc8f, 0xc14a67e4, 0xc137205e, 0xc122f580,
		0xc154cffe, 0xc14014b8, 0xc12a761a, 0xc15e7fc1, 0xc14850bc, 0xc17e3699, 0xc167772e, 0xc14fd469, 0xc183f4b7,
		0xbcd82638, 0x3ea0b46b, 0xbf9ab848, 0xbf54fecd, 0xbecbb302, 0xc003f322, 0xbfcba872, 0xc05803c1, 0xc0378f41,
		0xc0136ddd, 0xc08753bb, 0xc068307d, 0xc03e0ca0, 0xc0a12826, 0xc08aeb6c, 0xc065b082, 0xc0b97f20, 0xc0a04129,
		0xc0eac16b, 0xc0d058a9, 0xc0b41976, 0xc1018f60, 0xc0e5b4c2, 0xc0c67451, 0xc10cff52, 0xc0f99368, 0xc1287b90,
		0xc117b08c, 0xc105fa50, 0xc133eeb0, 0xc121a30e, 0xc10e6c33, 0xc13ea318, 0xc12ad6d7, 0xc1161f5e, 0xc14898c7,
		0xc1334be8, 0xc167b202, 0xc151cfbe, 0xc13b0241, 0xc171aadf, 0xc15a47fd, 0xc141f9e2, 0xc17ae504, 0xc1620184}},
	{[]int64{3, 2, 20}, []uint32{
		0xbf4ceefb, 0xbf0ac8fa, 0xbe257940, 0xbfe9bdd2, 0xbfaf1a77, 0xbf49a98d, 0xc0302b82, 0xc00611a7, 0xbfa84d45,
		0xc0652189, 0xc02e3f82, 0xc0a7cd05, 0xc089e080, 0xc05016cc, 0xc0c2558e, 0xc09e04f3, 0xc06b9784, 0xc0d9b2cf,
		0xc0aefe1d, 0xc08060d6, 0xbea2f05d, 0x3ce79940, 0xbfcebb56, 0xbf97dbe2, 0xbf20d8e0, 0xc025c120, 0xbff98dd7,
		0xbf97096d, 0xc05d6dac, 0xc026e8fc, 0xbfd03898, 0xc08731a6, 0xc04a5422, 0xc0c0f9d6, 0xc09c5101, 0xc067085c,
		0xc0d982f9, 0xc0ae14e7, 0xc07d05ad, 0xc0eeb0a7, 0x3e9a53b5, 0xbf9e9a66, 0xbf5fd947, 0xbec26474, 0xc00f5d09,
		0xbfd4d3c0, 0xbf748f56, 0xc048ad22, 0xc0161db2, 0xbfb676bd, 0xc07b3d7c, 0xc03b11c4, 0xc0b6419c, 0xc093870d,
		0xc0594618, 0xc0cf982e, 0xc0a60f7c, 0xc070bab0, 0xc0e58ee2, 0xc0b5380c, 0x3f491420, 0xbf227b08, 0xbe8558e7,
		0xbff7f564, 0xbfbe18b4, 0xbf691c25, 0xc038deb0, 0xc00f1eac, 0xbfbb0f60, 0xc06f6767, 0xc038d5b7, 0xc0ad909d,
		0xc08fca6c, 0xc05c317e, 0xc0c8e288, 0xc0a4b381, 0xc07931fe, 0xc0e106d0, 0xc0b66ef4, 0xc087eb9a, 0xbea2f05d,
		0x3ce79930, 0xbfcebb56, 0xbf97dbe2, 0xbf20d8e0, 0xc025c120, 0xbff98dd7, 0xbf97096e, 0xc05d6dad, 0xc026e8fc,
		0xbfd03898, 0xc08731a7, 0xc04a5421, 0xc0c0f9d6, 0xc09c5101, 0xc067085c, 0xc0d982f9, 0xc0ae14e7, 0xc07d05ad,
		0xc0eeb0a7, 0x3e9a53b3, 0xbf9e9a66, 0xbf5fd947, 0xbec26476, 0xc00f5d0a, 0xbfd4d3c0, 0xbf748f58, 0xc048ad22,
		0xc0161db2, 0xbfb676be, 0xc07b3d7c, 0xc03b11c4, 0xc0b6419b, 0xc093870d, 0xc0594618, 0xc0cf982e, 0xc0a60f7c,
		0xc070bab0, 0xc0e58ee2, 0xc0b5380c}},
}

// TestFusedLayerNormBitsOfOnnxruntime: the pattern fuses into one row-wise
// kernel (layer_norm split pattern) whose values are onnxruntime's bits.
func TestFusedLayerNormBitsOfOnnxruntime(t *testing.T) {
	for _, c := range layerNormOrtBits {
		b := testkit.New(t, "ln")
		x := b.Input("", c.shape...)
		n := c.shape[len(c.shape)-1]
		g, bias := ir.NewTensor(ir.Float32, []int64{n}), ir.NewTensor(ir.Float32, []int64{n})
		for j := range n {
			g.F32()[j] = float32(j)/float32(n) + 0.5
			bias.F32()[j] = float32(j) / -3
		}
		count := b.Scalar(float32(n))
		mean := b.Op("RealDiv", nil, b.Op("ReduceSum", keep(1), x, b.Ints(-1)), count)
		d := b.Op("Sub", nil, x, mean)
		v := b.Op("RealDiv", nil, b.Op("ReduceSum", keep(1), b.Op("Mul", nil, d, d), b.Ints(-1)), count)
		s := b.Op("Sqrt", nil, b.Op("Add", nil, v, b.Scalar(1e-5)))
		y := b.Op("Add", nil, b.Op("Mul", nil, b.Op("RealDiv", nil, d, s), b.Const("g", g)), b.Const("b", bias))
		k := b.GraphKernel("ln", y)
		build(t, t.TempDir(), k)
		if src := k.Attrs.String(ir.GKKernelSource, ""); !strings.Contains(src, "row-wise") {
			t.Fatalf("%v: expected a row-wise kernel:\n%s", c.shape, src)
		}
		for _, threads := range []int{1, 2} {
			got := runKernel(t, k, threads, ortPattern(c.shape))
			checkBits(t, "layernorm", got[0].F32(), c.want)
		}
	}
}
