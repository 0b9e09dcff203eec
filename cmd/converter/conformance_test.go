package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestMindIRConformance converts every corpus model in every form the
// converter writes — unfused, opt_level 1-3, gpu_oriented, ascend_oriented,
// --fp16=on, and a re-conversion of its own MindIR — and each written file
// passes `converter check` (runCLI checks every successful conversion). The
// CPU forms are also benchmarked against the models' reference outputs, so
// the files MindSpore would load are the files that compute the right thing.
func TestMindIRConformance(t *testing.T) {
	root := filepath.Join(sharedDir(t), "corpus", "models")
	models, _ := filepath.Glob(filepath.Join(root, "*", "model.onnx"))
	if len(models) == 0 {
		t.Skip("no corpus models")
	}
	cfg := func(level int) string {
		return writeConfig(t, "[graph_kernel_param]\nopt_level="+string(rune('0'+level))+"\n")
	}
	for _, m := range models {
		dir := filepath.Dir(m)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			bench := func(out string, tol ...string) {
				t.Helper()
				args := append([]string{"benchmark", "--modelFile=" + out, "--inDataFile=" + pbList(dir, "input"),
					"--benchmarkDataFile=" + pbList(dir, "output"), "--loopCount=1", "--warmUpLoopCount=0"}, tol...)
				b := runCLI(t, nil, args...)
				if b.code != 0 || !strings.HasSuffix(lastLine(b.stdout), "Success.") {
					t.Errorf("benchmark %s: exit %d\n%s%s", out, b.code, b.stdout, b.stderr)
				}
			}
			convert := func(name string, args ...string) string {
				t.Helper()
				out := filepath.Join(t.TempDir(), name)
				r := runCLI(t, nil, append([]string{"--outputFile=" + out}, args...)...)
				if r.code != 0 {
					t.Fatalf("convert %s %v: exit %d\n%s%s", name, args, r.code, r.stdout, r.stderr)
				}
				return out + ".mindir"
			}
			onnx := []string{"--fmk=ONNX", "--modelFile=" + m}
			tol := []string{"--atol=1e-4", "--rtol=1e-3"}
			o0 := convert("o0", append(onnx, "--optimize=none")...)
			bench(o0, tol...)
			var o2 string
			for level := 1; level <= 3; level++ {
				out := convert("o"+string(rune('0'+level)), append(onnx, "--configFile="+cfg(level))...)
				bench(out, tol...)
				if level == 2 {
					o2 = out
				}
			}
			convert("gpu", append(onnx, "--configFile="+cfg(2), "--optimize=gpu_oriented")...)
			convert("ascend", append(onnx, "--configFile="+cfg(2), "--optimize=ascend_oriented")...)
			fp16 := convert("fp16", append(onnx, "--configFile="+cfg(2), "--fp16=on")...)
			// float16 weights: every element within 5e-2; the mean relative bias over
			// near-zero logits is a few percent.
			bench(fp16, "--atol=5e-2", "--rtol=5e-2", "--accuracyThreshold=10")
			// Our own MindIR read back and written again, unfused and fused.
			re0 := convert("re0", "--fmk=MINDIR", "--modelFile="+o2, "--optimize=none")
			bench(re0, tol...)
			re2 := convert("re2", "--fmk=MINDIR", "--modelFile="+o0, "--configFile="+cfg(2))
			bench(re2, tol...)
		})
	}
}
