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

// TestDepthwiseVariants runs the depthwise convolution at every ISA level
// the CPU has (AVX-512, AVX2, portable: dw_rows_f32's vector widths 16/8,
// 8 and 4, and the AVX-512 3x3 kernels) on random shapes: kernels 3, 5 and 7
// (dw_rows_f32) and 2, 4 and dilation 2 (the generic loop), strides 1 and 2,
// odd widths, narrow planes, symmetric and asymmetric pads, with and without
// bias, no activation, RELU and RELU6, at 1 and 2 threads, against
// convDirect in float64 followed by the activation.
func TestDepthwiseVariants(t *testing.T) {
	defer cpuisa.Reset()
	rng := rand.New(rand.NewSource(12))
	type tc struct {
		ch, h, w, k, s, d int64
		pads              []int64
	}
	var cases []tc
	// fixed corners: efficientnet/mobilenet-like shapes, 1-wide and tiny planes
	cases = append(cases,
		tc{5, 14, 14, 5, 1, 1, []int64{2, 2, 2, 2}}, tc{5, 14, 14, 5, 2, 1, []int64{2, 2, 2, 2}},
		tc{3, 7, 7, 5, 1, 1, []int64{2, 2, 2, 2}}, tc{3, 7, 7, 3, 1, 1, []int64{1, 1, 1, 1}},
		tc{2, 1, 1, 5, 1, 1, []int64{2, 2, 2, 2}}, tc{2, 9, 1, 3, 2, 1, []int64{1, 1, 1, 1}},
		tc{2, 40, 37, 7, 2, 1, []int64{3, 3, 3, 3}}, tc{2, 5, 5, 5, 1, 1, []int64{0, 0, 0, 0}},
		tc{2, 11, 33, 3, 1, 2, []int64{2, 2, 2, 2}}, tc{2, 12, 18, 4, 2, 1, []int64{1, 2, 2, 1}},
	)
	for len(cases) < 60 {
		k := []int64{3, 5, 7, 3, 5, 2}[rng.Intn(6)]
		c := tc{ch: 1 + rng.Int63n(6), h: 1 + rng.Int63n(30), w: 1 + rng.Int63n(45), k: k,
			s: 1 + rng.Int63n(2), d: 1}
		if rng.Intn(8) == 0 {
			c.d = 2
		}
		c.pads = make([]int64, 4)
		for i := range c.pads {
			c.pads[i] = rng.Int63n(k) // asymmetric, up to k-1
		}
		ext := (k-1)*c.d + 1
		if c.h+c.pads[0]+c.pads[2] < ext || c.w+c.pads[1]+c.pads[3] < ext {
			continue
		}
		cases = append(cases, c)
	}
	levels := []cpuisa.Level{cpuisa.AVX512, cpuisa.AVX2, cpuisa.Portable}
	for _, lv := range levels {
		if err := cpuisa.Force(lv); err != nil {
			t.Logf("%s not tested: %v", lv, err)
			continue
		}
		for i, c := range cases {
			x := randTensor(rng, 2, c.ch, c.h, c.w)
			for j := range x.F32() {
				x.F32()[j] *= 8 // past 6 for RELU6
			}
			w, b := randTensor(rng, c.ch, 1, c.k, c.k), randTensor(rng, c.ch)
			attrs := ir.Attrs{"group": ir.IntAttr(c.ch), "strides": ir.IntsAttr(c.s, c.s),
				"dilations": ir.IntsAttr(c.d, c.d), "pads": ir.IntsAttr(c.pads...)}
			g, err := windowAttrs(&ir.Node{Name: "t", Op: "Conv2D", Attrs: attrs}, x.Shape[2:], w.Shape[2:], false)
			if err != nil {
				t.Fatal(err)
			}
			f := float64s(x, w, b)
			x64, w64, b64 := f[0], f[1], f[2]
			shape := []int64{2, c.ch, int64(g.out[1]), int64(g.out[2])}
			for _, bias := range []bool{true, false} {
				in, bref := []*ir.Tensor{x, w, b}, b64
				if !bias {
					in, bref = in[:2], nil
				}
				ref := make([]float64, 2*c.ch*int64(g.out[1]*g.out[2]))
				convDirect(&opkernel.Ctx{Threads: 1}, g, 2, int(c.ch), int(c.ch), int(c.ch), x64, w64, bref, ref)
				for _, act := range []int64{ir.ActNone, ir.ActReLU, ir.ActReLU6} {
					for _, threads := range []int{1, 2} {
						name := fmt.Sprintf("%s/case%d%+v/bias%v/act%d/threads%d", lv, i, c, bias, act, threads)
						a := attrs.Clone()
						a[ir.AttrActivation] = ir.IntAttr(act)
						y := ir.NewTensor(ir.Float32, shape)
						for j := range y.F32() {
							y.F32()[j] = float32(math.NaN())
						}
						if err := conv(&opkernel.Ctx{Threads: threads}, &ir.Node{Name: "t", Op: "Conv2D", Attrs: a},
							in, []*ir.Tensor{y}); err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						checkActivated(t, name, y.F32(), ref, act)
					}
				}
			}
		}
	}
}

// checkActivated compares got with the activation act (none, RELU, RELU6,
// SWISH) of ref.
func checkActivated(t *testing.T, name string, got []float32, ref []float64, act int64) {
	t.Helper()
	for j, want := range ref {
		switch act {
		case ir.ActReLU:
			want = max(want, 0)
		case ir.ActReLU6:
			want = min(max(want, 0), 6)
		case ir.ActSwish:
			want /= 1 + math.Exp(-want)
		}
		if g := float64(got[j]); !(math.Abs(g-want) <= 1e-4+1e-5*math.Abs(want)) {
			t.Fatalf("%s: element %d got %g want %g", name, j, g, want)
		}
	}
}

// float64s is each tensor's values as float64.
func float64s(ts ...*ir.Tensor) [][]float64 {
	out := make([][]float64, len(ts))
	for i, t := range ts {
		out[i], _ = t.Float64s()
	}
	return out
}

// TestDepthwiseChannelBlocked checks the channel-blocked path of small
// depthwise planes (dw_cb16_f32 at AVX-512, dw_cb8_f32 at AVX2), at strides
// 2 and 1, against convDirect in float64:
// kernels 3, 5 and 7, channel counts that are and are not multiples of 16
// (the rest take the other paths; with batch 2 and 2 threads the groups start
// at channels other than 0), odd and even sides, 1-wide planes, symmetric,
// asymmetric and zero pads, with and without bias, and the activations the
// kernel applies (none, RELU, RELU6) and one the epilogue applies (SWISH).
// It also checks the legacy paths give the same results.
func TestDepthwiseChannelBlocked(t *testing.T) {
	defer cpuisa.Reset()
	for _, lv := range []cpuisa.Level{cpuisa.AVX512, cpuisa.AVX2} {
		if err := cpuisa.Force(lv); err != nil {
			t.Logf("%v: %v", lv, err)
			continue
		}
		t.Run(fmt.Sprint(lv), depthwiseChannelBlocked)
	}
}

func depthwiseChannelBlocked(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	type tc struct {
		ch, h, w, k int64
		pads        []int64
		stride      int64
	}
	cases := []tc{
		{16, 14, 14, 5, []int64{2, 2, 2, 2}, 2}, {35, 14, 14, 3, []int64{1, 1, 1, 1}, 2},
		{48, 28, 28, 5, []int64{2, 2, 2, 2}, 2}, {17, 13, 11, 7, []int64{3, 3, 3, 3}, 2},
		{32, 7, 7, 3, []int64{0, 0, 0, 0}, 2}, {16, 9, 1, 3, []int64{1, 1, 1, 1}, 2},
		{20, 27, 15, 5, []int64{1, 2, 2, 1}, 2}, {33, 12, 10, 3, []int64{0, 1, 1, 0}, 2},
		{16, 5, 5, 5, []int64{2, 0, 0, 2}, 2}, {64, 1, 1, 3, []int64{1, 1, 1, 1}, 2},
		{16, 55, 53, 5, []int64{2, 2, 2, 2}, 2}, {18, 57, 56, 7, []int64{3, 2, 3, 3}, 2},
		{20, 27, 25, 3, []int64{1, 1, 1, 1}, 2}, // 3x3 to 14x13
		// stride 1: blocks of 8, 4 and 1 columns, planes wider than 16
		{16, 14, 14, 5, []int64{2, 2, 2, 2}, 1}, {35, 14, 14, 3, []int64{1, 1, 1, 1}, 1},
		{48, 28, 28, 5, []int64{2, 2, 2, 2}, 1}, {17, 13, 11, 7, []int64{3, 3, 3, 3}, 1},
		{32, 7, 7, 3, []int64{0, 0, 0, 0}, 1}, {16, 9, 1, 3, []int64{1, 1, 1, 1}, 1},
		{20, 27, 15, 5, []int64{1, 2, 2, 1}, 1}, {33, 12, 10, 3, []int64{0, 1, 1, 0}, 1},
		{16, 7, 7, 5, []int64{2, 0, 0, 2}, 1}, {64, 1, 1, 3, []int64{1, 1, 1, 1}, 1},
		{16, 23, 21, 7, []int64{3, 3, 3, 3}, 1}, {18, 30, 30, 5, []int64{2, 2, 2, 2}, 1},
	}
	for i, c := range cases {
		x := randTensor(rng, 2, c.ch, c.h, c.w)
		for j := range x.F32() {
			x.F32()[j] *= 8 // past 6 for RELU6
		}
		w, b := randTensor(rng, c.ch, 1, c.k, c.k), randTensor(rng, c.ch)
		st := c.stride
		attrs := ir.Attrs{"group": ir.IntAttr(c.ch), "strides": ir.IntsAttr(st, st), "pads": ir.IntsAttr(c.pads...)}
		g, err := windowAttrs(&ir.Node{Name: "t", Op: "Conv2D", Attrs: attrs}, x.Shape[2:], w.Shape[2:], false)
		if err != nil {
			t.Fatal(err)
		}
		f := float64s(x, w, b)
		shape := []int64{2, c.ch, int64(g.out[1]), int64(g.out[2])}
		for _, bias := range []bool{true, false} {
			in, bref := []*ir.Tensor{x, w, b}, f[2]
			if !bias {
				in, bref = in[:2], nil
			}
			ref := make([]float64, 2*c.ch*int64(g.out[1]*g.out[2]))
			convDirect(&opkernel.Ctx{Threads: 1}, g, 2, int(c.ch), int(c.ch), int(c.ch), f[0], f[1], bref, ref)
			for _, act := range []int64{ir.ActNone, ir.ActReLU, ir.ActReLU6, ir.ActSwish} {
				for _, run := range []struct {
					threads int
					legacy  bool
				}{{1, false}, {2, false}, {1, true}} {
					name := fmt.Sprintf("case%d%+v/bias%v/act%d/%+v", i, c, bias, act, run)
					a := attrs.Clone()
					a[ir.AttrActivation] = ir.IntAttr(act)
					y := ir.NewTensor(ir.Float32, shape)
					for j := range y.F32() {
						y.F32()[j] = float32(math.NaN())
					}
					setDwLegacy(run.legacy)
					err := conv(&opkernel.Ctx{Threads: run.threads}, &ir.Node{Name: "t", Op: "Conv2D", Attrs: a},
						in, []*ir.Tensor{y})
					setDwLegacy(false)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					checkActivated(t, name, y.F32(), ref, act)
				}
			}
		}
	}
}
