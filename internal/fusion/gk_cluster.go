package fusion

import (
	"fmt"
	"sort"

	"gkconv/internal/akgcfg"
	"gkconv/internal/ir"
)

// clusterTable is the default cluster list: the seed's appendix 2 for ops
// the IR has, plus converter_lite's GetClusterableOpList (ExpandDims is the
// IR's Unsqueeze). MatMul and Conv2D are not clustered on CPU/GPU.
var clusterTable = []akgcfg.OpEntry{
	{Backends: 0, Name: "Abs"}, {Backends: 0, Name: "Add"}, {Backends: 0, Name: "Cast"},
	{Backends: 0, Name: "Exp"}, {Backends: 0, Name: "Log"}, {Backends: 0, Name: "Maximum"},
	{Backends: 0, Name: "Minimum"}, {Backends: 0, Name: "Mul"}, {Backends: 0, Name: "Neg"},
	{Backends: 0, Name: "Pow"}, {Backends: 0, Name: "RealDiv"}, {Backends: 0, Name: "Reciprocal"},
	{Backends: 0, Name: "Rsqrt"}, {Backends: 0, Name: "Sqrt"}, {Backends: 0, Name: "Sub"},
	{Backends: 0, Name: "Equal"}, {Backends: 0, Name: "Less"}, {Backends: 0, Name: "LessEqual"},
	{Backends: 0, Name: "LogicalNot"}, {Backends: 0, Name: "Select"}, {Backends: 0, Name: "ReduceSum"},
	{Backends: 0, Name: "Transpose"},
	{Backends: 0, Name: "Squeeze"}, {Backends: 0, Name: "Unsqueeze"}, {Backends: 0, Name: "LeakyReLU"},
	{Backends: 0, Name: "Sign"}, {Backends: 0, Name: "Mod"}, {Backends: 0, Name: "ReduceMax"},
	{Backends: 0, Name: "ReduceMin"},
	{Backends: cpu | gpu | ascend, Name: "Greater"}, {Backends: cpu | gpu | ascend, Name: "GreaterEqual"},
	{Backends: cpu | gpu | ascend, Name: "LogicalAnd"}, {Backends: cpu | gpu | ascend, Name: "LogicalOr"},
	{Backends: gpu | ascend, Name: "Floor"},
	{Backends: cpu | gpu, Name: "Reshape"}, {Backends: cpu | gpu, Name: "Round"}, {Backends: cpu | gpu, Name: "Tanh"},
	{Backends: cpu | gpu, Name: "Sin"}, {Backends: cpu | gpu, Name: "Cos"},
	{Backends: cpu, Name: "Sigmoid"}, {Backends: cpu, Name: "Erf"}, // onnxruntime's, not expanded (expanders.go)
	{Backends: gpu, Name: "ACos"}, {Backends: gpu, Name: "Acosh"}, {Backends: gpu, Name: "Asin"},
	{Backends: gpu, Name: "Asinh"}, {Backends: gpu, Name: "Atan"}, {Backends: gpu, Name: "Erf"},
	{Backends: gpu, Name: "IsInf"}, {Backends: gpu, Name: "IsNan"},
	{Backends: ascend, Name: "BroadcastTo"}, {Backends: ascend, Name: "Ceil"}, {Backends: ascend, Name: "MatMul"},
	{Backends: ascend, Name: "FastGeLU"}, {Backends: ascend, Name: "Reshape"},
}

// clusterable is IsClusterableOp: listed op (or an expander's GraphKernel),
// static shapes, supported dtypes, constant value-depend inputs.
func clusterable(n *ir.Node, valid map[string]bool) bool {
	if n.Op == ir.OpGraphKernel {
		return n.Body != nil
	}
	if !valid[n.Op] || !staticNode(n) {
		return false
	}
	// A fused activation (Conv2D's, MatMul's: ir.AttrActivation) is not
	// part of the op the kernel generators know.
	if n.Attrs.Has(ir.AttrActivation) {
		return false
	}
	for _, o := range n.Outputs {
		if !supportedDType(o.DType) {
			return false
		}
	}
	for _, v := range n.Inputs {
		if v != nil && v.Const == nil && !supportedDType(v.DType) {
			return false
		}
	}
	// Input 1 of a value-depend op is data (shape, axes): it must be constant.
	if ir.LookupOp(n.Op).ValueDepend() {
		if v := n.Input(1); v != nil && v.Const == nil {
			return false
		}
	}
	return true
}

func opCount(n *ir.Node) int {
	if n.Op == ir.OpGraphKernel && n.Body != nil {
		return len(n.Body.Nodes)
	}
	return 1
}

// runCluster is graph_kernel_cluster
// (mindspore/ccsrc/backend/common/graph_kernel/core/graph_kernel_cluster.cc,
// mindspore-lite/tools/graph_kernel/converter/graph_kernel_cluster_lite.cc): walk the nodes in
// reverse topological order; from each unmerged clusterable node collect its
// clusterable unmerged producers transitively, drop candidates that would
// close a cycle through an outside node, and fuse groups of 2 or more.
func runCluster(st *state) (bool, string, error) {
	g := st.g
	if err := g.TopoSort(); err != nil {
		return false, "", err
	}
	valid := map[string]bool{}
	for _, op := range st.flags.ValidClusterOps(clusterTable, st.backend) {
		valid[op] = true
	}
	idx := make(map[*ir.Node]int, len(g.Nodes))
	for i, n := range g.Nodes {
		idx[n] = i
	}
	producers := func(n *ir.Node) []*ir.Node {
		var ps []*ir.Node
		for _, v := range n.Inputs {
			if v != nil && v.Producer != nil {
				if _, ok := idx[v.Producer]; ok {
					ps = append(ps, v.Producer)
				}
			}
		}
		return ps
	}
	limit := st.flags.CompositeOpLimitSize
	if limit <= 0 {
		limit = 200
	}
	merged := map[*ir.Node]bool{}
	var groups [][]*ir.Node
	for i := len(g.Nodes) - 1; i >= 0; i-- {
		root := g.Nodes[i]
		if merged[root] || !clusterable(root, valid) {
			continue
		}
		cand := map[*ir.Node]bool{root: true}
		stack := []*ir.Node{root}
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, p := range producers(n) {
				if !cand[p] && !merged[p] && clusterable(p, valid) {
					cand[p] = true
					stack = append(stack, p)
				}
			}
		}
		if len(cand) < 2 {
			continue
		}
		// composite_op_limit_size: keep the candidates nearest the root.
		list := sortedByIndex(cand, idx)
		total := 0
		for j := len(list) - 1; j >= 0; j-- {
			c := opCount(list[j])
			if total+c > limit && list[j] != root {
				delete(cand, list[j])
				continue
			}
			total += c
		}
		removeCycles(cand, idx, producers)
		if len(cand) < 2 {
			continue
		}
		group := sortedByIndex(cand, idx)
		for _, n := range group {
			merged[n] = true
		}
		groups = append(groups, group)
	}
	for _, grp := range groups {
		if _, err := st.fuseNodes(grp, "fusion", false); err != nil {
			return false, "", err
		}
	}
	if err := g.TopoSort(); err != nil {
		return false, "", fmt.Errorf("cluster produced a cycle: %w", err)
	}
	if len(groups) == 0 {
		return false, "no cluster of 2 or more ops", nil
	}
	return true, fmt.Sprintf("%d clusters", len(groups)), nil
}

func sortedByIndex(set map[*ir.Node]bool, idx map[*ir.Node]int) []*ir.Node {
	out := make([]*ir.Node, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Slice(out, func(a, b int) bool { return idx[out[a]] < idx[out[b]] })
	return out
}

// removeCycles is the CircleChecker: if a path leaves the candidate set and
// comes back (candidate c2 -> outside ... -> candidate), fusing would make
// a cycle; c2 and its candidate ancestors are dropped. Repeats until clean.
func removeCycles(cand map[*ir.Node]bool, idx map[*ir.Node]int, producers func(*ir.Node) []*ir.Node) {
	for {
		minIdx := -1
		for n := range cand {
			if minIdx < 0 || idx[n] < minIdx {
				minIdx = idx[n]
			}
		}
		bad := findCycleCandidate(cand, idx, minIdx, producers)
		if bad == nil {
			return
		}
		// Drop bad and every candidate above it.
		stack := []*ir.Node{bad}
		delete(cand, bad)
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, p := range producers(n) {
				if cand[p] {
					delete(cand, p)
					stack = append(stack, p)
				}
			}
		}
	}
}

func findCycleCandidate(cand map[*ir.Node]bool, idx map[*ir.Node]int, minIdx int, producers func(*ir.Node) []*ir.Node) *ir.Node {
	for _, c := range sortedByIndex(cand, idx) {
		visited := map[*ir.Node]bool{}
		var stack []*ir.Node
		for _, p := range producers(c) {
			if !cand[p] && !visited[p] {
				visited[p] = true
				stack = append(stack, p)
			}
		}
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, p := range producers(n) {
				if idx[p] < minIdx || visited[p] { // nothing above minIdx can be a candidate
					continue
				}
				if cand[p] {
					return p
				}
				visited[p] = true
				stack = append(stack, p)
			}
		}
	}
	return nil
}
