package runtime

import (
	"fmt"

	"gkconv/internal/ir"
)

// foldControl folds a control-flow node at conversion time: an If whose
// condition is a constant is replaced by the nodes of the branch it takes
// (returned, to be folded next; the node's outputs become Identity nodes of
// the branch's outputs so their names stay); otherwise the constants of
// every body are folded in place.
func foldControl(g *ir.Graph, n *ir.Node, names *ir.Names) ([]*ir.Node, int, error) {
	if n.Op == "If" {
		if c := n.Input(0); c != nil && c.Const != nil && c.Const.NumElements() == 1 {
			v, err := c.Const.Int64s()
			if err == nil {
				attr := "else_branch"
				if v[0] != 0 {
					attr = "then_branch"
				}
				return inlineBranch(g, n, n.Attrs.Graph(attr), names), 0, nil
			}
		}
	}
	folded := 0
	for _, sg := range n.Subgraphs() {
		f, err := FoldConstants(sg.Graph)
		folded += f
		if err != nil {
			return nil, folded, fmt.Errorf("node %s (%s): %s: %w", n.Name, n.Op, sg.Attr, err)
		}
		sg.Graph.RemoveDead()
	}
	return nil, folded, nil
}

// inlineBranch moves br's nodes and constants into g, its inputs bound to
// n's captured inputs, and returns them plus one Identity per output of n.
func inlineBranch(g *ir.Graph, n *ir.Node, br *ir.Graph, names *ir.Names) []*ir.Node {
	sub := map[*ir.Value]*ir.Value{}
	for i, v := range br.Inputs {
		sub[v] = n.Inputs[1+i]
	}
	get := func(v *ir.Value) *ir.Value {
		if w, ok := sub[v]; ok {
			return w
		}
		return v
	}
	for _, c := range br.Consts {
		c.Name = names.Unique(c.Name)
		g.Consts = append(g.Consts, c)
	}
	var out []*ir.Node
	for _, bn := range br.Nodes {
		bn.Name = names.Unique(bn.Name)
		for i, in := range bn.Inputs {
			if in != nil {
				bn.Inputs[i] = get(in)
			}
		}
		for _, o := range bn.Outputs {
			if o != nil && o.Name != "" {
				o.Name = names.Unique(o.Name)
			}
		}
		out = append(out, bn)
	}
	for k, o := range n.Outputs {
		if o == nil {
			continue
		}
		id := &ir.Node{Name: names.Unique(n.Name + "/" + o.Name), Op: "Identity", Attrs: ir.Attrs{},
			Inputs: []*ir.Value{get(br.Outputs[k])}, Outputs: []*ir.Value{o}, Provenance: n.Provenance}
		o.Producer, o.OutIndex = id, 0
		out = append(out, id)
	}
	return out
}
