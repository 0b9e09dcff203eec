package convert

import (
	"path/filepath"
	"testing"

	"gkconv/internal/onnx"
)

// TestDetectionHead converts testdata/detection_head (written by
// scripts/models/detection_head.py: a conv head, torchvision's batched NMS
// as NonMaxSuppression, a score threshold exported with NonZero and
// GatherND, and Gathers of the kept boxes, scores and labels; every output's
// length depends on the data) at opt_level 0 and 2, runs it and compares
// with onnxruntime's outputs (test_data_set_0, from run_ort.js --save-out).
func TestDetectionHead(t *testing.T) {
	dir := testdataModel(t, "detection_head")
	want, _, err := onnx.ReadTensorFile(filepath.Join(dir, "test_data_set_0", "output_0.pb"))
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Shape) != 2 || want.Shape[0] == 0 {
		t.Fatalf("reference boxes %v: expected some selected boxes", want.Shape)
	}
	config := writeConfig(t, "[graph_kernel_param]\nopt_level=2\n")
	for _, level := range []int{0, 2} {
		if err := runONNXTest(dir, level, t.TempDir(), config); err != nil {
			t.Errorf("opt_level %d: %v", level, err)
		}
	}
}
