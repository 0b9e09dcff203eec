package convert

import (
	"path/filepath"
	"strings"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/kernels/cpu"
	"gkconv/internal/mindir"
	"gkconv/internal/onnx"
	"gkconv/internal/onnx/onnxbuild"
)

// TestKernelSelfCheck: a kernel the test hook breaks (its first output
// element off by one) is caught by the self-check and un-fused, the report
// says which and why, and the model still computes the reference; a warm
// cache runs no check; with the check off the broken kernel stays (so it is
// the check that catches it).
func TestKernelSelfCheck(t *testing.T) {
	dir := testdataModel(t, "layernorm_gelu")
	model := filepath.Join(dir, "model.onnx")
	x, _, err := onnx.ReadTensorFile(filepath.Join(dir, "test_data_set_0", "input_0.pb"))
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := onnx.ReadTensorFile(filepath.Join(dir, "test_data_set_0", "output_0.pb"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, "[graph_kernel_param]\nopt_level=2\n")
	cache := t.TempDir()
	convertWith := func(opt func(*Options)) (string, *Report) {
		o := onnxOptions(t, model)
		o.ConfigFile, o.KernelCacheDir = cfg, cache
		if opt != nil {
			opt(&o)
		}
		return convertOK(t, o)
	}
	kernelsIn := func(path string) int {
		n := 0
		for _, o := range modelNodes(t, path) {
			if o.Op == ir.OpGraphKernel {
				n++
			}
		}
		return n
	}
	matches := func(path string) bool {
		got := runMindIR(t, path, []*ir.Tensor{x})
		return compareOutputs(got[0], want) == ""
	}

	// A clean kernel passes, and is remembered.
	path, rep := convertWith(nil)
	sc := rep.KernelBuild.SelfCheck
	if sc == nil || sc.Ran != 1 || len(sc.Unfused) != 0 || kernelsIn(path) != 1 {
		t.Fatalf("clean kernel: self-check %+v, %d kernels", sc, kernelsIn(path))
	}
	if _, rep = convertWith(nil); rep.KernelBuild.SelfCheck.Ran != 0 {
		t.Errorf("warm cache: %d kernels run again", rep.KernelBuild.SelfCheck.Ran)
	}

	t.Setenv(cpu.PerturbEnv, "Fused_")
	path, rep = convertWith(nil)
	sc = rep.KernelBuild.SelfCheck
	if sc == nil || len(sc.Unfused) != 1 || !strings.Contains(sc.Unfused[0], "output 0 differs from its body") {
		t.Fatalf("broken kernel not caught: %+v", sc)
	}
	if kernelsIn(path) != 0 {
		t.Errorf("the broken kernel is still in the model")
	}
	if !matches(path) {
		t.Errorf("un-fused model does not compute the reference")
	}
	warned := false
	for _, w := range rep.Warnings {
		warned = warned || strings.HasPrefix(w, "kernel self-check: un-fused")
	}
	if !warned {
		t.Errorf("no warning names the un-fused kernel: %v", rep.Warnings)
	}
	// Issue 32 S3: the object that failed is evicted from the cache (only
	// the clean kernel's object is left), so no later build reuses it.
	if objs, _ := filepath.Glob(filepath.Join(cache, "??", "*.so")); len(objs) != 1 {
		t.Errorf("cache holds %d objects after the broken one was caught, want the clean one only: %v", len(objs), objs)
	}

	path, rep = convertWith(func(o *Options) { o.NoKernelSelfCheck = true })
	if rep.KernelBuild.SelfCheck != nil || kernelsIn(path) != 1 || matches(path) {
		t.Errorf("with the check off the broken kernel should stay (and be wrong): self-check %+v, %d kernels", rep.KernelBuild.SelfCheck, kernelsIn(path))
	}
}

// modelNodes reads a written model's top-level nodes.
func modelNodes(t *testing.T, path string) []*ir.Node {
	t.Helper()
	m, err := mindir.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	return m.Graph.Nodes
}

// Issue 32 (minor): kernels sharing one object share its verdict, and the
// report lists every un-fused kernel node (it listed one when seven were
// un-fused).
func TestSelfCheckReportsEveryUnfusedKernel(t *testing.T) {
	b := onnxbuild.New("twins", 13)
	b.Input("x", onnxbuild.Float, 4, 8)
	b.Input("z", onnxbuild.Float, 4, 8)
	b.Init(onnxbuild.Scalar("two", 2), onnxbuild.Scalar("one", 1))
	for _, v := range []string{"x", "z"} {
		b.Node("mul_"+v, "Mul", []string{v, "two"}, []string{"m_" + v})
		b.Node("add_"+v, "Add", []string{"m_" + v, "one"}, []string{"e_" + v})
		b.Node("exp_"+v, "Exp", []string{"e_" + v}, []string{"y_" + v})
		b.Output("y_"+v, onnxbuild.Float, 4, 8)
	}
	model := filepath.Join(t.TempDir(), "twins.onnx")
	if err := b.WriteFile(model); err != nil {
		t.Fatal(err)
	}
	t.Setenv(cpu.PerturbEnv, "Fused_")
	o := onnxOptions(t, model)
	o.ConfigFile, o.KernelCacheDir = writeConfig(t, "[graph_kernel_param]\nopt_level=2\n"), t.TempDir()
	_, rep := convertOK(t, o)
	sc := rep.KernelBuild.SelfCheck
	if sc == nil || sc.Ran != 1 || len(sc.Unfused) != 2 {
		t.Fatalf("self-check %+v: want one object run and both kernels listed as un-fused", sc)
	}
}
