package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// kernelCache is shared by the fused tests so each kernel compiles once.
var kernelCache = filepath.Join(os.TempDir(), "gkconv-test-kernel-cache")

func writeConfig(t *testing.T, body string) string {
	p := filepath.Join(t.TempDir(), "akg.cfg")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readReport(t *testing.T, path string) report {
	var r report
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// convertFused converts at an opt_level, checks the report and benchmarks
// the result against the reference data.
func convertFused(t *testing.T, model, refDir string, optLevel int, extra string) report {
	t.Helper()
	cfg := writeConfig(t, fmt.Sprintf("[graph_kernel_param]\nopt_level=%d\n%s", optLevel, extra))
	rep := filepath.Join(t.TempDir(), "report.json")
	convertAndBench(t, "ONNX", model, refDir, "--configFile="+cfg, "--reportFile="+rep, "--kernelCacheDir="+kernelCache)
	return readReport(t, rep)
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
			r := convertFused(t, filepath.Join(dir, "model.onnx"), dir, c.level, "")
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

func TestFusedCorpusModels(t *testing.T) {
	root := filepath.Join(sharedDir(t), "corpus", "models")
	models, _ := filepath.Glob(filepath.Join(root, "*", "model.onnx"))
	for _, m := range models {
		dir := filepath.Dir(m)
		for _, level := range []int{1, 2, 3} {
			t.Run(fmt.Sprintf("%s_O%d", filepath.Base(dir), level), func(t *testing.T) {
				r := convertFused(t, m, dir, level, "")
				if len(r.Kernels) == 0 {
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
		r := convertFused(t, filepath.Join(dir, "model.onnx"), dir, 2, "")
		if len(r.Kernels) == 0 {
			t.Errorf("%s: no kernels", name)
		}
	}
}

func TestDumpAsText(t *testing.T) {
	dir := testdataModel(t, "layernorm_gelu")
	dump := filepath.Join(t.TempDir(), "dump")
	cfg := writeConfig(t, "[graph_kernel_param]\nopt_level=2\ndump_as_text=true\n")
	out := filepath.Join(t.TempDir(), "m")
	r := runCLI(t, nil, "--fmk=ONNX", "--modelFile="+filepath.Join(dir, "model.onnx"), "--outputFile="+out,
		"--configFile="+cfg, "--dumpDir="+dump, "--kernelCacheDir="+kernelCache)
	if r.code != 0 {
		t.Fatal(r.stderr)
	}
	for _, pat := range []string{"*_stage1_cluster_*", "before.dot", "after.dot", "*.info", "*.c"} {
		if m, _ := filepath.Glob(filepath.Join(dump, pat)); len(m) == 0 {
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
		out := filepath.Join(t.TempDir(), "m")
		r := runCLI(t, nil, "--fmk=ONNX", "--modelFile="+filepath.Join(dir, "model.onnx"), "--outputFile="+out,
			"--configFile="+cfg, "--kernelCacheDir="+t.TempDir())
		if r.code != 0 {
			t.Fatal(r.stderr)
		}
		b, err := os.ReadFile(out + ".mindir")
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
	cfg := writeConfig(t, "[graph_kernel_param]\nopt_level=2\n")
	out := convertAndBench(t, "ONNX", filepath.Join(dir, "model.onnx"), dir, "--configFile="+cfg, "--kernelCacheDir="+kernelCache)
	convertAndBench(t, "MINDIR", out, dir)
}
