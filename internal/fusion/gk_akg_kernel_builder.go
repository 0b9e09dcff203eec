package fusion

import "fmt"

// runBuild is akg_kernel_builder: hand every kernel to the KernelBuilder.
func runBuild(st *state) (bool, string, error) {
	ks := kernels(st.g)
	for _, k := range ks {
		finalizeKernel(k)
	}
	if len(ks) == 0 {
		return false, "no kernels to build", nil
	}
	if st.builder == nil {
		return false, fmt.Sprintf("no kernel builder: %d kernels left uncompiled", len(ks)), nil
	}
	if err := st.builder.BuildKernels(ks); err != nil {
		return false, "", err
	}
	st.built = true
	return true, fmt.Sprintf("%d kernels built", len(ks)), nil
}
