package nn

// Benchmarks of the float32 hot paths at one thread ($GKCONV_BENCH_THREADS
// for more). Run with
// OPENBLAS_CORETYPE=SkylakeX in the environment on AMD CPUs (see blas.go).

import (
	"fmt"
	"math/rand"
	"os"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

func randTensor(rng *rand.Rand, shape ...int64) *ir.Tensor {
	t := ir.NewTensor(ir.Float32, shape)
	for i := range t.F32() {
		t.F32()[i] = rng.Float32()*2 - 1
	}
	return t
}

func benchOp(b *testing.B, f opkernel.Func, n *ir.Node, in []*ir.Tensor, out *ir.Tensor, flops float64) {
	ctx := &opkernel.Ctx{Threads: benchThreads()}
	if err := f(ctx, n, in, []*ir.Tensor{out}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		_ = f(ctx, n, in, []*ir.Tensor{out})
	}
	cpu := cpuTime() - cpu0
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	// on a shared, loaded machine the process CPU time is the steadier measure
	b.ReportMetric(flops*float64(b.N)/cpu.Seconds()/1e9, "GFLOP/s-cpu")
}

// benchThreads is $GKCONV_BENCH_THREADS, else 1: the benchmarks measure one
// thread unless asked for the split paths.
func benchThreads() int {
	if n, err := strconv.Atoi(os.Getenv("GKCONV_BENCH_THREADS")); err == nil && n > 0 {
		return n
	}
	return 1
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func convNode(group int64, pads ...int64) *ir.Node {
	n := &ir.Node{Name: "bench", Op: "Conv2D", Attrs: ir.Attrs{"group": ir.IntAttr(group)}}
	if len(pads) > 0 {
		n.Attrs["pads"] = ir.IntsAttr(pads...)
	}
	return n
}

// resnet-style 3x3 conv, 64 -> 64 channels on 56x56.
func BenchmarkConv3x3(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	x, w, bias := randTensor(rng, 1, 64, 56, 56), randTensor(rng, 64, 64, 3, 3), randTensor(rng, 64)
	y := ir.NewTensor(ir.Float32, []int64{1, 64, 56, 56})
	benchOp(b, conv, convNode(1, 1, 1, 1, 1), []*ir.Tensor{x, w, bias}, y, 2*64*64*9*56*56)
}

// 1x1 conv, 64 -> 256 channels on 56x56 (direct GEMM, no im2col).
func BenchmarkConv1x1(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	x, w, bias := randTensor(rng, 1, 64, 56, 56), randTensor(rng, 256, 64, 1, 1), randTensor(rng, 256)
	y := ir.NewTensor(ir.Float32, []int64{1, 256, 56, 56})
	benchOp(b, conv, convNode(1), []*ir.Tensor{x, w, bias}, y, 2*64*256*56*56)
}

// depthwise 3x3 on 144 channels of 56x56 (mobilenet_v2).
func BenchmarkDepthwise3x3(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	x, w, bias := randTensor(rng, 1, 144, 56, 56), randTensor(rng, 144, 1, 3, 3), randTensor(rng, 144)
	y := ir.NewTensor(ir.Float32, []int64{1, 144, 56, 56})
	benchOp(b, conv, convNode(144, 1, 1, 1, 1), []*ir.Tensor{x, w, bias}, y, 2*144*9*56*56)
}

// depthwise 3x3 stride 2 on 144 channels of 56x56.
func BenchmarkDepthwise3x3s2(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	x, w, bias := randTensor(rng, 1, 144, 56, 56), randTensor(rng, 144, 1, 3, 3), randTensor(rng, 144)
	y := ir.NewTensor(ir.Float32, []int64{1, 144, 28, 28})
	n := convNode(144, 1, 1, 1, 1)
	n.Attrs["strides"] = ir.IntsAttr(2, 2)
	benchOp(b, conv, n, []*ir.Tensor{x, w, bias}, y, 2*144*9*28*28)
}

// BERT-base projection: [128, 768] x [768, 768].
func BenchmarkMatMul128x768x768(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	a, w := randTensor(rng, 128, 768), randTensor(rng, 768, 768)
	y := ir.NewTensor(ir.Float32, []int64{128, 768})
	benchOp(b, matMul, &ir.Node{Name: "bench", Op: "MatMul", Attrs: ir.Attrs{}}, []*ir.Tensor{a, w}, y, 2*128*768*768)
}

// resnet50's stem max pool: 3x3 stride 2 pad 1 on 64x112x112.
func BenchmarkMaxPool3x3s2(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	x := randTensor(rng, 1, 64, 112, 112)
	y := ir.NewTensor(ir.Float32, []int64{1, 64, 56, 56})
	n := &ir.Node{Name: "bench", Op: "MaxPool", Attrs: ir.Attrs{"kernel_shape": ir.IntsAttr(3, 3),
		"strides": ir.IntsAttr(2, 2), "pads": ir.IntsAttr(1, 1, 1, 1)}}
	benchOp(b, maxPool, n, []*ir.Tensor{x}, y, 9*64*56*56)
}

// issue 34's sweep shape: AveragePool 3x3 stride 1 pad 1 on 64x112x112.
func BenchmarkAvgPool3x3s1(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	x := randTensor(rng, 1, 64, 112, 112)
	y := ir.NewTensor(ir.Float32, []int64{1, 64, 112, 112})
	n := &ir.Node{Name: "bench", Op: "AvgPool", Attrs: ir.Attrs{"kernel_shape": ir.IntsAttr(3, 3),
		"strides": ir.IntsAttr(1, 1), "pads": ir.IntsAttr(1, 1, 1, 1)}}
	benchOp(b, avgPool, n, []*ir.Tensor{x}, y, 9*64*112*112)
}

// resnet50's stem: 7x7 stride 2 pad 3, 3 -> 64 channels on 224x224.
func BenchmarkConv7x7s2(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	x, w, bias := randTensor(rng, 1, 3, 224, 224), randTensor(rng, 64, 3, 7, 7), randTensor(rng, 64)
	y := ir.NewTensor(ir.Float32, []int64{1, 64, 112, 112})
	n := convNode(1, 3, 3, 3, 3)
	n.Attrs["strides"] = ir.IntsAttr(2, 2)
	benchOp(b, conv, n, []*ir.Tensor{x, w, bias}, y, 2*64*3*49*112*112)
}

// mobilenet_v2's depthwise 3x3 layers (pad 1): channels, input side, stride.
var mobilenetDW = []struct{ c, hw, s int64 }{
	{32, 112, 1}, {96, 112, 2}, {144, 56, 1}, {144, 56, 2}, {192, 28, 1}, {192, 28, 2},
	{384, 14, 1}, {576, 14, 1}, {576, 14, 2}, {960, 7, 1},
}

func BenchmarkMobileNetDW(b *testing.B) {
	for _, c := range mobilenetDW {
		b.Run(fmt.Sprintf("c%d_%dx%d_s%d", c.c, c.hw, c.hw, c.s), func(b *testing.B) {
			rng := rand.New(rand.NewSource(1))
			x, w, bias := randTensor(rng, 1, c.c, c.hw, c.hw), randTensor(rng, c.c, 1, 3, 3), randTensor(rng, c.c)
			o := (c.hw-1)/c.s + 1
			y := ir.NewTensor(ir.Float32, []int64{1, c.c, o, o})
			n := convNode(c.c, 1, 1, 1, 1)
			n.Attrs["strides"] = ir.IntsAttr(c.s, c.s)
			benchOp(b, conv, n, []*ir.Tensor{x, w, bias}, y, float64(2*c.c*9*o*o))
		})
	}
}

// mobilenet_v2's pointwise layers: input channels, output channels, plane side.
var mobilenetPW = []struct{ cin, cout, hw int64 }{
	{32, 16, 112}, {16, 96, 112}, {96, 24, 56}, {24, 144, 56}, {144, 24, 56}, {144, 32, 28},
	{32, 192, 28}, {192, 32, 28}, {192, 64, 14}, {64, 384, 14}, {384, 64, 14}, {384, 96, 14},
	{96, 576, 14}, {576, 96, 14}, {576, 160, 7}, {160, 960, 7}, {960, 160, 7}, {960, 320, 7}, {320, 1280, 7},
}

// BenchmarkMobileNetPW runs them with constant weights, so the path the
// model takes (the packed forms included) runs; ConvPackedVsBLAS compares
// the paths.
func BenchmarkMobileNetPW(b *testing.B) { benchPointwise(b, mobilenetPW) }

// benchPointwise runs 1x1 convs (input, output channels, plane side) with
// constant weights and a bias.
func benchPointwise(b *testing.B, shapes []struct{ cin, cout, hw int64 }) {
	for _, c := range shapes {
		b.Run(fmt.Sprintf("%dto%d_%dx%d", c.cin, c.cout, c.hw, c.hw), func(b *testing.B) {
			rng := rand.New(rand.NewSource(1))
			x, w, bias := randTensor(rng, 1, c.cin, c.hw, c.hw), randTensor(rng, c.cout, c.cin, 1, 1), randTensor(rng, c.cout)
			y := ir.NewTensor(ir.Float32, []int64{1, c.cout, c.hw, c.hw})
			benchOp(b, conv, constConvNode(ir.Attrs{}, w), []*ir.Tensor{x, w, bias}, y, float64(2*c.cin*c.cout*c.hw*c.hw))
		})
	}
}

// efficientnet_b0's depthwise layers (pad k/2): channels, input side, kernel,
// stride, and how many layers of the model have that shape.
var efficientnetDW = []struct{ c, hw, k, s, n int64 }{
	{32, 112, 3, 1, 1}, {96, 112, 3, 2, 1}, {144, 56, 3, 1, 1}, {144, 56, 5, 2, 1},
	{240, 28, 5, 1, 1}, {240, 28, 3, 2, 1}, {480, 14, 3, 1, 2}, {480, 14, 5, 1, 1},
	{672, 14, 5, 1, 2}, {672, 14, 5, 2, 1}, {1152, 7, 5, 1, 3}, {1152, 7, 3, 1, 1},
}

func BenchmarkEfficientNetDW(b *testing.B) {
	for _, c := range efficientnetDW {
		b.Run(fmt.Sprintf("c%d_%dx%d_k%d_s%d", c.c, c.hw, c.hw, c.k, c.s), func(b *testing.B) {
			rng := rand.New(rand.NewSource(1))
			x, w, bias := randTensor(rng, 1, c.c, c.hw, c.hw), randTensor(rng, c.c, 1, c.k, c.k), randTensor(rng, c.c)
			o := (c.hw-1)/c.s + 1
			y := ir.NewTensor(ir.Float32, []int64{1, c.c, o, o})
			p := c.k / 2
			n := convNode(c.c, p, p, p, p)
			n.Attrs["strides"] = ir.IntsAttr(c.s, c.s)
			benchOp(b, conv, n, []*ir.Tensor{x, w, bias}, y, float64(2*c.c*c.k*c.k*o*o))
		})
	}
}

// efficientnet_b0's 1x1 convs of its 14x14 and 7x7 stages: expand, project,
// and the squeeze-excite pair on the pooled 1x1 plane (input, output
// channels, side).
var efficientnetPW = []struct{ cin, cout, hw int64 }{
	{80, 480, 14}, {480, 80, 14}, {480, 112, 14}, {112, 672, 14}, {672, 112, 14}, {192, 1152, 7}, {1152, 192, 7}, {1152, 48, 1}, {48, 1152, 1}, {1152, 320, 7},
}

func BenchmarkEfficientNetPW(b *testing.B) { benchPointwise(b, efficientnetPW) }

// BenchmarkConvColdWeights runs 1x1 convs as a model does: every call with
// another weight tensor (copies cycled through more than 64 MiB, each packed
// on its first use), so the packed weights come from DRAM; "hot" reuses one.
// The gap is what weight streaming costs a conv in a model.
func BenchmarkConvColdWeights(b *testing.B) {
	for _, c := range []struct{ cin, cout, hw int64 }{{192, 1152, 7}, {1152, 192, 7}, {96, 576, 14}, {1024, 256, 14}} {
		rng := rand.New(rand.NewSource(1))
		x, bias := randTensor(rng, 1, c.cin, c.hw, c.hw), randTensor(rng, c.cout)
		y := ir.NewTensor(ir.Float32, []int64{1, c.cout, c.hw, c.hw})
		copies := max(2, int((64<<20)/(4*c.cin*c.cout)))
		nodes := make([]*ir.Node, copies)
		ins := make([][]*ir.Tensor, copies)
		for i := range copies {
			w := randTensor(rng, c.cout, c.cin, 1, 1)
			nodes[i], ins[i] = constConvNode(ir.Attrs{}, w), []*ir.Tensor{x, w, bias}
		}
		flops := float64(2 * c.cin * c.cout * c.hw * c.hw)
		for _, cold := range []bool{false, true} {
			b.Run(fmt.Sprintf("%dto%d_%dx%d/cold=%v", c.cin, c.cout, c.hw, c.hw, cold), func(b *testing.B) {
				ctx := &opkernel.Ctx{Threads: benchThreads()}
				for i := range copies { // pack every copy before timing
					if err := conv(ctx, nodes[i], ins[i], []*ir.Tensor{y}); err != nil {
						b.Fatal(err)
					}
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					j := 0
					if cold {
						j = i % copies
					}
					_ = conv(ctx, nodes[j], ins[j], []*ir.Tensor{y})
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkPointwiseAfterDepthwise runs mobilenet_v2's project 1x1 convs as
// they run in the model at several threads: their input was just written by
// a depthwise conv split by channels, so each thread reads part of it from
// the other core's cache. "written" rewrites the input that way before each
// conv (the time includes the rewrite; "write" is the rewrite alone),
// "cached" runs on an input each thread has in its own cache.
func BenchmarkPointwiseAfterDepthwise(b *testing.B) {
	for _, c := range []struct{ cin, cout, hw int64 }{{32, 16, 112}, {96, 24, 56}, {144, 24, 56}, {192, 32, 28}} {
		for _, mode := range []string{"cached", "written", "write"} {
			b.Run(fmt.Sprintf("%dto%d_%dx%d/%s", c.cin, c.cout, c.hw, c.hw, mode), func(b *testing.B) {
				rng := rand.New(rand.NewSource(1))
				x, w, bias := randTensor(rng, 1, c.cin, c.hw, c.hw), randTensor(rng, c.cout, c.cin, 1, 1), randTensor(rng, c.cout)
				src, xs, vol := slices.Clone(x.F32()), x.F32(), int(c.hw*c.hw)
				y := ir.NewTensor(ir.Float32, []int64{1, c.cout, c.hw, c.hw})
				ctx := &opkernel.Ctx{Threads: benchThreads()}
				n, in, out := constConvNode(ir.Attrs{}, w), []*ir.Tensor{x, w, bias}, []*ir.Tensor{y}
				if err := conv(ctx, n, in, out); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if mode != "cached" { // in groups of 16 planes, as the depthwise conv splits
						opkernel.ParallelForShared(ctx, int(c.cin), 16, func(s, e int) { copy(xs[s*vol:e*vol], src[s*vol:e*vol]) })
					}
					if mode != "write" {
						_ = conv(ctx, n, in, out)
					}
				}
			})
		}
	}
}
