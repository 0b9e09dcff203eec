package runtime

import (
	"fmt"
	"math/rand"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/cpuisa"
	"gkconv/internal/runtime/ops/nn"
	"gkconv/internal/testkit"
)

// isaModel is a small CNN with a head: a 3x3 conv on a 30x30 plane (the
// packed conv: its AVX-512 or AVX2 sliver GEMM, else the transposed form), a
// depthwise 3x3 conv, ReLU, MaxPool, a strided conv (im2col + OpenBLAS),
// Sigmoid, then a MatMul marked pack_b (the packed GEMM) and Softmax: every
// dispatching C path of internal/runtime/ops runs.
func isaModel(t *testing.T, r *rand.Rand) *ir.Graph {
	t.Helper()
	g := testkit.New(t, "isa")
	x := g.Input("x", 1, 16, 30, 30)
	w := func(shape ...int64) *ir.Value { return g.Const("", fill(r, ir.NewTensor(ir.Float32, shape), false)) }
	pads1 := ir.Attrs{"pads": ir.IntsAttr(1, 1, 1, 1)}
	y := g.Op("Conv2D", pads1, x, w(32, 16, 3, 3), w(32))
	dw := pads1.Clone()
	dw["group"] = ir.IntAttr(32)
	y = g.Op("ReLU", nil, g.Op("Conv2D", dw, y, w(32, 1, 3, 3), w(32)))
	y = g.Op("MaxPool", ir.Attrs{"kernel_shape": ir.IntsAttr(2, 2), "strides": ir.IntsAttr(2, 2)}, y)
	y = g.Op("Sigmoid", nil, g.Op("Conv2D", ir.Attrs{"strides": ir.IntsAttr(2, 2)}, y, w(24, 32, 3, 3), w(24)))
	y = g.Op("Reshape", nil, y, g.Ints(1, 24*7*7))
	head := fill(r, ir.NewTensor(ir.Float32, []int64{24 * 7 * 7, 40}), false)
	for i := range head.F32() { // logits of order 1: Softmax would magnify their rounding
		head.F32()[i] *= 0.05
	}
	y = g.Op("MatMul", ir.Attrs{ir.AttrPackB: ir.IntAttr(1)}, y, g.Const("", head), w(40))
	return g.Output(g.Op("Softmax", ir.Attrs{"axis": ir.IntAttr(-1)}, y))
}

// TestForcedISAMatchesDefault: forcing a lower ISA level (GKCONV_CPU_ISA)
// changes the code paths that run but not the results beyond float rounding.
func TestForcedISAMatchesDefault(t *testing.T) {
	best := cpuisa.Detected()
	if best == cpuisa.Portable {
		t.Skip("this CPU has neither AVX2 nor AVX-512: nothing lower to force")
	}
	defer cpuisa.Reset()
	r := rand.New(rand.NewSource(12))
	g := isaModel(t, r)
	x := fill(r, ir.NewTensor(ir.Float32, []int64{1, 16, 30, 30}), false)
	run := func(l cpuisa.Level) [][]float32 {
		if err := cpuisa.Force(l); err != nil {
			t.Fatal(err)
		}
		s, err := NewSession(g, Options{Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		return runOnce(t, s, x)
	}
	want := run(best)
	if _, convGEMM := nn.ISA(); best == cpuisa.AVX512 && !convGEMM {
		t.Error("AVX-512 level without the packed conv's sliver GEMM")
	}
	for l := best - 1; l >= cpuisa.Portable; l-- {
		got := run(l)
		gemm, convGEMM := nn.ISA()
		if wantGEMM := map[cpuisa.Level]string{cpuisa.AVX2: "avx2", cpuisa.Portable: "portable"}[l]; gemm != wantGEMM || convGEMM != (l == cpuisa.AVX2) {
			t.Errorf("level %s: packed GEMM %s (sliver conv GEMM %v), want %s, the sliver GEMM at AVX2 only", l, gemm, convGEMM, wantGEMM)
		}
		for i := range want {
			acc, err := Compare(fmt.Sprint(i), ir.Float32Tensor([]int64{int64(len(got[i]))}, got[i]...),
				ir.Float32Tensor([]int64{int64(len(want[i]))}, want[i]...), 0, 1e-5, 0)
			if err != nil || !acc.Pass {
				t.Fatalf("level %s against %s: %v %+v", l, best, err, acc)
			}
		}
	}
}
