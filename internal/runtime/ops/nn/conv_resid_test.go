package nn

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// TestConvResidual runs Conv2D with a residual input (ir.ConvResidualInput)
// and each activation on every float32 convolution path (depthwise, im2col +
// BLAS, grouped, pointwise, both packed forms), with and without bias, and
// compares with the conv without it, then the Add, then the activation.
func TestConvResidual(t *testing.T) {
	type tc struct {
		name           string
		mode           int32
		cin, cout, grp int
		k, hw          int64
		bias           bool
	}
	cases := []tc{
		{"depthwise", -1, 24, 24, 24, 3, 29, true},
		{"depthwise_nobias", -1, 8, 8, 8, 3, 200, false}, // planes bigger than one epilogue step
		{"im2col", -1, 5, 17, 1, 3, 40, true},
		{"im2col_nobias", -1, 5, 17, 1, 3, 40, false},
		{"pointwise_blas", -1, 6, 10, 1, 1, 12, false},
		{"grouped", -1, 6, 12, 3, 3, 11, true},
		{"packed_transposed", packTransposed, 7, 37, 1, 3, 17, true},
		{"packed_transposed_nobias", packTransposed, 7, 37, 1, 1, 9, false},
		{"slivers", packSlivers, 9, 30, 1, 3, 21, true},
		{"slivers_nobias", packSlivers, 9, 30, 1, 1, 33, false},
	}
	rng := rand.New(rand.NewSource(11))
	for _, c := range cases {
		if c.mode == packSlivers && !convGEMMAvailable.Load() {
			t.Logf("%s: no AVX-512, not tested", c.name)
			continue
		}
		for _, act := range []int64{ir.ActNone, ir.ActReLU, ir.ActReLU6} {
			t.Run(fmt.Sprintf("%s/act%d", c.name, act), func(t *testing.T) {
				packedConvMode.Store(c.mode)
				defer packedConvMode.Store(0)
				pad := (c.k - 1) / 2
				x := randTensor(rng, 2, int64(c.cin), c.hw, c.hw)
				w := randTensor(rng, int64(c.cout), int64(c.cin/c.grp), c.k, c.k)
				out := c.hw + 2*pad - c.k + 1
				z := randTensor(rng, 2, int64(c.cout), out, out)
				for i := range z.F32() {
					z.F32()[i] *= 8 // push sums past 6 and below 0
				}
				var b *ir.Tensor
				if c.bias {
					b = randTensor(rng, int64(c.cout))
				}
				attrs := ir.Attrs{"group": ir.IntAttr(int64(c.grp)), "pads": ir.IntsAttr(pad, pad, pad, pad)}
				plain := ir.NewTensor(ir.Float32, z.Shape)
				in := []*ir.Tensor{x, w}
				if b != nil {
					in = append(in, b)
				}
				if err := conv(&opkernel.Ctx{Threads: 2}, constConvNode(attrs, w), in, []*ir.Tensor{plain}); err != nil {
					t.Fatal(err)
				}
				fa := attrs.Clone()
				if act != ir.ActNone {
					fa[ir.AttrActivation] = ir.IntAttr(act)
				}
				fused := ir.NewTensor(ir.Float32, plain.Shape)
				for i := range fused.F32() {
					fused.F32()[i] = float32(math.NaN())
				}
				n := constConvNode(fa, w)
				n.Inputs = append(n.Inputs, &ir.Value{Name: "z"})
				if err := conv(&opkernel.Ctx{Threads: 2}, n, []*ir.Tensor{x, w, b, z}, []*ir.Tensor{fused}); err != nil {
					t.Fatal(err)
				}
				low, high := 0, 0
				for i, v := range plain.F32() {
					want := v + z.F32()[i]
					if act != ir.ActNone {
						want = max(want, 0)
					}
					if act == ir.ActReLU6 {
						want = min(want, 6)
					}
					if want <= 0 {
						low++
					}
					if want >= 6 {
						high++
					}
					if fused.F32()[i] != want {
						t.Fatalf("element %d: fused %g, conv then Add then activation %g", i, fused.F32()[i], want)
					}
				}
				if low == 0 || high == 0 {
					t.Fatalf("the data does not reach both clamps (%d at or below 0, %d at or above 6)", low, high)
				}
			})
		}
	}
}

// TestConvResidualFloat64 covers the reference path, and the refusal of a
// residual that is not the output's shape.
func TestConvResidualFloat64(t *testing.T) {
	x := ir.NewTensor(ir.Float64, []int64{1, 1, 2, 2})
	copy(x.F64(), []float64{-3, 1, 7, 2})
	w := ir.NewTensor(ir.Float64, []int64{1, 1, 1, 1})
	w.F64()[0] = 2
	z := ir.NewTensor(ir.Float64, x.Shape)
	copy(z.F64(), []float64{1, -5, 0, 0.5})
	y := ir.NewTensor(ir.Float64, x.Shape)
	n := constConvNode(ir.Attrs{ir.AttrActivation: ir.IntAttr(ir.ActReLU6)}, w)
	n.Inputs = append(n.Inputs, &ir.Value{Name: "z"})
	if err := conv(&opkernel.Ctx{Threads: 1}, n, []*ir.Tensor{x, w, nil, z}, []*ir.Tensor{y}); err != nil {
		t.Fatal(err)
	}
	if got := y.F64(); got[0] != 0 || got[1] != 0 || got[2] != 6 || got[3] != 4.5 {
		t.Fatalf("got %v", got)
	}
	bad := ir.NewTensor(ir.Float64, []int64{1, 1, 1, 2})
	if err := conv(&opkernel.Ctx{Threads: 1}, n, []*ir.Tensor{x, w, nil, bad}, []*ir.Tensor{y}); err == nil {
		t.Fatal("a residual of another shape was accepted")
	}
}
