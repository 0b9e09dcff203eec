package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gkconv/internal/kernels/cpu"
)

// TestBisect: with the test hook breaking the second of mlp's two fused
// kernels, bisect passes the first, names the second with its ops and model
// nodes, exits 1, and its repro shows the mismatch; without the hook it
// finds nothing and exits 0.
func TestBisect(t *testing.T) {
	tmp := t.TempDir()
	dir := testdataModel(t, "mlp")
	cfg := filepath.Join(tmp, "akg.cfg")
	// MatMulActivationFusion off: the Gemm's bias + Relu stay a fused
	// kernel, so the model has two and the broken one is the second.
	if err := os.WriteFile(cfg, []byte("[graph_kernel_param]\nopt_level=2\n[registry]\nfusion_blacklists=MatMulActivationFusion\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "test_data_set_0", "input_0.pb")
	repro := filepath.Join(tmp, "repro")
	env := []string{"GKCONV_KERNEL_CACHE=" + filepath.Join(tmp, "cache")}
	args := []string{"bisect", "--modelFile=" + filepath.Join(dir, "model.onnx"), "--configFile=" + cfg, "--inDataFile=" + in, "--reproDir=" + repro}

	r := runCLI(t, env, args...)
	if r.code != 0 || lastLine(r.stdout) != "BISECT RESULT SUCCESS:0" || !strings.Contains(r.stdout, "No fused kernel diverges (2 checked") {
		t.Fatalf("clean model: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	r = runCLI(t, append(env, cpu.PerturbEnv+"=Fused_ReduceMax"), args...)
	if r.code != 1 || !strings.HasPrefix(lastLine(r.stdout), "BISECT RESULT DIVERGED: Fused_ReduceMax_Sub_Exp_ReduceSum_RealDiv") {
		t.Fatalf("broken kernel: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"First diverging kernel (2 of the run)", "ops: ReduceMax, Sub, Exp, ReduceSum, RealDiv", "from model nodes: ", "output 0: index 0:"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	script, err := os.ReadFile(filepath.Join(repro, "repro.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(script), "converter benchmark --modelFile=kernel.mindir --trustEmbeddedKernels --inDataFile=input_0.pb --benchmarkDataFile=expected_0.pb") {
		t.Errorf("repro.sh:\n%s", script)
	}
	for _, f := range []string{"kernel.c", "body.mindir"} {
		if _, err := os.Stat(filepath.Join(repro, f)); err != nil {
			t.Error(err)
		}
	}
	// The repro's command, run here, shows the mismatch.
	rb := runCLI(t, nil, "benchmark", "--modelFile="+filepath.Join(repro, "kernel.mindir"), "--trustEmbeddedKernels",
		"--inDataFile="+filepath.Join(repro, "input_0.pb"), "--benchmarkDataFile="+filepath.Join(repro, "expected_0.pb"), "--loopCount=1")
	if rb.code != 1 || !strings.Contains(rb.stdout, "accuracy check failed") {
		t.Errorf("the repro does not reproduce: exit %d\n%s%s", rb.code, rb.stdout, rb.stderr)
	}
}
