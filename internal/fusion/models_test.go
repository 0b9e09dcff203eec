package fusion

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"gkconv/internal/akgcfg"
	"gkconv/internal/ir"
	"gkconv/internal/onnx"
	"gkconv/internal/repotest"
	"gkconv/internal/testkit"
)

// TestCorpusModels fuses real architectures and runs them fused and unfused
// on the runtime's op library.
func TestCorpusModels(t *testing.T) {
	root := repotest.SharedDir(t, "corpus/models")
	for _, name := range []string{"bert_tiny", "gpt_tiny", "squeezenet1_1", "mobilenet_v2_bn", "mobilenet_v3_small", "resnet18_bn"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(root, name, "model.onnx")
			if _, err := os.Stat(path); err != nil {
				t.Skipf("%s absent", path)
			}
			if testing.Short() && name != "bert_tiny" && name != "gpt_tiny" {
				t.Skip("short mode")
			}
			m, err := onnx.Open(path, onnx.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			g := m.Graph
			in := map[string]*ir.Tensor{}
			for _, v := range g.Inputs {
				if !v.ShapeKnown() {
					t.Skipf("input %s has a dynamic shape", v.Name)
				}
				x := ir.NewTensor(v.DType, v.Shape)
				if v.DType == ir.Float32 {
					for i := range x.F32() {
						x.F32()[i] = float32(math.Sin(float64(i) * 0.37))
					}
				} else if v.DType == ir.Int64 {
					for i := range x.I64() {
						x.I64()[i] = int64(i % 50)
					}
				}
				in[v.Name] = x
			}
			want := execute(t, testkit.CloneGraph(g), in)
			backends := []struct {
				flags string
				be    akgcfg.Backend
			}{
				{"--opt_level=3", akgcfg.Backend{Device: akgcfg.GPU}},
				{"--opt_level=2 --fusion_ops_level=1", akgcfg.Backend{Device: akgcfg.Ascend, Soc: "Ascend910B2"}},
			}
			for _, c := range backends {
				g2 := testkit.CloneGraph(g)
				run(t, g2, c.flags, c.be)
				compareOutputs(t, c.be.String(), want, execute(t, g2, in))
			}
			res := run(t, g, "--opt_level=2", cpuBE)
			for _, k := range kernels(g) {
				if err := k.Body.Validate(); err != nil {
					t.Fatalf("kernel %s: %v", k.Name, err)
				}
			}
			compareOutputs(t, "CPU", want, execute(t, g, in))
			t.Logf("%s: %d -> %d nodes, %d kernels", name, res.NodesBefore, res.NodesAfter, len(res.Kernels))
		})
	}
}

func compareOutputs(t *testing.T, label string, want, got []*ir.Tensor) {
	t.Helper()
	for i := range want {
		if want[i].DType != ir.Float32 {
			continue
		}
		w, gt := want[i].F32(), got[i].F32()
		var maxd, maxw float64
		for j := range w {
			maxd = math.Max(maxd, math.Abs(float64(w[j]-gt[j])))
			maxw = math.Max(maxw, math.Abs(float64(w[j])))
		}
		if maxd > 1e-3*(1+maxw) || math.IsNaN(maxd) {
			t.Errorf("%s output %d: max diff %g (max |ref| %g)", label, i, maxd, maxw)
		}
	}
}
