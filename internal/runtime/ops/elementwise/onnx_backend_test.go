package elementwise

import (
	"testing"

	"gkconv/internal/runtime/ops/opstest"
)

// TestONNXBackendNodes runs the node-suite backend tests made only of ops
// this package implements (the kernels registered in this test binary), read
// by the ONNX frontend, with NaN-filled outputs on 1 and 3 threads. Tests
// with dtypes the IR lacks, or that need a kernel of another package after
// the frontend's rewrites, skip.
func TestONNXBackendNodes(t *testing.T) {
	cases := opstest.Select(opstest.Manifest(t), opstest.Filter{
		Suites: []string{"node"},
		Ops:    opstest.RegisteredOps(),
	})
	opstest.RunAll(t, cases, opstest.Check{Threads: []int{1, 3}})
}
