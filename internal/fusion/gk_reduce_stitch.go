package fusion

import (
	"fmt"

	"gkconv/internal/ir"
)

// Stitch thresholds of MindSpore's GPU splitter
// (mindspore/python/mindspore/_extends/graph_kernel/model/graph_split.py).
const (
	stitchMinReduceInput = 12 * 1024
)

// runStitch is reduce stitching (opt_level 3, GPU/Ascend): a kernel whose
// reduce result feeds the next kernel is fused with it when the reduce input
// is large enough; the fused kernel carries buffer_stitch naming the
// stitched tensors, which the kernel compiler keeps in on-chip memory.
func runStitch(st *state) (bool, string, error) {
	g := st.g
	stitched := 0
	for changed := true; changed; {
		changed = false
		users := g.Consumers()
		for _, k1 := range kernels(g) {
			if k1.Attrs.Has(ir.GKStitch) {
				continue
			}
			for i, o := range k1.Outputs {
				bo := k1.Body.Outputs[i]
				if bo.Producer == nil || opPattern(bo.Producer) != ir.PatternReduce {
					continue
				}
				in := bo.Producer.Inputs[0]
				if ir.NumElements(in.Shape) < stitchMinReduceInput {
					continue
				}
				us := users[o]
				if len(us) != 1 || us[0].Op != ir.OpGraphKernel || us[0] == k1 {
					continue
				}
				k2 := us[0]
				cyclic := false
				for _, v := range k2.Inputs {
					if v != nil && v.Producer != nil && v.Producer != k1 && reach(k1, v.Producer, users) {
						cyclic = true
					}
				}
				if cyclic {
					continue
				}
				name := o.Name
				k, err := st.fuseNodes([]*ir.Node{k1, k2}, "stitch", true)
				if err != nil {
					return false, "", err
				}
				k.Attrs[ir.GKStitch] = ir.StringsAttr(name)
				finalizeKernel(k)
				stitched++
				changed = true
				break
			}
			if changed {
				break
			}
		}
	}
	if stitched == 0 {
		return false, "no reduce output large enough to stitch", nil
	}
	return true, fmt.Sprintf("%d stitches", stitched), nil
}
