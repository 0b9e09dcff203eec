package nn

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"gkconv/internal/runtime/opkernel"
)

// TestGEMMSplit: a GEMM split over workers by rows or by columns (gemmOn)
// gives the serial result, for every transpose combination, with leading
// dimensions wider than the matrices and beta 0 and 1. Equal to a few ulps,
// not bitwise: OpenBLAS chooses kernels by matrix size (0.3.21 on a Zen 5
// CPU takes its small-matrix kernels for the split blocks), and they sum in
// another order.
func TestGEMMSplit(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, threads := range []int{2, 3} {
		for _, sh := range [][3]int{{300, 40, 50}, {7, 900, 80}, {64, 64, 64}, {33, 2000, 9}, {5, 5, 5}} {
			for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
				m, n, k := sh[0], sh[1], sh[2]
				lda, ldb, ldc := k+3, n+5, n+7
				if tr[0] {
					lda = m + 3
				}
				if tr[1] {
					ldb = k + 5
				}
				rows := func(tr bool, r, c, ld int) int {
					if tr {
						return c*ld + 1
					}
					return r*ld + 1
				}
				a := make([]float32, rows(tr[0], m, k, lda))
				b := make([]float32, rows(tr[1], k, n, ldb))
				for i := range a {
					a[i] = rng.Float32() - 0.5
				}
				for i := range b {
					b[i] = rng.Float32() - 0.5
				}
				for _, beta := range []float32{0, 1} {
					want := make([]float32, m*ldc)
					for i := range want {
						want[i] = float32(i % 7)
					}
					got := append([]float32(nil), want...)
					sgemm(tr[0], tr[1], m, n, k, 1, a, lda, b, ldb, beta, want, ldc)
					gemmOn(&opkernel.Ctx{Threads: threads}, sgemm)(tr[0], tr[1], m, n, k, 1, a, lda, b, ldb, beta, got, ldc)
					name := fmt.Sprintf("threads %d %dx%dx%d trans %v beta %v", threads, m, n, k, tr, beta)
					for i := range want {
						if d := math.Abs(float64(got[i] - want[i])); d > 1e-5*math.Max(1, math.Abs(float64(want[i]))) {
							t.Fatalf("%s: element %d = %v, serial %v", name, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}
