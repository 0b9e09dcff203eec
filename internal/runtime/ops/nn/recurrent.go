package nn

import (
	"math"
	"strings"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// LSTM, GRU and RNN as ONNX defines them (opset 7-22): forward, reverse and
// bidirectional; sequence_lens (Y is zero past a sequence's length and the
// final states are those of its last valid step); initial states; LSTM
// peepholes and input_forget; GRU linear_before_reset; layout 0 and 1;
// clip; the activations lists with activation_alpha/beta.
//
// Per direction: one GEMM projects the inputs of every step at once
// (X * W^T plus the biases that simply add), then each step does the
// recurrent GEMM H_{t-1} * R^T and the gates. Directions run in parallel;
// a single direction splits its GEMMs and gate rows over ctx.Threads.
// float16 and bfloat16 run in float32; float64 runs in float64.
//
// Clipping follows onnxruntime: clip bounds every gate's input (after the
// biases and peepholes), not h(C_t).

func init() {
	for _, op := range []string{"LSTM", "GRU", "RNN"} {
		opkernel.Register(op, recurrent)
	}
}

// rnnAct is one activation function with its alpha and beta.
type rnnAct struct {
	name        string // lower case
	alpha, beta float64
}

func (a rnnAct) apply(x float64) float64 {
	switch a.name {
	case "sigmoid":
		return 1 / (1 + math.Exp(-x))
	case "tanh":
		return math.Tanh(x)
	case "relu":
		return math.Max(x, 0)
	case "affine":
		return a.alpha*x + a.beta
	case "leakyrelu":
		if x < 0 {
			return a.alpha * x
		}
		return x
	case "thresholdedrelu":
		if x > a.alpha {
			return x
		}
		return 0
	case "scaledtanh":
		return a.alpha * math.Tanh(a.beta*x)
	case "hardsigmoid":
		return math.Max(0, math.Min(1, a.alpha*x+a.beta))
	case "elu":
		if x < 0 {
			return a.alpha * (math.Exp(x) - 1)
		}
		return x
	case "softsign":
		return x / (1 + math.Abs(x))
	case "softplus":
		return math.Log1p(math.Exp(x))
	}
	return math.NaN()
}

// rnnActDefaults are the default alpha and beta of the activations that
// take them (those of the ONNX ops of the same names); has says which of
// the two the activation consumes from activation_alpha/beta.
var rnnActDefaults = map[string]struct {
	alpha, beta       float64
	hasAlpha, hasBeta bool
}{
	"affine":          {1, 0, true, true},
	"leakyrelu":       {0.01, 0, true, false},
	"thresholdedrelu": {1, 0, true, false},
	"scaledtanh":      {1, 1, true, true},
	"hardsigmoid":     {0.2, 0.5, true, true},
	"elu":             {1, 0, true, false},
}

// rnnActivations returns each direction's activations. activation_alpha
// and activation_beta are consumed in list order by the activations that
// take them (onnxruntime's reading); missing values take the defaults. A
// bidirectional node with one direction's list uses it for both.
func rnnActivations(n *ir.Node, dirs int) [][]rnnAct {
	k := ir.RecurrentActivationCount(n.Op)
	names := n.Attrs.Strings("activations")
	if len(names) == 0 {
		for d := 0; d < dirs; d++ {
			names = append(names, ir.RecurrentDefaultActivations(n.Op)...)
		}
	}
	if len(names) == k && dirs == 2 {
		names = append(names, names...)
	}
	alphas, betas := n.Attrs.Floats("activation_alpha", nil), n.Attrs.Floats("activation_beta", nil)
	var all []rnnAct
	for _, s := range names {
		a := rnnAct{name: strings.ToLower(s)}
		if def, ok := rnnActDefaults[a.name]; ok {
			a.alpha, a.beta = def.alpha, def.beta
			if def.hasAlpha && len(alphas) > 0 {
				a.alpha, alphas = alphas[0], alphas[1:]
			}
			if def.hasBeta && len(betas) > 0 {
				a.beta, betas = betas[0], betas[1:]
			}
		}
		all = append(all, a)
	}
	out := make([][]rnnAct, dirs)
	for d := range out {
		out[d] = all[d*k : (d+1)*k]
	}
	return out
}

func recurrent(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := need(n, in, 3); err != nil {
		return err
	}
	if hasHalf(in...) {
		return viaF32(ctx, n, in, out, recurrent)
	}
	g, err := ir.RecurrentGeometry(shapeView(n, in))
	if err != nil {
		return errf(n, "%v", err)
	}
	var lens []int64
	if t := input(in, 4); t != nil {
		if lens, err = t.Int64s(); err != nil {
			return errf(n, "sequence_lens: %v", err)
		}
		for _, l := range lens {
			if l < 0 || l > g.Seq {
				return errf(n, "sequence_lens %v: each must be in [0, %d]", lens, g.Seq)
			}
		}
	}
	switch in[0].DType {
	case ir.Float32:
		return runRecurrent(ctx, n, g, lens, in, out, rnnF32, sgemm)
	case ir.Float64:
		return runRecurrent(ctx, n, g, lens, in, out, rnnF64, dgemm)
	}
	return opkernel.Unsupportedf(n, "X dtype %s", in[0].DType)
}

// shapeView is n with its inputs replaced by values of the run-time
// tensors' dtypes and shapes, for the ir geometry readers.
func shapeView(n *ir.Node, in []*ir.Tensor) *ir.Node {
	view := &ir.Node{Name: n.Name, Op: n.Op, Attrs: n.Attrs}
	for _, t := range in {
		var val *ir.Value
		if t != nil {
			val = &ir.Value{DType: t.DType, Shape: t.Shape}
		}
		view.Inputs = append(view.Inputs, val)
	}
	return view
}

func rnnF32(t *ir.Tensor) []float32 { return t.F32() }
func rnnF64(t *ir.Tensor) []float64 { return t.F64() }

// rnnRun holds one node's run: geometry, data and per-direction settings.
type rnnRun[T float32 | float64] struct {
	n              *ir.Node
	S, B, I, H, D  int
	G              int
	layout1        bool
	lens           []int64
	x              []T // [S, B, I]
	w, r, b, p     []T
	h0, c0         []T
	y, yh, yc      []T // outputs, nil when omitted
	acts           [][]rnnAct
	clip           float64
	inputForget    bool
	linBeforeReset bool
	reverse0       bool // the first (or only) direction runs backwards
	gemm           gemmFunc[T]
	threadsPerDir  int
	stateIdx       func(d, b int) int
}

func runRecurrent[T float32 | float64](ctx *opkernel.Ctx, n *ir.Node, g *ir.RecurrentGeom, lens []int64, in, out []*ir.Tensor, data func(*ir.Tensor) []T, gemm gemmFunc[T]) error {
	rr := &rnnRun[T]{n: n, S: int(g.Seq), B: int(g.Batch), I: int(g.Input), H: int(g.Hidden), D: int(g.Dirs), G: g.Gates,
		layout1: g.Layout == 1, lens: lens, gemm: gemm, reverse0: g.Direction == "reverse"}
	rr.acts = rnnActivations(n, rr.D)
	rr.clip = math.Inf(1)
	if n.Attrs.Has("clip") {
		rr.clip = n.Attrs.Float("clip", 0)
	}
	rr.inputForget = n.Attrs.Int("input_forget", 0) != 0
	rr.linBeforeReset = n.Attrs.Int("linear_before_reset", 0) != 0
	get := func(i int) []T {
		if t := input(in, i); t != nil && (n.Op == "LSTM" || i < 6) {
			return data(t)
		}
		return nil
	}
	rr.w, rr.r, rr.b = get(1), get(2), get(3)
	rr.h0 = get(5)
	if n.Op == "LSTM" {
		rr.c0, rr.p = get(6), get(7)
	}
	x := data(in[0])
	if rr.layout1 { // [B, S, I] -> [S, B, I]
		xs := make([]T, len(x))
		for b := 0; b < rr.B; b++ {
			for t := 0; t < rr.S; t++ {
				copy(xs[(t*rr.B+b)*rr.I:(t*rr.B+b+1)*rr.I], x[(b*rr.S+t)*rr.I:(b*rr.S+t+1)*rr.I])
			}
		}
		x = xs
	}
	rr.x = x
	outData := func(i int) []T {
		if i < len(out) && out[i] != nil {
			return data(out[i])
		}
		return nil
	}
	rr.y, rr.yh = outData(0), outData(1)
	if n.Op == "LSTM" {
		rr.yc = outData(2)
	}
	clear(rr.y)
	B, D, H := rr.B, rr.D, rr.H
	if rr.layout1 {
		rr.stateIdx = func(d, b int) int { return (b*D + d) * H }
	} else {
		rr.stateIdx = func(d, b int) int { return (d*B + b) * H }
	}
	threads := ctx.NumThreads()
	rr.threadsPerDir = max(1, threads/D)
	opkernel.ParallelFor(ctx, D, 1, func(d0, d1 int) {
		for d := d0; d < d1; d++ {
			rr.direction(d)
		}
	})
	return nil
}

// yAt is the offset of Y's row for step t, direction d, batch b.
func (rr *rnnRun[T]) yAt(t, d, b int) int {
	if rr.layout1 {
		return ((b*rr.S+t)*rr.D + d) * rr.H
	}
	return ((t*rr.D+d)*rr.B + b) * rr.H
}

func (rr *rnnRun[T]) clipAct(a rnnAct, v float64) float64 {
	if v > rr.clip {
		v = rr.clip
	} else if v < -rr.clip {
		v = -rr.clip
	}
	return a.apply(v)
}

// direction runs direction d over every step.
func (rr *rnnRun[T]) direction(d int) {
	S, B, I, H, G := rr.S, rr.B, rr.I, rr.H, rr.G
	GH := G * H
	ctx := &opkernel.Ctx{Threads: rr.threadsPerDir}
	gemm := gemmOn(ctx, rr.gemm)
	wd := rr.w[d*GH*I : (d+1)*GH*I]
	rd := rr.r[d*GH*H : (d+1)*GH*H]
	var wb, rb, pd []T
	if rr.b != nil {
		wb = rr.b[d*2*GH : d*2*GH+GH]
		rb = rr.b[d*2*GH+GH : (d+1)*2*GH]
	}
	if rr.p != nil {
		pd = rr.p[d*3*H : (d+1)*3*H]
	}
	gru := rr.n.Op == "GRU"
	// Input projections of every step, plus the biases that only add: all
	// but GRU's Rbh under linear_before_reset, which r multiplies.
	xw := make([]T, S*B*GH)
	gemm(false, true, S*B, GH, I, 1, rr.x, I, wd, I, 0, xw, GH)
	if wb != nil {
		bias := make([]T, GH)
		for j := range bias {
			bias[j] = wb[j]
			if !(gru && rr.linBeforeReset && j >= 2*H) {
				bias[j] += rb[j]
			}
		}
		for row := 0; row < S*B; row++ {
			xr := xw[row*GH : (row+1)*GH]
			for j, v := range bias {
				xr[j] += v
			}
		}
	}
	h := make([]T, B*H)
	var c []T
	if rr.n.Op == "LSTM" {
		c = make([]T, B*H)
	}
	for b := 0; b < B; b++ {
		if rr.h0 != nil {
			copy(h[b*H:(b+1)*H], rr.h0[rr.stateIdx(d, b):])
		}
		if c != nil && rr.c0 != nil {
			copy(c[b*H:(b+1)*H], rr.c0[rr.stateIdx(d, b):])
		}
	}
	hr := make([]T, B*GH)
	var rh []T // GRU without linear_before_reset: r (.) H_{t-1}
	if gru && !rr.linBeforeReset {
		rh = make([]T, B*H)
	}
	reverse := rr.reverse0 || d == 1
	acts := rr.acts[d]
	active := func(t, b int) bool { return rr.lens == nil || int64(t) < rr.lens[b] }
	grain := max(1, 8192/max(GH, 1))
	for s := 0; s < S; s++ {
		t := s
		if reverse {
			t = S - 1 - s
		}
		xt := xw[t*B*GH : (t+1)*B*GH]
		switch {
		case rh != nil: // GRU, r applied before Rh: z and r first
			gemm(false, true, B, 2*H, H, 1, h, H, rd, H, 0, hr, GH)
			opkernel.ParallelFor(ctx, B, grain, func(b0, b1 int) {
				for b := b0; b < b1; b++ {
					xr, hrr := xt[b*GH:], hr[b*GH:]
					for j := 0; j < H; j++ {
						r := rr.clipAct(acts[0], float64(xr[H+j])+float64(hrr[H+j]))
						rh[b*H+j] = T(r * float64(h[b*H+j]))
					}
				}
			})
			gemm(false, true, B, H, H, 1, rh, H, rd[2*H*H:], H, 0, hr[2*H:], GH)
		default:
			gemm(false, true, B, GH, H, 1, h, H, rd, H, 0, hr, GH)
		}
		opkernel.ParallelFor(ctx, B, grain, func(b0, b1 int) {
			for b := b0; b < b1; b++ {
				if !active(t, b) {
					continue
				}
				hb := h[b*H : (b+1)*H]
				xr, hrr := xt[b*GH:(b+1)*GH], hr[b*GH:(b+1)*GH]
				switch rr.n.Op {
				case "LSTM":
					rr.lstmCell(acts, xr, hrr, pd, hb, c[b*H:(b+1)*H])
				case "GRU":
					rr.gruCell(acts, xr, hrr, rb, hb)
				default:
					for j := 0; j < H; j++ {
						hb[j] = T(rr.clipAct(acts[0], float64(xr[j])+float64(hrr[j])))
					}
				}
				if rr.y != nil {
					copy(rr.y[rr.yAt(t, d, b):], hb)
				}
			}
		})
	}
	for b := 0; b < B; b++ {
		if rr.yh != nil {
			copy(rr.yh[rr.stateIdx(d, b):], h[b*H:(b+1)*H])
		}
		if rr.yc != nil {
			copy(rr.yc[rr.stateIdx(d, b):], c[b*H:(b+1)*H])
		}
	}
}

// lstmCell updates one batch row's h and c in place. Gate order i, o, f,
// c; peepholes P are i, o, f.
func (rr *rnnRun[T]) lstmCell(acts []rnnAct, xr, hrr, pd, h, c []T) {
	H := rr.H
	f, g, hAct := acts[0], acts[1], acts[2]
	for j := 0; j < H; j++ {
		cp := float64(c[j])
		pre := func(k int) float64 { return float64(xr[k*H+j]) + float64(hrr[k*H+j]) }
		ii, oo, ff, cc := pre(0), pre(1), pre(2), pre(3)
		if pd != nil {
			ii += float64(pd[j]) * cp
			ff += float64(pd[2*H+j]) * cp
		}
		it := rr.clipAct(f, ii)
		var ft float64
		if rr.inputForget {
			ft = 1 - it
		} else {
			ft = rr.clipAct(f, ff)
		}
		ct := rr.clipAct(g, cc)
		cn := T(ft*cp + it*ct)
		if pd != nil {
			oo += float64(pd[H+j]) * float64(cn)
		}
		ot := rr.clipAct(f, oo)
		c[j] = cn
		h[j] = T(ot * hAct.apply(float64(cn)))
	}
}

// gruCell updates one batch row's h in place. Gate order z, r, h. Without
// linear_before_reset hrr's h part already is (r (.) H_{t-1}) * Rh^T and
// the biases are in xr; with it, hrr's h part is H_{t-1} * Rh^T and Rbh is
// added before r multiplies.
func (rr *rnnRun[T]) gruCell(acts []rnnAct, xr, hrr, rb, h []T) {
	H := rr.H
	f, g := acts[0], acts[1]
	for j := 0; j < H; j++ {
		zt := rr.clipAct(f, float64(xr[j])+float64(hrr[j]))
		var hh float64
		if rr.linBeforeReset {
			rt := rr.clipAct(f, float64(xr[H+j])+float64(hrr[H+j]))
			lin := float64(hrr[2*H+j])
			if rb != nil {
				lin += float64(rb[2*H+j])
			}
			hh = float64(xr[2*H+j]) + rt*lin
		} else {
			hh = float64(xr[2*H+j]) + float64(hrr[2*H+j])
		}
		ht := rr.clipAct(g, hh)
		h[j] = T((1-zt)*ht + zt*float64(h[j]))
	}
}
