package fusion

import (
	"fmt"

	"gkconv/internal/ir"
)

// What the convolution passes of converter_lite's graph fusion
// (tools/optimizer/fusion/conv_*_fusion.cc: ConvBiasaddFusion,
// ConvBatchNormFusion, ConvScaleFusion, ConvActivationFusion, each in its
// anf_<pass>.go) share, on this IR's NCHW Conv2D (inputs x,
// w[M, C/group, k...], b[M]?); MatMulActivationFusion and
// ConvElemwiseAddFusion use parts of it.
//
// As converter_lite, a conv whose output has another reader or is a graph
// output is left alone (IsMultiOutputTensors), and the folded weights need
// constant float32 weights, bias and transform parameters (IsParamNode). A
// conv that already has an activation is not folded into: the transform
// would have to come before it. The new weights are new constants; the old
// ones are dropped when nothing else reads them.

// convTail is a Conv2D (or, for MatMulActivationFusion, a MatMul) whose one
// output value is read by one node only.
type convTail struct {
	conv *ir.Node
	out  *ir.Value // the conv's output
	next *ir.Node  // its only reader
}

// convTails lists the Conv2D nodes of g whose output only next reads.
func convTails(g *ir.Graph) []convTail { return opTails(g, "Conv2D", true) }

// opTails lists the float32 nodes of op, without a fused activation, whose
// one output only next reads and is not a graph output; shaped: an output of
// known rank >= 3 and channel count (channelsKnown: what the per-channel
// folds need).
func opTails(g *ir.Graph, op string, shaped bool) []convTail {
	users := g.Consumers()
	outs := graphOutputs(g)
	var out []convTail
	for _, n := range g.Nodes {
		if n.Op != op || n.Body != nil || len(n.Outputs) != 1 || len(n.Inputs) < 2 {
			continue
		}
		v := n.Outputs[0]
		if outs[v] || len(users[v]) != 1 || v.DType != ir.Float32 || shaped && !channelsKnown(v) {
			continue
		}
		if a, _ := ir.FusedActivation(n); a != ir.ActNone {
			continue
		}
		out = append(out, convTail{conv: n, out: v, next: users[v][0]})
	}
	return out
}

// channelsKnown says whether v has a known rank >= 3 and a known channel
// count (axis 1). Its other dims may be unknown (a model with dynamic batch
// or image size, converted without --inputShape): a per-channel constant
// (perChannel) broadcast against v keeps v's shape whatever they are, and an
// activation keeps every shape, so the folds stay exact; a residual Add
// still needs z's full shape (ConvElemwiseAddFusion checks it).
func channelsKnown(v *ir.Value) bool {
	return v.Shape != nil && len(v.Shape) >= 3 && v.Shape[1] >= 0
}

// foldable returns the conv's output channels M when its weights (and bias,
// if any) are float32 constants that a per-channel transform can rewrite.
func (c convTail) foldable() (int, bool) {
	w := c.conv.Inputs[1]
	if !w.IsConst() || w.Const.DType != ir.Float32 || len(w.Const.Shape) != len(c.out.Shape) {
		return 0, false
	}
	m := w.Const.Shape[0]
	if m <= 0 || c.out.Shape[1] != m {
		return 0, false
	}
	if b := c.conv.Input(2); b != nil && (!b.IsConst() || b.Const.DType != ir.Float32 || b.Const.NumElements() != m) {
		return 0, false
	}
	return int(m), true
}

// perChannel returns the M values of c when c is a float32 constant that
// varies along axis 1 of an output of shape out only, so that broadcasting
// it against out adds one value per channel and keeps out's shape.
func perChannel(c *ir.Value, out []int64) ([]float32, bool) {
	if !c.IsConst() || c.Const.DType != ir.Float32 || len(c.Const.Shape) > len(out) {
		return nil, false
	}
	m := out[1]
	if m < 0 { // an unknown channel count (channelsKnown keeps these out)
		return nil, false
	}
	off := len(out) - len(c.Const.Shape)
	perM := false
	for i, d := range c.Const.Shape {
		switch {
		case off+i == 1 && d == m:
			perM = true
		case d != 1:
			return nil, false
		}
	}
	vals := c.Const.F32()
	res := make([]float32, m)
	for i := range res {
		if perM {
			res[i] = vals[i]
		} else {
			res[i] = vals[0]
		}
	}
	return res, true
}

// otherOperand returns the input of binary node n that is not v.
func otherOperand(n *ir.Node, v *ir.Value) (*ir.Value, bool) {
	if len(n.Inputs) != 2 || len(n.Outputs) != 1 || n.Body != nil {
		return nil, false
	}
	switch {
	case n.Inputs[0] == v && n.Inputs[1] != v:
		return n.Inputs[1], true
	case n.Inputs[1] == v && n.Inputs[0] != v:
		return n.Inputs[0], true
	}
	return nil, false
}

// sameOut says whether n's output is v's shape and dtype (the transform
// does not broadcast the conv's output).
func sameOut(n *ir.Node, v *ir.Value) bool {
	o := n.Outputs[0]
	if o.DType != v.DType || len(o.Shape) != len(v.Shape) {
		return false
	}
	for i := range o.Shape {
		if o.Shape[i] != v.Shape[i] {
			return false
		}
	}
	return true
}

// absorb makes conv produce the output of last (the end of the matched
// chain) and records the chain's nodes as dropped.
func absorb(conv *ir.Node, dead map[*ir.Node]bool, chain ...*ir.Node) {
	last := chain[len(chain)-1]
	out := last.Outputs[0]
	out.Producer, out.OutIndex = conv, 0
	conv.Outputs[0] = out
	for _, n := range chain {
		conv.Provenance = append(conv.Provenance, n.Provenance...)
		dead[n] = true
	}
}

// rescale gives conv the weights w[o]*scale[o] and the bias
// b[o]*scale[o]+shift[o] (nil scale: 1; nil shift: 0; no bias: 0), as new
// constants.
func rescale(st *state, conv *ir.Node, m int, scale, shift []float64) {
	if scale != nil {
		w := conv.Inputs[1].Const
		nw := ir.NewTensor(ir.Float32, w.Shape)
		src, dst := w.F32(), nw.F32()
		per := len(src) / m
		for o := 0; o < m; o++ {
			for i := o * per; i < (o+1)*per; i++ {
				dst[i] = float32(float64(src[i]) * scale[o])
			}
		}
		conv.Inputs[1] = st.edit.Const(conv.Inputs[1].Name+"_fused", nw)
	}
	nb := ir.NewTensor(ir.Float32, []int64{int64(m)})
	var old []float32
	name := conv.Name + "_bias"
	if b := conv.Input(2); b != nil {
		old, name = b.Const.F32(), b.Name+"_fused"
	}
	for o := range nb.F32() {
		v := 0.0
		if old != nil {
			v = float64(old[o])
		}
		if scale != nil {
			v *= scale[o]
		}
		if shift != nil {
			v += shift[o]
		}
		nb.F32()[o] = float32(v)
	}
	bv := st.edit.Const(name, nb)
	if len(conv.Inputs) > 2 {
		conv.Inputs[2] = bv
	} else {
		conv.Inputs = append(conv.Inputs, bv)
	}
}

func f64s(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// runConvFold runs match on every conv with a single reader and drops what
// it absorbed; what names the rewrite in the note.
func runConvFold(st *state, what string, match func(convTail, map[*ir.Node]bool) bool) (bool, string, error) {
	return runFold(st, convTails(st.g), "Conv2D", what, match)
}

// runFold runs match on every tail of tails (of op into) and drops what it
// absorbed.
func runFold(st *state, tails []convTail, into, what string, match func(convTail, map[*ir.Node]bool) bool) (bool, string, error) {
	dead := map[*ir.Node]bool{}
	n := 0
	for _, c := range tails {
		if dead[c.next] {
			continue
		}
		if match(c, dead) {
			n++
		}
	}
	if n == 0 {
		return false, "no " + what + " matched", nil
	}
	dropNodes(st.g, dead)
	return true, fmt.Sprintf("%d %s folded into %s", n, what, into), nil
}

// foldActivation makes c's reader, a ReLU, ReLU6 or Clip(0[, 6]), the
// activation_type of c's node (ConvActivationFusion, MatMulActivationFusion).
func foldActivation(c convTail, dead map[*ir.Node]bool) bool {
	act := activationOf(c.next, c.out)
	if act == ir.ActNone || !sameOut(c.next, c.out) {
		return false
	}
	c.conv.Attrs = c.conv.Attrs.Clone()
	if c.conv.Attrs == nil {
		c.conv.Attrs = ir.Attrs{}
	}
	c.conv.Attrs[ir.AttrActivation] = ir.IntAttr(act)
	absorb(c.conv, dead, c.next)
	return true
}

// activationOf returns the conv activation that node n applies to v:
// ReLU, ReLU6, Clip(0, 6) (RELU6) or Clip(0) (RELU), else ir.ActNone.
func activationOf(n *ir.Node, v *ir.Value) int64 {
	if n.Body != nil || len(n.Outputs) != 1 || len(n.Inputs) == 0 || n.Inputs[0] != v {
		return ir.ActNone
	}
	switch n.Op {
	case "ReLU":
		if len(n.Inputs) == 1 {
			return ir.ActReLU
		}
	case "ReLU6":
		if len(n.Inputs) == 1 {
			return ir.ActReLU6
		}
	case "Clip":
		lo, okLo := scalarConst(n.Input(1))
		if !okLo || lo != 0 || len(n.Attrs) != 0 {
			return ir.ActNone
		}
		hi := n.Input(2)
		if hi == nil {
			return ir.ActReLU
		}
		if h, ok := scalarConst(hi); ok && h == 6 {
			return ir.ActReLU6
		}
	}
	return ir.ActNone
}

// scalarConst returns the value of a one-element float32 constant.
func scalarConst(v *ir.Value) (float32, bool) {
	if v == nil || !v.IsConst() || v.Const.DType != ir.Float32 || v.Const.NumElements() != 1 {
		return 0, false
	}
	return v.Const.F32()[0], true
}
