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
	const alignCorners = "align_corners downsampling: onnxruntime divides by the output length, the suite by scale*input length; TestResizeFollowsORTAlignCorners"
	opstest.RunAll(t, cases, opstest.Check{Threads: []int{1, 3}, FollowORT: map[string]string{
		"test_resize_downsample_scales_linear_align_corners": alignCorners,
		"test_resize_downsample_scales_cubic_align_corners":  alignCorners,
	}})
}
