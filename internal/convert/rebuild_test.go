package convert

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/mindir"
	"gkconv/internal/runtime"
)

// selfBuilt is the kernel policy of tests that run models they converted
// themselves: the embedded kernels are the ones under test.
var selfBuilt = runtime.KernelPolicy{TrustEmbedded: true}

// TestRebuildKernelsMatchEmbedded: on the host that converted the model with
// default flags, the kernels rebuilt from the fused bodies are byte for byte
// the embedded ones (same source, compiler and flags: default benchmark
// speed is the embedded kernels' speed), and a second rebuild runs no
// compiler at all (all kernel-cache hits).
func TestRebuildKernelsMatchEmbedded(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc")
	}
	cache := t.TempDir()
	o := onnxOptions(t, filepath.Join(testdataModel(t, "mlp"), "model.onnx"))
	o.ConfigFile, o.KernelCacheDir = filepath.Join(repoRoot(t), "configs", "akg.cfg"), cache
	// A compiler wrapper that counts its runs.
	runs := filepath.Join(t.TempDir(), "runs")
	cc := filepath.Join(t.TempDir(), "cc.sh")
	if err := os.WriteFile(cc, []byte("#!/bin/sh\necho run >> "+runs+"\nexec "+gcc+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CC", cc)
	out, _ := convertOK(t, o)
	m, err := mindir.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	count := func() int { b, _ := os.ReadFile(runs); return strings.Count(string(b), "run") }
	before := count()
	for round := 0; round < 2; round++ {
		rebuild, err := RebuildKernels(m.Graph, cache)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, node := range m.Graph.Nodes {
			if node.Op != ir.OpGraphKernel {
				continue
			}
			n++
			so, sym, err := rebuild(node)
			if err != nil {
				t.Fatalf("%s: %v", node.Name, err)
			}
			if sym != node.Attrs.String(ir.GKKernelName, "") {
				t.Errorf("%s: symbol %s, model says %s", node.Name, sym, node.Attrs.String(ir.GKKernelName, ""))
			}
			if !bytes.Equal(so, node.Attrs[ir.GKKernelSO].B) {
				t.Errorf("%s: rebuilt object (%d bytes) differs from the embedded one (%d bytes)", node.Name, len(so), len(node.Attrs[ir.GKKernelSO].B))
			}
		}
		if n == 0 {
			t.Fatal("no fused kernels")
		}
	}
	if got := count(); got != before {
		t.Errorf("rebuilding kernels the conversion built ran the compiler %d times, want 0 (cache hits)", got-before)
	}

	// No compiler: every lookup says so, for the runtime's interpreted path.
	t.Setenv("CC", "gkconv-no-such-compiler")
	rebuild, err := RebuildKernels(m.Graph, cache)
	if err == nil || !strings.Contains(err.Error(), "no C compiler") {
		t.Fatalf("no compiler: err = %v", err)
	}
	var warned []string
	s, err := runtime.NewSession(m.Graph, runtime.Options{Threads: 1, KernelPolicy: runtime.KernelPolicy{Rebuild: rebuild, Warn: func(w string) { warned = append(warned, w) }}})
	if err != nil {
		t.Fatal(err)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "1 fused kernel runs interpreted (slower): no C compiler") {
		t.Errorf("warnings = %q", warned)
	}
	for _, k := range s.Kernels() {
		if k.Mode != runtime.KernelInterpreted {
			t.Errorf("%s: %s", k.Node, k.Mode)
		}
	}
}

// TestSignKeyRefusedEarly: an unreadable signing key is an option error,
// before any work, and leaves no output.
func TestSignKeyRefusedEarly(t *testing.T) {
	o := onnxOptions(t, filepath.Join(testdataModel(t, "mlp"), "model.onnx"))
	o.SignKeyFile = filepath.Join(t.TempDir(), "missing-key")
	_, err := Convert(t.Context(), o)
	if err == nil || Code(err) != CodeParamInvalid || !strings.Contains(err.Error(), "--signKey") {
		t.Fatalf("missing key: err = %v", err)
	}
	if _, serr := os.Stat(o.OutputFile + ".mindir"); serr == nil {
		t.Error("output written despite the bad key")
	}
}
