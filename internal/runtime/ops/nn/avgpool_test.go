package nn

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/cpuisa"
	"gkconv/internal/runtime/opkernel"
)

// TestAvgPool2DMatchesGo: the C 2-D average pool gives avgPoolT's bits for
// kernels, strides, dilations, pads (count_include_pad on and off,
// ceil_mode windows past the end), at every ISA level; NaN, ±Inf and -0
// inputs included.
func TestAvgPool2DMatchesGo(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	defer cpuisa.Force(cpuisa.Detected())
	type cfg struct {
		h, w, k, s, p, d int
		ceil, incl       bool
		sh               int // the stride along H when not s
	}
	var cfgs []cfg
	for _, c := range []cfg{{7, 9, 3, 1, 1, 1, false, false, 0}, {7, 9, 3, 1, 1, 1, false, true, 0}, {8, 8, 2, 2, 0, 1, false, false, 0},
		{13, 11, 3, 2, 1, 1, true, false, 0}, {13, 11, 3, 2, 1, 1, true, true, 0}, {9, 10, 5, 1, 2, 1, false, true, 0},
		{9, 10, 3, 1, 2, 2, false, false, 0}, {5, 5, 5, 1, 0, 1, false, false, 0}, {4, 40, 3, 3, 1, 1, true, true, 0}, {1, 17, 1, 1, 0, 1, false, false, 0}, {2, 2, 3, 3, 1, 1, true, true, 0}, {2, 2, 3, 3, 1, 1, true, false, 0},
		// planes wide enough for the 16-column register blocks of stride 1
		{5, 70, 3, 1, 1, 1, false, false, 0}, {6, 101, 5, 1, 2, 1, true, true, 0}, {7, 67, 3, 1, 0, 2, false, false, 0},
		{9, 80, 3, 1, 1, 1, false, true, 2}, {8, 45, 2, 1, 0, 1, true, false, 3}} {
		cfgs = append(cfgs, c)
	}
	for len(cfgs) < 300 { // and random geometries
		k := 1 + rng.Intn(5)
		w := 1 + rng.Intn(12)
		if len(cfgs)%3 == 0 { // wide enough for the 16-column blocks at stride 1
			w = 17 + rng.Intn(50)
		}
		cfgs = append(cfgs, cfg{1 + rng.Intn(12), w, k, 1 + rng.Intn(3), rng.Intn(k), 1 + rng.Intn(2),
			rng.Intn(2) == 0, rng.Intn(2) == 0, 0})
	}
	ran := 0
	for _, lv := range []cpuisa.Level{cpuisa.Portable, cpuisa.AVX2, cpuisa.AVX512} {
		if err := cpuisa.Force(lv); err != nil {
			continue
		}
		for _, c := range cfgs {
			name := fmt.Sprintf("%v/%+v", lv, c)
			x := ir.NewTensor(ir.Float32, []int64{2, 3, int64(c.h), int64(c.w)})
			for i := range x.F32() {
				x.F32()[i] = rng.Float32()*4 - 2
				switch rng.Intn(50) {
				case 0:
					x.F32()[i] = float32(math.NaN())
				case 1:
					x.F32()[i] = float32(math.Inf(1 - 2*rng.Intn(2)))
				case 2:
					x.F32()[i] = float32(math.Copysign(0, -1))
				}
			}
			sh := c.s
			if c.sh > 0 {
				sh = c.sh
			}
			attrs := ir.Attrs{"kernel_shape": ir.IntsAttr(int64(c.k), int64(c.k)), "strides": ir.IntsAttr(int64(sh), int64(c.s)),
				"pads": ir.IntsAttr(int64(c.p), int64(c.p), int64(c.p), int64(c.p)), "dilations": ir.IntsAttr(int64(c.d), int64(c.d))}
			if c.ceil {
				attrs["ceil_mode"] = ir.IntAttr(1)
			}
			if c.incl {
				attrs["count_include_pad"] = ir.IntAttr(1)
			}
			n := &ir.Node{Name: "pool", Op: "AvgPool", Attrs: attrs}
			g, err := poolGeom(n, x)
			if err != nil || g.out[1] <= 0 || g.out[2] <= 0 {
				continue // a window larger than the padded input
			}
			shape := []int64{2, 3, int64(g.out[1]), int64(g.out[2])}
			got, want := ir.NewTensor(ir.Float32, shape), ir.NewTensor(ir.Float32, shape)
			if err := avgPool(&opkernel.Ctx{Threads: 2}, n, []*ir.Tensor{x}, []*ir.Tensor{got}); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if g.wholeWindow() {
				// onnxruntime's MlasPool global kernel (globalpool.go)
				mlasGlobalMeans(&opkernel.Ctx{Threads: 1}, x.F32(), want.F32(), 6, g.inVol())
			} else {
				avgPoolT(&opkernel.Ctx{Threads: 1}, g, 6, c.incl, x.F32(), want.F32())
			}
			ran++
			for i, w := range want.F32() {
				v := got.F32()[i]
				if math.Float32bits(v) != math.Float32bits(w) && !(v != v && w != w) {
					t.Fatalf("%s: output %d = %g (%#x), Go %g (%#x)", name, i, v, math.Float32bits(v), w, math.Float32bits(w))
				}
			}
		}
	}
	if ran < 200 {
		t.Fatalf("only %d pool geometries checked", ran)
	}
	t.Logf("%d pool geometries checked", ran)
}
