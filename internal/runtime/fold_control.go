package runtime

import (
	"errors"
	"fmt"
	"strings"

	"gkconv/internal/ir"
)

// foldControl folds a control-flow node at conversion time: an If whose
// condition is a constant is replaced by the nodes of the branch it takes
// (returned, to be folded next; the node's outputs become Identity nodes of
// the branch's outputs so their names stay); otherwise the constants of
// every body are folded in place.
func foldControl(g *ir.Graph, n *ir.Node, names *ir.Names) ([]*ir.Node, int, []string, error) {
	if n.Op == "If" {
		if c := n.Input(0); c != nil && c.Const != nil && c.Const.NumElements() == 1 {
			v, err := c.Const.Int64s()
			if err == nil {
				attr := "else_branch"
				if v[0] != 0 {
					attr = "then_branch"
				}
				return inlineBranch(g, n, n.Attrs.Graph(attr), names), 0, nil, nil
			}
		}
	}
	// The condition of an If is known only at run time: a branch the given
	// shapes cannot flow through (a voice model's 8 kHz branch under a
	// 16 kHz --inputShape) is one the run does not take, so it is kept
	// unfolded, noted, and fails at run time only if it is taken. Both
	// failing means every run fails: an error.
	tolerant := n.Op == "If"
	folded := 0
	var notes []string
	var failed []string
	var firstErr error
	for _, sg := range n.Subgraphs() {
		f, nn, err := foldConstants(sg.Graph, tolerant)
		folded += f
		notes = append(notes, nn...)
		var be *branchShapeError
		if errors.As(err, &be) {
			failed = append(failed, sg.Attr)
			if firstErr == nil {
				firstErr = fmt.Errorf("node %s (%s): %s: %w", n.Name, n.Op, sg.Attr, be.err)
			}
			notes = append(notes, fmt.Sprintf("node %s (If): %s cannot take the given input shapes (%s); kept, it fails at run time if the condition selects it", n.Name, sg.Attr, firstLine(be.err)))
			continue
		}
		if err != nil {
			return nil, folded, notes, fmt.Errorf("node %s (%s): %s: %w", n.Name, n.Op, sg.Attr, err)
		}
		sg.Graph.RemoveDead()
	}
	if len(failed) > 1 {
		return nil, folded, notes, firstErr
	}
	return nil, folded, notes, nil
}

// firstLine is the first line of err's message.
func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " ..."
	}
	return s
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
