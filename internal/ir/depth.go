package ir

import "fmt"

// MaxGraphDepth is the one nesting limit of graphs inside graphs, shared by
// the ONNX reader (which stops decoding there), the MindIR reader, shape
// inference and the MindIR writer, so that whatever one of them accepts the
// others take too. The main graph is depth 0 and each control-flow body
// (If's branches, Loop's and Scan's body) is one deeper than the graph of
// its node: a body deeper than MaxGraphDepth is refused.
//
// A graph kernel's body (Node.Body, made by fusion) is one deeper than the
// graph of its fused node too, but may sit at MaxGraphDepth+1: fusion runs
// in every body, so the kernels of a body at the limit have their bodies
// one below it (a kernel's body holds plain ops, no further bodies).
//
// Why 64: real models nest control flow a handful of levels deep (a Loop
// holding an If holding a Loop is already rare), so 64 refuses no real
// model, while it bounds every recursion over bodies (the decoders', the
// readers', inference's, the writer's) to a small, fixed stack whatever
// the file holds. It is also the message nesting limit of the MindIR
// decoder, comfortably inside protobuf C++'s default of 100 that MindSpore
// loads with.
const MaxGraphDepth = 64

// DepthError reports graphs nested deeper than MaxGraphDepth. Where names
// the node and the attribute (or "body", for a graph kernel) holding the
// graph that is one level too deep. Code that meets it while recursing
// returns it as it is, so the message stays one short line instead of a
// prefix per level.
type DepthError struct {
	Where string
}

func (e *DepthError) Error() string {
	if e.Where == "" {
		return fmt.Sprintf("graphs nested more than %d deep", MaxGraphDepth)
	}
	return fmt.Sprintf("graphs nested more than %d deep (%s)", MaxGraphDepth, e.Where)
}

// NodeDepthError is a DepthError at graph attribute attr of node (attr ""
// for a graph kernel's body).
func NodeDepthError(node, attr string) *DepthError {
	if attr == "" {
		return &DepthError{Where: "node " + node + " body"}
	}
	return &DepthError{Where: "node " + node + " attribute " + attr}
}

// CheckGraphDepth checks the bodies below g, g being at depth 0: control-
// flow bodies at most MaxGraphDepth deep, graph kernels' bodies at most one
// deeper (see MaxGraphDepth). It walks without recursion, in node order,
// and reports the first graph too deep.
func CheckGraphDepth(g *Graph) error { return checkDepthFrom(g, 0) }

// checkDepthFrom is CheckGraphDepth with g at the given depth.
func checkDepthFrom(g *Graph, depth int) error {
	if g == nil {
		return nil
	}
	type item struct {
		g     *Graph
		depth int
	}
	// seen: the deepest depth each graph was walked at (a body may be
	// shared; a cycle goes deeper each round, so it ends at the limit).
	seen := map[*Graph]int{}
	stack := []item{{g, depth}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if d, ok := seen[it.g]; ok && d >= it.depth {
			continue
		}
		seen[it.g] = it.depth
		var push []item
		for _, n := range it.g.Nodes {
			if hasGraphAttr(n) {
				for _, sg := range n.Subgraphs() {
					if it.depth+1 > MaxGraphDepth {
						return NodeDepthError(n.Name, sg.Attr)
					}
					push = append(push, item{sg.Graph, it.depth + 1})
				}
			}
			if n.Body != nil {
				if it.depth+1 > MaxGraphDepth+1 {
					return NodeDepthError(n.Name, "")
				}
				push = append(push, item{n.Body, it.depth + 1})
			}
		}
		// Reversed, so the first node's bodies are walked first.
		for i := len(push) - 1; i >= 0; i-- {
			stack = append(stack, push[i])
		}
	}
	return nil
}

func hasGraphAttr(n *Node) bool {
	for _, a := range n.Attrs {
		if a.Kind == AttrGraph && a.G != nil {
			return true
		}
	}
	return false
}
