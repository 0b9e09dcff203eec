package nn

import (
	"math"
	"math/rand"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// TestMaxPool2DFastMatchesReference checks the C float32 max pool against
// the generic loop bit for bit, NaN and infinities included, over strides,
// dilations, pads, ceil_mode and 1-D pools.
func TestMaxPool2DFastMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	type cfg struct {
		sp, k, s, d, p []int64
		ceil           int64
	}
	cfgs := []cfg{
		{[]int64{112, 112}, []int64{3, 3}, []int64{2, 2}, []int64{1, 1}, []int64{1, 1, 1, 1}, 0}, // resnet
		{[]int64{37, 20}, []int64{3, 3}, []int64{1, 1}, []int64{1, 1}, []int64{1, 1, 1, 1}, 0},   // bands of 4 rows, the last of 1
		{[]int64{9, 10}, []int64{3, 3}, []int64{1, 1}, []int64{1, 1}, []int64{1, 1, 1, 1}, 0},
		{[]int64{9, 10}, []int64{2, 2}, []int64{2, 2}, []int64{1, 1}, []int64{0, 0, 0, 0}, 1},
		{[]int64{11, 13}, []int64{3, 3}, []int64{2, 2}, []int64{1, 1}, []int64{1, 1, 1, 1}, 1},
		{[]int64{11, 13}, []int64{3, 2}, []int64{1, 3}, []int64{2, 2}, []int64{2, 1, 0, 2}, 1},
		{[]int64{8, 8}, []int64{5, 5}, []int64{1, 1}, []int64{1, 1}, []int64{2, 2, 2, 2}, 0},
		{[]int64{4, 5}, []int64{3, 3}, []int64{3, 3}, []int64{1, 1}, []int64{2, 2, 2, 2}, 1},
		{[]int64{17}, []int64{3}, []int64{2}, []int64{1}, []int64{1, 1}, 0},
		{[]int64{3, 3}, []int64{3, 3}, []int64{1, 1}, []int64{1, 1}, []int64{0, 0, 0, 0}, 0},
		// 2x2 stride 1, SAME_UPPER (pad right and bottom) and SAME_LOWER, and a dilated one
		{[]int64{12, 17}, []int64{2, 2}, []int64{1, 1}, []int64{1, 1}, []int64{0, 0, 1, 1}, 0},
		{[]int64{12, 17}, []int64{2, 2}, []int64{1, 1}, []int64{1, 1}, []int64{1, 1, 0, 0}, 0},
		{[]int64{9, 9}, []int64{2, 2}, []int64{1, 1}, []int64{2, 2}, []int64{0, 0, 0, 0}, 0},
	}
	inf := float32(math.Inf(1))
	for i, c := range cfgs {
		xs := append([]int64{2, 3}, c.sp...)
		x := randTensor(rng, xs...)
		// sprinkle NaN and infinities, also as first taps of windows
		for j := range x.F32() {
			switch rng.Intn(12) {
			case 0:
				x.F32()[j] = float32(math.NaN())
			case 1:
				x.F32()[j] = -inf
			case 2:
				x.F32()[j] = inf
			}
		}
		attrs := ir.Attrs{"kernel_shape": ir.IntsAttr(c.k...), "strides": ir.IntsAttr(c.s...),
			"dilations": ir.IntsAttr(c.d...), "pads": ir.IntsAttr(c.p...), "ceil_mode": ir.IntAttr(c.ceil)}
		node := &ir.Node{Name: "t", Op: "MaxPool", Attrs: attrs}
		g, err := poolGeom(node, x)
		if err != nil {
			t.Fatal(err)
		}
		ys := []int64{2, 3}
		for j := 3 - g.rank; j < 3; j++ {
			ys = append(ys, int64(g.out[j]))
		}
		y := ir.NewTensor(ir.Float32, ys)
		run(t, "MaxPool", attrs, []*ir.Tensor{x}, y)
		ref := make([]float32, y.NumElements())
		maxPoolT(&opkernel.Ctx{Threads: 1}, g, 6, x.F32(), ref, nil, false, float32(math.Inf(-1)))
		for j, want := range ref {
			got := y.F32()[j]
			if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
				t.Fatalf("config %d (%+v): element %d got %v want %v", i, c, j, got, want)
			}
		}
	}
}

// TestDepthwise3x3Wide exercises the AVX-512 3x3 depthwise path on planes
// wide enough for unmasked interior blocks, with masked edge blocks, zero
// rows for padding, stride 1 and 2 and asymmetric pads, against convDirect.
func TestDepthwise3x3Wide(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	cases := []struct {
		h, w, s int64
		pads    []int64
	}{
		{9, 40, 1, []int64{1, 1, 1, 1}},
		{8, 75, 2, []int64{1, 1, 1, 1}},
		{7, 112, 2, []int64{0, 1, 1, 0}},
		{6, 57, 1, []int64{0, 0, 0, 0}},
		{5, 50, 2, []int64{2, 2, 2, 2}},
		{3, 7, 1, []int64{1, 1, 1, 1}},
		// "same" stride 1: the flat kernel, blocks spanning several rows
		{7, 7, 1, []int64{1, 1, 1, 1}},
		{14, 14, 1, []int64{1, 1, 1, 1}},
		{5, 16, 1, []int64{1, 1, 1, 1}},
		{4, 17, 1, []int64{1, 1, 1, 1}},
		{1, 5, 1, []int64{1, 1, 1, 1}},
		{6, 1, 1, []int64{1, 1, 1, 1}},
		{1, 1, 1, []int64{1, 1, 1, 1}},
		{2, 3, 1, []int64{1, 1, 1, 1}},
	}
	for i, c := range cases {
		const ch = 5
		x, w, b := randTensor(rng, 1, ch, c.h, c.w), randTensor(rng, ch, 1, 3, 3), randTensor(rng, ch)
		attrs := ir.Attrs{"group": ir.IntAttr(ch), "strides": ir.IntsAttr(c.s, c.s), "pads": ir.IntsAttr(c.pads...)}
		node := &ir.Node{Name: "t", Op: "Conv2D", Attrs: attrs}
		g, err := windowAttrs(node, x.Shape[2:], w.Shape[2:], false)
		if err != nil {
			t.Fatal(err)
		}
		y := ir.NewTensor(ir.Float32, []int64{1, ch, int64(g.out[1]), int64(g.out[2])})
		run(t, "Conv2D", attrs, []*ir.Tensor{x, w, b}, y)
		x64, _ := x.Float64s()
		w64, _ := w.Float64s()
		b64, _ := b.Float64s()
		ref := make([]float64, y.NumElements())
		convDirect(&opkernel.Ctx{Threads: 1}, g, 1, ch, ch, ch, x64, w64, b64, ref)
		for j, want := range ref {
			if got := float64(y.F32()[j]); math.Abs(got-want) > 1e-5+1e-5*math.Abs(want) {
				t.Fatalf("case %d (%+v): element %d got %g want %g", i, c, j, got, want)
			}
		}
	}
}

// TestPointwiseConvTiled checks a 1x1 convolution with bias whose output is
// large enough to be done in column tiles (see convTileBytes), with a ragged
// last tile, against convDirect.
func TestPointwiseConvTiled(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	const cin, cout, h, w = 5, 24, 61, 67 // 24 rows: tiles of 2688 columns over 4087
	x, wt, b := randTensor(rng, 2, cin, h, w), randTensor(rng, cout, cin, 1, 1), randTensor(rng, cout)
	if h*w <= convTileBytes/(4*cout) {
		t.Fatal("output too small to be tiled")
	}
	y := ir.NewTensor(ir.Float32, []int64{2, cout, h, w})
	attrs := ir.Attrs{}
	run(t, "Conv2D", attrs, []*ir.Tensor{x, wt, b}, y)
	g, err := windowAttrs(&ir.Node{Name: "t", Op: "Conv2D", Attrs: attrs}, x.Shape[2:], wt.Shape[2:], false)
	if err != nil {
		t.Fatal(err)
	}
	x64, _ := x.Float64s()
	w64, _ := wt.Float64s()
	b64, _ := b.Float64s()
	ref := make([]float64, y.NumElements())
	convDirect(&opkernel.Ctx{Threads: 1}, g, 2, cin, cout, 1, x64, w64, b64, ref)
	for j, want := range ref {
		if got := float64(y.F32()[j]); math.Abs(got-want) > 1e-5+1e-5*math.Abs(want) {
			t.Fatalf("element %d got %g want %g", j, got, want)
		}
	}
}

// TestCol2imMatchesGeneric: the C col2im (with its paired 2x2 stride-2 path)
// gives col2imGeneric's sums bit for bit.
func TestCol2imMatchesGeneric(t *testing.T) {
	rng := rand.New(rand.NewSource(12))
	cfgs := []struct{ sp, k, s, p, d []int64 }{
		{[]int64{6, 7}, []int64{2, 2}, []int64{2, 2}, []int64{0, 0, 0, 0}, []int64{1, 1}},
		{[]int64{1, 9}, []int64{2, 2}, []int64{2, 2}, []int64{0, 0, 0, 0}, []int64{1, 1}},
		{[]int64{6, 7}, []int64{2, 2}, []int64{2, 2}, []int64{0, 1, 0, 1}, []int64{1, 1}},
		{[]int64{6, 7}, []int64{3, 3}, []int64{2, 2}, []int64{1, 1, 1, 1}, []int64{1, 1}},
		{[]int64{5, 4}, []int64{2, 3}, []int64{1, 2}, []int64{0, 0, 0, 0}, []int64{2, 1}},
		{[]int64{8}, []int64{2}, []int64{2}, []int64{0, 0}, []int64{1}},
	}
	for i, c := range cfgs {
		attrs := ir.Attrs{"kernel_shape": ir.IntsAttr(c.k...), "strides": ir.IntsAttr(c.s...),
			"pads": ir.IntsAttr(c.p...), "dilations": ir.IntsAttr(c.d...)}
		g, err := convTransposeGeom(&ir.Node{Name: "t", Op: "ConvTranspose", Attrs: attrs}, c.sp, c.k)
		if err != nil {
			t.Fatal(err)
		}
		const ch = 3
		col := randTensor(rng, int64(ch*g.kVol()*g.outVol())).F32()
		got, want := randTensor(rng, int64(ch*g.inVol())).F32(), make([]float32, ch*g.inVol())
		copy(want, got)
		col2imF32(g, ch, col, got)
		col2imGeneric(g, ch, col, want)
		for j := range want {
			if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
				t.Fatalf("config %d (%+v): element %d got %v want %v", i, c, j, got[j], want[j])
			}
		}
	}
}
