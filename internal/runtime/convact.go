package runtime

import (
	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
	"gkconv/internal/runtime/ops/nn"
)

// Load-time Conv + PRelu/LeakyRelu fusion. converter_lite fuses only
// ReLU and ReLU6 into a Conv2DFusion (its ConvActivationFusion), so the
// .mindir keeps a PRelu or LeakyRelu node after a conv, as MindSpore reads
// it; the session binds the activation behind the conv instead: one node
// that runs the conv and applies the activation in place on its output,
// with no second output buffer, no node of its own and the output still in
// cache. The values are the separate op's, bit for bit (nn.PReLUPlanes,
// nn.LeakyReLUInPlace use its expressions).

// convAct is the activation bound behind one fused conv: PRelu slopes
// (one, or one per output channel) or, slope nil, LeakyRelu's alpha.
type convAct struct {
	slope []float32
	alpha float64
}

// wrap returns conv's function followed by the activation on its output.
func (a *convAct) wrap(conv opkernel.Func) opkernel.Func {
	return func(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
		if err := conv(ctx, n, in, out); err != nil {
			return err
		}
		y := out[0]
		if a.slope == nil {
			nn.LeakyReLUInPlace(ctx, y.F32(), a.alpha)
			return nil
		}
		plane := 1
		for _, d := range y.Shape[2:] {
			plane *= int(d)
		}
		nn.PReLUPlanes(ctx, y.F32(), a.slope, plane)
		return nil
	}
}

// fuseConvActivations returns g with each float32 Conv2D whose only reader
// is a PReLU with a constant slope (one value, or one per output channel,
// broadcast on axis 1) or a LeakyReLU replaced by one Conv2D node that
// writes the activation's output (a shallow copy of g when there is any; g
// is not changed), and the bound activations by fused node.
func fuseConvActivations(g *ir.Graph) (*ir.Graph, map[*ir.Node]*convAct) {
	users := g.Consumers()
	outputs := map[*ir.Value]bool{}
	for _, v := range g.Outputs {
		outputs[v] = true
	}
	drop := map[*ir.Node]bool{}
	replace := map[*ir.Node]*ir.Node{} // the activation node -> the fused conv
	acts := map[*ir.Node]*convAct{}
	for _, conv := range g.Nodes {
		if conv.Op != "Conv2D" || len(conv.Outputs) != 1 || len(conv.Inputs) < 2 {
			continue
		}
		y := conv.Outputs[0]
		if y == nil || y.DType != ir.Float32 || outputs[y] || len(users[y]) != 1 || len(y.Shape) < 3 {
			continue
		}
		next := users[y][0]
		if len(next.Outputs) != 1 || len(next.Inputs) == 0 || next.Inputs[0] != y {
			continue
		}
		var a *convAct
		switch next.Op {
		case "PReLU":
			a = preluSlope(next, y)
		case "LeakyReLU":
			if len(next.Inputs) == 1 {
				a = &convAct{alpha: next.Attrs.Float("alpha", 0.01)}
			}
		}
		if a == nil {
			continue
		}
		fused := *conv
		fused.Outputs = []*ir.Value{next.Outputs[0]}
		fused.Provenance = append(append([]string{}, conv.Provenance...), next.Provenance...)
		drop[conv] = true
		replace[next] = &fused
		acts[&fused] = a
	}
	if len(acts) == 0 {
		return g, nil
	}
	fg := *g
	fg.Nodes = make([]*ir.Node, 0, len(g.Nodes))
	for _, n := range g.Nodes {
		switch {
		case drop[n]:
		case replace[n] != nil:
			// the fused node stands where the activation stood: the conv's
			// inputs are all computed by then
			fg.Nodes = append(fg.Nodes, replace[n])
		default:
			fg.Nodes = append(fg.Nodes, n)
		}
	}
	return &fg, acts
}

// preluSlope is the slope of PReLU p on conv output y when it is a float32
// constant of one value, or of one value per channel that broadcasts on
// axis 1 ([C,1,1], [1,C,1,1], ...); nil otherwise (the node then stays).
func preluSlope(p *ir.Node, y *ir.Value) *convAct {
	if len(p.Inputs) != 2 || p.Inputs[1] == y {
		return nil
	}
	s := p.Inputs[1]
	if !s.IsConst() || s.Const.DType != ir.Float32 || y.Shape[1] <= 0 {
		return nil
	}
	perChannel, ok := nn.ChannelBroadcast(s.Const.Shape, len(y.Shape), y.Shape[1])
	vals := s.Const.F32()
	switch {
	case !ok:
		return nil
	case perChannel && int64(len(vals)) == y.Shape[1], !perChannel && len(vals) == 1:
		return &convAct{slope: append([]float32(nil), vals...)}
	}
	return nil
}
