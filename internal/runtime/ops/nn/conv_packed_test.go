package nn

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// constConvNode is a Conv2D node whose weight input is the constant w, as the
// executor passes it (the packed path needs to know the weights are constant).
func constConvNode(attrs ir.Attrs, w *ir.Tensor) *ir.Node {
	return &ir.Node{Name: "conv", Op: "Conv2D", Attrs: attrs,
		Inputs: []*ir.Value{{Name: "x"}, {Name: "w", Const: w}, {Name: "b"}}}
}

// TestConvPackedRandom checks the packed path against convDirect on random
// shapes: kernels 1..7, strides, dilations, asymmetric pads, batch 1-2,
// ragged channel counts (partial panels) and ragged pixel tiles, at 1, 2 and
// 3 threads (small planes split by pixels or by output channels).
func TestConvPackedRandom(t *testing.T) {
	for _, form := range []int{packTransposed, packSlivers} {
		if form == packSlivers && !convGEMMAvailable.Load() {
			t.Log("no AVX-512: sliver path not tested")
			continue
		}
		t.Run(fmt.Sprint("form", form), func(t *testing.T) { testConvPackedRandom(t, form) })
	}
}

func testConvPackedRandom(t *testing.T, form int) {
	packedConvMode.Store(int32(form))
	defer packedConvMode.Store(0)
	rng := rand.New(rand.NewSource(42))
	for it := 0; it < 60; it++ {
		nb := 1 + rng.Intn(2)
		cin, cout := 1+rng.Intn(40), 1+rng.Intn(80)
		if it%15 == 7 { // more than one channel block of the sliver GEMM
			cout = 250
		}
		if it%15 == 11 { // many weight panels on a small plane: split by output channels
			cout = 200 + rng.Intn(500)
		}
		kh, kw := 1+rng.Intn(4), 1+rng.Intn(4)
		if it%10 == 0 {
			kh, kw = 7, 7
		}
		h, w := kh+rng.Intn(30), kw+rng.Intn(30)
		sh, sw := 1+rng.Intn(2), 1+rng.Intn(3)
		dh, dw, pads := randDilationsPads(rng, kh, kw, h, w)
		if it%4 == 0 { // pointwise, unpadded: the no-im2col case
			kh, kw, sh, sw, dh, dw = 1, 1, 1, 1, 1, 1
			pads = []int64{0, 0, 0, 0}
			h, w = 1+rng.Intn(40), 1+rng.Intn(40)
		}
		if it%15 == 4 { // 3x3 stride 2 onto rows of at least 12: the split-row unfold (im2col_s2)
			kh, kw, sh, sw, dh, dw = 3, 3, 2, 2, 1, 1
			h, w = 20+rng.Intn(40), 24+rng.Intn(40)
			pads = []int64{1, 1, int64(rng.Intn(2)), int64(rng.Intn(2))}
		}
		if it%15 == 13 { // 1x1 stride 2 onto a small plane: split by output channels too
			nb, kh, kw, sh, sw, dh, dw = 1, 1, 1, 2, 2, 1, 1
			pads = []int64{0, 0, 0, 0}
			h, w, cout = 5+rng.Intn(12), 5+rng.Intn(12), 96+16*rng.Intn(20)
		}
		attrs := ir.Attrs{"strides": ir.IntsAttr(int64(sh), int64(sw)), "dilations": ir.IntsAttr(int64(dh), int64(dw)),
			"pads": ir.IntsAttr(pads...)}
		x := randTensor(rng, int64(nb), int64(cin), int64(h), int64(w))
		wt := randTensor(rng, int64(cout), int64(cin), int64(kh), int64(kw))
		var b *ir.Tensor
		in := []*ir.Tensor{x, wt, nil}
		if it%3 != 0 {
			b = randTensor(rng, int64(cout))
			in[2] = b
		}
		n := constConvNode(attrs, wt)
		g, err := windowAttrs(n, x.Shape[2:], wt.Shape[2:], false)
		if err != nil {
			t.Fatal(err)
		}
		if usePackedConv(n, wt, g, 1, cin, cout, 1) != form {
			t.Fatal("packed path not taken")
		}
		checkConvVsDirect(t, fmt.Sprintf("it %d", it), n, g, in, nil)
	}
}

// checkConvVsDirect runs conv on in = {x, w, bias or nil} at 1, 2 and 3
// threads and compares y with convDirect in float64, followed by post (nil:
// none), within 1e-4 absolute plus relative.
func checkConvVsDirect(t *testing.T, label string, n *ir.Node, g *geom, in []*ir.Tensor, post func(float64) float64) {
	t.Helper()
	x, wt, b := in[0], in[1], in[2]
	nb, cin, cout := int(x.Shape[0]), int(x.Shape[1]), int(wt.Shape[0])
	y := ir.NewTensor(ir.Float32, []int64{int64(nb), int64(cout), int64(g.out[1]), int64(g.out[2])})
	x64, _ := x.Float64s()
	w64, _ := wt.Float64s()
	var b64 []float64
	if b != nil {
		b64, _ = b.Float64s()
	}
	ref := make([]float64, y.NumElements())
	convDirect(&opkernel.Ctx{Threads: 1}, g, nb, cin, cout, 1, x64, w64, b64, ref)
	if post != nil {
		for i := range ref {
			ref[i] = post(ref[i])
		}
	}
	for _, threads := range []int{1, 2, 3} {
		for i := range y.F32() {
			y.F32()[i] = float32(math.NaN())
		}
		if err := conv(&opkernel.Ctx{Threads: threads}, n, in, []*ir.Tensor{y}); err != nil {
			t.Fatal(err)
		}
		for j, want := range ref {
			if got := float64(y.F32()[j]); !(math.Abs(got-want) <= 1e-4+1e-4*math.Abs(want)) {
				t.Fatalf("%s (x %v w %v attrs %v, %d threads): element %d got %g want %g",
					label, x.Shape, wt.Shape, n.Attrs, threads, j, got, want)
			}
		}
	}
}

// randDilationsPads draws dilations of 1 or 2 (1 where the dilated kernel
// would not fit the h x w plane) and pads smaller than the kernel.
func randDilationsPads(rng *rand.Rand, kh, kw, h, w int) (dh, dw int, pads []int64) {
	dh, dw = 1+rng.Intn(2), 1+rng.Intn(2)
	if (kh-1)*dh+1 > h {
		dh = 1
	}
	if (kw-1)*dw+1 > w {
		dw = 1
	}
	return dh, dw, []int64{int64(rng.Intn(kh)), int64(rng.Intn(kw)), int64(rng.Intn(kh)), int64(rng.Intn(kw))}
}

// TestConvPackedCache checks that the packing is reused for the same weight
// tensor, redone when its data is replaced, and that a non-constant weight
// input does not take the packed path.
func TestConvPackedCache(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	w := randTensor(rng, 8, 3, 3, 3)
	p1 := packedConvWeights(w, 27, 8, packTransposed).data
	p2 := packedConvWeights(w, 27, 8, packTransposed).data
	if p1 == nil || &p1[0] != &p2[0] {
		t.Fatal("packing not cached")
	}
	w.Data = append([]byte(nil), w.Data...)
	w.F32()[0] += 1
	p3 := packedConvWeights(w, 27, 8, packTransposed).data
	if &p3[0] == &p1[0] || p3[0] != w.F32()[0] {
		t.Fatal("stale packing after the weight data changed")
	}
	g := &geom{rank: 2, in: [3]int{1, 5, 5}, k: [3]int{1, 3, 3}}
	if usePackedConv(&ir.Node{Name: "c"}, w, g, 1, 3, 8, 1) != packNone {
		t.Fatal("packed path taken for a non-constant weight")
	}
	if usePackedConv(constConvNode(nil, w), w, g, 2, 3, 8, 1) != packNone {
		t.Fatal("packed path taken for group 2")
	}
}

// resnet50 and mobilenet_v2 conv shapes (group 1): cin, cout, input side,
// kernel, stride (pad k/2).
var cnnConvShapes = []struct{ cin, cout, hw, k, s int64 }{
	{3, 64, 224, 7, 2}, // resnet stem
	{64, 64, 56, 1, 1}, {64, 256, 56, 1, 1}, {256, 64, 56, 1, 1}, {64, 64, 56, 3, 1},
	{256, 512, 56, 1, 2}, {256, 128, 56, 1, 1}, {128, 128, 56, 3, 2}, {128, 128, 28, 3, 1},
	{128, 512, 28, 1, 1}, {512, 128, 28, 1, 1}, {512, 1024, 28, 1, 2}, {512, 256, 28, 1, 1},
	{256, 256, 28, 3, 2}, {256, 256, 14, 3, 1}, {256, 1024, 14, 1, 1}, {1024, 256, 14, 1, 1},
	{1024, 2048, 14, 1, 2}, {1024, 512, 14, 1, 1}, {512, 512, 14, 3, 2}, {512, 512, 7, 3, 1},
	{512, 2048, 7, 1, 1}, {2048, 512, 7, 1, 1},
	{3, 32, 224, 3, 2}, // mobilenet stem; its pointwise layers are mobilenetPW
}

// BenchmarkConvPackedVsBLAS compares the packed paths (and, on the stems,
// the direct few-channel conv) with im2col + OpenBLAS per shape, one thread
// (GKCONV_BENCH_THREADS=2 for two):
//
//	OPENBLAS_CORETYPE=SkylakeX go test -run XXX -bench ConvPackedVsBLAS ./internal/runtime/ops/nn/
func BenchmarkConvPackedVsBLAS(b *testing.B) {
	type shape struct{ cin, cout, hw, k, s int64 }
	var shapes []shape
	for _, s := range cnnConvShapes {
		shapes = append(shapes, shape(s))
	}
	for _, s := range mobilenetPW {
		shapes = append(shapes, shape{s.cin, s.cout, s.hw, 1, 1})
	}
	for _, s := range shapes {
		rng := rand.New(rand.NewSource(1))
		x, w, bias := randTensor(rng, 1, s.cin, s.hw, s.hw), randTensor(rng, s.cout, s.cin, s.k, s.k), randTensor(rng, s.cout)
		o := (s.hw+2*(s.k/2)-s.k)/s.s + 1
		y := ir.NewTensor(ir.Float32, []int64{1, s.cout, o, o})
		p := s.k / 2
		n := constConvNode(ir.Attrs{"strides": ir.IntsAttr(s.s, s.s), "pads": ir.IntsAttr(p, p, p, p)}, w)
		flops := float64(2 * s.cin * s.k * s.k * s.cout * o * o)
		name := fmt.Sprintf("%dto%d_%dx%d_k%d_s%d", s.cin, s.cout, s.hw, s.hw, s.k, s.s)
		modes := []int32{-1, packTransposed, packSlivers}
		if s.cin <= stemMaxChannels {
			modes = append(modes, packStem)
		}
		for _, mode := range modes {
			b.Run(map[int32]string{-1: "openblas/", packTransposed: "packed/", packSlivers: "slivers/", packStem: "direct/"}[mode]+name, func(b *testing.B) {
				packedConvMode.Store(mode)
				defer packedConvMode.Store(0)
				benchOp(b, conv, n, []*ir.Tensor{x, w, bias}, y, flops)
			})
		}
	}
}

// packedConvFaster follows its measured rule on the model shapes.
func TestPackedConvRule(t *testing.T) {
	plane := func(side, k, s int) *geom {
		o := (side+2*(k/2)-k)/s + 1
		return &geom{rank: 2, in: [3]int{1, side, side}, out: [3]int{1, o, o}, k: [3]int{1, k, k},
			s: [3]int{1, s, s}, d: [3]int{1, 1, 1}, pb: [3]int{0, k / 2, k / 2}, pe: [3]int{0, k / 2, k / 2}}
	}
	slivers, stem, twoThreadSlivers := packSlivers, packStem, packSlivers
	if !convGEMMAvailable.Load() {
		slivers, stem, twoThreadSlivers = packNone, packNone, packTransposed
	}
	project, twoThreadProject := slivers, twoThreadSlivers // narrow 14x14 projects: transposed at AVX-512 only
	if level512.Load() {
		project, twoThreadProject = packTransposed, packTransposed
	}
	for _, c := range []struct {
		name          string
		g             *geom
		c, m, threads int
		want          int
	}{
		{"160->960 7x7", plane(7, 1, 1), 160, 960, 1, packTransposed},
		{"1024->256 14x14", plane(14, 1, 1), 1024, 256, 1, packTransposed},
		{"96->576 14x14, 2 threads", plane(14, 1, 1), 96, 576, 2, twoThreadSlivers},
		{"1024->256 14x14, 2 threads", plane(14, 1, 1), 1024, 256, 2, packTransposed},
		{"64->64 3x3 14x14, 2 threads", plane(14, 3, 1), 64, 64, 2, packTransposed},
		{"96->576 14x14", plane(14, 1, 1), 96, 576, 1, slivers},
		{"672->112 14x14", plane(14, 1, 1), 672, 112, 1, project},
		{"576->96 14x14, 2 threads", plane(14, 1, 1), 576, 96, 2, twoThreadProject},
		{"64->64 3x3 14x14", plane(14, 3, 1), 64, 64, 1, packNone},
		{"16->96 112x112", plane(112, 1, 1), 16, 96, 1, slivers},
		{"3->64 7x7 s2 224", plane(224, 7, 2), 3, 64, 1, stem},
		{"3->32 3x3 s2 224, 2 threads", plane(224, 3, 2), 3, 32, 2, stem},
		{"8->32 3x3 s2 224", plane(224, 3, 2), 8, 32, 1, slivers},
	} {
		if got := packedConvFaster(c.g, c.c, c.m, c.threads); got != c.want {
			t.Errorf("%s: form %d, want %d", c.name, got, c.want)
		}
	}
}

// TestConvSliversChannelSplit: a pointwise conv on a plane of one tile,
// batch 1, splits its output channels between the threads in the sliver
// form (whole 12-row slivers; here 61 channels, the last sliver partial),
// with bias, residual and RELU6 taken at each group's offset: the result is
// bit for bit the one-thread result.
func TestConvSliversChannelSplit(t *testing.T) {
	if !convGEMMAvailable.Load() {
		t.Skip("no AVX2: the sliver form does not run")
	}
	packedConvMode.Store(packSlivers)
	defer packedConvMode.Store(0)
	rng := rand.New(rand.NewSource(5))
	const cin, cout, hw = 40, 61, 14
	x, w, b := randTensor(rng, 1, cin, hw, hw), randTensor(rng, cout, cin, 1, 1), randTensor(rng, cout)
	z := randTensor(rng, 1, cout, hw, hw)
	for i := range z.F32() {
		z.F32()[i] *= 8 // sums past 6 and below 0
	}
	n := constConvNode(ir.Attrs{ir.AttrActivation: ir.IntAttr(ir.ActReLU6)}, w)
	n.Inputs = append(n.Inputs, &ir.Value{Name: "z"})
	run := func(threads int) []float32 {
		y := ir.NewTensor(ir.Float32, []int64{1, cout, hw, hw})
		if err := conv(&opkernel.Ctx{Threads: threads}, n, []*ir.Tensor{x, w, b, z}, []*ir.Tensor{y}); err != nil {
			t.Fatal(err)
		}
		return y.F32()
	}
	want := run(1)
	for _, threads := range []int{2, 3} {
		for i, v := range run(threads) {
			if v != want[i] {
				t.Fatalf("%d threads: element %d (channel %d) = %g, one thread %g", threads, i, i/(hw*hw), v, want[i])
			}
		}
	}
}
