package nn

// Benchmarks of the float32 hot paths at one thread. Run with
// OPENBLAS_CORETYPE=SkylakeX in the environment on AMD CPUs (see blas.go).

import (
	"math/rand"
	"syscall"
	"testing"
	"time"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/kernel"
)

func randTensor(rng *rand.Rand, shape ...int64) *ir.Tensor {
	t := ir.NewTensor(ir.Float32, shape)
	for i := range t.F32() {
		t.F32()[i] = rng.Float32()*2 - 1
	}
	return t
}

func benchOp(b *testing.B, f kernel.Func, n *ir.Node, in []*ir.Tensor, out *ir.Tensor, flops float64) {
	ctx := &kernel.Ctx{Threads: 1}
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

// resnet50's stem: 7x7 stride 2 pad 3, 3 -> 64 channels on 224x224.
func BenchmarkConv7x7s2(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	x, w, bias := randTensor(rng, 1, 3, 224, 224), randTensor(rng, 64, 3, 7, 7), randTensor(rng, 64)
	y := ir.NewTensor(ir.Float32, []int64{1, 64, 112, 112})
	n := convNode(1, 3, 3, 3, 3)
	n.Attrs["strides"] = ir.IntsAttr(2, 2)
	benchOp(b, conv, n, []*ir.Tensor{x, w, bias}, y, 2*64*3*49*112*112)
}
