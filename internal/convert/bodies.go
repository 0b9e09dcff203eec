package convert

import "gkconv/internal/ir"

// bodies lists the control-flow bodies of g at every depth, outermost
// first: the fusion passes run on each of them as on the main graph, so a
// fused kernel never crosses a body's boundary (a body is a closed graph:
// the outer values it reads are its inputs).
func bodies(g *ir.Graph) []*ir.Graph {
	var out []*ir.Graph
	for _, n := range g.Nodes {
		for _, sg := range n.Subgraphs() {
			out = append(out, sg.Graph)
			out = append(out, bodies(sg.Graph)...)
		}
	}
	return out
}

// allNodes is the nodes of g and of its bodies.
func allNodes(g *ir.Graph) []*ir.Node {
	nodes := append([]*ir.Node(nil), g.Nodes...)
	for _, b := range bodies(g) {
		nodes = append(nodes, b.Nodes...)
	}
	return nodes
}
