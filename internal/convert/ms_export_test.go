package convert

import (
	"path/filepath"
	"testing"

	"gkconv/internal/mindir"
)

// msExports are the networks scripts/interop/export_nets.py wrote with
// MindSpore 2.7.2 (mindspore.export, GRAPH_MODE, CPU) into
// testdata/ms_export, each with MindSpore's own outputs as the reference.
var msExports = []struct {
	name       string
	atol, rtol float64
}{
	{name: "lenet", atol: 1e-5, rtol: 1e-4},
	{name: "bert_encoder", atol: 1e-5, rtol: 1e-3},
	{name: "lstm", atol: 1e-5, rtol: 1e-3},
	// float16 Dense layers: MindSpore's CPU float16 GEMM and ours round
	// differently (max abs 3.3e-5 on outputs of ~0.1).
	{name: "mixed_precision", atol: 1e-4, rtol: 1e-3},
	// A data-dependent while loop (a header function calling Switch(cond,
	// Partial(body), Partial(after)), the body calling the header again)
	// and an if: read as Loop and If. test_data_set_1 and _2 (n = 0 and 7,
	// MindSpore's outputs from the same file) run the loop 0 and 7 times.
	{name: "control_flow", atol: 1e-6, rtol: 1e-6},
}

// TestMindSporeExports converts MindSpore-exported networks (--fmk=MINDIR)
// unfused, at opt_level 2 and with --primitiveSet=mindspore, and matches
// MindSpore's own outputs.
func TestMindSporeExports(t *testing.T) {
	cfg := writeConfig(t, "[graph_kernel_param]\nopt_level=2\n")
	for _, e := range msExports {
		dir := testdataModel(t, filepath.Join("ms_export", e.name))
		for _, variant := range []string{"none", "o2", "mindspore"} {
			t.Run(e.name+"/"+variant, func(t *testing.T) {
				o := DefaultOptions()
				o.FMK, o.ModelFile, o.OutputFile, o.KernelCacheDir = "MINDIR", filepath.Join(dir, "model.mindir"), filepath.Join(t.TempDir(), "model"), kernelCache
				switch variant {
				case "none":
					o.Optimize = "none"
				case "o2":
					o.ConfigFile = cfg
				case "mindspore":
					o.Optimize, o.PrimitiveSet = "none", "mindspore"
				}
				out, _ := convertOK(t, o)
				m, err := mindir.Open(out)
				if err != nil {
					t.Fatal(err)
				}
				defer m.Close()
				sets, _ := filepath.Glob(filepath.Join(dir, "test_data_set_*"))
				if len(sets) == 0 {
					t.Fatalf("%s has no test_data_set_*", dir)
				}
				for _, set := range sets {
					matchSet(t, e.name+"/"+filepath.Base(set), out, m.Graph, set, e.atol, e.rtol, 0)
				}
			})
		}
	}
}
