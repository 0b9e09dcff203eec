package convert

import (
	"fmt"
	"math"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/mindir"
	"gkconv/internal/runtime"
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

// TestMindSporeLSTMFile reads MindSpore 1.6's LSTM net from MindSpore's
// tests (its weights live in a checkpoint, so they are graph inputs), runs
// it on random inputs and weights, and checks the lifted LSTM's outputs
// against MindSpore's CPU LSTM computed here from the flat weight: input
// weights [4, hidden, input], recurrent weights [4, hidden, hidden] and
// one bias [4, hidden], gates in oneDNN's order i, f, c, o.
func TestMindSporeLSTMFile(t *testing.T) {
	path := filepath.Join(sharedDir(t), "corpus", "mindir", "mindspore-tests", "old_version_mindir_2.mindir")
	m, err := mindir.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	g := m.Graph
	var lstm *ir.Node
	for _, n := range g.Nodes {
		if n.Op == "LSTM" {
			lstm = n
		}
	}
	if lstm == nil {
		t.Fatal("no LSTM in the lifted graph")
	}
	// The flat weight: the input of the Reshape that starts the lift's
	// weight reordering (a constant parameter of the file, or what a Load
	// of it gives).
	var weights *ir.Value
	for _, n := range g.Nodes {
		if n.Op == "Reshape" && strings.HasSuffix(n.Inputs[1].Name, "/w_flat") {
			weights = n.Inputs[0]
		}
	}
	if weights == nil {
		t.Fatal("no flat LSTM weight in the lifted graph")
	}
	// Outputs: the LSTM's x, h0, c0 inputs, the weights, and its Y, Y_h, Y_c.
	g.Outputs = []*ir.Value{lstm.Inputs[0], lstm.Inputs[5], lstm.Inputs[6], weights, lstm.Outputs[0], lstm.Outputs[1], lstm.Outputs[2]}
	rng := rand.New(rand.NewSource(7))
	var ins []*ir.Tensor
	for _, v := range g.Inputs {
		tt := ir.NewTensor(v.DType, v.Shape)
		for i := range tt.F32() {
			tt.F32()[i] = float32(rng.NormFloat64() * 0.3)
		}
		ins = append(ins, tt)
	}
	sess, err := runtime.NewSession(g, runtime.Options{Threads: 1, KernelPolicy: selfBuilt})
	if err != nil {
		t.Fatal(err)
	}
	out, err := sess.Run(ins)
	if err != nil {
		t.Fatal(err)
	}
	x, h0, c0, w := out[0], out[1].F32(), out[2].F32(), out[3].F32()
	S, B, I := int(x.Shape[0]), int(x.Shape[1]), int(x.Shape[2])
	H := int(lstm.Attrs.Int("hidden_size", 0))
	if len(w) != 4*H*(I+H+1) {
		t.Fatalf("weights %d values, want %d", len(w), 4*H*(I+H+1))
	}
	wl, wh, bias := w[:4*H*I], w[4*H*I:4*H*(I+H)], w[4*H*(I+H):]
	sig := func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }
	y := out[4].F32() // [S, 1, B, H]
	for b := 0; b < B; b++ {
		h, c := make([]float64, H), make([]float64, H)
		for j := 0; j < H; j++ {
			h[j], c[j] = float64(h0[b*H+j]), float64(c0[b*H+j])
		}
		for s := 0; s < S; s++ {
			var gate [4][]float64
			for g := range gate {
				gate[g] = make([]float64, H)
				for j := 0; j < H; j++ {
					v := float64(bias[g*H+j])
					for k := 0; k < I; k++ {
						v += float64(wl[(g*H+j)*I+k]) * float64(x.F32()[(s*B+b)*I+k])
					}
					for k := 0; k < H; k++ {
						v += float64(wh[(g*H+j)*H+k]) * h[k]
					}
					gate[g][j] = v
				}
			}
			for j := 0; j < H; j++ {
				c[j] = sig(gate[1][j])*c[j] + sig(gate[0][j])*math.Tanh(gate[2][j])
				h[j] = sig(gate[3][j]) * math.Tanh(c[j])
				if got := float64(y[(s*B+b)*H+j]); math.Abs(got-h[j]) > 1e-5 {
					t.Fatalf("Y[%d, 0, %d, %d] = %v, want %v", s, b, j, got, h[j])
				}
			}
		}
		for j := 0; j < H; j++ {
			if got := float64(out[5].F32()[b*H+j]); math.Abs(got-h[j]) > 1e-5 {
				t.Fatalf("Y_h[0, %d, %d] = %v, want %v", b, j, got, h[j])
			}
			if got := float64(out[6].F32()[b*H+j]); math.Abs(got-c[j]) > 1e-5 {
				t.Fatalf("Y_c[0, %d, %d] = %v, want %v", b, j, got, c[j])
			}
		}
	}
}
