package fusion

import "gkconv/internal/ir"

// runInferShape is dynamic_infer_shape (preprocess, Ascend): the shapes of
// the top-level nodes are inferred again, for the expander and the cluster,
// which take only ops of known shape.
func runInferShape(st *state) (bool, string, error) {
	if err := ir.InferShapes(topLevelInferable(st.g)); err != nil {
		return false, "", err
	}
	return false, "", nil
}

// topLevelInferable is g without its GraphKernel nodes (they have no shape
// function; their outputs are fixed by their bodies).
func topLevelInferable(g *ir.Graph) *ir.Graph {
	c := *g
	c.Nodes = nil
	for _, n := range g.Nodes {
		if n.Op != ir.OpGraphKernel {
			c.Nodes = append(c.Nodes, n)
		}
	}
	return &c
}
