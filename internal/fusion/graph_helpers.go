package fusion

import "gkconv/internal/ir"

// Queries and edits of a whole graph that several passes share.

// graphOutputs is the set of g's output values.
func graphOutputs(g *ir.Graph) map[*ir.Value]bool {
	m := make(map[*ir.Value]bool, len(g.Outputs))
	for _, o := range g.Outputs {
		m[o] = true
	}
	return m
}

// reach reports whether to is reachable from from through top-level edges.
func reach(from, to *ir.Node, users map[*ir.Value][]*ir.Node) bool {
	seen := map[*ir.Node]bool{}
	stack := []*ir.Node{from}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, o := range n.Outputs {
			for _, u := range users[o] {
				if u == to {
					return true
				}
				if !seen[u] {
					seen[u] = true
					stack = append(stack, u)
				}
			}
		}
	}
	return false
}

// allValues are g's inputs and every node output, in node order.
func allValues(g *ir.Graph) []*ir.Value {
	vs := append([]*ir.Value{}, g.Inputs...)
	for _, n := range g.Nodes {
		vs = append(vs, n.Outputs...)
	}
	return vs
}

// dropNodes removes the nodes in dead from g.
func dropNodes(g *ir.Graph, dead map[*ir.Node]bool) {
	kept := g.Nodes[:0]
	for _, n := range g.Nodes {
		if !dead[n] {
			kept = append(kept, n)
		}
	}
	clear(g.Nodes[len(kept):])
	g.Nodes = kept
}
