package runtime

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/cpuisa"
	"gkconv/internal/testkit"
)

// qchainCase is one ConvInteger -> Cast -> Mul -> Add -> Relu chain.
type qchainCase struct {
	n, c, h, w, m, kh, kw    int64
	group                    int64
	sh, sw, dh, dw           int64
	pt, pl, pb, pr           int64
	xdt, wdt                 ir.DType
	perChScale, perChZP      bool
	bias, relu, rank3Scale   bool
	reverseMul, reverseAdd   bool
	noXZP                    bool
	scaleAsInput, negScale   bool
	outH, outW               int64
	zeroBiasChannels, bodyGK bool
}

func (c *qchainCase) out() (int64, int64) {
	oh := (c.h+c.pt+c.pb-c.dh*(c.kh-1)-1)/c.sh + 1
	ow := (c.w+c.pl+c.pr-c.dw*(c.kw-1)-1)/c.sw + 1
	return oh, ow
}

func randBytes(r *rand.Rand, dt ir.DType, shape ...int64) *ir.Tensor {
	t := ir.NewTensor(dt, shape)
	r.Read(t.Data)
	return t
}

// chainShape is a per-channel operand's shape: [1, M, 1, 1] or [M, 1, 1].
func (c *qchainCase) chainShape() []int64 {
	if c.rank3Scale {
		return []int64{c.m, 1, 1}
	}
	return []int64{1, c.m, 1, 1}
}

// build makes the chain's graph: inputs x (8-bit), x_scale and, unless
// noXZP, x_zero_point; plain nodes, or (bodyGK) a GraphKernel node whose
// body is Mul(x_scale, w_scale), Cast, Mul, Add, Maximum(x, 0) as
// opt_level 2 writes it.
func (c *qchainCase) build(t *testing.T, r *rand.Rand) (*ir.Graph, []*ir.Tensor) {
	g := testkit.New(t, "qchain")
	x := g.InputOf("x", c.xdt, c.n, c.c, c.h, c.w)
	xs := g.InputOf("x_scale", ir.Float32)
	xs.Shape = []int64{} // a scalar (no dims given is an unknown rank)
	xin := []*ir.Tensor{randBytes(r, c.xdt, c.n, c.c, c.h, c.w), ir.Float32Tensor([]int64{}, float32(0.001+r.Float64()*0.05))}
	var xz *ir.Value
	if !c.noXZP {
		xz = g.InputOf("x_zero_point", c.xdt)
		xz.Shape = []int64{}
		xin = append(xin, randBytes(r, c.xdt))
	}
	w := g.Const("w", randBytes(r, c.wdt, c.m, c.c/c.group, c.kh, c.kw))
	wz := g.Const("w_zero_point", randBytes(r, c.wdt))
	if c.perChZP {
		wz = g.Const("w_zero_point", randBytes(r, c.wdt, c.m))
	}
	wsT := ir.Float32Tensor([]int64{}, float32(0.002+r.Float64()*0.01))
	if c.perChScale {
		wsT = ir.NewTensor(ir.Float32, c.chainShape())
		for i := range wsT.F32() {
			wsT.F32()[i] = float32(0.002 + r.Float64()*0.01)
			if c.negScale && i%3 == 1 {
				wsT.F32()[i] = -wsT.F32()[i]
			}
		}
	} else if c.negScale {
		wsT.F32()[0] = -wsT.F32()[0]
	}
	ws := g.Const("w_scale", wsT)
	var biasV *ir.Value
	if c.bias {
		bt := ir.NewTensor(ir.Float32, c.chainShape())
		for i := range bt.F32() {
			bt.F32()[i] = float32(r.Float64()*4 - 2)
			if c.zeroBiasChannels && i%2 == 0 {
				bt.F32()[i] = 0
			}
		}
		biasV = g.Const("bias", bt)
	}
	attrs := ir.Attrs{"group": ir.IntAttr(c.group), "strides": ir.IntsAttr(c.sh, c.sw), "dilations": ir.IntsAttr(c.dh, c.dw),
		"pads": ir.IntsAttr(c.pt, c.pl, c.pb, c.pr), "kernel_shape": ir.IntsAttr(c.kh, c.kw)}
	convIn := []*ir.Value{x, w, xz, wz}
	acc := g.Node("conv", "ConvInteger", attrs, convIn...)
	if c.bodyGK {
		body := testkit.New(t, "body")
		bxs := body.InputOf("bxs", ir.Float32)
		bxs.Shape = []int64{}
		bacc := body.InputOf("bacc", ir.Int32, acc.Shape...)
		s := body.Op("Mul", nil, bxs, body.Const("bws", wsT))
		f := body.Op("Cast", ir.Attrs{"to": ir.IntAttr(int64(ir.Float32))}, bacc)
		y := body.Op("Mul", nil, f, s)
		if c.bias {
			y = body.Op("Add", nil, y, body.Const("bbias", biasV.Const))
		}
		if c.relu {
			y = body.Op("Maximum", nil, y, body.Scalar(0))
		}
		n := body.GraphKernel("fused", y)
		n.Attrs[ir.GKKernelStatus] = ir.StringAttr("interpreted")
		n.Inputs = []*ir.Value{xs, acc}
		n.Outputs[0].Producer = n
		g.G.Nodes = append(g.G.Nodes, n)
		return g.Output(n.Outputs[0]), xin
	}
	scale := g.Node("scales_mul", "Mul", nil, xs, ws)
	f := g.Node("cast", "Cast", ir.Attrs{"to": ir.IntAttr(int64(ir.Float32))}, acc)
	var y *ir.Value
	if c.reverseMul {
		y = g.Node("scale", "Mul", nil, scale, f)
	} else {
		y = g.Node("scale", "Mul", nil, f, scale)
	}
	if c.bias {
		if c.reverseAdd {
			y = g.Node("bias_add", "Add", nil, biasV, y)
		} else {
			y = g.Node("bias_add", "Add", nil, y, biasV)
		}
	}
	if c.relu {
		y = g.Node("relu", "ReLU", nil, y)
	}
	return g.Output(y), xin
}

// TestQuantChainFusedMatchesUnfused: the load-time fused chain gives the
// unfused nodes' outputs bit for bit, over strides, pads, groups,
// dilations, zero points, per-tensor and per-channel weight scales and
// zero points, uint8/int8 x and w, with and without bias and Relu, plain
// nodes and opt_level 2's GraphKernel form, 1 and 2 threads, at every ISA
// level.
func TestQuantChainFusedMatchesUnfused(t *testing.T) {
	base := qchainCase{n: 1, c: 8, h: 12, w: 20, m: 16, kh: 3, kw: 3, group: 1, sh: 1, sw: 1, dh: 1, dw: 1,
		pt: 1, pl: 1, pb: 1, pr: 1, xdt: ir.Uint8, wdt: ir.Uint8, bias: true, relu: true}
	var cases []qchainCase
	add := func(f func(c *qchainCase)) {
		c := base
		f(&c)
		cases = append(cases, c)
	}
	add(func(c *qchainCase) {})
	add(func(c *qchainCase) { c.relu = false })
	add(func(c *qchainCase) { c.bias = false })
	add(func(c *qchainCase) { c.bias, c.relu = false, false; c.negScale = true })
	add(func(c *qchainCase) { c.bias = false; c.negScale = true; c.perChScale = true; c.xdt = ir.Int8 })
	add(func(c *qchainCase) { c.xdt, c.wdt = ir.Int8, ir.Int8; c.perChScale, c.perChZP = true, true })
	add(func(c *qchainCase) {
		c.xdt = ir.Int8
		c.rank3Scale, c.perChScale = true, true
		c.reverseMul, c.reverseAdd = true, true
	})
	add(func(c *qchainCase) { c.wdt = ir.Int8; c.noXZP = true; c.negScale = true; c.zeroBiasChannels = true })
	add(func(c *qchainCase) { c.kh, c.kw, c.pt, c.pl, c.pb, c.pr = 1, 1, 0, 0, 0, 0; c.c, c.m = 40, 24 })
	add(func(c *qchainCase) {
		c.kh, c.kw, c.pt, c.pl, c.pb, c.pr = 1, 1, 0, 0, 0, 0
		c.h, c.w = 1, 1
		c.c, c.m = 64, 16
	})
	add(func(c *qchainCase) { c.sh, c.sw = 2, 2; c.h, c.w = 33, 41 })
	add(func(c *qchainCase) { c.dh, c.dw, c.pt, c.pl, c.pb, c.pr = 2, 2, 2, 2, 2, 2; c.pt = 1 })
	add(func(c *qchainCase) { c.group = 2; c.perChScale = true })
	add(func(c *qchainCase) { c.group, c.c, c.m = 16, 16, 16; c.perChScale, c.perChZP = true, true }) // depthwise
	add(func(c *qchainCase) {
		c.group, c.c, c.m = 8, 8, 8
		c.kh, c.kw, c.pt, c.pl, c.pb, c.pr = 5, 5, 2, 2, 2, 2
		c.h, c.w = 24, 32
	})
	add(func(c *qchainCase) {
		c.group, c.c, c.m = 8, 8, 8
		c.sh, c.sw = 2, 2
		c.h, c.w = 24, 35
		c.xdt = ir.Int8
	})
	add(func(c *qchainCase) { c.group, c.c, c.m = 8, 8, 16; c.kh, c.kw = 3, 5; c.pl, c.pr = 2, 2 }) // 2 outputs per group
	add(func(c *qchainCase) {
		c.n = 2
		c.m = 70
		c.c = 12
		c.h, c.w = 9, 70
		c.kh = 2
		c.pt, c.pb = 0, 1
	})
	add(func(c *qchainCase) { c.pt, c.pl, c.pb, c.pr = 0, 2, 1, 0 })
	// planes of several blocks of positions (a partial last one)
	add(func(c *qchainCase) { c.h, c.w = 37, 29; c.perChScale = true; c.group = 2 })
	add(func(c *qchainCase) {
		c.h, c.w, c.kh, c.kw, c.pt, c.pl, c.pb, c.pr = 40, 64, 1, 1, 0, 0, 0, 0
		c.m = 1
		c.c = 24
	})
	add(func(c *qchainCase) {
		c.h, c.w = 66, 80
		c.sh, c.sw = 2, 2
		c.xdt, c.wdt = ir.Int8, ir.Int8
		c.bodyGK = true
	})
	add(func(c *qchainCase) { c.bodyGK = true })
	add(func(c *qchainCase) { c.bodyGK, c.bias, c.perChScale = true, false, true })
	add(func(c *qchainCase) { c.bodyGK, c.relu, c.group, c.c, c.m = true, false, 8, 8, 8 })
	defer cpuisa.Reset()
	r := rand.New(rand.NewSource(33))
	for _, lv := range []cpuisa.Level{cpuisa.AVX512, cpuisa.AVX2, cpuisa.Portable} {
		if err := cpuisa.Force(lv); err != nil {
			t.Logf("skip %s: %v", lv, err)
			continue
		}
		for i, c := range cases {
			g, in := c.build(t, r)
			sameFusedUnfused(t, fmt.Sprintf("%s case %d %+v", lv, i, c), g, in)
		}
	}
}

// sameFusedUnfused runs g fused and unfused on 1 and 2 threads and wants
// the same bits.
func sameFusedUnfused(t *testing.T, what string, g *ir.Graph, in []*ir.Tensor) {
	t.Helper()
	for _, threads := range []int{1, 2} {
		name := fmt.Sprintf("%s threads %d", what, threads)
		want := runChain(t, name, g, in, threads, true)
		got := runChain(t, name, g, in, threads, false)
		if len(got) != len(want) {
			t.Fatalf("%s: %d values, want %d", name, len(got), len(want))
		}
		for k := range want {
			if math.Float32bits(got[k]) != math.Float32bits(want[k]) {
				t.Fatalf("%s: y[%d] = %g (%#x), unfused %g (%#x)", name, k, got[k], math.Float32bits(got[k]), want[k], math.Float32bits(want[k]))
			}
		}
	}
}

func runChain(t *testing.T, name string, g *ir.Graph, in []*ir.Tensor, threads int, unfused bool) []float32 {
	t.Helper()
	s, err := NewSession(g, Options{Threads: threads, NoLoadFusion: unfused})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	fused := 0
	for _, c := range s.chains {
		if c != nil {
			fused++
		}
	}
	if want := map[bool]int{true: 0, false: 1}[unfused]; fused != want {
		t.Fatalf("%s (unfused %v): %d chains fused, want %d", name, unfused, fused, want)
	}
	out, err := s.Run(in)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out[0].F32()
}

// TestMatMulIntegerChainFusedMatchesUnfused: the MatMulInteger form of the
// chain (A [.., M, K] with per-row zero point, B [K, N] constant, scale and
// bias per tensor or per column), plain and as a GraphKernel, bit for bit
// the unfused nodes at every ISA level.
func TestMatMulIntegerChainFusedMatchesUnfused(t *testing.T) {
	type mcase struct {
		a                        []int64
		n                        int64
		adt, bdt                 ir.DType
		perCol, bias, relu, body bool
	}
	cases := []mcase{
		{[]int64{5, 24}, 40, ir.Uint8, ir.Int8, false, true, false, false},
		{[]int64{2, 7, 33}, 70, ir.Uint8, ir.Uint8, true, true, true, false},
		{[]int64{130, 16}, 17, ir.Int8, ir.Int8, true, false, true, false},
		{[]int64{64, 64}, 64, ir.Uint8, ir.Int8, true, true, false, true},
	}
	defer cpuisa.Reset()
	r := rand.New(rand.NewSource(34))
	for _, lv := range []cpuisa.Level{cpuisa.AVX512, cpuisa.AVX2, cpuisa.Portable} {
		if err := cpuisa.Force(lv); err != nil {
			t.Logf("skip %s: %v", lv, err)
			continue
		}
		for i, c := range cases {
			k := c.a[len(c.a)-1]
			g := testkit.New(t, "qmm")
			a := g.InputOf("a", c.adt, c.a...)
			as := g.InputOf("a_scale", ir.Float32)
			as.Shape = []int64{}
			az := g.InputOf("a_zero_point", c.adt)
			az.Shape = []int64{}
			in := []*ir.Tensor{randBytes(r, c.adt, c.a...), ir.Float32Tensor([]int64{}, float32(0.001+r.Float64()*0.05)), randBytes(r, c.adt)}
			b := g.Const("b", randBytes(r, c.bdt, k, c.n))
			bz := g.Const("b_zero_point", randBytes(r, c.bdt, c.n))
			bsT := ir.Float32Tensor([]int64{}, float32(0.004))
			if c.perCol {
				bsT = ir.NewTensor(ir.Float32, []int64{c.n})
				for j := range bsT.F32() {
					bsT.F32()[j] = float32(0.001 + r.Float64()*0.01)
				}
			}
			biasT := ir.NewTensor(ir.Float32, []int64{c.n})
			for j := range biasT.F32() {
				biasT.F32()[j] = float32(r.Float64()*2 - 1)
			}
			acc := g.Node("mmi", "MatMulInteger", nil, a, b, az, bz)
			var out *ir.Value
			if c.body {
				body := testkit.New(t, "body")
				bas := body.InputOf("bas", ir.Float32)
				bas.Shape = []int64{}
				bacc := body.InputOf("bacc", ir.Int32, acc.Shape...)
				s := body.Op("Mul", nil, bas, body.Const("bbs", bsT))
				y := body.Op("Mul", nil, body.Op("Cast", ir.Attrs{"to": ir.IntAttr(int64(ir.Float32))}, bacc), s)
				if c.bias {
					y = body.Op("Add", nil, y, body.Const("bbias", biasT))
				}
				n := body.GraphKernel("fused", y)
				n.Attrs[ir.GKKernelStatus] = ir.StringAttr("interpreted")
				n.Inputs = []*ir.Value{as, acc}
				g.G.Nodes = append(g.G.Nodes, n)
				out = n.Outputs[0]
			} else {
				s := g.Node("scales", "Mul", nil, as, g.Const("b_scale", bsT))
				y := g.Node("scale", "Mul", nil, g.Node("cast", "Cast", ir.Attrs{"to": ir.IntAttr(int64(ir.Float32))}, acc), s)
				if c.bias {
					y = g.Node("bias_add", "Add", nil, y, g.Const("bias", biasT))
				}
				if c.relu {
					y = g.Node("relu", "ReLU", nil, y)
				}
				out = y
			}
			sameFusedUnfused(t, fmt.Sprintf("%s case %d %+v", lv, i, c), g.Output(out), in)
		}
	}
}
