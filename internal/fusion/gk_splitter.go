package fusion

import (
	"fmt"
	"sort"
	"strings"

	"gkconv/internal/akgcfg"
	"gkconv/internal/ir"
)

// kernelSignature names g's kernels by their body nodes, in a stable order:
// the splitter compares it before and after to say whether it changed.
func kernelSignature(g *ir.Graph) string {
	var parts []string
	for _, k := range kernels(g) {
		var ops []string
		for _, n := range k.Body.Nodes {
			ops = append(ops, n.Name)
		}
		parts = append(parts, strings.Join(ops, ","))
	}
	sort.Strings(parts)
	return strings.Join(parts, "|")
}

// runSplitter is graph_kernel_splitter: every GraphKernel is re-partitioned
// by the split model; composite areas become kernels, basic areas are
// inlined into the graph as plain nodes.
func runSplitter(st *state) (bool, string, error) {
	g := st.g
	before := kernelSignature(g)
	depth := st.flags.ReduceFuseDepth
	if depth < 0 { // unresolved flags: the built-in depth
		depth = 20
		if st.backend.Device == akgcfg.Ascend {
			depth = 10
		}
	}
	patterns := enabledPatterns(backendPatterns(st.backend, depth), st.flags)
	limit := st.flags.CompositeOpLimitSize
	if limit <= 0 {
		limit = 200
	}
	inlined := 0
	for _, k := range kernels(g) {
		ops := st.inlineKernel(k)
		set := map[*ir.Node]bool{}
		pos := map[*ir.Node]int{}
		for i, n := range ops {
			set[n] = true
			pos[n] = i
		}
		external := externalValues(g, set)
		isOutput := func(n *ir.Node) bool {
			for _, o := range n.Outputs {
				if external[o] {
					return true
				}
			}
			return false
		}
		m := newSplitModel(ops, isOutput, limit)
		for _, a := range m.run(patterns) {
			if a.mode != modeComposite {
				inlined += len(a.ops)
				continue
			}
			members := append([]*ir.Node{}, a.ops...)
			sort.Slice(members, func(i, j int) bool { return pos[members[i]] < pos[members[j]] })
			if _, err := st.fuseNodes(members, areaOrigin(members), false); err != nil {
				return false, "", err
			}
		}
	}
	if err := g.TopoSort(); err != nil {
		return false, "", fmt.Errorf("split produced a cycle: %w", err)
	}
	for _, k := range kernels(g) {
		finalizeKernel(k)
	}
	changed := kernelSignature(g) != before
	return changed, fmt.Sprintf("%d kernels, %d ops inlined back", len(kernels(g)), inlined), nil
}

// externalValues are the values read outside set or returned by the graph.
func externalValues(g *ir.Graph, set map[*ir.Node]bool) map[*ir.Value]bool {
	ext := map[*ir.Value]bool{}
	for _, o := range g.Outputs {
		ext[o] = true
	}
	for _, n := range g.Nodes {
		if set[n] {
			continue
		}
		for _, v := range n.Inputs {
			if v != nil {
				ext[v] = true
			}
		}
	}
	return ext
}

// areaOrigin names a kernel after the op it expands when it holds exactly
// one expansion, else "fusion".
func areaOrigin(ops []*ir.Node) string {
	key, op := "", ""
	for _, n := range ops {
		k := expansionKey(n)
		if k == "" || (key != "" && k != key) {
			return "fusion"
		}
		key, op = k, n.Attrs.String(ir.GKExpandFrom, "")
	}
	if op == "" {
		return "fusion"
	}
	return op
}
