package nn

import (
	"math"
	"math/rand"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/cpuisa"
	"gkconv/internal/runtime/opkernel"
)

func randQ(r *rand.Rand, dt ir.DType, shape ...int64) *ir.Tensor {
	t := ir.NewTensor(dt, shape)
	r.Read(t.Data)
	return t
}

// randW is a weight as quantizers make them: bell-shaped around the middle
// of the range (sigma 32), each output channel's first value at an end of
// it, so that pairs of large same-sign values (the AVX2 split's residuals)
// occur but are rare.
func randW(r *rand.Rand, dt ir.DType, shape ...int64) *ir.Tensor {
	t := ir.NewTensor(dt, shape)
	per := len(t.Data) / max(1, int(shape[0]))
	mid := 0.0
	if dt == ir.Uint8 {
		mid = 128
	}
	for i := range t.Data {
		v := math.Round(r.NormFloat64()*32) + mid
		if i%per == 0 {
			v = mid + 127
			if r.Intn(2) == 0 {
				v = mid - 128
			}
		}
		v = math.Max(mid-128, math.Min(mid+127, v))
		if dt == ir.Int8 {
			t.Data[i] = byte(int8(v))
		} else {
			t.Data[i] = byte(v)
		}
	}
	return t
}

// convWeights are the two kinds of weight TestQLinearConvEpilogueExact and
// TestConvIntegerExact run: uniform random bytes (most pairs would saturate
// vpmaddubsw: the AVX2 level keeps the widened kernels) and randW's.
var convWeights = []struct {
	name string
	gen  func(r *rand.Rand, dt ir.DType, shape ...int64) *ir.Tensor
}{{"uniform", randQ}, {"bell", randW}}

func qval(t *ir.Tensor, i int) int64 {
	if t.DType == ir.Int8 {
		return int64(int8(t.Data[i]))
	}
	return int64(t.Data[i])
}

func scalarQ(dt ir.DType, v int64) *ir.Tensor {
	t := ir.NewTensor(dt, []int64{})
	t.Data[0] = byte(v)
	return t
}

// TestQGEMMExact checks gk_qgemm against plain int64 sums at every ISA
// level, for all signedness pairs, per-row and per-column zero points and
// sizes off the 4-row, 16-column and 4-deep blocks (and past one 64-row
// block).
func TestQGEMMExact(t *testing.T) {
	defer cpuisa.Reset()
	defer allowInt8AMX(true)
	r := rand.New(rand.NewSource(1))
	// AVX-512 twice: with AMX tiles where the CPU has them, then without
	// (the VNNI kernel)
	for li, lv := range []cpuisa.Level{cpuisa.AVX512, cpuisa.AVX512, cpuisa.AVX2, cpuisa.Portable} {
		if err := cpuisa.Force(lv); err != nil {
			t.Logf("skip %s: %v", lv, err)
			continue
		}
		allowInt8AMX(li == 0)
		t.Logf("level %s: integer GEMM %s", lv, QGEMMKernel())
		for _, sz := range [][3]int{{1, 1, 1}, {3, 5, 17}, {4, 4, 16}, {70, 33, 40}, {129, 260, 35}, {2, 0, 3}, {6, 70, 100}, {5, 9, 130}, {67, 129, 200}} {
			m, k, n := sz[0], sz[1], sz[2]
			for _, as := range []bool{false, true} {
				for _, bs := range []bool{false, true} {
					a := make([]byte, m*k+1)
					b := make([]byte, k*n+1)
					r.Read(a)
					r.Read(b)
					za, zb := make([]int32, m), make([]int32, n)
					val := func(v byte, s bool) int64 {
						if s {
							return int64(int8(v))
						}
						return int64(v)
					}
					for i := range za {
						za[i] = int32(val(byte(r.Intn(256)), as))
					}
					for j := range zb {
						zb[j] = int32(val(byte(r.Intn(256)), bs))
					}
					c := make([]int32, m*n)
					var pa *qpackedA
					if m%2 == 1 { // prepacked A on odd sizes
						pa = packQA(a, as, m, k)
					}
					qgemm(&opkernel.Ctx{Threads: 3}, m, a, as, k, za, pa, packQB(b, bs, k, n, n), zb, c, n, nil)
					for i := 0; i < m; i++ {
						for j := 0; j < n; j++ {
							var want int64
							for q := 0; q < k; q++ {
								want += (val(a[i*k+q], as) - int64(za[i])) * (val(b[q*n+j], bs) - int64(zb[j]))
							}
							if int64(c[i*n+j]) != want {
								t.Fatalf("%s (%s) m%d k%d n%d a signed %v b signed %v: c[%d][%d] = %d, want %d", lv, QGEMMKernel(), m, k, n, as, bs, i, j, c[i*n+j], want)
							}
						}
					}
				}
			}
		}
	}
}

// TestMatMulIntegerBatchedZeroPoints: a 3-D A with per-row zero points
// against a shared 2-D B with per-column zero points (one GEMM with the
// batch folded into rows) and a broadcast batch.
func TestMatMulIntegerBatchedZeroPoints(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	a := randQ(r, ir.Uint8, 2, 3, 5)
	b := randQ(r, ir.Int8, 1, 5, 4)
	azp := randQ(r, ir.Uint8, 3)
	bzp := randQ(r, ir.Int8, 4)
	y := ir.NewTensor(ir.Int32, []int64{2, 3, 4})
	n := &ir.Node{Name: "mmi", Op: "MatMulInteger"}
	if err := matMulInteger(opkernel.DefaultCtx(), n, []*ir.Tensor{a, b, azp, bzp}, []*ir.Tensor{y}); err != nil {
		t.Fatal(err)
	}
	for bt := 0; bt < 2; bt++ {
		for i := 0; i < 3; i++ {
			for j := 0; j < 4; j++ {
				var want int64
				for q := 0; q < 5; q++ {
					want += (qval(a, (bt*3+i)*5+q) - qval(azp, i)) * (qval(b, q*4+j) - qval(bzp, j))
				}
				if got := int64(y.I32()[(bt*3+i)*4+j]); got != want {
					t.Fatalf("y[%d][%d][%d] = %d, want %d", bt, i, j, got, want)
				}
			}
		}
	}
}

// TestQLinearConvRequant: padding reads the zero point, per-channel weight
// scales and zero points, bias, rounding half to even and saturation, against
// a direct loop.
func TestQLinearConvRequant(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	x := randQ(r, ir.Uint8, 1, 2, 5, 5)
	w := randQ(r, ir.Int8, 3, 2, 3, 3)
	xs, ws, ys := ir.Float32Tensor([]int64{}, 0.05), ir.Float32Tensor([]int64{3}, 0.01, 0.02, 0.5), ir.Float32Tensor([]int64{}, 0.1)
	xz, wz, yz := scalarQ(ir.Uint8, 120), randQ(r, ir.Int8, 3), scalarQ(ir.Uint8, 128)
	bias := ir.NewTensor(ir.Int32, []int64{3})
	copy(bias.I32(), []int32{100, -2000, 7})
	defer cpuisa.Reset()
	for _, lv := range []cpuisa.Level{cpuisa.AVX512, cpuisa.AVX2, cpuisa.Portable} {
		if err := cpuisa.Force(lv); err != nil {
			continue
		}
		checkQLinearConv(t, lv, x, xs, xz, w, ws, wz, ys, yz, bias)
	}
}

func checkQLinearConv(t *testing.T, lv cpuisa.Level, x, xs, xz, w, ws, wz, ys, yz, bias *ir.Tensor) {
	y := ir.NewTensor(ir.Uint8, []int64{1, 3, 5, 5})
	n := &ir.Node{Name: "qc", Op: "QLinearConv", Attrs: ir.Attrs{"pads": ir.IntsAttr(1, 1, 1, 1)}}
	if err := qlinearConv(opkernel.DefaultCtx(), n, []*ir.Tensor{x, xs, xz, w, ws, wz, ys, yz, bias}, []*ir.Tensor{y}); err != nil {
		t.Fatal(err)
	}
	for oc := 0; oc < 3; oc++ {
		for oh := 0; oh < 5; oh++ {
			for ow := 0; ow < 5; ow++ {
				acc := int64(bias.I32()[oc])
				for ic := 0; ic < 2; ic++ {
					for kh := 0; kh < 3; kh++ {
						for kw := 0; kw < 3; kw++ {
							ih, iw := oh-1+kh, ow-1+kw
							if ih < 0 || ih >= 5 || iw < 0 || iw >= 5 {
								continue
							}
							acc += (qval(x, (ic*5+ih)*5+iw) - 120) * (qval(w, ((oc*2+ic)*3+kh)*3+kw) - qval(wz, oc))
						}
					}
				}
				mult := float32(0.05) * ws.F32()[oc] / float32(0.1)
				v := math.RoundToEven(float64(float32(acc)*mult)) + 128
				v = math.Max(0, math.Min(255, v))
				if got := y.Data[(oc*5+oh)*5+ow]; float64(got) != v {
					t.Fatalf("%s: y[%d][%d][%d] = %d, want %v (acc %d)", lv, oc, oh, ow, got, v, acc)
				}
			}
		}
	}
}

// BenchmarkQLinearConv: resnet18's layer1 3x3 convolution (64 -> 64
// channels, 56x56), one thread.
// BenchmarkQLinearConv: resnet18's 3x3 convolutions (layer1 to layer4) and
// its 7x7 stem, 1 thread, the weight packed at load as a session does;
// MB/s is millions of multiply-adds per second.
func BenchmarkQLinearConv(b *testing.B) {
	for _, c := range []struct {
		name             string
		ch, m, hw, k, st int64
	}{{"layer1", 64, 64, 56, 3, 1}, {"layer2", 128, 128, 28, 3, 1}, {"layer3", 256, 256, 14, 3, 1},
		{"layer4", 512, 512, 7, 3, 1}, {"stem", 3, 64, 224, 7, 2}, {"pointwise16x96", 16, 96, 112, 1, 1}} {
		b.Run(c.name, func(b *testing.B) {
			r := rand.New(rand.NewSource(4))
			x := randQ(r, ir.Uint8, 1, c.ch, c.hw, c.hw)
			w := randW(r, ir.Int8, c.m, c.ch, c.k, c.k)
			ws := ir.NewTensor(ir.Float32, []int64{c.m})
			for i := range ws.F32() {
				ws.F32()[i] = 0.01
			}
			in := []*ir.Tensor{x, ir.Float32Tensor(nil, 0.05), scalarQ(ir.Uint8, 120), w, ws, ir.NewTensor(ir.Int8, []int64{c.m}), ir.Float32Tensor(nil, 0.1), scalarQ(ir.Uint8, 128)}
			pad := c.k / 2
			oh := (c.hw+2*pad-c.k)/c.st + 1
			y := ir.NewTensor(ir.Uint8, []int64{1, c.m, oh, oh})
			n := &ir.Node{Name: "qc", Op: "QLinearConv", Attrs: ir.Attrs{"pads": ir.IntsAttr(pad, pad, pad, pad), "strides": ir.IntsAttr(c.st, c.st)}}
			ctx := &opkernel.Ctx{Threads: 1}
			pa := packedConvWeight(opkernel.NewPrep(), w)
			b.SetBytes(c.m * c.ch * c.k * c.k * oh * oh)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := qconv(ctx, n, in, []*ir.Tensor{y}, true, pa, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkQLinearConvDepthwise: mobilenet_v2's 3x3 depthwise convolutions
// (the 112x112 and 56x56 planes on the integer kernel, the 14x14 and 7x7
// ones on the float path), 1 thread, per-channel weight scales; MB/s is
// millions of multiply-adds per second.
func BenchmarkQLinearConvDepthwise(b *testing.B) {
	for _, c := range []struct {
		name       string
		ch, hw, st int64
	}{{"c32_112_s1", 32, 112, 1}, {"c96_112_s2", 96, 112, 2}, {"c144_56_s1", 144, 56, 1}, {"c192_28_s1", 192, 28, 1}, {"c144_56_s2", 144, 56, 2}, {"c576_14_s1", 576, 14, 1}, {"c960_7_s1", 960, 7, 1}} {
		b.Run(c.name, func(b *testing.B) {
			r := rand.New(rand.NewSource(5))
			x := randQ(r, ir.Uint8, 1, c.ch, c.hw, c.hw)
			w := randW(r, ir.Int8, c.ch, 1, 3, 3)
			ws := ir.NewTensor(ir.Float32, []int64{c.ch})
			for i := range ws.F32() {
				ws.F32()[i] = 0.01 + 0.0001*float32(i%7)
			}
			in := []*ir.Tensor{x, ir.Float32Tensor(nil, 0.05), scalarQ(ir.Uint8, 120), w, ws, ir.NewTensor(ir.Int8, []int64{c.ch}), ir.Float32Tensor(nil, 0.1), scalarQ(ir.Uint8, 128)}
			oh := (c.hw+2-3)/c.st + 1
			y := ir.NewTensor(ir.Uint8, []int64{1, c.ch, oh, oh})
			n := &ir.Node{Name: "qdw", Op: "QLinearConv", Attrs: ir.Attrs{"pads": ir.IntsAttr(1, 1, 1, 1), "strides": ir.IntsAttr(c.st, c.st), "group": ir.IntAttr(c.ch)}}
			ctx := &opkernel.Ctx{Threads: 1}
			pa := packedConvWeight(opkernel.NewPrep(), w)
			b.SetBytes(c.ch * 9 * oh * oh)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := qconv(ctx, n, in, []*ir.Tensor{y}, true, pa, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestDepthwiseConvIntegerExact: the direct depthwise path of ConvInteger
// (one channel per group) against plain sums, for strides, dilations,
// asymmetric pads, signed and unsigned x and w, per-channel w zero points,
// 1-D and 2-D windows.
func TestDepthwiseConvIntegerExact(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	everyLevel(t, func(t *testing.T, _ cpuisa.Level) { checkDepthwiseConvInteger(t, r) })
}

func checkDepthwiseConvInteger(t *testing.T, r *rand.Rand) {
	type cfg struct {
		h, w, k, s, d      int64
		pt, pl, pbot, pr   int64
		xdt, wdt           ir.DType
		perChannel, oneDim bool
	}
	for _, c := range []cfg{
		{9, 11, 3, 1, 1, 1, 1, 1, 1, ir.Uint8, ir.Uint8, false, false},
		{9, 11, 5, 2, 1, 2, 2, 2, 2, ir.Uint8, ir.Int8, true, false},
		{8, 7, 3, 2, 2, 0, 1, 2, 0, ir.Int8, ir.Int8, true, false},
		{1, 20, 3, 1, 1, 0, 1, 0, 1, ir.Int8, ir.Uint8, false, true},
		// planes wider than one 16-value step, odd and strided
		{13, 48, 3, 1, 1, 1, 1, 1, 1, ir.Uint8, ir.Uint8, false, false},
		{12, 37, 3, 2, 1, 1, 1, 1, 1, ir.Uint8, ir.Uint8, true, false},
		{14, 33, 5, 1, 1, 2, 2, 2, 2, ir.Uint8, ir.Int8, false, false},
		{11, 35, 5, 3, 2, 4, 3, 1, 0, ir.Int8, ir.Uint8, true, false},
		{6, 8, 5, 1, 1, 2, 2, 2, 2, ir.Uint8, ir.Uint8, false, false},
		{9, 19, 7, 2, 1, 0, 0, 0, 0, ir.Uint8, ir.Uint8, false, false},
		{1, 70, 5, 2, 3, 0, 4, 0, 5, ir.Uint8, ir.Int8, true, true},
		{20, 21, 17, 1, 1, 8, 8, 8, 8, ir.Uint8, ir.Int8, true, false}, // 289 taps: the int32 loop
		{10, 75, 3, 2, 1, 1, 1, 1, 1, ir.Int8, ir.Uint8, false, false}, // stride-2 rows of several vectors
		// planes over dwFloatMaxPlane: the integer path's phase layout (signed
		// x flipped, padding as the zero point) at strides 1, 2 and 3
		{33, 41, 3, 1, 1, 1, 1, 1, 1, ir.Int8, ir.Int8, true, false},
		{60, 65, 3, 2, 1, 0, 0, 1, 1, ir.Uint8, ir.Uint8, false, false},
		{64, 70, 5, 2, 1, 2, 2, 2, 2, ir.Int8, ir.Int8, true, false},
		{90, 95, 3, 3, 2, 2, 1, 0, 3, ir.Int8, ir.Uint8, true, false},
		{31, 37, 3, 1, 1, 0, 3, 2, 0, ir.Uint8, ir.Int8, false, false},
	} {
		const ch = 5
		var x, w *ir.Tensor
		var attrs ir.Attrs
		if c.oneDim {
			x, w = randQ(r, c.xdt, 2, ch, c.w), randQ(r, c.wdt, ch, 1, c.k)
			attrs = ir.Attrs{"group": ir.IntAttr(ch), "strides": ir.IntsAttr(c.s), "dilations": ir.IntsAttr(c.d), "pads": ir.IntsAttr(c.pl, c.pr)}
		} else {
			x, w = randQ(r, c.xdt, 2, ch, c.h, c.w), randQ(r, c.wdt, ch, 1, c.k, c.k)
			attrs = ir.Attrs{"group": ir.IntAttr(ch), "strides": ir.IntsAttr(c.s, c.s), "dilations": ir.IntsAttr(c.d, c.d),
				"pads": ir.IntsAttr(c.pt, c.pl, c.pbot, c.pr)}
		}
		kh := c.k
		if c.oneDim {
			kh = 1
		}
		oh := (c.h+c.pt+c.pbot-c.d*(kh-1)-1)/c.s + 1
		if c.oneDim {
			oh = 1
		}
		ow := (c.w+c.pl+c.pr-c.d*(c.k-1)-1)/c.s + 1
		xz := scalarQ(c.xdt, 7)
		wz := scalarQ(c.wdt, 3)
		if c.perChannel {
			wz = randQ(r, c.wdt, ch)
		}
		shape := []int64{2, ch, oh, ow}
		if c.oneDim {
			shape = []int64{2, ch, ow}
		}
		y := ir.NewTensor(ir.Int32, shape)
		n := &ir.Node{Name: "ci", Op: "ConvInteger", Attrs: attrs}
		if err := convInteger(opkernel.DefaultCtx(), n, []*ir.Tensor{x, w, xz, wz}, []*ir.Tensor{y}); err != nil {
			t.Fatal(err)
		}
		pt := c.pt
		if c.oneDim {
			pt = 0
		}
		for b := int64(0); b < 2; b++ {
			for o := int64(0); o < ch; o++ {
				wzo := qval(wz, 0)
				if c.perChannel {
					wzo = qval(wz, int(o))
				}
				for i := int64(0); i < oh; i++ {
					for j := int64(0); j < ow; j++ {
						var acc int64
						for a := int64(0); a < kh; a++ {
							for e := int64(0); e < c.k; e++ {
								ih, iw := i*c.s-pt+a*c.d, j*c.s-c.pl+e*c.d
								if ih < 0 || ih >= c.h || iw < 0 || iw >= c.w {
									continue
								}
								acc += (qval(x, int(((b*ch+o)*c.h+ih)*c.w+iw)) - 7) * (qval(w, int((o*kh+a)*c.k+e)) - wzo)
							}
						}
						if got := y.I32()[((b*ch+o)*oh+i)*ow+j]; int64(got) != acc {
							t.Fatalf("%+v: y[%d][%d][%d][%d] = %d, want %d", c, b, o, i, j, got, acc)
						}
					}
				}
			}
		}
	}
}

// BenchmarkConvIntegerSmall: a decoder convolution of a small dynamically
// quantized U-Net (40 -> 16 channels, 3x3, 64x80, uint8 x and w), one thread.
func BenchmarkConvIntegerSmall(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	x, w := randQ(r, ir.Uint8, 1, 40, 64, 80), randQ(r, ir.Uint8, 16, 40, 3, 3)
	xz, wz := scalarQ(ir.Uint8, 3), scalarQ(ir.Uint8, 128)
	y := ir.NewTensor(ir.Int32, []int64{1, 16, 64, 80})
	n := &ir.Node{Name: "ci", Op: "ConvInteger", Attrs: ir.Attrs{"pads": ir.IntsAttr(1, 1, 1, 1)}}
	ctx := &opkernel.Ctx{Threads: 1}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := convInteger(ctx, n, []*ir.Tensor{x, w, xz, wz}, []*ir.Tensor{y}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestConvIntegerExact: ConvInteger's paths (the direct VNNI convolution
// for rows of >= 16 outputs at the AVX-512 level; unfold and GEMM, whole
// plane or by blocks of qconvBlock positions, otherwise) against plain sums
// at every ISA level: groups, strides, dilations, asymmetric pads,
// per-channel w zero points, uint8/int8 x and w, a partial last block.
func TestConvIntegerExact(t *testing.T) {
	type cfg struct {
		c, m, h, w, kh, kw, s, d, group int64
		pt, pl, pb, pr                  int64
		xdt, wdt                        ir.DType
	}
	r := rand.New(rand.NewSource(12))
	defer cpuisa.Reset()
	for _, lv := range []cpuisa.Level{cpuisa.AVX512, cpuisa.AVX2, cpuisa.Portable} {
		if err := cpuisa.Force(lv); err != nil {
			t.Logf("skip %s: %v", lv, err)
			continue
		}
		for _, c := range []cfg{
			{5, 7, 9, 11, 3, 3, 1, 1, 1, 1, 1, 1, 1, ir.Uint8, ir.Uint8},
			{6, 9, 37, 29, 3, 3, 1, 1, 1, 1, 1, 1, 1, ir.Uint8, ir.Int8},
			{8, 4, 40, 64, 1, 1, 1, 1, 2, 0, 0, 0, 0, ir.Int8, ir.Uint8},
			{3, 70, 33, 40, 3, 3, 2, 1, 1, 1, 1, 1, 1, ir.Uint8, ir.Uint8},
			{4, 5, 30, 50, 3, 2, 1, 2, 1, 2, 0, 1, 1, ir.Int8, ir.Int8},
			{24, 1, 32, 40, 1, 1, 1, 1, 1, 0, 0, 0, 0, ir.Uint8, ir.Uint8},
			{5, 6, 40, 70, 3, 3, 3, 2, 1, 2, 1, 0, 2, ir.Uint8, ir.Int8},
			{16, 12, 20, 90, 5, 5, 1, 1, 2, 2, 2, 2, 2, ir.Int8, ir.Uint8},
			{4100, 7, 4, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, ir.Uint8, ir.Int8}, // residual taps k past int16
			// depth >= 128, the unfold's paths (AMX on Sapphire Rapids): output rows as wide as the
			// input's across 64-byte steps, wider than 64 without padding, stride 2 in several 32-byte
			// steps, dilation with asymmetric pads, a 5x3 window, small strided planes
			{16, 20, 21, 70, 3, 3, 1, 1, 1, 1, 1, 1, 1, ir.Uint8, ir.Int8},
			{16, 20, 21, 70, 3, 3, 1, 1, 1, 0, 0, 0, 0, ir.Uint8, ir.Uint8},
			{16, 18, 23, 75, 3, 3, 2, 1, 1, 1, 1, 1, 1, ir.Uint8, ir.Int8},
			{16, 18, 23, 75, 3, 3, 1, 2, 1, 2, 1, 2, 3, ir.Int8, ir.Int8},
			{15, 17, 19, 33, 5, 3, 1, 1, 1, 2, 0, 2, 2, ir.Int8, ir.Uint8},
			{32, 40, 9, 9, 3, 3, 2, 1, 1, 0, 0, 1, 1, ir.Uint8, ir.Int8},
		} {
			for wi, wk := range convWeights {
				for _, prepared := range []bool{false, true} {
					x, w := randQ(r, c.xdt, 1, c.c, c.h, c.w), wk.gen(r, c.wdt, c.m, c.c/c.group, c.kh, c.kw)
					xz, wz := randQ(r, c.xdt), randQ(r, c.wdt, c.m)
					if wi == 1 && c.wdt == ir.Int8 { // symmetric, as quantizers write them
						clear(wz.Data)
					}
					if wi == 1 && c.wdt == ir.Uint8 {
						for i := range wz.Data {
							wz.Data[i] = byte(118 + r.Intn(21))
						}
					}
					oh := (c.h+c.pt+c.pb-c.d*(c.kh-1)-1)/c.s + 1
					ow := (c.w+c.pl+c.pr-c.d*(c.kw-1)-1)/c.s + 1
					y := ir.NewTensor(ir.Int32, []int64{1, c.m, oh, ow})
					n := &ir.Node{Name: "ci", Op: "ConvInteger", Attrs: ir.Attrs{"group": ir.IntAttr(c.group), "strides": ir.IntsAttr(c.s, c.s),
						"dilations": ir.IntsAttr(c.d, c.d), "pads": ir.IntsAttr(c.pt, c.pl, c.pb, c.pr)}}
					var pa *qpackedA
					if prepared { // the weight packed (and on AVX2 split) at load
						pa = packedConvWeight(opkernel.NewPrep(), w)
					}
					if err := qconv(&opkernel.Ctx{Threads: 2}, n, []*ir.Tensor{x, w, xz, wz}, []*ir.Tensor{y}, false, pa, nil); err != nil {
						t.Fatal(err)
					}
					cg, mg := c.c/c.group, c.m/c.group
					for o := int64(0); o < c.m; o++ {
						g := o / mg
						for i := int64(0); i < oh; i++ {
							for j := int64(0); j < ow; j++ {
								var want int64
								for ic := int64(0); ic < cg; ic++ {
									for a := int64(0); a < c.kh; a++ {
										for e := int64(0); e < c.kw; e++ {
											ih, iw := i*c.s-c.pt+a*c.d, j*c.s-c.pl+e*c.d
											if ih < 0 || ih >= c.h || iw < 0 || iw >= c.w {
												continue
											}
											want += (qval(x, int(((g*cg+ic)*c.h+ih)*c.w+iw)) - qval(xz, 0)) * (qval(w, int(((o*cg+ic)*c.kh+a)*c.kw+e)) - qval(wz, int(o)))
										}
									}
								}
								if got := int64(y.I32()[(o*oh+i)*ow+j]); got != want {
									t.Fatalf("%s %+v %s weights, prepared %v: y[%d][%d][%d] = %d, want %d", lv, c, wk.name, prepared, o, i, j, got, want)
								}
							}
						}
					}
				}
			}
		}
	}
}
