package fusion

import (
	"fmt"
	"sort"
	"strings"

	"gkconv/internal/akgcfg"
	"gkconv/internal/ir"
)

func kernels(g *ir.Graph) []*ir.Node {
	var ks []*ir.Node
	for _, n := range g.Nodes {
		if n.Op == ir.OpGraphKernel && n.Body != nil {
			ks = append(ks, n)
		}
	}
	return ks
}

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

// runShapeOpsSplitter is shape_ops_splitter: inside each kernel body, a
// reshape-like op with several users is duplicated so each user has its own
// (the split model's reshape pattern relies on one user per reshape).
func runShapeOpsSplitter(st *state) (bool, string, error) {
	dup := 0
	for _, k := range kernels(st.g) {
		dup += splitShapeOps(k.Body)
	}
	if dup == 0 {
		return false, "", nil
	}
	return true, fmt.Sprintf("%d reshape copies", dup), nil
}

func splitShapeOps(b *ir.Graph) int {
	// The names of the body's nodes and their outputs (not of its inputs and
	// constants, as before the shared ir.Names).
	names := ir.NewNames()
	for _, n := range b.Nodes {
		names.Reserve(n.Name)
		for _, o := range n.Outputs {
			names.Reserve(o.Name)
		}
	}
	isOut := map[*ir.Value]bool{}
	for _, o := range b.Outputs {
		isOut[o] = true
	}
	users := b.Consumers()
	dup := 0
	var out []*ir.Node
	for _, n := range b.Nodes {
		out = append(out, n)
		if !ir.LookupOp(n.Op).IsReshape() || len(n.Outputs) != 1 {
			continue
		}
		v := n.Outputs[0]
		us := users[v]
		extra := len(us) - 1
		if isOut[v] {
			extra = len(us)
		}
		for i := 0; i < extra; i++ {
			u := us[len(us)-1-i]
			c := &ir.Node{Name: names.Unique(n.Name), Op: n.Op, Inputs: append([]*ir.Value{}, n.Inputs...),
				Attrs: n.Attrs.Clone(), Provenance: append([]string(nil), n.Provenance...)}
			nv := &ir.Value{Name: names.Unique(v.Name), DType: v.DType, Shape: append([]int64{}, v.Shape...), Producer: c}
			c.Outputs = []*ir.Value{nv}
			for j, in := range u.Inputs {
				if in == v {
					u.Inputs[j] = nv
				}
			}
			out = append(out, c)
			dup++
		}
	}
	b.Nodes = out
	if dup > 0 {
		_ = b.TopoSort()
	}
	return dup
}

// runEliminateRedundantOutput drops kernel outputs nobody reads and merges
// outputs that return the same body value.
func runEliminateRedundantOutput(st *state) (bool, string, error) {
	g := st.g
	users := g.Consumers()
	graphOut := map[*ir.Value]bool{}
	for _, o := range g.Outputs {
		graphOut[o] = true
	}
	removed := 0
	for _, k := range kernels(g) {
		var outs, bouts []*ir.Value
		seen := map[*ir.Value]*ir.Value{}
		for i, o := range k.Outputs {
			bo := k.Body.Outputs[i]
			if !graphOut[o] && len(users[o]) == 0 && len(k.Outputs) > 1 {
				removed++
				continue
			}
			if prev, ok := seen[bo]; ok && !graphOut[o] {
				g.ReplaceUses(o, prev)
				removed++
				continue
			}
			seen[bo] = o
			o.OutIndex = len(outs)
			outs = append(outs, o)
			bouts = append(bouts, bo)
		}
		if len(outs) != len(k.Outputs) {
			k.Outputs, k.Body.Outputs = outs, bouts
			k.Body.RemoveDead()
		}
	}
	if removed == 0 {
		return false, "", nil
	}
	return true, fmt.Sprintf("%d outputs removed", removed), nil
}
