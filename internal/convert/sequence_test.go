package convert

import (
	"path/filepath"
	"testing"
)

// TestSequenceModels runs the ONNX backend's "simple" sequence models
// (SequenceEmpty/Construct/Insert/Erase/At/Length, SplitToSequence,
// ConcatFromSequence; positions are graph inputs, so sequences are run-time
// values) at opt_level 0 and 2; onnxruntime 1.30 passes all eight.
func TestSequenceModels(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join(sharedDir(t), "corpus", "onnx-backend", "simple", "test_sequence_model*"))
	if len(dirs) == 0 {
		t.Skip("no ../shared/corpus/onnx-backend/simple/test_sequence_model* (shared corpus absent)")
	}
	config := writeConfig(t, "[graph_kernel_param]\nopt_level=2\n")
	for _, dir := range dirs {
		for _, level := range []int{0, 2} {
			if err := runONNXTest(dir, level, t.TempDir(), config); err != nil {
				t.Errorf("%s at opt_level %d: %v", filepath.Base(dir), level, err)
			}
		}
	}
}
