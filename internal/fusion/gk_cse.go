package fusion

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"gkconv/internal/ir"
)

// nodeKey is the CSE identity of n: op, inputs, attributes and body.
func nodeKey(n *ir.Node, id func(*ir.Value) string) string {
	var sb strings.Builder
	sb.WriteString(n.Op)
	sb.WriteByte('(')
	for _, in := range n.Inputs {
		sb.WriteString(id(in))
		sb.WriteByte(',')
	}
	sb.WriteByte(')')
	for _, k := range n.Attrs.Keys() {
		if k == ir.GKExpandFrom || k == ir.GKKernelName {
			continue
		}
		fmt.Fprintf(&sb, "%s=%s;", k, n.Attrs[k].GoString())
	}
	if n.Body != nil {
		h := fnv.New64a()
		writeCanonical(h, n.Body)
		fmt.Fprintf(&sb, "body=%x", h.Sum64())
	}
	fmt.Fprintf(&sb, "/%d", len(n.Outputs))
	return sb.String()
}

// cseGraph merges equal nodes of g; protected values (the model's outputs)
// are never replaced. It returns the number of nodes removed.
func cseGraph(g *ir.Graph, protected map[*ir.Value]bool, mergeConsts bool) int {
	repl := map[*ir.Value]*ir.Value{}
	if mergeConsts {
		seen := map[string]*ir.Value{}
		for _, c := range g.Consts {
			k := constKey(c.Const)
			if k == "" {
				continue
			}
			if prev, ok := seen[k]; ok {
				repl[c] = prev
			} else {
				seen[k] = c
			}
		}
	}
	ptr := map[*ir.Value]string{}
	id := func(v *ir.Value) string {
		if v == nil {
			return "_"
		}
		if s, ok := ptr[v]; ok {
			return s
		}
		s := fmt.Sprintf("%p", v)
		ptr[v] = s
		return s
	}
	seen := map[string]*ir.Node{}
	removed := map[*ir.Node]bool{}
	for _, n := range g.Nodes {
		for i, in := range n.Inputs {
			if r, ok := repl[in]; ok {
				n.Inputs[i] = r
			}
		}
		// Reshape-like ops are not merged (graph_kernel_cse), nor control
		// flow: its bodies are not part of the key.
		if ir.LookupOp(n.Op).IsReshape() || slices.Contains(n.Outputs, nil) || len(n.Subgraphs()) > 0 {
			continue
		}
		key := nodeKey(n, id)
		prev, ok := seen[key]
		if !ok {
			seen[key] = n
			continue
		}
		safe := true
		for _, o := range n.Outputs {
			if protected[o] {
				safe = false
			}
		}
		if !safe {
			continue
		}
		for i, o := range n.Outputs {
			repl[o] = prev.Outputs[i]
		}
		removed[n] = true
	}
	if len(repl) == 0 {
		return 0
	}
	for i, o := range g.Outputs {
		if r, ok := repl[o]; ok && !protected[o] {
			g.Outputs[i] = r
		}
	}
	kept := g.Nodes[:0]
	for _, n := range g.Nodes {
		if !removed[n] {
			kept = append(kept, n)
		}
	}
	g.Nodes = kept
	if mergeConsts {
		consts := g.Consts[:0]
		for _, c := range g.Consts {
			if _, gone := repl[c]; !gone {
				consts = append(consts, c)
			}
		}
		g.Consts = consts
	}
	return len(removed)
}

// runCSE is graph_kernel_cse: inside every kernel body, then on the graph.
func runCSE(st *state) (bool, string, error) {
	inner := 0
	for _, k := range kernels(st.g) {
		if c := cseGraph(k.Body, nil, true); c > 0 {
			inner += c
			k.Body.RemoveDead()
			pruneKernelInputs(k)
		}
	}
	protected := map[*ir.Value]bool{}
	for _, o := range st.g.Outputs {
		protected[o] = true
	}
	outer := cseGraph(st.g, protected, false)
	if inner+outer == 0 {
		return false, "", nil
	}
	return true, fmt.Sprintf("%d nodes merged in kernels, %d in the graph", inner, outer), nil
}
