package tensorops

import (
	"testing"

	"gkconv/internal/runtime/ops/opstest"
)

// TestONNXBackendNodes runs the node-suite backend tests made of this
// package's ops (and Constant nodes), read by the ONNX frontend. These ops
// move data, so results must match byte for byte; outputs start as junk and
// each test runs on 1 and 3 threads with a low parallel threshold, so the
// multi-threaded paths run on the small test tensors too.
func TestONNXBackendNodes(t *testing.T) {
	smallParallel(t)
	cases := opstest.Select(opstest.Manifest(t), opstest.Filter{
		Suites: []string{"node"},
		Ops: opstest.OpSet("Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Concat", "Split",
			"Slice", "Gather", "GatherD", "Pad", "Tile", "DepthToSpace", "SpaceToDepth", "Trilu", "Range",
			"Shape", "Size", "ConstantOfShape", "TopK"),
		WithConstant: true,
	})
	opstest.RunAll(t, cases, opstest.Check{Threads: []int{1, 3}, Exact: true})
}
