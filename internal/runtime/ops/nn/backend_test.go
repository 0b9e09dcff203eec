package nn

import (
	"testing"

	"gkconv/internal/runtime/ops/opstest"
)

// TestONNXBackend runs the backend tests of every suite whose model is one
// node of an op this package implements, read by the ONNX frontend, with
// NaN-filled outputs on 1 and 3 threads.
func TestONNXBackend(t *testing.T) {
	cases := opstest.Select(opstest.Manifest(t), opstest.Filter{Ops: opstest.OpSet(
		"MatMul", "Conv2D", "Conv2DTranspose", "AvgPool", "MaxPool", "BatchNorm",
		"InstanceNorm", "LayerNorm", "Einsum", "Resize")})
	opstest.RunAll(t, cases, opstest.Check{Threads: []int{1, 3}})
}
