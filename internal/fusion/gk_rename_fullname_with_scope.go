package fusion

import (
	"strings"

	"gkconv/internal/ir"
)

// runRename is rename_fullname_with_scope: kernel nodes take their kernel
// name (made unique), so dumps and profiles name kernels consistently.
func runRename(st *state) (bool, string, error) {
	renamed := 0
	for _, k := range kernels(st.g) {
		kn := k.Attrs.String(ir.GKKernelName, "")
		if kn == "" || strings.HasPrefix(k.Name, kn) {
			continue
		}
		st.edit.Release(k.Name)
		k.Name = st.edit.Unique(kn)
		k.Body.Name = k.Name
		renamed++
	}
	return renamed > 0, "", nil
}
