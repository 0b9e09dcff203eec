package convert

import (
	"fmt"
	"testing"
)

// TestRecurrentModels converts the small PyTorch-exported recurrent models
// of testdata (scripts/models/export_rnn.py: a 2-layer LSTM + Linear,
// batch_first; a bidirectional GRU with linear_before_reset + Linear) at
// opt_level 0 and 2 and matches onnxruntime's outputs (atol 1e-4, rtol 1e-3).
func TestRecurrentModels(t *testing.T) {
	config := writeConfig(t, "[graph_kernel_param]\nopt_level=2\n")
	for _, name := range []string{"lstm_seq", "gru_bidir"} {
		for _, level := range []int{0, 2} {
			t.Run(fmt.Sprintf("%s/opt_level%d", name, level), func(t *testing.T) {
				if err := runONNXTest(testdataModel(t, name), level, t.TempDir(), config); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}
