package main

import (
	"strings"
	"testing"

	"gkconv/internal/runtime/cpuisa"
)

// TestCPUISALacking: GKCONV_CPU_ISA naming a level this CPU lacks (an
// AVX2-only CPU simulated) fails every command before it runs.
func TestCPUISALacking(t *testing.T) {
	defer cpuisa.Reset()
	restore := cpuisa.SetHostFlags(map[string]bool{"avx": true, "avx2": true, "fma": true})
	defer restore()
	t.Setenv(cpuisa.EnvVar, "avx512")
	if code := run([]string{"version"}); code != 1 {
		t.Fatalf("version with GKCONV_CPU_ISA=avx512 on an AVX2 CPU: exit %d, want 1", code)
	}
	if _, forced := cpuisa.Forced(); forced {
		t.Error("the failed GKCONV_CPU_ISA forced a level")
	}
}

// TestBenchmarkISALine: benchmark says which paths ran, forced or not.
func TestBenchmarkISALine(t *testing.T) {
	model := fusedMLP(t, t.TempDir(), "mlp")
	r := benchMLP(t, nil, model)
	wantSuccess(t, "default", r, "ISA path: level "+cpuisa.Detected().String()+" (CPU best)", "-march=native (rebuilt)")
	if cpuisa.Detected() < cpuisa.AVX2 {
		return
	}
	r = benchMLP(t, []string{cpuisa.EnvVar + "=avx2"}, model)
	wantSuccess(t, "avx2", r, "ISA path: level avx2 (forced by GKCONV_CPU_ISA", "packed GEMM avx2", "OpenBLAS Haswell",
		"-march=x86-64-v3 (rebuilt)")
	r = runCLI(t, []string{cpuisa.EnvVar + "=avx2"}, "version")
	if r.code != 0 || !strings.Contains(r.stdout, "forced avx2 by GKCONV_CPU_ISA") {
		t.Errorf("version with avx2 forced: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
