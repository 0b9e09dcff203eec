package runtime

import (
	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// dequantizeWeights evaluates, once when a session is made, the nodes that
// turn a stored integer weight into the float weight an op reads: a
// DequantizeLinear of constants (WEIGHT_QUANT's form), a Cast of a constant
// integer tensor to float and the constant-only nodes after either (the
// Cast -> Mul(scale) form MindSpore's own primitives express it in). The
// ops after them then see a constant weight, so they prepare (pack) it as
// they do a float model's, and nothing is dequantized per inference. The
// caller's graph is left as it is: the returned graph shares its nodes
// except the ones rewritten. A weight that feeds a graph output directly, or
// a QDQ weight pattern the int8 kernels read as integers
// (ir.QDQWeightKept), is left alone.
func dequantizeWeights(g *ir.Graph) *ir.Graph {
	readers := g.Consumers()
	outputs := map[*ir.Value]bool{}
	for _, o := range g.Outputs {
		outputs[o] = true
	}
	made := map[*ir.Value]*ir.Value{} // node output -> its constant
	isMade := map[*ir.Value]bool{}
	var ng *ir.Graph
	ctx := &opkernel.Ctx{Threads: 1}
	for i, n := range g.Nodes {
		in := n.Inputs
		remapped := false
		for k, v := range in {
			if c, ok := made[v]; ok {
				if !remapped {
					in = append([]*ir.Value{}, in...)
					remapped = true
				}
				in[k] = c
			}
		}
		if remapped {
			c := *n
			c.Inputs = in
			n = &c
		}
		if foldsAtLoad(n, in, isMade, readers, outputs) {
			if vals, ok, err := runFold(ctx, n, constInputs(in)); err == nil && ok {
				if ng == nil {
					ng = startCopy(g, i)
				}
				for k, o := range n.Outputs {
					c := &ir.Value{Name: o.Name, DType: vals[k].DType, Shape: vals[k].Shape, Const: vals[k]}
					made[o] = c
					isMade[c] = true
					ng.Consts = append(ng.Consts, c)
				}
				continue
			}
		}
		if ng != nil {
			ng.Nodes = append(ng.Nodes, n)
		} else if remapped {
			ng = startCopy(g, i)
			ng.Nodes = append(ng.Nodes, n)
		}
	}
	if ng == nil {
		return g
	}
	return ng
}

// startCopy begins the rewritten graph with g's first i nodes.
func startCopy(g *ir.Graph, i int) *ir.Graph {
	ng := *g
	ng.Nodes = append([]*ir.Node{}, g.Nodes[:i]...)
	ng.Consts = append([]*ir.Value{}, g.Consts...)
	return &ng
}

func constInputs(in []*ir.Value) []*ir.Tensor {
	ts := make([]*ir.Tensor, len(in))
	for i, v := range in {
		if v != nil {
			ts[i] = v.Const
		}
	}
	return ts
}

// foldsAtLoad: n dequantizes a weight (see dequantizeWeights) and all its
// inputs are constants.
func foldsAtLoad(n *ir.Node, in []*ir.Value, made map[*ir.Value]bool, readers map[*ir.Value][]*ir.Node, outputs map[*ir.Value]bool) bool {
	if len(n.Outputs) != 1 || n.Outputs[0] == nil || outputs[n.Outputs[0]] || !n.Outputs[0].ShapeKnown() || n.Outputs[0].DType != ir.Float32 {
		return false
	}
	fromFold := false
	for _, v := range in {
		if v == nil {
			continue
		}
		if v.Const == nil {
			return false
		}
		fromFold = fromFold || made[v]
	}
	switch n.Op {
	case "DequantizeLinear":
		return !ir.QDQWeightKept(n, readers)
	case "Cast":
		return in[0] != nil && in[0].DType.IsInt()
	case "Mul", "Sub", "Add", "Reshape":
		return fromFold
	}
	return false
}
