package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// Issue 32 (minor): a value from MS_DEV_GRAPH_KERNEL_FLAGS is warned about
// under that name, not as if it came from the config file; one from the
// file names its line.
func TestFlagsEnvNamedAsSource(t *testing.T) {
	tmp := t.TempDir()
	model := filepath.Join(tmp, "relu.onnx")
	if err := dynamicRelu().WriteFile(model); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, "[graph_kernel_param]\nopt_level=2\ndisable_pass=no.such_pass\n")
	r := runCLI(t, []string{"MS_DEV_GRAPH_KERNEL_FLAGS=--enable_expand_ops=NoSuchExpander"},
		"--fmk=ONNX", "--modelFile="+model, "--outputFile="+filepath.Join(tmp, "out"), "--configFile="+cfg, "--kernelCacheDir="+kernelCache)
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
	}
	for _, want := range []string{
		"MS_DEV_GRAPH_KERNEL_FLAGS: enable_expand_ops=NoSuchExpander: no expander is called",
		cfg + ":3: disable_pass=no.such_pass: no pass is called",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, cfg+": enable_expand_ops") {
		t.Errorf("the environment's value is blamed on the config file:\n%s", r.stderr)
	}
}
