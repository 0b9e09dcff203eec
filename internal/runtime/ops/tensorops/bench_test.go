package tensorops

import (
	"math/rand"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// Benchmarks of the float32 hot paths at BERT-base / GPT-2 sizes (seq 128,
// hidden 768, 12 heads). SetBytes counts bytes written, so MB/s compares
// directly with memory bandwidth (about 43 GB/s on one core here).

func benchOp(b *testing.B, threads int, op string, attrs ir.Attrs, in []*ir.Tensor, outs ...*ir.Tensor) {
	fn, _ := opkernel.Lookup(op)
	node := &ir.Node{Name: "bench", Op: op, Attrs: attrs}
	ctx := &opkernel.Ctx{Threads: threads}
	var bytes int64
	for _, o := range outs {
		bytes += int64(len(o.Data))
	}
	b.SetBytes(bytes)
	b.ResetTimer()
	for b.Loop() {
		if err := fn(ctx, node, in, outs); err != nil {
			b.Fatal(err)
		}
	}
}

func benchThreads(b *testing.B, f func(b *testing.B, threads int)) {
	for _, th := range []int{1, 2} {
		b.Run(map[int]string{1: "t1", 2: "t2"}[th], func(b *testing.B) { f(b, th) })
	}
}

func BenchmarkTranspose0213(b *testing.B) {
	x := randTensor(rand.New(rand.NewSource(1)), 1, 128, 12, 64)
	benchThreads(b, func(b *testing.B, th int) {
		benchOp(b, th, "Transpose", ir.Attrs{"perm": ir.IntsAttr(0, 2, 1, 3)}, []*ir.Tensor{x}, ir.NewTensor(ir.Float32, []int64{1, 12, 128, 64}))
	})
}

func BenchmarkTranspose0231(b *testing.B) {
	x := randTensor(rand.New(rand.NewSource(1)), 1, 128, 12, 64)
	benchThreads(b, func(b *testing.B, th int) {
		benchOp(b, th, "Transpose", ir.Attrs{"perm": ir.IntsAttr(0, 2, 3, 1)}, []*ir.Tensor{x}, ir.NewTensor(ir.Float32, []int64{1, 12, 64, 128}))
	})
}

func BenchmarkTranspose2D(b *testing.B) {
	x := randTensor(rand.New(rand.NewSource(1)), 768, 3072)
	benchThreads(b, func(b *testing.B, th int) {
		benchOp(b, th, "Transpose", nil, []*ir.Tensor{x}, ir.NewTensor(ir.Float32, []int64{3072, 768}))
	})
}

func BenchmarkConcatKV(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	past, cur := randTensor(rng, 1, 12, 127, 64), randTensor(rng, 1, 12, 1, 64)
	benchThreads(b, func(b *testing.B, th int) {
		benchOp(b, th, "Concat", ir.Attrs{"axis": ir.IntAttr(2)}, []*ir.Tensor{past, cur}, ir.NewTensor(ir.Float32, []int64{1, 12, 128, 64}))
	})
}

func BenchmarkSplitQKV(b *testing.B) {
	x := randTensor(rand.New(rand.NewSource(1)), 1, 128, 2304)
	benchThreads(b, func(b *testing.B, th int) {
		outs := []*ir.Tensor{}
		for range 3 {
			outs = append(outs, ir.NewTensor(ir.Float32, []int64{1, 128, 768}))
		}
		benchOp(b, th, "Split", ir.Attrs{"axis": ir.IntAttr(2), "num_outputs": ir.IntAttr(3)}, []*ir.Tensor{x}, outs...)
	})
}

func BenchmarkSliceQKV(b *testing.B) {
	x := randTensor(rand.New(rand.NewSource(1)), 1, 128, 2304)
	benchThreads(b, func(b *testing.B, th int) {
		benchOp(b, th, "Slice", nil, []*ir.Tensor{x, i64(768), i64(1536), i64(-1)}, ir.NewTensor(ir.Float32, []int64{1, 128, 768}))
	})
}

func BenchmarkGatherEmbedding(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	table := randTensor(rng, 30522, 768)
	ids := ir.NewTensor(ir.Int64, []int64{1, 128})
	for i := range ids.I64() {
		ids.I64()[i] = int64(rng.Intn(30522))
	}
	benchThreads(b, func(b *testing.B, th int) {
		benchOp(b, th, "Gather", nil, []*ir.Tensor{table, ids}, ir.NewTensor(ir.Float32, []int64{1, 128, 768}))
	})
}
