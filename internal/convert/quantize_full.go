package convert

import (
	"context"
	"fmt"
	"math"

	"gkconv/internal/akgcfg"
	"gkconv/internal/fusion"
	"gkconv/internal/ir"
	"gkconv/internal/runtime"
)

// fullQuant: FULL_QUANT, converter_lite's post-training static int8
// quantization. It
//
//  1. picks the Conv2D and MatMul nodes with a constant float32 weight of
//     at least min_quant_weight_size elements and min_quant_weight_channel
//     output channels, not named by skip_quant_node (node name or
//     provenance); the others are reported kept in float with the reason;
//  2. splits off what the integer kernels do not do (a conv's residual
//     input and activations other than RELU/RELU6, a MatMul's bias and
//     activation, MatMul's transpose_b: the weight is transposed), so the
//     float graph it calibrates is the one it quantizes;
//  3. runs that float graph with the runtime on the calibration data
//     (readCalibration) and collects the range of every activation a
//     quantized op reads or writes (quantize_range.go's methods);
//  4. rewrites the graph into the QDQ form scripts/qdq_quantize.py writes:
//     QuantizeLinear/DequantizeLinear (uint8, asymmetric, per tensor) on the
//     activation input, DequantizeLinear on the int8 symmetric weight (per
//     output channel with per_channel, else per tensor) and the int32 bias
//     (scale x_scale*w_scale, zero point 0), and a QDQ pair on the output
//     unless it is a graph output; a conv's RELU/RELU6 is absorbed into its
//     output quantization (range [0, hi], hi <= 6: the uint8 saturation is
//     the activation);
//  5. runs fusion's QDQFusion, which turns each quantized node into
//     QLinearConv or QLinearMatMul on the integer tensors;
//  6. reports each node, the calibration and the cosine similarity of each
//     graph output, quantized against float, over the calibration data.
func fullQuant(ctx context.Context, g *ir.Graph, q *akgcfg.QuantConfig, modelFile string, rq *ReportQuantization) error {
	if q.BitNum != 0 && q.BitNum != 8 {
		return Errorf(CodeParamInvalid, "FULL_QUANT: bit_num=%d is not supported; FULL_QUANT quantizes to 8 bits", q.BitNum)
	}
	if rq.BitNum == 0 {
		rq.BitNum = 8
	}
	cs, err := readCalibration(g, q)
	if err != nil {
		return err
	}
	e := ir.NewEditor(g)
	cands := selectFullQuant(g, q, rq)
	for _, c := range cands {
		if err := defuseForQuant(e, c); err != nil {
			return Errorf(CodeError, "FULL_QUANT: %v", err)
		}
	}
	if err := g.TopoSort(); err != nil {
		return Errorf(CodeError, "FULL_QUANT: %v", err)
	}

	// Calibration: the float graph with every activation to quantize as an
	// extra output.
	graphOut := map[*ir.Value]bool{}
	for _, o := range g.Outputs {
		graphOut[o] = true
	}
	var taps []*ir.Value
	tapIdx := map[*ir.Value]int{}
	tap := func(v *ir.Value) {
		if _, ok := tapIdx[v]; !ok {
			tapIdx[v] = len(taps)
			taps = append(taps, v)
		}
	}
	for _, c := range cands {
		tap(c.x)
		tap(c.out) // a graph output's range is not used, its values are (per-layer cosine)
	}
	stats := make([]*actStats, len(taps))
	for i := range stats {
		stats[i] = newActStats()
	}
	method := q.ActivationMethod
	floatOuts := make([][][]float32, len(cs.samples))
	var scratch []float32
	// bias_correction: the float per-channel means of the conv outputs.
	floatMeans := map[*ir.Value]*chanMeans{}
	if q.BiasCorrection {
		for _, c := range cands {
			if c.n.Op == "Conv2D" && !graphOut[c.out] {
				floatMeans[c.out] = &chanMeans{}
			}
		}
	}
	// The float output of each quantized node on the first layerSamples
	// samples, for the report's per-layer cosine.
	layerRef := make([][][]float32, len(cands))
	err = runWithTaps(ctx, g, taps, cs.samples, func(s int, outs, tapped []*ir.Tensor) error {
		if s < layerSamples {
			for ci, c := range cands {
				layerRef[ci] = append(layerRef[ci], append([]float32(nil), floatsOf(tapped[tapIdx[c.out]])...))
			}
		}
		for i, t := range tapped {
			stats[i].observe(floatsOf(t), method, &scratch)
			if m := floatMeans[taps[i]]; m != nil {
				m.add(t)
			}
		}
		for _, o := range outs {
			floatOuts[s] = append(floatOuts[s], append([]float32(nil), floatsOf(o)...))
		}
		return nil
	})
	if err != nil {
		return calibErr(ctx, err)
	}
	if method == akgcfg.KL {
		err = runWithTaps(ctx, g, taps, cs.samples, func(s int, _, tapped []*ir.Tensor) error {
			for i, t := range tapped {
				stats[i].histogram(floatsOf(t))
			}
			return nil
		})
		if err != nil {
			return calibErr(ctx, err)
		}
	}
	type qparams struct {
		lo, hi float64
		scale  float32
		zp     uint8
	}
	params := func(v *ir.Value, absorb int64) qparams {
		lo, hi := stats[tapIdx[v]].rangeOf(method)
		if absorb == ir.ActReLU || absorb == ir.ActReLU6 {
			lo = 0
			if absorb == ir.ActReLU6 {
				hi = math.Min(hi, 6)
			}
		}
		s, z := uint8Params(lo, hi)
		return qparams{lo, hi, s, z}
	}

	// QDQ rewrite: outputs first, so that a quantized node reading another's
	// output uses that output's QDQ pair (one scale per tensor).
	qdqd := map[*ir.Value]qparams{} // values that are a DequantizeLinear of ours, with its params
	inDQ := map[*ir.Value]*ir.Value{}
	addQDQ := func(x, out *ir.Value, p qparams, prov []string) error {
		sv := e.Const(x.Name+"_scale", ir.Float32Tensor([]int64{}, p.scale))
		zt := ir.NewTensor(ir.Uint8, []int64{})
		zt.U8()[0] = p.zp
		zv := e.Const(x.Name+"_zp", zt)
		qn := ir.NewNode(e.Unique(x.Name+"_Q"), "QuantizeLinear", []*ir.Value{x, sv, zv}, nil, e.Unique(x.Name+"_q"))
		qn.Provenance = prov
		if err := e.Emit(qn); err != nil {
			return err
		}
		dq := &ir.Node{Name: e.Unique(x.Name + "_DQ"), Op: "DequantizeLinear", Inputs: []*ir.Value{qn.Outputs[0], sv, zv},
			Outputs: []*ir.Value{out}, Attrs: ir.Attrs{}, Provenance: prov}
		out.Producer, out.OutIndex = dq, 0
		return e.Emit(dq)
	}
	for _, c := range cands {
		if graphOut[c.out] {
			continue
		}
		p := params(c.out, c.absorb)
		raw := &ir.Value{Name: e.Unique(c.out.Name + "_float"), DType: c.out.DType, Shape: c.out.Shape, Producer: c.n}
		c.n.Outputs[0] = raw
		if c.absorb != ir.ActNone {
			delete(c.n.Attrs, ir.AttrActivation)
		}
		if err := addQDQ(raw, c.out, p, c.n.Provenance); err != nil {
			return Errorf(CodeError, "FULL_QUANT: %s: %v", c.n.Name, err)
		}
		qdqd[c.out] = p
	}
	base := len(rq.Quantized)
	for _, c := range cands {
		p, ok := qdqd[c.x]
		if !ok {
			p = params(c.x, ir.ActNone)
			xd, ok := inDQ[c.x]
			if !ok {
				xd = &ir.Value{Name: e.Unique(c.x.Name + "_dq"), DType: ir.Float32, Shape: c.x.Shape}
				if err := addQDQ(c.x, xd, p, c.n.Provenance); err != nil {
					return Errorf(CodeError, "FULL_QUANT: %s: %v", c.n.Name, err)
				}
				inDQ[c.x] = xd
			}
			c.n.Inputs[0] = xd
		}
		node := ReportQuantNode{Name: c.name, Op: c.n.Op, WeightChannels: c.channels}
		lo, hi, sc, zp := p.lo, p.hi, float64(p.scale), int(p.zp)
		node.InputMin, node.InputMax, node.Scale, node.ZeroPoint = &lo, &hi, &sc, &zp
		before, after, maxErr, err := quantizeWeights(e, c, p.scale, q.PerChannel)
		if err != nil {
			return Errorf(CodeError, "FULL_QUANT: %s: %v", c.n.Name, err)
		}
		node.WeightMaxError = maxErr
		rq.WeightBytesBefore += before
		rq.WeightBytesAfter += after
		rq.Quantized = append(rq.Quantized, node)
	}
	if err := g.TopoSort(); err != nil {
		return Errorf(CodeError, "FULL_QUANT: %v", err)
	}
	g.RemoveDead()

	// Per-layer cosines on the QDQ graph (every quantized node's output is a
	// DequantizeLinear's there; lowering fuses some of them into the next
	// integer op), then again after lowering where the output is still a
	// value, which also sees bias_correction.
	if err := layerCosines(ctx, g, cands, layerRef, cs.samples, rq.Quantized[base:]); err != nil {
		return calibErr(ctx, err)
	}

	// The integer kernels: QDQFusion alone.
	var black []string
	for _, name := range fusion.AnfPassNames() {
		if name != "QDQFusion" {
			black = append(black, name)
		}
	}
	if _, _, err := fusion.RunAnf(g, fusion.AnfOptions{Blacklist: black}); err != nil {
		return Errorf(CodeError, "FULL_QUANT: %v", err)
	}
	if err := g.Validate(); err != nil {
		return Errorf(CodeError, "FULL_QUANT: internal error, invalid graph after quantization: %v", err)
	}

	if q.BiasCorrection {
		if err := biasCorrection(ctx, g, cands, floatMeans, cs.samples); err != nil {
			return calibErr(ctx, err)
		}
	}

	// The quantized graph against the float one on the calibration data.
	rq.Calibration = &ReportCalibration{Method: method.String(), Samples: len(cs.samples), Inputs: cs.inputs}
	cos, err := outputCosines(ctx, g, cs.samples, floatOuts)
	if err != nil {
		return calibErr(ctx, err)
	}
	rq.Calibration.OutputCosine = cos
	if err := layerCosines(ctx, g, cands, layerRef, cs.samples, rq.Quantized[base:]); err != nil {
		return calibErr(ctx, err)
	}
	return nil
}

// layerSamples is how many calibration samples the per-layer cosine uses
// (each keeps a float copy of every quantized node's output).
const layerSamples = 4

// layerCosines sets each quantized node's Cosine: its output in the
// quantized graph (after its QuantizeLinear/DequantizeLinear pair) against
// the float graph's on the first layerSamples samples; a node whose output
// is no longer a value of g keeps the Cosine it had.
func layerCosines(ctx context.Context, g *ir.Graph, cands []*fqCand, ref [][][]float32, samples [][]*ir.Tensor, nodes []ReportQuantNode) error {
	produced := map[*ir.Value]bool{}
	for _, n := range g.Nodes {
		for _, o := range n.Outputs {
			produced[o] = true
		}
	}
	var taps []*ir.Value
	which := []int{}
	for ci, c := range cands {
		if produced[c.out] && ci < len(nodes) {
			taps = append(taps, c.out)
			which = append(which, ci)
		}
	}
	if len(taps) == 0 {
		return nil
	}
	acc := make([]cosAcc, len(taps))
	n := min(layerSamples, len(samples))
	err := runWithTaps(ctx, g, taps, samples[:n], func(s int, _, tapped []*ir.Tensor) error {
		for i, t := range tapped {
			if s < len(ref[which[i]]) {
				acc[i].add(floatsOf(t), ref[which[i]][s])
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, ci := range which {
		c := acc[i].cos()
		nodes[ci].Cosine = &c
	}
	return nil
}

func calibErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return &Error{Code: CodeError, Err: ctx.Err()}
	}
	return Errorf(CodeError, "FULL_QUANT calibration: %v", err)
}

// outputCosines runs g on samples and returns, per graph output, the cosine
// similarity of its values over all samples against ref (per sample, per
// output).
func outputCosines(ctx context.Context, g *ir.Graph, samples [][]*ir.Tensor, ref [][][]float32) (map[string]float64, error) {
	sess, err := runtime.NewSession(g, runtime.Options{})
	if err != nil {
		return nil, err
	}
	acc := make([]cosAcc, len(g.Outputs))
	for s, in := range samples {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		outs, err := sess.Run(in)
		if err != nil {
			return nil, fmt.Errorf("quantized graph, sample %d: %w", s, err)
		}
		for i, o := range outs {
			if i < len(ref[s]) {
				acc[i].add(floatsOf(o), ref[s][i])
			}
		}
	}
	m := map[string]float64{}
	for i, o := range g.Outputs {
		m[o.Name] = acc[i].cos()
	}
	return m, nil
}

// cosAcc accumulates a cosine similarity over several tensors.
type cosAcc struct{ ab, aa, bb float64 }

func (c *cosAcc) add(a, b []float32) {
	for i := range a {
		if i >= len(b) {
			break
		}
		x, y := float64(a[i]), float64(b[i])
		c.ab += x * y
		c.aa += x * x
		c.bb += y * y
	}
}

func (c *cosAcc) cos() float64 {
	if c.aa == 0 && c.bb == 0 {
		return 1
	}
	if c.aa == 0 || c.bb == 0 {
		return 0
	}
	return c.ab / (math.Sqrt(c.aa) * math.Sqrt(c.bb))
}

// fqCand is a node FULL_QUANT quantizes.
type fqCand struct {
	n        *ir.Node
	name     string // n's name when picked (the report's)
	axis     int    // the weight's output-channel axis (Conv2D 0, MatMul 1)
	channels int
	x, out   *ir.Value // activation input; the output to quantize
	// absorb is the conv's RELU/RELU6, applied by the output quantization.
	absorb int64
	// biasScale is a conv's int32 bias scale per output channel.
	biasScale []float32
}

// selectFullQuant returns the nodes to quantize and reports the kept ones.
func selectFullQuant(g *ir.Graph, q *akgcfg.QuantConfig, rq *ReportQuantization) []*fqCand {
	skip := map[string]bool{}
	for _, s := range q.SkipQuantNodes {
		skip[s] = true
	}
	kept := func(n *ir.Node, why string) {
		rq.KeptFloat = append(rq.KeptFloat, ReportQuantKept{Name: n.Name, Op: n.Op, Reason: why})
	}
	var out []*fqCand
	for _, n := range g.Nodes {
		if (n.Op != "Conv2D" && n.Op != "MatMul") || n.Body != nil || len(n.Outputs) != 1 || len(n.Inputs) < 2 {
			continue
		}
		skipped := skip[n.Name]
		for _, p := range n.Provenance {
			skipped = skipped || skip[p]
		}
		w, x := n.Inputs[1], n.Inputs[0]
		switch {
		case skipped:
			kept(n, "skip_quant_node")
			continue
		case !w.IsConst():
			kept(n, "non-constant weight")
			continue
		case w.Const.DType != ir.Float32:
			kept(n, fmt.Sprintf("weight is %s, not float32", w.Const.DType))
			continue
		case x == nil || x.DType != ir.Float32:
			kept(n, "activation input is not float32")
			continue
		}
		if act, ok := ir.FusedActivation(n); !ok {
			kept(n, fmt.Sprintf("fused activation_type %d is not supported", act))
			continue
		}
		c := &fqCand{n: n, name: n.Name, x: x, out: n.Outputs[0]}
		if n.Op == "Conv2D" {
			if len(w.Shape) < 3 {
				kept(n, fmt.Sprintf("weight shape %v", w.Shape))
				continue
			}
			c.channels = int(w.Shape[0])
		} else {
			if len(w.Shape) != 2 {
				kept(n, fmt.Sprintf("weight is %d-D, not 2-D", len(w.Shape)))
				continue
			}
			if n.Attrs.Int("transpose_a", 0) != 0 {
				kept(n, "transpose_a")
				continue
			}
			c.axis = 1
			c.channels = int(w.Shape[1])
			if n.Attrs.Int("transpose_b", 0) != 0 {
				c.channels = int(w.Shape[0])
			}
		}
		if el := w.Const.NumElements(); el < int64(q.MinQuantWeightSize) {
			kept(n, fmt.Sprintf("too small: %d weight elements < min_quant_weight_size %d", el, q.MinQuantWeightSize))
			continue
		}
		if c.channels < q.MinQuantWeightChannel {
			kept(n, fmt.Sprintf("too few channels: %d < min_quant_weight_channel %d", c.channels, q.MinQuantWeightChannel))
			continue
		}
		out = append(out, c)
	}
	return out
}

// defuseForQuant splits off c's node what QLinearConv/QLinearMatMul do not
// compute, as separate float nodes after it (same values): a conv's
// residual input and its activation unless RELU/RELU6 without residual
// (absorbed); a MatMul's bias and activation. MatMul's transpose_b becomes
// a transposed weight. c.out becomes the node's own output.
func defuseForQuant(e *ir.Editor, c *fqCand) error {
	n := c.n
	y := n.Outputs[0]
	act := n.Attrs.Int(ir.AttrActivation, ir.ActNone)
	var extra []*ir.Value // added after the node, in order (Add operand)
	if n.Op == "Conv2D" {
		z := ir.ConvResidual(n)
		if z == nil && (act == ir.ActReLU || act == ir.ActReLU6 || act == ir.ActNone) {
			c.absorb = act
			return nil
		}
		if z != nil {
			extra = append(extra, z)
		}
		b := n.Input(2)
		n.Inputs = n.Inputs[:2]
		if b != nil {
			n.Inputs = append(n.Inputs, b)
		}
	} else {
		if n.Attrs.Int("transpose_b", 0) != 0 {
			w := n.Inputs[1].Const
			k, m := w.Shape[0], w.Shape[1] // [N, K] stored
			t := ir.NewTensor(ir.Float32, []int64{m, k})
			src, dst := w.F32(), t.F32()
			for i := int64(0); i < k; i++ {
				for j := int64(0); j < m; j++ {
					dst[j*k+i] = src[i*m+j]
				}
			}
			n.Inputs[1] = e.Const(n.Inputs[1].Name+"_t", t)
			n.Attrs = n.Attrs.Clone()
			delete(n.Attrs, "transpose_b")
		}
		if b := n.Input(2); b != nil {
			extra = append(extra, b)
		}
		n.Inputs = n.Inputs[:2]
		if act == ir.ActNone && len(extra) == 0 {
			return nil
		}
	}
	n.Attrs = n.Attrs.Clone()
	delete(n.Attrs, ir.AttrActivation)
	// The chain: node -> [Add extra] -> [activation] -> y.
	steps := len(extra)
	if act != ir.ActNone {
		steps++
	}
	cur := &ir.Value{Name: e.Unique(y.Name + "_raw"), DType: y.DType, Shape: y.Shape, Producer: n}
	n.Outputs[0] = cur
	c.out = cur
	emit := func(op string, ins []*ir.Value, last bool) (*ir.Value, error) {
		var out *ir.Value
		if last {
			out = y
		} else {
			out = &ir.Value{Name: e.Unique(y.Name + "_" + op)}
		}
		m := &ir.Node{Name: e.Unique(n.Name + "_" + op), Op: op, Inputs: ins, Outputs: []*ir.Value{out},
			Attrs: ir.Attrs{}, Provenance: append([]string(nil), n.Provenance...)}
		out.Producer, out.OutIndex = m, 0
		return out, e.Emit(m)
	}
	done := 0
	var err error
	for _, v := range extra {
		done++
		if cur, err = emit("Add", []*ir.Value{cur, v}, done == steps); err != nil {
			return err
		}
	}
	if act == ir.ActNone {
		return nil
	}
	switch act {
	case ir.ActReLU:
		_, err = emit("ReLU", []*ir.Value{cur}, true)
	case ir.ActReLU6:
		_, err = emit("ReLU6", []*ir.Value{cur}, true)
	case ir.ActSigmoid:
		_, err = emit("Sigmoid", []*ir.Value{cur}, true)
	case ir.ActTanh:
		_, err = emit("Tanh", []*ir.Value{cur}, true)
	case ir.ActHSwish:
		_, err = emit("HSwish", []*ir.Value{cur}, true)
	case ir.ActSwish:
		var s *ir.Value
		if s, err = emit("Sigmoid", []*ir.Value{cur}, false); err == nil {
			_, err = emit("Mul", []*ir.Value{cur, s}, true)
		}
	default:
		err = fmt.Errorf("%s: activation_type %d cannot be split off", n.Name, act)
	}
	return err
}

// quantizeWeights replaces c's weight (and a conv's bias) by
// DequantizeLinear of int8 symmetric values (and the int32 bias at scale
// xScale*w_scale); it returns the bytes before and after and the largest
// per-channel error of the dequantized weight relative to the channel's
// largest magnitude.
func quantizeWeights(e *ir.Editor, c *fqCand, xScale float32, perChannel bool) (before, after int64, maxErr float64, err error) {
	n := c.n
	wv := n.Inputs[1]
	w := wv.Const
	wf := w.F32()
	ch := c.channels
	// index of element i's channel
	chanOf := func(i int) int { return i / (len(wf) / ch) }
	if c.axis == 1 {
		chanOf = func(i int) int { return i % ch }
	}
	amax := make([]float64, ch)
	for i, v := range wf {
		k := chanOf(i)
		amax[k] = math.Max(amax[k], math.Abs(float64(v)))
	}
	nScale := ch
	if !perChannel {
		m := 0.0
		for _, a := range amax {
			m = math.Max(m, a)
		}
		amax = []float64{m}
		nScale = 1
	}
	scales := make([]float32, nScale)
	for k, a := range amax {
		scales[k] = 1
		if a > 0 {
			scales[k] = float32(a / 127)
		}
	}
	sc := func(i int) float32 {
		if nScale == 1 {
			return scales[0]
		}
		return scales[chanOf(i)]
	}
	wq := ir.NewTensor(ir.Int8, w.Shape)
	qd := wq.I8()
	chErr := make([]float64, ch)
	chMax := make([]float64, ch)
	for i, v := range wf {
		s := sc(i)
		r := math.RoundToEven(float64(v / s))
		r = math.Max(-127, math.Min(127, r))
		qd[i] = int8(r)
		k := chanOf(i)
		chErr[k] = math.Max(chErr[k], math.Abs(float64(v)-r*float64(s)))
		chMax[k] = math.Max(chMax[k], math.Abs(float64(v)))
	}
	for k := range chErr {
		if chMax[k] > 0 {
			maxErr = math.Max(maxErr, chErr[k]/chMax[k])
		}
	}
	shape := []int64{}
	if nScale > 1 {
		shape = []int64{int64(nScale)}
	}
	st := ir.Float32Tensor(shape, scales...)
	zt := ir.NewTensor(ir.Int8, shape)
	base := c.name
	qv := e.Const(base+"_w_q", wq)
	sv := e.Const(base+"_w_scale", st)
	zv := e.Const(base+"_w_zp", zt)
	attrs := ir.Attrs{}
	if nScale > 1 {
		attrs["axis"] = ir.IntAttr(int64(c.axis))
	}
	wd := &ir.Value{Name: e.Unique(base + "_w_dq")}
	dq := &ir.Node{Name: e.Unique(base + "_w_DQ"), Op: "DequantizeLinear", Inputs: []*ir.Value{qv, sv, zv},
		Outputs: []*ir.Value{wd}, Attrs: attrs, Provenance: append([]string(nil), n.Provenance...)}
	wd.Producer = dq
	if err := e.Emit(dq); err != nil {
		return 0, 0, 0, err
	}
	n.Inputs[1] = wd
	before += int64(len(wf)) * 4
	after += int64(len(wf)) + int64(nScale)*5

	// The conv's bias: int32 at x_scale*w_scale, zero point 0.
	if n.Op != "Conv2D" {
		return before, after, maxErr, nil
	}
	bs := make([]float32, ch)
	for k := range bs {
		s := scales[0]
		if nScale > 1 {
			s = scales[k]
		}
		bs[k] = xScale * s
	}
	c.biasScale = bs
	bv := n.Input(2)
	if bv == nil || !bv.IsConst() || bv.Const.DType != ir.Float32 || len(bv.Shape) != 1 || int(bv.Shape[0]) != ch {
		return before, after, maxErr, nil
	}
	bf := bv.Const.F32()
	bq := ir.NewTensor(ir.Int32, []int64{int64(ch)})
	bqd := bq.I32()
	for k := range bf {
		r := math.RoundToEven(float64(bf[k]) / float64(bs[k]))
		bqd[k] = int32(math.Max(math.MinInt32, math.Min(math.MaxInt32, r)))
	}
	bqv := e.Const(base+"_b_q", bq)
	bsv := e.Const(base+"_b_scale", ir.Float32Tensor([]int64{int64(ch)}, bs...))
	bzv := e.Const(base+"_b_zp", ir.NewTensor(ir.Int32, []int64{int64(ch)}))
	bd := &ir.Value{Name: e.Unique(base + "_b_dq")}
	bdq := &ir.Node{Name: e.Unique(base + "_b_DQ"), Op: "DequantizeLinear", Inputs: []*ir.Value{bqv, bsv, bzv},
		Outputs: []*ir.Value{bd}, Attrs: ir.Attrs{"axis": ir.IntAttr(0)}, Provenance: append([]string(nil), n.Provenance...)}
	bd.Producer = bdq
	if err := e.Emit(bdq); err != nil {
		return 0, 0, 0, err
	}
	n.Inputs[2] = bd
	before += int64(ch) * 4
	after += int64(ch) * 12
	return before, after, maxErr, nil
}

// biasCorrectionChunk is how many convs one bias_correction run measures:
// 1 = each after the corrections before it (sequential, as converter_lite).
const biasCorrectionChunk = 1

// chanMeans accumulates the per-channel (axis 1) means of NC... tensors.
type chanMeans struct {
	sum []float64
	n   []float64
}

func (m *chanMeans) add(t *ir.Tensor) {
	x := floatsOf(t)
	if len(t.Shape) < 2 || len(x) == 0 {
		return
	}
	c := int(t.Shape[1])
	inner := 1
	for _, d := range t.Shape[2:] {
		inner *= int(d)
	}
	if m.sum == nil {
		m.sum, m.n = make([]float64, c), make([]float64, c)
	}
	if len(m.sum) != c {
		return
	}
	for i, v := range x {
		k := (i / inner) % c
		m.sum[k] += float64(v)
		m.n[k]++
	}
}

func (m *chanMeans) mean(k int) float64 {
	if m == nil || k >= len(m.n) || m.n[k] == 0 {
		return 0
	}
	return m.sum[k] / m.n[k]
}

// biasCorrection is converter_lite's bias_correction: the quantized graph
// runs on the calibration data, and each QLinearConv's int32 bias moves by
// the mean per-channel difference of its (dequantized) output from the
// float graph's (floatMeans), in bias steps (x_scale*w_scale); a conv
// without a bias gets one. The convs are corrected in graph order, each
// measured after the corrections before it (one run over the calibration
// data per conv; correcting all from one run over-corrects, since the
// later convs' errors include the earlier ones'). Only convs without an
// absorbed RELU/RELU6 are corrected.
func biasCorrection(ctx context.Context, g *ir.Graph, cands []*fqCand, floatMeans map[*ir.Value]*chanMeans, samples [][]*ir.Tensor) error {
	type target struct {
		c    *fqCand
		conv *ir.Node
	}
	var ts []target
	var taps []*ir.Value
	for _, c := range cands {
		fm := floatMeans[c.out]
		// A conv whose RELU/RELU6 the output quantization applies is left
		// alone: the mean shift after the clamp is not a bias shift.
		if fm == nil || c.biasScale == nil || c.absorb != ir.ActNone || c.out.Producer == nil || c.out.Producer.Op != "DequantizeLinear" {
			continue
		}
		qo := c.out.Producer.Inputs[0]
		if qo.Producer == nil || qo.Producer.Op != "QLinearConv" {
			continue
		}
		ts = append(ts, target{c, qo.Producer})
		taps = append(taps, c.out)
	}
	if len(ts) == 0 {
		return nil
	}
	// A conv output that only other integer ops read has lost its
	// DequantizeLinear (QDQFusion): the runs get it back.
	view := *g
	view.Nodes = append([]*ir.Node(nil), g.Nodes...)
	view.Consts = append([]*ir.Value(nil), g.Consts...)
	in := map[*ir.Node]bool{}
	for _, n := range g.Nodes {
		in[n] = true
	}
	for _, v := range taps {
		if dq := v.Producer; !in[dq] {
			view.Nodes = append(view.Nodes, dq)
			in[dq] = true
			for _, x := range dq.Inputs[1:] {
				if x != nil && x.IsConst() {
					view.Consts = append(view.Consts, x)
				}
			}
		}
	}
	e := ir.NewEditor(g)
	// In graph order, biasCorrectionChunk convs per run: a correction
	// changes what the later convs read, so they are measured after it.
	for lo := 0; lo < len(ts); lo += biasCorrectionChunk {
		hi := min(lo+biasCorrectionChunk, len(ts))
		qm := make([]*chanMeans, hi-lo)
		for i := range qm {
			qm[i] = &chanMeans{}
		}
		err := runWithTaps(ctx, &view, taps[lo:hi], samples, func(_ int, _, tapped []*ir.Tensor) error {
			for i, t := range tapped {
				qm[i].add(t)
			}
			return nil
		})
		if err != nil {
			return err
		}
		for i, t := range ts[lo:hi] {
			fm := floatMeans[t.c.out]
			ch := len(t.c.biasScale)
			bq := ir.NewTensor(ir.Int32, []int64{int64(ch)})
			if b := t.conv.Input(8); b != nil {
				if !b.IsConst() || b.Const.DType != ir.Int32 || b.Const.NumElements() != int64(ch) {
					continue
				}
				copy(bq.I32(), b.Const.I32())
			}
			d := bq.I32()
			for k := 0; k < ch; k++ {
				diff := fm.mean(k) - qm[i].mean(k)
				r := float64(d[k]) + math.RoundToEven(diff/float64(t.c.biasScale[k]))
				d[k] = int32(math.Max(math.MinInt32, math.Min(math.MaxInt32, r)))
			}
			bv := e.Const(t.c.name+"_b_corrected", bq)
			view.Consts = append(view.Consts, bv)
			if len(t.conv.Inputs) > 8 {
				t.conv.Inputs[8] = bv
			} else {
				t.conv.Inputs = append(t.conv.Inputs, bv)
			}
		}
	}
	g.RemoveDead()
	return nil
}
