package fusion

import (
	"fmt"
	"strings"

	"gkconv/internal/ir"
)

// runSelfCheck is buildkernel.kernel_self_check (this converter's own pass):
// every compiled kernel runs once against its body (Options.Check) and a
// kernel that disagrees is un-fused, its body's ops put back into the
// graph, so a code generator or compiler bug costs speed, never numerics.
// Nodes sharing one binary share the verdict.
func runSelfCheck(st *state) (bool, string, error) {
	if st.check == nil {
		return false, "off", nil
	}
	if !st.built {
		return false, "no kernels built", nil
	}
	verdict := map[string]string{} // binary sha256 -> "" (passed) or the reason
	var unfused []string
	for _, k := range kernels(st.g) {
		hash := k.Attrs.String(ir.GKKernelSOHash, "")
		if hash == "" {
			continue // no compiled object (interpreted, or another target)
		}
		reason, seen := verdict[hash]
		if !seen {
			if err := st.check.CheckKernel(k); err != nil {
				reason = err.Error()
			}
			verdict[hash] = reason
		}
		if reason == "" {
			continue
		}
		unfused = append(unfused, fmt.Sprintf("%s (%s): %s", k.Name, k.Attrs.String(ir.GKKernelName, ""), reason))
		st.check.KernelUnfused(k, reason)
		st.inlineKernel(k)
	}
	note := fmt.Sprintf("%d compiled kernels checked", len(verdict))
	if len(unfused) > 0 {
		note += fmt.Sprintf(", %d un-fused: %s", len(unfused), strings.Join(unfused, "; "))
	}
	return len(unfused) > 0, note, nil
}
