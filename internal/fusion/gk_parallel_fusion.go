package fusion

import (
	"fmt"
	"slices"

	"gkconv/internal/ir"
)

// maxParallel is ParallelOpFusion's limit of kernels per group.
const maxParallel = 7

// runParallelFusion marks groups of independent kernels that read a common
// value (opt_level 3, GPU/Ascend) with parallel_fusion_group, so the kernel
// compiler can launch them as one block-fused kernel.
func runParallelFusion(st *state) (bool, string, error) {
	g := st.g
	users := g.Consumers()
	grouped := map[*ir.Node]bool{}
	groups := 0
	for _, v := range allValues(g) {
		var cands []*ir.Node
		for _, u := range users[v] {
			if u.Op == ir.OpGraphKernel && !grouped[u] && !u.Attrs.Has(ir.GKStitch) && !slices.Contains(cands, u) {
				cands = append(cands, u)
			}
		}
		var grp []*ir.Node
		for _, c := range cands {
			indep := true
			for _, o := range grp {
				if reach(c, o, users) || reach(o, c, users) {
					indep = false
					break
				}
			}
			if indep && len(grp) < maxParallel {
				grp = append(grp, c)
			}
		}
		if len(grp) < 2 {
			continue
		}
		groups++
		for _, k := range grp {
			grouped[k] = true
			k.Attrs[ir.GKParallelGroup] = ir.StringAttr(fmt.Sprintf("parallel_%d", groups))
		}
	}
	if groups == 0 {
		return false, "no independent kernels share an input", nil
	}
	return true, fmt.Sprintf("%d parallel groups", groups), nil
}
