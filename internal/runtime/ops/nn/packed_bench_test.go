package nn

// Packed-B GEMM against OpenBLAS (the MatMul kernel) on the transformer
// shapes, one thread. Run with OPENBLAS_CORETYPE=SkylakeX (see blas.go):
//   OPENBLAS_CORETYPE=SkylakeX go test -run XXX -bench PackedVsBLAS ./internal/runtime/ops/nn/

import (
	"fmt"
	"math/rand"
	"testing"

	"gkconv/internal/ir"
)

func BenchmarkPackedVsBLAS(b *testing.B) {
	shapes := [][3]int{ // M, K, N
		{128, 768, 768}, {128, 768, 2304}, {128, 768, 3072}, {128, 3072, 768},
		{64, 768, 768}, {64, 768, 2304}, {64, 768, 3072}, {64, 3072, 768}, {64, 768, 50257},
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
		packed := PackB(w.F32(), k, n, ir.PackNR, false)
		bp := ir.Float32Tensor([]int64{int64(len(packed))}, packed...)
		b.Run("packed/"+name, func(b *testing.B) {
			benchOp(b, packedMatMul, packedNode(k, n, ir.PackNR, false), []*ir.Tensor{a, bp}, y, flops)
		})
	}
}
