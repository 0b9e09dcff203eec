package fusion

import (
	"fmt"

	"gkconv/internal/ir"
)

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
