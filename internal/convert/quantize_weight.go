package convert

import (
	"context"
	"fmt"
	"math"
	"slices"

	"gkconv/internal/akgcfg"
	"gkconv/internal/ir"
)

// weightQuant: WEIGHT_QUANT, converter_lite's weight-only quantization. The
// constant weight of each Conv2D and MatMul (Gemm is a MatMul here) above
// the size and channel thresholds becomes a symmetric bit_num-bit integer
// tensor (int8 up to 8 bits, int16 up to 16) with one float32 scale per
// output channel (per_channel, the default) or per tensor, read through a
// DequantizeLinear: activations stay float, the file shrinks, and the
// runtime dequantizes each weight once when the model is loaded.
func weightQuant(ctx context.Context, g *ir.Graph, q *akgcfg.QuantConfig, modelFile string, rq *ReportQuantization) error {
	e := ir.NewEditor(g)
	done := map[*ir.Value]*ir.Value{} // float weight -> its DequantizeLinear output (a weight read twice is quantized once)
	counted := map[*ir.Value]bool{}
	for _, n := range slices.Clone(g.Nodes) {
		if err := ctx.Err(); err != nil {
			return &Error{Code: CodeError, Err: err}
		}
		w, axis, reason := weightCandidate(n, q)
		if w == nil {
			if reason != "" {
				rq.KeptFloat = append(rq.KeptFloat, ReportQuantKept{Name: n.Name, Op: n.Op, Reason: reason})
			}
			continue
		}
		wBytes := int64(len(w.Const.Data))
		if reason != "" {
			if !counted[w] {
				counted[w] = true
				rq.WeightBytesBefore += wBytes
				rq.WeightBytesAfter += wBytes
			}
			rq.KeptFloat = append(rq.KeptFloat, ReportQuantKept{Name: n.Name, Op: n.Op, Reason: reason})
			continue
		}
		dq := done[w]
		node := ReportQuantNode{Name: n.Name, Op: n.Op}
		if dq == nil {
			qt, scale, relErr, err := quantizeWeight(w.Const, axis, q.BitNum, q.PerChannel)
			if err != nil {
				return Errorf(CodeError, "%s: node %s (%s): quantizing weight %s: %v", modelFile, n.Name, n.Op, w.Name, err)
			}
			qv := e.Const(w.Name+"_quant", qt)
			sv := e.Const(w.Name+"_scale", scale)
			attrs := ir.Attrs{}
			if q.PerChannel {
				attrs["axis"] = ir.IntAttr(int64(axis))
			}
			d := ir.NewNode(e.Unique(w.Name+"_dequant"), "DequantizeLinear", []*ir.Value{qv, sv}, attrs, e.Unique(w.Name+"_dequantized"))
			d.Provenance = n.Provenance
			if err := ir.InferNode(d); err != nil {
				return Errorf(CodeError, "%s: node %s: %v", modelFile, d.Name, err)
			}
			g.Nodes = append(g.Nodes, d)
			dq = d.Outputs[0]
			done[w] = dq
			rq.WeightBytesBefore += wBytes
			rq.WeightBytesAfter += int64(len(qt.Data) + len(scale.Data))
			node.WeightMaxError = relErr
		}
		node.WeightChannels = int(w.Shape[axis])
		if !q.PerChannel {
			node.WeightChannels = 1
		}
		n.Inputs[1] = dq
		rq.Quantized = append(rq.Quantized, node)
	}
	if len(done) == 0 {
		return nil
	}
	if err := g.TopoSort(); err != nil {
		return Errorf(CodeError, "internal error after WEIGHT_QUANT: %v", err)
	}
	g.RemoveDead()
	return nil
}

// weightCandidate returns n's constant float weight and its output-channel
// axis when n is a node WEIGHT_QUANT looks at (nil, "" otherwise), and why
// the weight stays float when it does ("" when it is quantized).
func weightCandidate(n *ir.Node, q *akgcfg.QuantConfig) (*ir.Value, int, string) {
	if n.Op != "Conv2D" && n.Op != "MatMul" {
		return nil, 0, ""
	}
	w := n.Input(1)
	if w == nil || w.Const == nil {
		return nil, 0, fmt.Sprintf("%s weight is not a constant", n.Op)
	}
	if w.DType != ir.Float32 {
		return nil, 0, fmt.Sprintf("weight dtype %s (only float32 weights are quantized)", w.DType)
	}
	axis := 0
	switch n.Op {
	case "Conv2D":
		if len(w.Shape) < 3 {
			return nil, 0, fmt.Sprintf("weight shape %v", w.Shape)
		}
	case "MatMul":
		if len(w.Shape) != 2 {
			return nil, 0, fmt.Sprintf("weight rank %d (only 2-D MatMul weights are quantized)", len(w.Shape))
		}
		if n.Attrs.Int("transpose_b", 0) == 0 {
			axis = 1
		}
	}
	if skipped(n, q.SkipQuantNodes) {
		return w, axis, "skip_quant_node"
	}
	if size := ir.NumElements(w.Shape); size < int64(q.MinQuantWeightSize) {
		return w, axis, fmt.Sprintf("weight has %d elements, fewer than min_quant_weight_size=%d", size, q.MinQuantWeightSize)
	}
	if ch := w.Shape[axis]; ch < int64(q.MinQuantWeightChannel) {
		return w, axis, fmt.Sprintf("weight has %d output channels, fewer than min_quant_weight_channel=%d", ch, q.MinQuantWeightChannel)
	}
	return w, axis, ""
}

// skipped: skip_quant_node names the node, or the source-model node it came
// from (a Conv that Conv+BatchNorm fusion renamed keeps its source name).
func skipped(n *ir.Node, names []string) bool {
	if slices.Contains(names, n.Name) {
		return true
	}
	for _, p := range n.Provenance {
		if slices.Contains(names, p) {
			return true
		}
	}
	return false
}

// quantizeWeight quantizes w symmetrically to bits-bit integers, one scale
// per index of axis (perChannel) or one for the tensor: scale = max|w|/qmax
// (1 for an all-zero channel), q = round-half-even(w/scale) clamped to
// [-qmax, qmax], zero point 0. relErr is the largest per-channel relative
// L2 error of the dequantized weight.
func quantizeWeight(w *ir.Tensor, axis, bits int, perChannel bool) (qt, scale *ir.Tensor, relErr float64, err error) {
	if bits < 1 || bits > 16 {
		return nil, nil, 0, fmt.Errorf("bit_num %d", bits)
	}
	qmax := float64(int(1)<<(bits-1) - 1)
	if bits == 1 {
		qmax = 1 // one bit: the sign, {-1, 0, 1} as converter_lite's 1-bit range allows
	}
	vals := w.F32()
	channels, inner := 1, 1
	for i, d := range w.Shape {
		if i < axis {
			channels *= int(d) // outer dims fold into the channel loop below
		}
		if i > axis {
			inner *= int(d)
		}
	}
	outer := channels
	channels = int(w.Shape[axis])
	if !perChannel {
		outer, channels, inner = 1, 1, len(vals)
	}
	dt := ir.Int8
	if bits > 8 {
		dt = ir.Int16
	}
	qt = ir.NewTensor(dt, w.Shape)
	scale = ir.NewTensor(ir.Float32, []int64{int64(channels)})
	if !perChannel {
		scale = ir.NewTensor(ir.Float32, []int64{})
	}
	sc := scale.F32()
	// index of element (o, c, i): (o*channels + c)*inner + i
	for c := 0; c < channels; c++ {
		amax := 0.0
		for o := 0; o < outer; o++ {
			base := (o*channels + c) * inner
			for _, v := range vals[base : base+inner] {
				if a := math.Abs(float64(v)); a > amax {
					amax = a
				}
			}
		}
		if math.IsNaN(amax) || math.IsInf(amax, 0) {
			return nil, nil, 0, fmt.Errorf("channel %d has a non-finite value", c)
		}
		// max|w|/qmax: a clipping search (the scale minimising the squared
		// error) gained nothing measurable on resnet18_bn/mobilenet_v2_bn
		// (docs/quantization.md) at 6x the time.
		s := float32(amax / qmax)
		if amax == 0 || s == 0 {
			s = 1
		}
		sc[c] = s
		var num, den float64
		for o := 0; o < outer; o++ {
			base := (o*channels + c) * inner
			for i := base; i < base+inner; i++ {
				r := math.RoundToEven(float64(vals[i]) / float64(s))
				r = math.Max(-qmax, math.Min(qmax, r))
				if dt == ir.Int8 {
					qt.I8()[i] = int8(r)
				} else {
					qt.I16()[i] = int16(r)
				}
				d := float64(float32(r)*s) - float64(vals[i])
				num += d * d
				den += float64(vals[i]) * float64(vals[i])
			}
		}
		if den > 0 {
			relErr = math.Max(relErr, math.Sqrt(num/den))
		}
	}
	return qt, scale, relErr, nil
}
