package cpu

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/testkit"
)

// eigenRowSum is onnxruntime's float32 row sum (Eigen's redux with two
// 4-float packet accumulators) for a row starting 16-byte aligned:
// gk_ort_sum_row_f32 with off % 4 == 0, written out in Go.
func eigenRowSum(y []float32) float32 {
	n := len(y)
	a1, a2 := n/4*4, n/8*8
	if a1 == 0 {
		s := y[0]
		for _, v := range y[1:] {
			s += v
		}
		return s
	}
	var p0, p1 [4]float32
	copy(p0[:], y[:4])
	if a1 > 4 {
		copy(p1[:], y[4:8])
		for i := 8; i < a2; i += 8 {
			for j := 0; j < 4; j++ {
				p0[j] += y[i+j]
				p1[j] += y[i+4+j]
			}
		}
		for j := 0; j < 4; j++ {
			p0[j] += p1[j]
		}
		if a1 > a2 {
			for j := 0; j < 4; j++ {
				p0[j] += y[a2+j]
			}
		}
	}
	s := (p0[0] + p0[2]) + (p0[1] + p0[3])
	for _, v := range y[a1:] {
		s += v
	}
	return s
}

// TestStreamedOrtSumBits: row sums the row kernel accumulates during their
// pass (ortStreams: whole blocks, rows 16-byte aligned) give onnxruntime's
// order bit for bit, on values of mixed magnitude where any other order
// rounds differently, for a sum of an input (pass 1) and of a computed
// value (x*x, the variance's pass), at one and two threads.
func TestStreamedOrtSumBits(t *testing.T) {
	for _, shape := range [][]int64{{3, 768}, {2, 12544}, {4, 2, 64}, {1, 96}, {5, 256}} {
		b := testkit.New(t, "osum")
		x := b.Input("", shape...)
		s := b.Op("ReduceSum", keep(1), x, b.Ints(-1))
		q := b.Op("ReduceSum", keep(1), b.Op("Mul", nil, x, x), b.Ints(-1))
		n := b.GraphKernel("osum", s, q)
		build(t, t.TempDir(), n)
		if src := n.Attrs.String(ir.GKKernelSource, ""); !strings.Contains(src, "for (int q = 0; q <") {
			t.Fatalf("%v: the sums are not streamed:\n%s", shape, src)
		}
		r := rand.New(rand.NewSource(int64(len(shape)) * shape[len(shape)-1]))
		xi := randTensor(r, x.Shape, -1, 1)
		for i := range xi.F32() {
			xi.F32()[i] *= float32(math.Pow(10, float64(r.Intn(7)-3)))
		}
		row := int(shape[len(shape)-1])
		differs := false // the order matters on these values
		for k := 0; k*row < len(xi.F32()); k++ {
			var naive float32
			for _, v := range xi.F32()[k*row : (k+1)*row] {
				naive += v
			}
			differs = differs || naive != eigenRowSum(xi.F32()[k*row:(k+1)*row])
		}
		if !differs {
			t.Fatalf("%v: a left-to-right sum gives onnxruntime's bits on every row: the test cannot tell orders apart", shape)
		}
		for _, threads := range []int{1, 2} {
			got := runKernel(t, n, threads, xi)
			for k := 0; k*row < len(xi.F32()); k++ {
				y := xi.F32()[k*row : (k+1)*row]
				sq := make([]float32, row)
				for i, v := range y {
					sq[i] = v * v
				}
				if w := eigenRowSum(y); math.Float32bits(got[0].F32()[k]) != math.Float32bits(w) {
					t.Errorf("%v row %d: sum %g, onnxruntime's order %g", shape, k, got[0].F32()[k], w)
				}
				if w := eigenRowSum(sq); math.Float32bits(got[1].F32()[k]) != math.Float32bits(w) {
					t.Errorf("%v row %d: sum of squares %g, onnxruntime's order %g", shape, k, got[1].F32()[k], w)
				}
			}
		}
	}
}
