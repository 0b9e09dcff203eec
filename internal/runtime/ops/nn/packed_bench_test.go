package nn

// Packed-B GEMM against OpenBLAS (the MatMul kernel) on the transformer
// shapes, one thread. Run with OPENBLAS_CORETYPE=SkylakeX (see blas.go):
//   OPENBLAS_CORETYPE=SkylakeX go test -run XXX -bench PackedVsBLAS ./internal/runtime/ops/nn/

import (
	"fmt"
	"math/rand"
	"testing"
	"unsafe"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

func BenchmarkPackedVsBLAS(b *testing.B) {
	shapes := [][3]int{ // M, K, N
		{128, 768, 768}, {128, 768, 2304}, {128, 768, 3072}, {128, 3072, 768},
		{64, 768, 768}, {64, 768, 2304}, {64, 768, 3072}, {64, 3072, 768}, {64, 768, 50257}, {64, 512, 8192}, {64, 512, 8160},
		{1, 1280, 1000}, {1, 2048, 1000}, // the CNN classifiers at batch 1 (GEMV)
	}
	for _, s := range shapes {
		m, k, n := s[0], s[1], s[2]
		rng := rand.New(rand.NewSource(1))
		a, w := randTensor(rng, int64(m), int64(k)), randTensor(rng, int64(k), int64(n))
		y := ir.NewTensor(ir.Float32, []int64{int64(m), int64(n)})
		flops := 2 * float64(m) * float64(k) * float64(n)
		name := fmt.Sprintf("M%d_K%d_N%d", m, k, n)
		b.Run("openblas/"+name, func(b *testing.B) {
			benchOp(b, matMul, &ir.Node{Name: "mm", Op: "MatMul", Attrs: ir.Attrs{}}, []*ir.Tensor{a, w}, y, flops)
		})
		packed := ir.PackB(w.F32(), k, n, ir.PackNR, false)
		bp := ir.Float32Tensor([]int64{int64(len(packed))}, packed...)
		b.Run("packed/"+name, func(b *testing.B) {
			benchOp(b, packedMatMul, packedNode(k, n, ir.PackNR, false), []*ir.Tensor{a, bp}, y, flops)
		})
	}
}

// BenchmarkPackedCold mimics the model: every call reads a different packed B
// (copies cycled through a buffer larger than L3), so B always comes from
// DRAM, as each weight of an inference does. "unaligned" starts every B 7
// bytes into a cache line, as a weight in the .mindir mapping may (protobuf
// raw_data lies at any byte offset).
//
//	OPENBLAS_CORETYPE=SkylakeX go test -run XXX -bench PackedCold ./internal/runtime/ops/nn/
func BenchmarkPackedCold(b *testing.B) {
	shapes := [][3]int{{128, 768, 768}, {128, 768, 3072}, {128, 3072, 768}, {64, 768, 2304}, {64, 512, 8192}, {64, 512, 8160}}
	for _, s := range shapes {
		m, k, n := s[0], s[1], s[2]
		rng := rand.New(rand.NewSource(1))
		a, w := randTensor(rng, int64(m), int64(k)), randTensor(rng, int64(k), int64(n))
		y := ir.NewTensor(ir.Float32, []int64{int64(m), int64(n)})
		packed := ir.PackB(w.F32(), k, n, ir.PackNR, false)
		copies := max(2, (96<<20)/(4*len(packed))) // > 96 MiB in all: never cached
		stride := (len(packed) + 16) * 4           // bytes; a multiple of 64
		buf := make([]byte, copies*stride+64)      // large: page aligned
		hf := hugeFloats(&buf, (copies*stride+64)/4)
		hbuf := unsafe.Slice((*byte)(unsafe.Pointer(&hf[0])), len(hf)*4)
		flops := 2 * float64(m) * float64(k) * float64(n)
		for _, align := range []struct {
			name string
			off  int
			huge bool
		}{{"aligned", 0, false}, {"unaligned", 7, false}, {"huge", 0, true}} {
			ins := make([][]*ir.Tensor, copies)
			buf := buf
			if align.huge {
				buf = hbuf
			}
			for c := range copies {
				o := c*stride + align.off
				copy(unsafe.Slice((*float32)(unsafe.Pointer(&buf[o])), len(packed)), packed)
				bp := &ir.Tensor{DType: ir.Float32, Shape: []int64{int64(len(packed))}, Data: buf[o : o+4*len(packed)]}
				ins[c] = []*ir.Tensor{a, bp}
			}
			nd := packedNode(k, n, ir.PackNR, false)
			b.Run(fmt.Sprintf("%s/M%d_K%d_N%d", align.name, m, k, n), func(b *testing.B) {
				ctx := &opkernel.Ctx{Threads: 1}
				out := []*ir.Tensor{y}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := packedMatMul(ctx, nd, ins[i%copies], out); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkPackWeight is the load-time cost of packing one bert_base weight
// (768 x 3072, both stored layouts) into its anonymous mapping.
func BenchmarkPackWeight(b *testing.B) {
	w := randTensor(rand.New(rand.NewSource(1)), 768, 3072)
	for _, transB := range []bool{false, true} {
		k, n := 768, 3072
		if transB {
			k, n = n, k
		}
		b.Run(fmt.Sprintf("transB=%v", transB), func(b *testing.B) {
			b.SetBytes(int64(len(w.Data)))
			for i := 0; i < b.N; i++ {
				newPackedWeight(w, k, n, transB)
			}
		})
	}
}
