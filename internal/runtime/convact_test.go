package runtime

import (
	"math"
	"math/rand"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/cpuisa"
	"gkconv/internal/testkit"
)

// TestConvPReLUFusedMatchesUnfused: a Conv2D whose only reader is a PReLU
// (per-channel or one slope) or a LeakyReLU runs as one node with the
// activation bound behind it (convact.go), and gives the bits of the two
// separate ops (NoLoadFusion) on every conv path — the packed conv, Winograd,
// depthwise, 1x1, the stem (3 input channels, stride 2), im2col with a
// stride, a conv with its own ReLU and a residual-free bias-less one — at
// every ISA level, with 1 and 2 threads. A conv with a second reader, or a
// slope that is not constant, stays unfused.
func TestConvPReLUFusedMatchesUnfused(t *testing.T) {
	defer cpuisa.Force(cpuisa.Detected())
	type convCase struct {
		name      string
		c, m, k   int64
		hw        int64
		attrs     ir.Attrs
		bias      bool
		groupWise bool
	}
	pads := func(p int64) ir.Attrs { return ir.Attrs{"pads": ir.IntsAttr(p, p, p, p)} }
	strided := pads(1)
	strided["strides"] = ir.IntsAttr(2, 2)
	dw := pads(1)
	dw["group"] = ir.IntAttr(32)
	relu := pads(1)
	relu[ir.AttrActivation] = ir.IntAttr(ir.ActReLU)
	cases := []convCase{
		{"packed3x3", 16, 32, 3, 30, pads(1), true, false},
		{"winograd3x3", 64, 64, 3, 28, pads(1), true, false},
		{"depthwise", 32, 32, 3, 20, dw, true, true},
		{"1x1", 48, 40, 1, 14, nil, true, false},
		{"stem", 3, 32, 3, 64, strided, true, false},
		{"strided", 24, 16, 3, 17, strided, false, false},
		{"relu", 16, 24, 3, 12, relu, true, false},
	}
	r := rand.New(rand.NewSource(34))
	for _, cc := range cases {
		for _, act := range []string{"prelu-channel", "prelu-one", "leaky"} {
			g := testkit.New(t, "convact")
			x := g.Input("x", 1, cc.c, cc.hw, cc.hw)
			cin := cc.c
			if cc.groupWise {
				cin = 1
			}
			wt := fill(r, ir.NewTensor(ir.Float32, []int64{cc.m, cin, cc.k, cc.k}), false)
			ins := []*ir.Value{x, g.Const("", wt)}
			if cc.bias {
				ins = append(ins, g.Const("", fill(r, ir.NewTensor(ir.Float32, []int64{cc.m}), false)))
			}
			y := g.Op("Conv2D", cc.attrs, ins...)
			switch act {
			case "prelu-channel":
				s := fill(r, ir.NewTensor(ir.Float32, []int64{cc.m, 1, 1}), false)
				s.F32()[0] = float32(math.Copysign(0, -1)) // a -0 slope: -0 and +0 products
				y = g.Op("PReLU", nil, y, g.Const("", s))
			case "prelu-one":
				y = g.Op("PReLU", nil, y, g.Const("", ir.Float32Tensor([]int64{1}, 0.23)))
			case "leaky":
				y = g.Op("LeakyReLU", ir.Attrs{"alpha": ir.FloatAttr(0.1)}, y)
			}
			gr := g.Output(y)
			xin := fill(r, ir.NewTensor(ir.Float32, []int64{1, cc.c, cc.hw, cc.hw}), false)
			for _, lv := range []cpuisa.Level{cpuisa.Portable, cpuisa.AVX2, cpuisa.AVX512} {
				if err := cpuisa.Force(lv); err != nil {
					continue
				}
				for _, threads := range []int{1, 2} {
					fused, err := NewSession(gr, Options{Threads: threads})
					if err != nil {
						t.Fatal(err)
					}
					if len(fused.g.Nodes) != len(gr.Nodes)-1 {
						t.Fatalf("%s %s: %d nodes after load-time fusion, want %d", cc.name, act, len(fused.g.Nodes), len(gr.Nodes)-1)
					}
					plain, err := NewSession(gr, Options{Threads: threads, NoLoadFusion: true})
					if err != nil {
						t.Fatal(err)
					}
					got, want := runOnce(t, fused, xin)[0], runOnce(t, plain, xin)[0]
					neg := 0
					for i := range want {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%s %s %v %d threads: element %d: fused %g, unfused %g", cc.name, act, lv, threads, i, got[i], want[i])
						}
						if want[i] < 0 {
							neg++
						}
					}
					if neg == 0 && cc.name != "relu" { // a ReLU conv has no negatives to give
						t.Fatalf("%s %s: no negative output: the activation went untested", cc.name, act)
					}
				}
			}
		}
	}
}

// TestConvPReLUNotFused: the conv stays a node of its own when its output
// has a second reader or is a graph output, or the slope is computed.
func TestConvPReLUNotFused(t *testing.T) {
	r := rand.New(rand.NewSource(35))
	g := testkit.New(t, "convact-no")
	x := g.Input("x", 1, 8, 10, 10)
	w := g.Const("", fill(r, ir.NewTensor(ir.Float32, []int64{8, 8, 3, 3}), false))
	slope := g.Const("", fill(r, ir.NewTensor(ir.Float32, []int64{8, 1, 1}), false))
	y1 := g.Op("Conv2D", nil, x, w)
	a := g.Op("PReLU", nil, y1, slope)
	b := g.Op("Sigmoid", nil, y1) // second reader of y1
	y2 := g.Op("Conv2D", nil, x, w)
	c := g.Op("PReLU", nil, y2, g.Op("Sigmoid", nil, slope)) // a computed slope
	gr := g.Output(a, b, c)
	if _, acts := fuseConvActivations(gr); len(acts) != 0 {
		t.Fatalf("%d convs fused, want none", len(acts))
	}
}
