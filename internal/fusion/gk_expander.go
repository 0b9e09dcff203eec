package fusion

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"gkconv/internal/ir"
)

// runExpander is graph_kernel_expander: every op in the valid expand list
// with an expander is replaced by a GraphKernel node holding its expansion.
func runExpander(st *state) (bool, string, error) {
	valid := map[string]bool{}
	for _, op := range st.flags.ValidExpandOps(expandTable(), st.backend) {
		valid[op] = true
	}
	g := st.g
	users := g.Consumers()
	graphOut := map[*ir.Value]bool{}
	for _, o := range g.Outputs {
		graphOut[o] = true
	}
	used := func(v *ir.Value) bool { return graphOut[v] || len(users[v]) > 0 }
	count := map[string]int{}
	skipped := map[string]string{}
	for i, n := range g.Nodes {
		exp, ok := expanders[n.Op]
		if !ok || !valid[n.Op] {
			continue
		}
		k, err := st.expandNode(n, exp.expand, used)
		if err != nil {
			skipped[n.Name] = err.Error()
			continue
		}
		g.Nodes[i] = k
		count[n.Op]++
	}
	var parts []string
	for op, c := range count {
		parts = append(parts, fmt.Sprintf("%s x%d", op, c))
	}
	sort.Strings(parts)
	note := ""
	if len(parts) > 0 {
		note = "expanded " + strings.Join(parts, ", ")
	}
	if len(skipped) > 0 {
		var names []string
		for k := range skipped {
			names = append(names, k)
		}
		sort.Strings(names)
		first := names[0]
		note = strings.TrimPrefix(fmt.Sprintf("%s; %d not expanded (%s: %s)", note, len(skipped), first, skipped[first]), "; ")
	}
	return len(count) > 0, note, nil
}

// expandNode builds the GraphKernel that replaces n (CanExpand: static
// shapes, float inputs, outputs matching the node's).
func (st *state) expandNode(n *ir.Node, exp expander, used func(*ir.Value) bool) (*ir.Node, error) {
	if !staticNode(n) {
		return nil, fmt.Errorf("dynamic shape")
	}
	if x := n.Input(0); x == nil || (x.DType != ir.Float32 && x.DType != ir.Float16) {
		return nil, fmt.Errorf("input dtype is not float32/float16")
	}
	b := newBuilder(n)
	outs, err := exp(b, n, st.backend)
	if err == nil {
		err = b.Err()
	}
	if err != nil {
		return nil, err
	}
	if len(outs) == 0 || len(outs) > len(n.Outputs) {
		return nil, fmt.Errorf("expander returned %d outputs for %d", len(outs), len(n.Outputs))
	}
	for i, o := range n.Outputs {
		if i >= len(outs) {
			if used(o) {
				return nil, fmt.Errorf("output %d is used but not produced by the expansion", i)
			}
			continue
		}
		if outs[i].DType != o.DType || !slices.Equal(outs[i].Shape, o.Shape) {
			return nil, fmt.Errorf("expansion output %d is %s%v, node output is %s%v", i, outs[i].DType, outs[i].Shape, o.DType, o.Shape)
		}
	}
	b.e.G.Outputs = outs
	// A body output may be a body input or constant (e.g. an identity); a
	// kernel must compute its outputs, so refuse those.
	for _, o := range outs {
		if o.Producer == nil {
			return nil, fmt.Errorf("expansion returns an input unchanged")
		}
	}
	k := &ir.Node{Name: n.Name, Op: ir.OpGraphKernel, Inputs: b.e.Outer, Body: b.e.G,
		Attrs: ir.Attrs{ir.GKGraphKernel: ir.StringAttr(n.Op)}, Provenance: append([]string(nil), n.Provenance...)}
	for i := range outs {
		o := n.Outputs[i]
		o.Producer, o.OutIndex = k, i
		k.Outputs = append(k.Outputs, o)
	}
	return k, nil
}
