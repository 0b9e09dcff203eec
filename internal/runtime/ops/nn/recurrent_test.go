package nn

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// rnnCase is one random LSTM/GRU/RNN problem.
type rnnCase struct {
	op            string
	s, b, i, h    int
	dir           string
	layout        int64
	bias, init    bool
	peep          bool    // LSTM P
	lens          []int64 // sequence_lens (nil: none)
	clip          float64 // 0: none
	inputForget   bool
	lbr           int64 // GRU linear_before_reset
	acts          []string
	alphas, betas []float64
	dtype         ir.DType
}

func (c rnnCase) String() string {
	return fmt.Sprintf("%s_s%d_b%d_%s_l%d_bias%v_init%v_peep%v_lens%v_clip%v_if%v_lbr%d_%s_%s",
		c.op, c.s, c.b, c.dir, c.layout, c.bias, c.init, c.peep, c.lens, c.clip, c.inputForget, c.lbr, strings.Join(c.acts, "-"), c.dtype)
}

// naiveAct is the definition of each activation ONNX lists for the
// recurrent ops (alpha and beta already resolved).
func naiveAct(name string, alpha, beta, x float64) float64 {
	switch name {
	case "Sigmoid":
		return 1 / (1 + math.Exp(-x))
	case "Tanh":
		return math.Tanh(x)
	case "Relu":
		return math.Max(0, x)
	case "Affine":
		return alpha*x + beta
	case "LeakyRelu":
		return math.Max(0, x) + alpha*math.Min(0, x)
	case "ThresholdedRelu":
		if x > alpha {
			return x
		}
		return 0
	case "ScaledTanh":
		return alpha * math.Tanh(beta*x)
	case "HardSigmoid":
		return math.Min(1, math.Max(0, alpha*x+beta))
	case "Elu":
		if x >= 0 {
			return x
		}
		return alpha * (math.Exp(x) - 1)
	case "Softsign":
		return x / (1 + math.Abs(x))
	case "Softplus":
		return math.Log(1 + math.Exp(x))
	}
	panic(name)
}

// rnnNaive computes Y, Y_h, Y_c in float64 straight from ONNX's equations,
// one (direction, batch) sequence at a time, with gate inputs as explicit
// dot products.
func rnnNaive(c rnnCase, x, w, r, bias, h0, c0, p []float64) (y, yh, yc []float64) {
	D := 1
	if c.dir == "bidirectional" {
		D = 2
	}
	G := map[string]int{"LSTM": 4, "GRU": 3, "RNN": 1}[c.op]
	S, B, I, H := c.s, c.b, c.i, c.h
	xAt := func(t, b, k int) float64 {
		if c.layout == 1 {
			return x[(b*S+t)*I+k]
		}
		return x[(t*B+b)*I+k]
	}
	yOff := func(t, d, b int) int {
		if c.layout == 1 {
			return ((b*S+t)*D + d) * H
		}
		return ((t*D+d)*B + b) * H
	}
	sOff := func(d, b int) int {
		if c.layout == 1 {
			return (b*D + d) * H
		}
		return (d*B + b) * H
	}
	// activations with alpha/beta resolved in list order.
	nAct := map[string]int{"LSTM": 3, "GRU": 2, "RNN": 1}[c.op]
	names := c.acts
	if names == nil {
		names = map[string][]string{"LSTM": {"Sigmoid", "Tanh", "Tanh"}, "GRU": {"Sigmoid", "Tanh"}, "RNN": {"Tanh"}}[c.op]
	}
	if len(names) == nAct && D == 2 {
		names = append(append([]string{}, names...), names...)
	}
	type act struct {
		name string
		a, b float64
	}
	var acts []act
	ai, bi := 0, 0
	for _, nm := range names {
		a := act{name: nm}
		da, db, ua, ub := map[string]float64{"Affine": 1, "LeakyRelu": 0.01, "ThresholdedRelu": 1, "ScaledTanh": 1, "HardSigmoid": 0.2, "Elu": 1}[nm], map[string]float64{"ScaledTanh": 1, "HardSigmoid": 0.5}[nm], false, false
		switch nm {
		case "Affine", "ScaledTanh", "HardSigmoid":
			ua, ub = true, true
		case "LeakyRelu", "ThresholdedRelu", "Elu":
			ua = true
		}
		a.a, a.b = da, db
		if ua && ai < len(c.alphas) {
			a.a = c.alphas[ai]
			ai++
		}
		if ub && bi < len(c.betas) {
			a.b = c.betas[bi]
			bi++
		}
		acts = append(acts, a)
	}
	cl := func(v float64) float64 {
		if c.clip > 0 {
			return math.Max(-c.clip, math.Min(c.clip, v))
		}
		return v
	}
	f := func(d, k int, v float64) float64 { a := acts[d*nAct+k]; return naiveAct(a.name, a.a, a.b, cl(v)) }
	y = make([]float64, S*D*B*H)
	yh = make([]float64, D*B*H)
	yc = make([]float64, D*B*H)
	for d := 0; d < D; d++ {
		for b := 0; b < B; b++ {
			hs, cs := make([]float64, H), make([]float64, H)
			if h0 != nil {
				copy(hs, h0[sOff(d, b):])
			}
			if c0 != nil {
				copy(cs, c0[sOff(d, b):])
			}
			L := S
			if c.lens != nil {
				L = int(c.lens[b])
			}
			// dot: row (gate g, unit j) of W . x_t, of R . v, and the two biases.
			wx := func(t, g, j int) float64 {
				s := 0.0
				for k := 0; k < I; k++ {
					s += w[((d*G+g)*H+j)*I+k] * xAt(t, b, k)
				}
				return s
			}
			rv := func(v []float64, g, j int) float64 {
				s := 0.0
				for k := 0; k < H; k++ {
					s += r[((d*G+g)*H+j)*H+k] * v[k]
				}
				return s
			}
			wb := func(g, j int) float64 {
				if bias == nil {
					return 0
				}
				return bias[d*2*G*H+g*H+j]
			}
			rb := func(g, j int) float64 {
				if bias == nil {
					return 0
				}
				return bias[d*2*G*H+G*H+g*H+j]
			}
			pp := func(k, j int) float64 {
				if p == nil {
					return 0
				}
				return p[d*3*H+k*H+j]
			}
			for step := 0; step < L; step++ {
				t := step
				if c.dir == "reverse" || d == 1 {
					t = L - 1 - step
				}
				nh, nc := make([]float64, H), make([]float64, H)
				rt, rh := make([]float64, H), make([]float64, H) // GRU's r and r (.) H_{t-1}
				for k := 0; c.op == "GRU" && k < H; k++ {
					rt[k] = f(d, 0, wx(t, 1, k)+rv(hs, 1, k)+wb(1, k)+rb(1, k))
					rh[k] = rt[k] * hs[k]
				}
				for j := 0; j < H; j++ {
					switch c.op {
					case "RNN":
						nh[j] = f(d, 0, wx(t, 0, j)+rv(hs, 0, j)+wb(0, j)+rb(0, j))
					case "LSTM":
						it := f(d, 0, wx(t, 0, j)+rv(hs, 0, j)+pp(0, j)*cs[j]+wb(0, j)+rb(0, j))
						ft := f(d, 0, wx(t, 2, j)+rv(hs, 2, j)+pp(2, j)*cs[j]+wb(2, j)+rb(2, j))
						if c.inputForget {
							ft = 1 - it
						}
						ct := f(d, 1, wx(t, 3, j)+rv(hs, 3, j)+wb(3, j)+rb(3, j))
						nc[j] = ft*cs[j] + it*ct
						ot := f(d, 0, wx(t, 1, j)+rv(hs, 1, j)+pp(1, j)*nc[j]+wb(1, j)+rb(1, j))
						a := acts[d*nAct+2]
						nh[j] = ot * naiveAct(a.name, a.a, a.b, nc[j])
					case "GRU":
						zt := f(d, 0, wx(t, 0, j)+rv(hs, 0, j)+wb(0, j)+rb(0, j))
						var ht float64
						if c.lbr == 0 {
							ht = f(d, 1, wx(t, 2, j)+rv(rh, 2, j)+rb(2, j)+wb(2, j))
						} else {
							ht = f(d, 1, wx(t, 2, j)+rt[j]*(rv(hs, 2, j)+rb(2, j))+wb(2, j))
						}
						nh[j] = (1-zt)*ht + zt*hs[j]
					}
				}
				hs, cs = nh, nc
				copy(y[yOff(t, d, b):], hs)
			}
			copy(yh[sOff(d, b):], hs)
			copy(yc[sOff(d, b):], cs)
		}
	}
	return y, yh, yc
}

func TestRecurrentVsNaive(t *testing.T) {
	cases := []rnnCase{
		{op: "LSTM", s: 5, b: 3, i: 4, h: 3, dir: "forward", bias: true, init: true},
		{op: "LSTM", s: 5, b: 3, i: 4, h: 3, dir: "bidirectional", bias: true, init: true, peep: true, lens: []int64{5, 2, 0}},
		{op: "LSTM", s: 4, b: 2, i: 3, h: 5, dir: "reverse", layout: 1, bias: true, init: true, peep: true, clip: 0.7},
		{op: "LSTM", s: 4, b: 2, i: 3, h: 2, dir: "bidirectional", layout: 1, init: true, inputForget: true, lens: []int64{1, 4}},
		{op: "LSTM", s: 3, b: 2, i: 3, h: 2, dir: "bidirectional", bias: true, acts: []string{"HardSigmoid", "LeakyRelu", "ScaledTanh", "Affine", "Elu", "Softsign"}, alphas: []float64{0.3, 0.2, 1.5, 0.8, 0.9}, betas: []float64{0.4, 0.7, -0.1}},
		{op: "LSTM", s: 3, b: 2, i: 3, h: 2, dir: "bidirectional", bias: true, acts: []string{"Sigmoid", "Softplus", "ThresholdedRelu"}, alphas: []float64{0.1}},
		{op: "GRU", s: 5, b: 3, i: 4, h: 3, dir: "forward", bias: true, init: true, lbr: 0},
		{op: "GRU", s: 5, b: 3, i: 4, h: 3, dir: "forward", bias: true, init: true, lbr: 1},
		{op: "GRU", s: 6, b: 3, i: 2, h: 4, dir: "bidirectional", bias: true, init: true, lbr: 1, lens: []int64{6, 3, 1}, clip: 0.5},
		{op: "GRU", s: 6, b: 3, i: 2, h: 4, dir: "bidirectional", layout: 1, bias: true, lbr: 0, lens: []int64{2, 6, 4}},
		{op: "GRU", s: 4, b: 2, i: 3, h: 3, dir: "reverse", bias: true, init: true, lbr: 1, acts: []string{"Relu", "Tanh"}},
		{op: "RNN", s: 5, b: 3, i: 4, h: 3, dir: "forward", bias: true, init: true},
		{op: "RNN", s: 5, b: 3, i: 4, h: 3, dir: "bidirectional", layout: 1, bias: true, lens: []int64{3, 5, 1}, clip: 1, acts: []string{"Relu", "Affine"}, alphas: []float64{0.5}, betas: []float64{0.25}},
		{op: "RNN", s: 5, b: 2, i: 4, h: 3, dir: "reverse", init: true, dtype: ir.Float64},
		{op: "LSTM", s: 4, b: 2, i: 3, h: 3, dir: "bidirectional", bias: true, init: true, peep: true, lens: []int64{4, 2}, dtype: ir.Float64},
		{op: "GRU", s: 4, b: 2, i: 3, h: 3, dir: "forward", bias: true, init: true, dtype: ir.Float16},
		// empty batch and empty sequence
		{op: "LSTM", s: 3, b: 0, i: 2, h: 2, dir: "bidirectional", bias: true},
		{op: "GRU", s: 0, b: 2, i: 2, h: 2, dir: "forward", bias: true, init: true},
		// a bigger one that splits the GEMMs and gate rows over workers
		{op: "LSTM", s: 7, b: 64, i: 48, h: 96, dir: "forward", bias: true, init: true, peep: true},
		{op: "GRU", s: 7, b: 64, i: 48, h: 96, dir: "bidirectional", bias: true, init: true, lbr: 0},
		{op: "GRU", s: 7, b: 64, i: 48, h: 96, dir: "bidirectional", bias: true, init: true, lbr: 0, dtype: ir.Float64},
	}
	for _, c := range cases {
		if c.dtype == ir.Undefined {
			c.dtype = ir.Float32
		}
		t.Run(c.String(), func(t *testing.T) { checkRecurrent(t, c) })
	}
}

func checkRecurrent(t *testing.T, c rnnCase) {
	rng := rand.New(rand.NewSource(int64(c.s*131 + c.b*17 + c.h)))
	D := 1
	if c.dir == "bidirectional" {
		D = 2
	}
	G := map[string]int{"LSTM": 4, "GRU": 3, "RNN": 1}[c.op]
	// values rounded to the tensor dtype, so the reference sees what the
	// kernel sees; scaled so the recurrence stays well conditioned (a
	// chaotic one would amplify float32 rounding past any tolerance).
	scale := float32(0.5)
	if c.h > 8 {
		scale = float32(1 / math.Sqrt(float64(c.h)))
	}
	mk := func(shape ...int64) ([]float64, *ir.Tensor) {
		n := 1
		for _, d := range shape {
			n *= int(d)
		}
		f := randF32(rng, n)
		for i := range f {
			f[i] *= scale
		}
		t := ir.Float32Tensor(shape, f...)
		switch c.dtype {
		case ir.Float64:
			t = ir.NewTensor(ir.Float64, shape)
			for i := range f {
				t.F64()[i] = float64(f[i])
			}
		case ir.Float16:
			t = ir.NewTensor(ir.Float16, shape)
			opkernel.F32ToHalf(t, f)
		}
		v, err := t.Float64s()
		if err != nil {
			panic(err)
		}
		return v, t
	}
	S, B, I, H := int64(c.s), int64(c.b), int64(c.i), int64(c.h)
	xShape := []int64{S, B, I}
	state := []int64{int64(D), B, H}
	if c.layout == 1 {
		xShape = []int64{B, S, I}
		state = []int64{B, int64(D), H}
	}
	x, xt := mk(xShape...)
	w, wt := mk(int64(D), int64(G)*H, I)
	r, rt := mk(int64(D), int64(G)*H, H)
	in := []*ir.Tensor{xt, wt, rt, nil, nil, nil}
	var bias, h0, c0, p []float64
	if c.bias {
		bias, in[3] = mk(int64(D), int64(2*G)*H)
	}
	if c.lens != nil {
		in[4] = ir.NewTensor(ir.Int32, []int64{B})
		for i, l := range c.lens {
			in[4].I32()[i] = int32(l)
		}
	}
	if c.init {
		h0, in[5] = mk(state...)
	}
	attrs := ir.Attrs{"direction": ir.StringAttr(c.dir), "hidden_size": ir.IntAttr(H), "layout": ir.IntAttr(c.layout)}
	if c.op == "LSTM" {
		in = append(in, nil, nil)
		if c.init {
			c0, in[6] = mk(state...)
		}
		if c.peep {
			p, in[7] = mk(int64(D), 3*H)
		}
		attrs["input_forget"] = ir.IntAttr(b2i(c.inputForget))
	}
	if c.op == "GRU" {
		attrs["linear_before_reset"] = ir.IntAttr(c.lbr)
	}
	if c.clip > 0 {
		attrs["clip"] = ir.FloatAttr(c.clip)
	}
	if c.acts != nil {
		attrs["activations"] = ir.StringsAttr(c.acts...)
	}
	if c.alphas != nil {
		attrs["activation_alpha"] = ir.FloatsAttr(c.alphas...)
	}
	if c.betas != nil {
		attrs["activation_beta"] = ir.FloatsAttr(c.betas...)
	}
	ySh := []int64{S, int64(D), B, H}
	if c.layout == 1 {
		ySh = []int64{B, S, int64(D), H}
	}
	outs := []*ir.Tensor{ir.NewTensor(c.dtype, ySh), ir.NewTensor(c.dtype, state)}
	if c.op == "LSTM" {
		outs = append(outs, ir.NewTensor(c.dtype, state))
	}
	// garbage in the outputs: the kernel must overwrite every element.
	for _, o := range outs {
		for i := range o.Data {
			o.Data[i] = 0x7f
		}
	}
	run(t, c.op, attrs, in, outs...)
	wy, wyh, wyc := rnnNaive(c, x, w, r, bias, h0, c0, p)
	tol := map[ir.DType]float64{ir.Float32: 2e-5, ir.Float64: 1e-12, ir.Float16: 4e-3}[c.dtype]
	// the naive reference works in the layout-0 state order when layout is 0
	// and in layout 1's otherwise, as the outputs are.
	for k, want := range [][]float64{wy, wyh, wyc}[:len(outs)] {
		got, _ := outs[k].Float64s()
		if len(got) != len(want) {
			t.Fatalf("output %d: %d elements, want %d", k, len(got), len(want))
		}
		for i := range want {
			if math.Abs(got[i]-want[i]) > tol+tol*math.Abs(want[i]) {
				t.Fatalf("output %d element %d: got %v, want %v", k, i, got[i], want[i])
			}
		}
	}
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// TestRecurrentOmittedOutputs: Y, Y_h and Y_c may each be absent.
func TestRecurrentOmittedOutputs(t *testing.T) {
	x := f32([]int64{2, 1, 1}, 1, 2)
	w := f32([]int64{1, 1, 1}, 0.5)
	r := f32([]int64{1, 1, 1}, 0.25)
	yh := ir.NewTensor(ir.Float32, []int64{1, 1, 1})
	run(t, "RNN", ir.Attrs{"hidden_size": ir.IntAttr(1)}, []*ir.Tensor{x, w, r}, nil, yh)
	h1 := math.Tanh(0.5)
	expect(t, yh, math.Tanh(1+0.25*h1))
	y := ir.NewTensor(ir.Float32, []int64{2, 1, 1, 1})
	run(t, "RNN", ir.Attrs{"hidden_size": ir.IntAttr(1)}, []*ir.Tensor{x, w, r}, y)
	expect(t, y, h1, math.Tanh(1+0.25*h1))
}

// TestRecurrentBadSequenceLens: a length past the sequence is an error.
func TestRecurrentBadSequenceLens(t *testing.T) {
	f, _ := opkernel.Lookup("GRU")
	x := ir.NewTensor(ir.Float32, []int64{2, 1, 1})
	w := ir.NewTensor(ir.Float32, []int64{1, 3, 1})
	r := ir.NewTensor(ir.Float32, []int64{1, 3, 1})
	lens := ir.NewTensor(ir.Int32, []int64{1})
	lens.I32()[0] = 3
	n := &ir.Node{Name: "g", Op: "GRU", Attrs: ir.Attrs{"hidden_size": ir.IntAttr(1)}}
	err := f(&opkernel.Ctx{Threads: 1}, n, []*ir.Tensor{x, w, r, nil, lens}, []*ir.Tensor{ir.NewTensor(ir.Float32, []int64{2, 1, 1, 1})})
	if err == nil {
		t.Fatal("sequence_lens 3 > seq_length 2 accepted")
	}
}
