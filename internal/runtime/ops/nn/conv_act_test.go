package nn

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// TestConvFusedActivation runs Conv2D with activation_type NONE, RELU and
// RELU6, with and without a residual input (ir.ConvResidualInput), on every
// convolution path (depthwise, im2col + BLAS with and without bias,
// pointwise BLAS, grouped, both packed forms) and compares with the plain
// conv followed by the Add and the activation.
func TestConvFusedActivation(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for _, c := range convEpilogueCases {
		if (c.mode == packSlivers || c.mode == packStem) && !convGEMMAvailable.Load() {
			t.Logf("%s: no AVX2, not tested", c.name)
			continue
		}
		for _, act := range []int64{ir.ActNone, ir.ActReLU, ir.ActReLU6} {
			for _, resid := range []bool{false, true} {
				if act == ir.ActNone && !resid {
					continue
				}
				t.Run(fmt.Sprintf("%s/act%d/residual=%v", c.name, act, resid), func(t *testing.T) {
					convEpilogueCase(t, rng, c.mode, c.cin, c.cout, c.grp, c.k, c.hw, c.bias, act, resid)
				})
			}
		}
	}
}

// convEpilogueCases are the convolution paths the epilogue tests cover.
var convEpilogueCases = []struct {
	name           string
	mode           int32
	cin, cout, grp int
	k, hw          int64
	bias           bool
}{
	{"depthwise", -1, 24, 24, 24, 3, 29, true},
	{"depthwise_nobias", -1, 8, 8, 8, 3, 200, false},   // planes bigger than one epilogue step
	{"depthwise_blocked", -1, 36, 36, 36, 5, 14, true}, // groups of 16 channel-blocked, the rest on the row kernel
	{"im2col", -1, 5, 17, 1, 3, 40, true},
	{"im2col_nobias", -1, 5, 17, 1, 3, 40, false},
	{"pointwise_blas", -1, 6, 10, 1, 1, 12, false},
	{"grouped", -1, 6, 12, 3, 3, 11, true},
	{"packed_transposed", packTransposed, 7, 37, 1, 3, 17, true},
	{"packed_transposed_nobias", packTransposed, 7, 37, 1, 1, 9, false},
	{"packed_transposed_1x1_plane", packTransposed, 40, 70, 1, 1, 1, true}, // squeeze-excite: rows of one element, joined into one
	{"slivers", packSlivers, 9, 30, 1, 3, 21, true},
	{"slivers_nobias", packSlivers, 9, 30, 1, 1, 33, false},
	{"slivers_two_k_blocks", packSlivers, 40, 20, 1, 3, 12, true}, // K = 360: the activation after the last block
	{"stem", packStem, 3, 20, 1, 3, 37, true},                     // a partial channel block, a masked last vector
	{"stem_nobias", packStem, 2, 9, 1, 7, 21, false},
}

// convEpilogueCase runs one case of TestConvFusedActivation.
func convEpilogueCase(t *testing.T, rng *rand.Rand, mode int32, cin, cout, grp int, k, hw int64, bias bool, act int64, resid bool) {
	packedConvMode.Store(mode)
	defer packedConvMode.Store(0)
	pad := (k - 1) / 2
	x := randTensor(rng, 2, int64(cin), hw, hw)
	for i := range x.F32() {
		x.F32()[i] *= 4 // push values past 6 for RELU6
	}
	w := randTensor(rng, int64(cout), int64(cin/grp), k, k)
	out := hw + 2*pad - k + 1
	var b, z *ir.Tensor
	if bias {
		b = randTensor(rng, int64(cout))
	}
	attrs := ir.Attrs{"group": ir.IntAttr(int64(grp)), "pads": ir.IntsAttr(pad, pad, pad, pad)}
	plain := ir.NewTensor(ir.Float32, []int64{2, int64(cout), out, out})
	if err := conv(&opkernel.Ctx{Threads: 2}, constConvNode(attrs, w), []*ir.Tensor{x, w, b}, []*ir.Tensor{plain}); err != nil {
		t.Fatal(err)
	}
	fa := attrs.Clone()
	if act != ir.ActNone {
		fa[ir.AttrActivation] = ir.IntAttr(act)
	}
	n := constConvNode(fa, w)
	in := []*ir.Tensor{x, w, b}
	if resid {
		z = randTensor(rng, plain.Shape...)
		for i := range z.F32() {
			z.F32()[i] *= 8 // push sums past 6 and below 0
		}
		n.Inputs = append(n.Inputs, &ir.Value{Name: "z"})
		in = append(in, z)
	}
	fused := ir.NewTensor(ir.Float32, plain.Shape)
	for i := range fused.F32() {
		fused.F32()[i] = float32(math.NaN())
	}
	if err := conv(&opkernel.Ctx{Threads: 2}, n, in, []*ir.Tensor{fused}); err != nil {
		t.Fatal(err)
	}
	low, high := 0, 0
	for i, v := range plain.F32() {
		want := v
		if z != nil {
			want += z.F32()[i]
		}
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
}

// TestConvFusedActivationFloat64 covers the reference path, with and
// without a residual, and the refusal of an activation type the runtime does
// not apply and of a residual that is not the output's shape.
func TestConvFusedActivationFloat64(t *testing.T) {
	x := ir.NewTensor(ir.Float64, []int64{1, 1, 2, 2})
	copy(x.F64(), []float64{-3, 1, 7, 2})
	w := ir.NewTensor(ir.Float64, []int64{1, 1, 1, 1})
	w.F64()[0] = 1
	z := ir.NewTensor(ir.Float64, x.Shape)
	copy(z.F64(), []float64{1, -5, 0, 0.5})
	y := ir.NewTensor(ir.Float64, x.Shape)
	n := constConvNode(ir.Attrs{ir.AttrActivation: ir.IntAttr(ir.ActReLU6)}, w)
	run := func(in ...*ir.Tensor) error { return conv(&opkernel.Ctx{Threads: 1}, n, in, []*ir.Tensor{y}) }
	if err := run(x, w); err != nil {
		t.Fatal(err)
	}
	if got := y.F64(); got[0] != 0 || got[1] != 1 || got[2] != 6 || got[3] != 2 {
		t.Fatalf("got %v", got)
	}
	n.Inputs = append(n.Inputs, &ir.Value{Name: "z"})
	if err := run(x, w, nil, z); err != nil {
		t.Fatal(err)
	}
	if got := y.F64(); got[0] != 0 || got[1] != 0 || got[2] != 6 || got[3] != 2.5 {
		t.Fatalf("with residual: got %v", got)
	}
	if err := run(x, w, nil, ir.NewTensor(ir.Float64, []int64{1, 1, 1, 2})); err == nil {
		t.Fatal("a residual of another shape was accepted")
	}
	n.Attrs[ir.AttrActivation] = ir.IntAttr(5) // LEAKY_RELU: not a conv activation here
	if err := run(x, w); err == nil {
		t.Fatal("activation_type 5 accepted")
	}
	n.Attrs[ir.AttrActivation] = ir.IntAttr(ir.ActSwish)
	if err := run(x, w); err != nil {
		t.Fatal(err)
	}
	for i, v := range []float64{-3, 1, 7, 2} {
		if want := v / (1 + math.Exp(-v)); math.Abs(y.F64()[i]-want) > 1e-15 {
			t.Fatalf("SWISH: element %d: got %g, want %g", i, y.F64()[i], want)
		}
	}
}

// RELU and RELU6 applied in the registers of the sliver GEMM and of the
// direct few-channel conv keep NaN as NaN, as the epilogue and the op
// library's Relu do.
func TestConvSliversReluNaN(t *testing.T) {
	if !convGEMMAvailable.Load() {
		t.Skip("no sliver GEMM at this ISA level")
	}
	defer packedConvMode.Store(0)
	for _, form := range []int32{packSlivers, packStem} {
		packedConvMode.Store(form)
		rng := rand.New(rand.NewSource(5))
		cin := map[int32]int64{packSlivers: 8, packStem: 4}[form]
		x, w := randTensor(rng, 1, cin, 6, 6), randTensor(rng, 16, cin, 1, 1)
		x.F32()[3*36+7] = float32(math.NaN()) // channel 3, pixel 7
		for _, act := range []int64{ir.ActReLU, ir.ActReLU6} {
			y := ir.NewTensor(ir.Float32, []int64{1, 16, 6, 6})
			n := constConvNode(ir.Attrs{ir.AttrActivation: ir.IntAttr(act)}, w)
			if err := conv(&opkernel.Ctx{Threads: 1}, n, []*ir.Tensor{x, w, nil}, []*ir.Tensor{y}); err != nil {
				t.Fatal(err)
			}
			for oc := range 16 {
				for p := range 36 {
					v := y.F32()[oc*36+p]
					if isNaN := v != v; isNaN != (p == 7) {
						t.Fatalf("form %d act %d: output channel %d pixel %d = %g", form, act, oc, p, v)
					}
					if p != 7 && (v < 0 || (act == ir.ActReLU6 && v > 6)) {
						t.Fatalf("form %d act %d: output %g outside the clamp", form, act, v)
					}
				}
			}
		}
	}
}
