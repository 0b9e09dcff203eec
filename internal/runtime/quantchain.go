package runtime

// Load-time fusion of the dequantizing chains of onnxruntime's
// quantize_dynamic models: ConvInteger (or MatMulInteger) -> Cast(to
// float) -> Mul(x_scale * w_scale) [-> Add(bias)] [-> Relu] runs as one
// kernel (nn.PrepareConvIntegerChain, nn.PrepareMatMulIntegerChain: the
// integer convolution or GEMM with the float epilogue in its tiles; scale
// and bias per tensor, or per output channel / column of B), rounding as
// the separate ops do, so the outputs are the same bits. The chain is found either as plain nodes (opt_level 0)
// or as a ConvInteger feeding a fused GraphKernel whose body is exactly
// that chain (opt_level 2: Mul(x_scale, w_scale), Cast, Mul, Add,
// Maximum(x, 0)). Only the session's node list changes: the model and its
// graph keep their ops. A Visit callback (bisect) turns it off, since it
// wants every node's output.

import (
	"math"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/ops/nn"
)

// Relu forms of a chain's last step (nn's GK_QEPI relu values).
const (
	chainNoRelu  = 0
	chainReLU    = 1 // the ReLU op: x > 0 ? x : (NaN ? x : 0)
	chainMaxZero = 2 // a fused kernel's Maximum(x, 0): 0 > x ? 0 : x
)

// qchain is one fused chain: conv is the original ConvInteger (the output
// shape is inferred from it), relu the last step's form.
type qchain struct {
	conv *ir.Node
	relu int
}

// fuseQuantChains returns g with each chain replaced by one node (a
// shallow copy of g when there is any; g itself is not changed) and the
// chains by fused node.
func fuseQuantChains(g *ir.Graph) (*ir.Graph, map[*ir.Node]*qchain) {
	var convs []*ir.Node
	for _, n := range g.Nodes {
		if n.Op == "ConvInteger" || n.Op == "MatMulInteger" {
			convs = append(convs, n)
		}
	}
	if len(convs) == 0 {
		return g, nil
	}
	users := g.Consumers()
	outputs := map[*ir.Value]bool{}
	for _, v := range g.Outputs {
		outputs[v] = true
	}
	// only reader: v has exactly one consumer and is not a graph output
	only := func(v *ir.Value) *ir.Node {
		if v == nil || outputs[v] || len(users[v]) != 1 {
			return nil
		}
		return users[v][0]
	}
	drop := map[*ir.Node]bool{}
	replace := map[*ir.Node]*ir.Node{} // the chain's last node -> the fused node
	chains := map[*ir.Node]*qchain{}
	for _, conv := range convs {
		fn, c, covered := matchChain(conv, only)
		if fn == nil {
			continue
		}
		for _, n := range covered[:len(covered)-1] {
			drop[n] = true
		}
		replace[covered[len(covered)-1]] = fn
		chains[fn] = c
	}
	if len(chains) == 0 {
		return g, nil
	}
	fg := *g
	fg.Nodes = make([]*ir.Node, 0, len(g.Nodes))
	for _, n := range g.Nodes {
		switch {
		case drop[n]:
		case replace[n] != nil:
			fg.Nodes = append(fg.Nodes, replace[n])
		default:
			fg.Nodes = append(fg.Nodes, n)
		}
	}
	return &fg, chains
}

// matchChain matches the chain from conv; covered lists the original nodes
// it replaces, the last one's place being the fused node's.
func matchChain(conv *ir.Node, only func(*ir.Value) *ir.Node) (*ir.Node, *qchain, []*ir.Node) {
	if len(conv.Inputs) < 2 || len(conv.Inputs) > 4 || len(conv.Outputs) != 1 || conv.Outputs[0].DType != ir.Int32 {
		return nil, nil, nil
	}
	w, y := conv.Inputs[1], conv.Outputs[0]
	if w == nil || y.Shape == nil {
		return nil, nil, nil
	}
	for _, d := range w.Shape {
		if d <= 0 { // an empty window or depth: no sums to take the epilogue
			return nil, nil, nil
		}
	}
	rank := len(y.Shape)
	var fits func(*ir.Value) bool
	switch conv.Op {
	case "ConvInteger":
		// the scale and bias: one value, or one per output channel
		if len(w.Shape) < 3 || w.Shape[0] <= 0 || rank != len(w.Shape) {
			return nil, nil, nil
		}
		fits = func(v *ir.Value) bool { return broadcasts(v, rank, w.Shape[0], nn.ChannelBroadcast) }
	case "MatMulInteger":
		// one value, or one per column of B
		if len(w.Shape) != 2 || w.Shape[1] <= 0 || rank < 2 || y.Shape[rank-1] != w.Shape[1] {
			return nil, nil, nil
		}
		fits = func(v *ir.Value) bool { return broadcasts(v, rank, w.Shape[1], nn.ColumnBroadcast) }
	default:
		return nil, nil, nil
	}
	next := only(conv.Outputs[0])
	if next == nil {
		return nil, nil, nil
	}
	var p chainParts
	var covered []*ir.Node
	switch next.Op {
	case "Cast":
		ok := false
		if p, covered, ok = matchPlain(next, only, fits); !ok {
			return nil, nil, nil
		}
	case ir.OpGraphKernel:
		ok := false
		if p, ok = matchBody(next, conv.Outputs[0], fits); !ok {
			return nil, nil, nil
		}
		covered = []*ir.Node{next}
	default:
		return nil, nil, nil
	}
	in := make([]*ir.Value, nn.ChainInputs)
	copy(in, conv.Inputs)
	in[nn.ChainScaleA], in[nn.ChainScaleB], in[nn.ChainBias] = p.scaleA, p.scaleB, p.bias
	fn := &ir.Node{Name: conv.Name, Op: conv.Op, Inputs: in, Outputs: []*ir.Value{p.out}, Attrs: conv.Attrs,
		Provenance: conv.Provenance}
	return fn, &qchain{conv: conv, relu: p.relu}, append([]*ir.Node{conv}, covered...)
}

// chainParts are a matched chain's operands and result.
type chainParts struct {
	scaleA, scaleB, bias *ir.Value
	relu                 int
	out                  *ir.Value
}

// broadcasts: v is float32 with a static shape that shape (nn's
// ChannelBroadcast or ColumnBroadcast) accepts against an output of rank
// rank with n channels or columns.
func broadcasts(v *ir.Value, rank int, n int64, shape func([]int64, int, int64) (bool, bool)) bool {
	if v == nil || v.DType != ir.Float32 || v.Shape == nil {
		return false
	}
	for _, d := range v.Shape {
		if d < 0 {
			return false
		}
	}
	_, ok := shape(v.Shape, rank, n)
	return ok
}

// other is the operand of a binary node that is not v (nil when both are,
// or v is not an operand).
func other(n *ir.Node, v *ir.Value) *ir.Value {
	if len(n.Inputs) != 2 || n.Inputs[0] == n.Inputs[1] {
		return nil
	}
	switch v {
	case n.Inputs[0]:
		return n.Inputs[1]
	case n.Inputs[1]:
		return n.Inputs[0]
	}
	return nil
}

func isFloatCast(n *ir.Node) bool {
	return n.Op == "Cast" && len(n.Inputs) == 1 && len(n.Outputs) == 1 && n.Outputs[0].DType == ir.Float32 &&
		ir.DType(n.Attrs.Int("to", int64(ir.Float32))) == ir.Float32
}

// matchPlain: the chain as graph nodes from the Cast on.
func matchPlain(cast *ir.Node, only func(*ir.Value) *ir.Node, fits func(*ir.Value) bool) (chainParts, []*ir.Node, bool) {
	var p chainParts
	if !isFloatCast(cast) {
		return p, nil, false
	}
	mul := only(cast.Outputs[0])
	if mul == nil || mul.Op != "Mul" || len(mul.Outputs) != 1 {
		return p, nil, false
	}
	if p.scaleA = other(mul, cast.Outputs[0]); !fits(p.scaleA) {
		return p, nil, false
	}
	covered := []*ir.Node{cast, mul}
	last := mul
	if add := only(mul.Outputs[0]); add != nil && add.Op == "Add" && len(add.Outputs) == 1 {
		if b := other(add, mul.Outputs[0]); fits(b) {
			p.bias, last = b, add
			covered = append(covered, add)
		}
	}
	if relu := only(last.Outputs[0]); relu != nil && relu.Op == "ReLU" && len(relu.Outputs) == 1 {
		p.relu, last = chainReLU, relu
		covered = append(covered, relu)
	}
	p.out = last.Outputs[0]
	return p, covered, true
}

// matchBody: a fused kernel whose body is exactly [Mul(a, b) ->] Cast ->
// Mul [-> Add] [-> Maximum(x, +0)] on the conv's output acc, the body's one
// output the last. Body inputs stand for the kernel's inputs; body
// constants are used as they are.
func matchBody(gk *ir.Node, acc *ir.Value, fits func(*ir.Value) bool) (chainParts, bool) {
	var p chainParts
	b := gk.Body
	if b == nil || len(gk.Outputs) != 1 || len(b.Outputs) != 1 || len(b.Inputs) > len(gk.Inputs) {
		return p, false
	}
	outer := map[*ir.Value]*ir.Value{} // body input -> the kernel's input
	for i, v := range b.Inputs {
		outer[v] = gk.Inputs[i]
	}
	// a body value as the fused node's input: an outer value or a constant
	source := func(v *ir.Value) *ir.Value {
		if v == nil {
			return nil
		}
		if o, ok := outer[v]; ok {
			return o
		}
		if v.Const != nil {
			return v
		}
		return nil
	}
	users := b.Consumers()
	only := func(v *ir.Value) *ir.Node {
		if v == nil || v == b.Outputs[0] || len(users[v]) != 1 {
			return nil
		}
		return users[v][0]
	}
	var cast *ir.Node
	for _, n := range b.Nodes {
		if n.Op == "Cast" && len(n.Inputs) == 1 && source(n.Inputs[0]) == acc {
			cast = n
		}
	}
	if cast == nil || !isFloatCast(cast) {
		return p, false
	}
	matched := 1
	mul := only(cast.Outputs[0])
	if mul == nil || mul.Op != "Mul" || len(mul.Outputs) != 1 {
		return p, false
	}
	matched++
	s := other(mul, cast.Outputs[0])
	if s == nil {
		return p, false
	}
	if pm := s.Producer; pm != nil && source(s) == nil {
		// the kernel's own Mul of x_scale and w_scale
		if pm.Op != "Mul" || len(pm.Inputs) != 2 || only(s) != mul {
			return p, false
		}
		p.scaleA, p.scaleB = source(pm.Inputs[0]), source(pm.Inputs[1])
		if !fits(p.scaleA) || !fits(p.scaleB) {
			return p, false
		}
		matched++
	} else if p.scaleA = source(s); !fits(p.scaleA) {
		return p, false
	}
	last := mul
	if last.Outputs[0] != b.Outputs[0] {
		if add := only(last.Outputs[0]); add != nil && add.Op == "Add" && len(add.Outputs) == 1 {
			bias := source(other(add, last.Outputs[0]))
			if !fits(bias) {
				return p, false
			}
			p.bias, last = bias, add
			matched++
		}
	}
	if last.Outputs[0] != b.Outputs[0] {
		mx := only(last.Outputs[0])
		if mx == nil || mx.Op != "Maximum" || len(mx.Inputs) != 2 || mx.Inputs[0] != last.Outputs[0] || !isPlusZero(mx.Inputs[1]) {
			return p, false
		}
		p.relu, last = chainMaxZero, mx
		matched++
	}
	if last.Outputs[0] != b.Outputs[0] || matched != len(b.Nodes) || gk.Outputs[0].DType != ir.Float32 {
		return p, false
	}
	p.out = gk.Outputs[0]
	return p, true
}

// isPlusZero: a float32 constant holding +0 alone.
func isPlusZero(v *ir.Value) bool {
	if v == nil || v.Const == nil || v.Const.DType != ir.Float32 || v.Const.NumElements() != 1 {
		return false
	}
	return math.Float32bits(v.Const.F32()[0]) == 0
}
