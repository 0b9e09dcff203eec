package cpu

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"gkconv/internal/testkit"
)

// TestHoistPerChannelFactors: MindSpore's BatchNorm expansion over
// [n, c, h, w] with per-channel [c, 1, 1] operands. The factor
// scale/sqrt(var+eps) varies only with the channel, so the generated C
// computes it before the innermost (SIMD) loop, not per element (gcc leaves
// it inside a vectorised loop), and the kernel still gives the right values
// on 1 and 2 threads.
func TestHoistPerChannelFactors(t *testing.T) {
	const n, c, h, w = 2, 3, 5, 7
	b := testkit.New(t, "bnhoist")
	x := b.Input("", n, c, h, w)
	scale := b.Input("", c, 1, 1)
	bias := b.Input("", c, 1, 1)
	mean := b.Input("", c, 1, 1)
	variance := b.Input("", c, 1, 1)
	f := b.Op("Mul", nil, scale, b.Op("Rsqrt", nil, b.Op("Add", nil, variance, b.Scalar(1e-5))))
	y := b.Op("Add", nil, b.Op("Mul", nil, b.Op("Sub", nil, x, mean), f), bias)
	node := b.GraphKernel("bnhoist", y)
	src, err := GenerateC("bnhoist", node.Body)
	if err != nil {
		t.Fatal(err)
	}
	sq := strings.Index(src, "sqrtf(")
	simd := strings.LastIndex(src, "#pragma omp simd")
	if sq < 0 || simd < 0 || sq > simd {
		t.Fatalf("the per-channel sqrt is not hoisted before the innermost loop:\n%s", src)
	}
	build(t, t.TempDir(), node)
	r := rand.New(rand.NewSource(9))
	xi := randTensor(r, x.Shape, -3, 3)
	si, bi, mi := randTensor(r, scale.Shape, 0.5, 2), randTensor(r, bias.Shape, -1, 1), randTensor(r, mean.Shape, -1, 1)
	vi := randTensor(r, variance.Shape, 0.1, 2)
	want := make([]float64, len(xi.F32()))
	for i := range want {
		ch := i / (h * w) % c
		fac := float64(si.F32()[ch]) / math.Sqrt(float64(vi.F32()[ch])+1e-5)
		want[i] = (float64(xi.F32()[i])-float64(mi.F32()[ch]))*fac + float64(bi.F32()[ch])
	}
	for _, threads := range []int{1, 2} {
		got := runKernel(t, node, threads, xi, si, bi, mi, vi)
		checkClose(t, "y", got[0].F32(), want, 1e-5, 3)
	}
}
