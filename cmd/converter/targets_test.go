package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gkconv/internal/mindir"
)

// TestDeviceTargets converts the models for GPU and Ascend at
// opt_level 2 and checks that every fused kernel carries its artefact, and
// that benchmark refuses them clearly on this CPU-only machine.
func TestDeviceTargets(t *testing.T) {
	models := []struct{ name, path string }{
		{"mynet", filepath.Join(testdataModel(t, "mynet"), "model.onnx")},
		{"mynet_myop", filepath.Join(testdataModel(t, "mynet_myop"), "model.onnx")},
	}
	if _, err := os.Stat(filepath.Join(repoRoot(t), "..", "shared")); err == nil {
		for _, m := range []string{"bert_tiny", "gpt_tiny", "mobilenet_v2"} {
			models = append(models, struct{ name, path string }{m, filepath.Join(repoRoot(t), "..", "shared", "corpus", "models", m, "model.onnx")})
		}
	} else {
		t.Log("../shared absent: only the testdata models are converted")
	}
	clang := os.Getenv("GKCONV_CLANG")
	if clang == "" {
		clang = "clang"
	}
	_, noClang := exec.LookPath(clang)
	cfg := writeConfig(t, "[graph_kernel_param]\nopt_level=2\n")
	for _, target := range []string{"gpu_oriented", "ascend_oriented", "ascend_oriented:Ascend910A"} {
		for _, m := range models {
			t.Run(target+"/"+m.name, func(t *testing.T) {
				if target == "gpu_oriented" && noClang != nil {
					t.Skipf("%s not found: PTX needs clang (apt-get install clang)", clang)
				}
				out := filepath.Join(t.TempDir(), "m")
				r := runCLI(t, nil, "--fmk=ONNX", "--modelFile="+m.path, "--outputFile="+out, "--configFile="+cfg,
					"--optimize="+target, "--kernelCacheDir="+kernelCache)
				if r.code != 0 {
					t.Fatalf("convert: %s", r.stderr)
				}
				mod, err := mindir.Open(out + ".mindir")
				if err != nil {
					t.Fatal(err)
				}
				defer mod.Close()
				kernels := 0
				for _, n := range mod.Graph.Nodes {
					if n.Op != "GraphKernel" {
						continue
					}
					kernels++
					name := n.Attrs.String("kernel_name", "")
					if target == "gpu_oriented" {
						ptx := n.Attrs["kernel_ptx"].B
						entry := ".entry " + strings.TrimSuffix(name, "_kernel0") + "_kernel0"
						if !bytes.Contains(ptx, []byte(entry)) || !bytes.Contains(ptx, []byte(".target sm_80")) {
							t.Errorf("kernel %s: PTX (%d bytes) lacks %q or .target sm_80", name, len(ptx), entry)
						}
						if n.Attrs.Int("BlockDimX", 0) < 1 || n.Attrs.Int("GridDimX", 0) < 1 {
							t.Errorf("kernel %s: no launch dims", name)
						}
					} else {
						info, src := n.Attrs["kernel_info"].B, n.Attrs["kernel_ascendc"].B
						if !bytes.Contains(info, []byte(`"aicore"`)) || len(src) == 0 {
							t.Errorf("kernel %s: kernel-info (%d bytes) or Ascend C source (%d bytes) missing", name, len(info), len(src))
						}
						if want := fmt.Sprintf("Fused_x%d_y%d", len(n.Inputs), len(n.Outputs)); n.Attrs.String("reg_op_name", "") != want {
							t.Errorf("kernel %s: reg_op_name %q, want %q", name, n.Attrs.String("reg_op_name", ""), want)
						}
					}
				}
				if kernels == 0 {
					t.Fatal("no fused kernels")
				}
				b := runCLI(t, nil, "benchmark", "--modelFile="+out+".mindir")
				if b.code == 0 || !strings.Contains(b.stderr, "no ") || !strings.Contains(b.stderr, "device is available") {
					t.Errorf("benchmark of a %s model: exit %d, stderr %q", target, b.code, b.stderr)
				}
			})
		}
	}
}
