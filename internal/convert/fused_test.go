package convert

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// convertFused converts an ONNX model at an opt_level (the config adds
// extra), checks the written file and runs it against refDir's reference
// data.
func convertFused(t *testing.T, model, refDir string, optLevel int, extra string) (string, *Report) {
	t.Helper()
	o := onnxOptions(t, model)
	o.ConfigFile = writeConfig(t, fmt.Sprintf("[graph_kernel_param]\nopt_level=%d\n%s", optLevel, extra))
	out, rep := convertOK(t, o)
	benchAgainst(t, out, refDir)
	return out, rep
}

func TestSeedExamples(t *testing.T) {
	for _, c := range []struct {
		name    string
		level   int
		kernels int
	}{
		{"mynet", 2, 1}, {"mynet_myop", 2, 1}, {"mynet", 0, 0}, {"mynet_myop", 0, 0}, {"mynet_myop", 1, 1},
	} {
		t.Run(fmt.Sprintf("%s_O%d", c.name, c.level), func(t *testing.T) {
			dir := testdataModel(t, c.name)
			_, r := convertFused(t, filepath.Join(dir, "model.onnx"), dir, c.level, "")
			if len(r.Kernels) != c.kernels {
				t.Fatalf("%d kernels, want %d: %+v", len(r.Kernels), c.kernels, r.Kernels)
			}
			for _, k := range r.Kernels {
				if k.BinaryBytes == 0 || k.BinarySHA256 == "" || len(k.Info) == 0 || len(k.SourceNodes) == 0 {
					t.Errorf("kernel %s lacks binary, info or provenance: %+v", k.Name, k)
				}
			}
		})
	}
}

// TestFusedCorpusModels converts every corpus model at opt_level 1-3 and
// runs it against its reference. The transformers must fuse; the CNNs'
// only clusterable op was their GlobalAveragePool (with the squeeze-excite
// Mul before it), which stays one unfused op on CPU, as converter_lite
// leaves AvgPoolFusion out of graph-kernel fusion, summed in onnxruntime's
// MLAS order: they may have no kernel, but must still match.
func TestFusedCorpusModels(t *testing.T) {
	root := filepath.Join(sharedDir(t), "corpus", "models")
	models, _ := filepath.Glob(filepath.Join(root, "*", "model.onnx"))
	mustFuse := map[string]bool{"bert_tiny": true, "gpt_tiny": true}
	for _, m := range models {
		dir := filepath.Dir(m)
		for _, level := range []int{1, 2, 3} {
			t.Run(fmt.Sprintf("%s_O%d", filepath.Base(dir), level), func(t *testing.T) {
				_, r := convertFused(t, m, dir, level, "")
				if len(r.Kernels) == 0 && mustFuse[filepath.Base(dir)] {
					t.Fatal("no fused kernels")
				}
				if len(r.Passes) == 0 {
					t.Error("report lists no passes")
				}
			})
		}
	}
}

func TestFusedTestdataModels(t *testing.T) {
	for _, name := range []string{"mlp", "layernorm_gelu"} {
		dir := testdataModel(t, name)
		_, r := convertFused(t, filepath.Join(dir, "model.onnx"), dir, 2, "")
		if len(r.Kernels) == 0 {
			t.Errorf("%s: no kernels", name)
		}
	}
}

func TestDumpAsText(t *testing.T) {
	dir := testdataModel(t, "layernorm_gelu")
	o := onnxOptions(t, filepath.Join(dir, "model.onnx"))
	o.ConfigFile = writeConfig(t, "[graph_kernel_param]\nopt_level=2\ndump_as_text=true\n")
	o.DumpDir = filepath.Join(t.TempDir(), "dump")
	convertOK(t, o)
	for _, pat := range []string{"*_stage1_cluster_*", "before.dot", "after.dot", "*.info", "*.c"} {
		if m, _ := filepath.Glob(filepath.Join(o.DumpDir, pat)); len(m) == 0 {
			t.Errorf("dump lacks %s", pat)
		}
	}
}

// TestDumpPlan: --dumpDir, dump_as_text and MS_DEV_DUMP_GRAPH_KERNEL_IR
// decide the dumps in one place. The default folder needs exactly "on"; the
// per-pass IR takes any case (the behaviour the converter has always had).
func TestDumpPlan(t *testing.T) {
	for _, c := range []struct {
		dir  string
		text bool
		env  string
		want dumpPlan
	}{
		{"", false, "", dumpPlan{}},
		{"", false, "off", dumpPlan{}},
		{"", true, "", dumpPlan{DefaultDumpDir, true}},
		{"", false, "on", dumpPlan{DefaultDumpDir, true}},
		{"", false, "ON", dumpPlan{"", true}},
		{"d", false, "", dumpPlan{"d", false}},
		{"d", false, "ON", dumpPlan{"d", true}},
		{"d", true, "", dumpPlan{"d", true}},
	} {
		if got := planDumps(c.dir, c.text, c.env); got != c.want {
			t.Errorf("planDumps(%q, %v, %q) = %+v, want %+v", c.dir, c.text, c.env, got, c.want)
		}
	}
}

// TestDumpEnv converts with MS_DEV_DUMP_GRAPH_KERNEL_IR=on and a --dumpDir:
// the per-pass IR is written although the config has no dump_as_text.
func TestDumpEnv(t *testing.T) {
	t.Setenv(DumpEnv, "on")
	dir := testdataModel(t, "mynet")
	o := onnxOptions(t, filepath.Join(dir, "model.onnx"))
	o.ConfigFile = writeConfig(t, "[graph_kernel_param]\nopt_level=2\n")
	o.DumpDir = filepath.Join(t.TempDir(), "dump")
	convertOK(t, o)
	for _, pat := range []string{"*_stage1_cluster_4_graph_kernel_cluster.txt", "before.dot", "after.dot", "*.info"} {
		if m, _ := filepath.Glob(filepath.Join(o.DumpDir, pat)); len(m) == 0 {
			t.Errorf("dump lacks %s", pat)
		}
	}
}

// TestFusedDeterministic converts twice with separate kernel caches (so the
// kernels are compiled twice) and expects identical output bytes.
func TestFusedDeterministic(t *testing.T) {
	dir := testdataModel(t, "layernorm_gelu")
	cfg := writeConfig(t, "[graph_kernel_param]\nopt_level=2\n")
	var outs [][]byte
	for i := 0; i < 2; i++ {
		o := onnxOptions(t, filepath.Join(dir, "model.onnx"))
		o.ConfigFile, o.KernelCacheDir = cfg, t.TempDir()
		out, _ := convertOK(t, o)
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, b)
	}
	if string(outs[0]) != string(outs[1]) {
		t.Fatal("two fused conversions of the same model differ")
	}
}

// TestReconvertFused reads a fused .mindir back (GraphKernel nodes are typed
// from their bodies) and converts and runs it again.
func TestReconvertFused(t *testing.T) {
	dir := testdataModel(t, "mlp")
	out, _ := convertFused(t, filepath.Join(dir, "model.onnx"), dir, 2, "")
	o := DefaultOptions()
	o.FMK, o.ModelFile, o.OutputFile = "MINDIR", out, filepath.Join(t.TempDir(), "again")
	again, _ := convertOK(t, o)
	benchAgainst(t, again, dir)
}
