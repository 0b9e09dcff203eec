package fusion

import (
	"fmt"
	"slices"

	"gkconv/internal/ir"
)

// runUpdateKernelInfo checks each kernel's outputs against its body and
// refreshes its kernel name and pattern.
func runUpdateKernelInfo(st *state) (bool, string, error) {
	for _, k := range kernels(st.g) {
		if len(k.Outputs) != len(k.Body.Outputs) || len(k.Inputs) != len(k.Body.Inputs) {
			return false, "", fmt.Errorf("kernel %s: %d/%d inputs, %d/%d outputs against its body", k.Name,
				len(k.Inputs), len(k.Body.Inputs), len(k.Outputs), len(k.Body.Outputs))
		}
		for i, o := range k.Outputs {
			bo := k.Body.Outputs[i]
			if o.DType != bo.DType || !slices.Equal(o.Shape, bo.Shape) {
				return false, "", fmt.Errorf("kernel %s: output %s is %s%v, body gives %s%v", k.Name, o.Name, o.DType, o.Shape, bo.DType, bo.Shape)
			}
		}
		if k.Attrs.Has(ir.GKKernelSO) || k.Attrs.Has(ir.GKKernelPTX) || k.Attrs.Has(ir.GKKernelInfo) {
			// A built kernel's name is its compiled symbol: keep it.
			continue
		}
		finalizeKernel(k)
	}
	return false, "", nil
}
