package elementwise

import (
	"math/rand"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

func randF32(shape ...int64) *ir.Tensor {
	t := ir.NewTensor(ir.Float32, shape)
	rng := rand.New(rand.NewSource(7))
	for i := range t.F32() {
		t.F32()[i] = rng.Float32()*8 - 4
	}
	return t
}

func bench(b *testing.B, op string, attrs ir.Attrs, in []*ir.Tensor, out *ir.Tensor) {
	f, _ := opkernel.Lookup(op)
	if attrs == nil {
		attrs = ir.Attrs{}
	}
	n := &ir.Node{Name: "b", Op: op, Attrs: attrs}
	ctx := &opkernel.Ctx{Threads: 1}
	b.SetBytes(int64(len(out.Data) + len(in[0].Data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := f(ctx, n, in, []*ir.Tensor{out}); err != nil {
			b.Fatal(err)
		}
	}
}

const benchN = 1 << 20

func BenchmarkAddSame(b *testing.B) {
	bench(b, "Add", nil, []*ir.Tensor{randF32(benchN), randF32(benchN)}, randF32(benchN))
}
func BenchmarkAddRow(b *testing.B) {
	bench(b, "Add", nil, []*ir.Tensor{randF32(1024, 1024), randF32(1024)}, randF32(1024, 1024))
}
func BenchmarkMulColumn(b *testing.B) {
	bench(b, "Mul", nil, []*ir.Tensor{randF32(1024, 1024), randF32(1024, 1)}, randF32(1024, 1024))
}
func BenchmarkDivScalar(b *testing.B) {
	bench(b, "RealDiv", nil, []*ir.Tensor{randF32(benchN), randF32()}, randF32(benchN))
}
func BenchmarkSubChannel(b *testing.B) { // NCHW minus per-channel [C,1,1]
	bench(b, "Sub", nil, []*ir.Tensor{randF32(1, 64, 128, 128), randF32(64, 1, 1)}, randF32(1, 64, 128, 128))
}
func BenchmarkReLU(b *testing.B) {
	bench(b, "ReLU", nil, []*ir.Tensor{randF32(benchN)}, randF32(benchN))
}
func BenchmarkSigmoid(b *testing.B) {
	bench(b, "Sigmoid", nil, []*ir.Tensor{randF32(benchN)}, randF32(benchN))
}
func BenchmarkTanh(b *testing.B) {
	bench(b, "Tanh", nil, []*ir.Tensor{randF32(benchN)}, randF32(benchN))
}
func BenchmarkExp(b *testing.B) { bench(b, "Exp", nil, []*ir.Tensor{randF32(benchN)}, randF32(benchN)) }
func BenchmarkErf(b *testing.B) { bench(b, "Erf", nil, []*ir.Tensor{randF32(benchN)}, randF32(benchN)) }
func BenchmarkGeLU(b *testing.B) {
	bench(b, "GeLU", nil, []*ir.Tensor{randF32(benchN)}, randF32(benchN))
}
func BenchmarkSoftmaxRows(b *testing.B) {
	bench(b, "Softmax", nil, []*ir.Tensor{randF32(12*128, 128)}, randF32(12*128, 128))
}
func BenchmarkReduceSumLast(b *testing.B) {
	bench(b, "ReduceSum", nil, []*ir.Tensor{randF32(1024, 1024), ir.Int64Tensor([]int64{1}, -1)}, randF32(1024, 1))
}
func BenchmarkReduceMeanLast(b *testing.B) {
	bench(b, "ReduceMean", nil, []*ir.Tensor{randF32(4096, 256), ir.Int64Tensor([]int64{1}, -1)}, randF32(4096, 1))
}
func BenchmarkReduceMeanSpatial(b *testing.B) { // global average pool form
	bench(b, "ReduceMean", nil, []*ir.Tensor{randF32(1, 256, 64, 64), ir.Int64Tensor([]int64{2}, 2, 3)}, randF32(1, 256, 1, 1))
}

func BenchmarkClip(b *testing.B) { // ReLU6 as Clip(x, 0, 6)
	x := randF32(benchN)
	bench(b, "Clip", nil, []*ir.Tensor{x, ir.Float32Tensor(nil, 0), ir.Float32Tensor(nil, 6)}, randF32(benchN))
}
func BenchmarkClipInPlace(b *testing.B) {
	x := randF32(benchN)
	bench(b, "Clip", nil, []*ir.Tensor{x, ir.Float32Tensor(nil, 0), ir.Float32Tensor(nil, 6)}, x)
}

// BenchmarkUnarySweep: every float32 unary op over 1M values in [0.5, 2.5]
// (Log and Sqrt defined), 1 thread.
func BenchmarkUnarySweep(b *testing.B) {
	for _, op := range []string{"ReLU", "Abs", "Neg", "Sqrt", "Rsqrt", "Square", "Reciprocal", "Log", "Exp", "Tanh", "Sigmoid", "HSigmoid", "HSwish", "LeakyReLU", "Elu", "SeLU", "Softplus", "Softsign", "Floor", "Ceil", "Round", "Sign", "Sin", "Cos", "Erf", "CeLU", "ThresholdedReLU", "Mish", "GeLU", "ReLU6"} {
		b.Run(op, func(b *testing.B) {
			x := randF32(benchN)
			for i := range x.F32() {
				x.F32()[i] = x.F32()[i]/4 + 1.5
			}
			bench(b, op, nil, []*ir.Tensor{x}, randF32(benchN))
		})
	}
}

// BenchmarkPReLUChannels: PRelu with per-channel slopes, the face-embedding
// ResNet shape of issue 34.
func BenchmarkPReLUChannels(b *testing.B) {
	x := randF32(1, 64, 112, 112)
	s := randF32(64, 1, 1)
	bench(b, "PReLU", nil, []*ir.Tensor{x, s}, randF32(1, 64, 112, 112))
}

// BenchmarkPowCube: Pow(x, 3), the tanh-GeLU cube as exported.
func BenchmarkPowCube(b *testing.B) {
	bench(b, "Pow", nil, []*ir.Tensor{randF32(benchN), cubeExponent()}, randF32(benchN))
}

func cubeExponent() *ir.Tensor {
	t := ir.NewTensor(ir.Float32, nil)
	t.F32()[0] = 3
	return t
}
