package nn

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// TestConvFusedActivation runs Conv2D with activation_type RELU and RELU6 on
// every convolution path (depthwise, im2col + BLAS with and without bias,
// both packed forms, float64) and compares with the same conv without the
// attribute followed by the activation.
func TestConvFusedActivation(t *testing.T) {
	type tc struct {
		name           string
		mode           int32
		cin, cout, grp int
		k, hw          int64
		bias           bool
	}
	cases := []tc{
		{"depthwise", -1, 24, 24, 24, 3, 29, true},
		{"depthwise_nobias", -1, 8, 8, 8, 3, 200, false}, // planes bigger than one activation step
		{"im2col", -1, 5, 17, 1, 3, 40, true},
		{"im2col_nobias", -1, 5, 17, 1, 3, 40, false},
		{"grouped", -1, 6, 12, 3, 3, 11, true},
		{"packed_transposed", packTransposed, 7, 37, 1, 3, 17, true},
		{"packed_transposed_nobias", packTransposed, 7, 37, 1, 1, 9, false},
		{"slivers", packSlivers, 9, 30, 1, 3, 21, true},
		{"slivers_nobias", packSlivers, 9, 30, 1, 1, 33, false},
	}
	rng := rand.New(rand.NewSource(7))
	for _, c := range cases {
		if c.mode == packSlivers && !convGEMMAvailable.Load() {
			t.Logf("%s: no AVX-512, not tested", c.name)
			continue
		}
		for _, act := range []int64{ir.ActReLU, ir.ActReLU6} {
			t.Run(fmt.Sprintf("%s/act%d", c.name, act), func(t *testing.T) {
				packedConvMode.Store(c.mode)
				defer packedConvMode.Store(0)
				x := randTensor(rng, 2, int64(c.cin), c.hw, c.hw)
				for i := range x.F32() {
					x.F32()[i] *= 4 // push values past 6 for RELU6
				}
				w := randTensor(rng, int64(c.cout), int64(c.cin/c.grp), c.k, c.k)
				in := []*ir.Tensor{x, w}
				if c.bias {
					in = append(in, randTensor(rng, int64(c.cout)))
				}
				attrs := ir.Attrs{"group": ir.IntAttr(int64(c.grp)), "pads": ir.IntsAttr(1, 1, 1, 1)}
				out := c.hw + 2 - c.k + 1
				plain := ir.NewTensor(ir.Float32, []int64{2, int64(c.cout), out, out})
				if err := conv(&opkernel.Ctx{Threads: 2}, constConvNode(attrs, w), in, []*ir.Tensor{plain}); err != nil {
					t.Fatal(err)
				}
				fa := attrs.Clone()
				fa[ir.AttrActivation] = ir.IntAttr(act)
				fused := ir.NewTensor(ir.Float32, plain.Shape)
				for i := range fused.F32() {
					fused.F32()[i] = float32(math.NaN())
				}
				if err := conv(&opkernel.Ctx{Threads: 2}, constConvNode(fa, w), in, []*ir.Tensor{fused}); err != nil {
					t.Fatal(err)
				}
				clipped := 0
				for i, v := range plain.F32() {
					want := max(v, 0)
					if act == ir.ActReLU6 {
						want = min(want, 6)
					}
					if want == 6 {
						clipped++
					}
					if fused.F32()[i] != want {
						t.Fatalf("element %d: fused %g, conv then activation %g", i, fused.F32()[i], want)
					}
				}
				if act == ir.ActReLU6 && clipped == 0 {
					t.Fatal("no value reached 6: the test does not exercise RELU6's upper bound")
				}
			})
		}
	}
}

// TestConvFusedActivationFloat64 covers the reference path and the refusal
// of an activation type the runtime does not apply.
func TestConvFusedActivationFloat64(t *testing.T) {
	x := ir.NewTensor(ir.Float64, []int64{1, 1, 2, 2})
	copy(x.F64(), []float64{-3, 1, 7, 2})
	w := ir.NewTensor(ir.Float64, []int64{1, 1, 1, 1})
	w.F64()[0] = 1
	y := ir.NewTensor(ir.Float64, x.Shape)
	n := constConvNode(ir.Attrs{ir.AttrActivation: ir.IntAttr(ir.ActReLU6)}, w)
	if err := conv(&opkernel.Ctx{Threads: 1}, n, []*ir.Tensor{x, w}, []*ir.Tensor{y}); err != nil {
		t.Fatal(err)
	}
	if got := y.F64(); got[0] != 0 || got[1] != 1 || got[2] != 6 || got[3] != 2 {
		t.Fatalf("got %v", got)
	}
	n.Attrs[ir.AttrActivation] = ir.IntAttr(2) // SIGMOID: not a conv activation here
	if err := conv(&opkernel.Ctx{Threads: 1}, n, []*ir.Tensor{x, w}, []*ir.Tensor{y}); err == nil {
		t.Fatal("activation_type 2 accepted")
	}
}
