package convert

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gkconv/internal/mindir"
)

// msExports are the networks scripts/interop/export_nets.py wrote with
// MindSpore 2.7.2 (mindspore.export, GRAPH_MODE, CPU) into
// testdata/ms_export, each with MindSpore's own outputs as the reference.
// unreadable: the reader's error for a network it cannot read yet (listed,
// not skipped: the test fails when the error changes or goes away).
var msExports = []struct {
	name       string
	atol, rtol float64
	unreadable string
}{
	{name: "lenet", atol: 1e-5, rtol: 1e-4},
	{name: "bert_encoder", atol: 1e-5, rtol: 1e-3},
	{name: "lstm", atol: 1e-5, rtol: 1e-3},
	// float16 Dense layers: MindSpore's CPU float16 GEMM and ours round
	// differently (max abs 3.3e-5 on outputs of ~0.1).
	{name: "mixed_precision", atol: 1e-4, rtol: 1e-3},
	// A data-dependent while loop is a recursive call of a function graph
	// (header -> Switch(cond, Partial(body), Partial(after)) -> call, the
	// body calling the header again): the reader has no Loop form for it.
	{name: "control_flow", unreadable: "call of graph"},
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
				if e.unreadable != "" {
					_, err := Convert(context.Background(), o)
					if err == nil || !strings.Contains(err.Error(), e.unreadable) {
						t.Fatalf("want the reader's error %q, got %v", e.unreadable, err)
					}
					if _, serr := os.Stat(o.OutputFile + ".mindir"); serr == nil {
						t.Errorf("a failed conversion left %s", o.OutputFile+".mindir")
					}
					return
				}
				out, _ := convertOK(t, o)
				m, err := mindir.Open(out)
				if err != nil {
					t.Fatal(err)
				}
				defer m.Close()
				matchSet(t, e.name, out, m.Graph, filepath.Join(dir, "test_data_set_0"), e.atol, e.rtol, 0)
			})
		}
	}
}
