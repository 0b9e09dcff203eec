package cpu

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/testkit"
)

// TestStreamedOrtSumBits: row sums the row kernel accumulates during their
// pass (ortStreams: whole blocks, rows 16-byte aligned) give the bits of
// gk_ort_sum_row_f32 (onnxruntime's order, checked against onnxruntime by
// TestFusedReduceMeanBitsOfOnnxruntime), here as the general-mode kernel
// computes them (a sum over the leading axis beside breaks the row plan),
// on values of mixed magnitude where a left-to-right sum rounds
// differently; a sum of an input (pass 1) and of a computed value (x*x,
// the variance's pass), at one and two threads.
func TestStreamedOrtSumBits(t *testing.T) {
	for _, shape := range [][]int64{{3, 768}, {2, 12544}, {4, 2, 64}, {1, 96}, {5, 256}} {
		kernel := func(general bool) *ir.Node {
			b := testkit.New(t, "osum")
			x := b.Input("", shape...)
			outs := []*ir.Value{b.Op("ReduceSum", keep(1), x, b.Ints(-1)), b.Op("ReduceSum", keep(1), b.Op("Mul", nil, x, x), b.Ints(-1))}
			if general {
				outs = append(outs, b.Op("ReduceSum", keep(1), x, b.Ints(0)))
			}
			n := b.GraphKernel("osum", outs...)
			build(t, t.TempDir(), n)
			return n
		}
		streamed, reference := kernel(false), kernel(true)
		if src := streamed.Attrs.String(ir.GKKernelSource, ""); !strings.Contains(src, "for (int q = 0; q <") {
			t.Fatalf("%v: the sums are not streamed:\n%s", shape, src)
		}
		if src := reference.Attrs.String(ir.GKKernelSource, ""); !strings.Contains(src, "onnxruntime's order */") {
			t.Fatalf("%v: the reference kernel does not sum in general mode:\n%s", shape, src)
		}
		r := rand.New(rand.NewSource(shape[len(shape)-1]))
		xi := randTensor(r, []int64{ir.NumElements(shape)}, -1, 1)
		for i := range xi.F32() {
			xi.F32()[i] *= float32(math.Pow(10, float64(r.Intn(7)-3)))
		}
		xi.Shape = shape
		row := int(shape[len(shape)-1])
		differs := false // the order matters on these values
		for k := 0; k*row < len(xi.F32()); k++ {
			var naive float32
			for _, v := range xi.F32()[k*row : (k+1)*row] {
				naive += v
			}
			differs = differs || naive != runKernel(t, reference, 1, xi)[0].F32()[k]
		}
		if !differs {
			t.Fatalf("%v: a left-to-right sum gives onnxruntime's bits on every row: the test cannot tell orders apart", shape)
		}
		for _, threads := range []int{1, 2} {
			got, want := runKernel(t, streamed, threads, xi), runKernel(t, reference, threads, xi)
			for o := 0; o < 2; o++ {
				for k, v := range got[o].F32() {
					if w := want[o].F32()[k]; math.Float32bits(v) != math.Float32bits(w) {
						t.Errorf("%v output %d row %d: streamed %g, gk_ort_sum_row_f32 %g", shape, o, k, v, w)
					}
				}
			}
		}
	}
}
