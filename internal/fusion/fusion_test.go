package fusion

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/testkit"
)

// myNet is the MindSpore tutorial's MyNet: x*2+1.
func myNet(t *testing.T) *ir.Graph {
	b := testkit.New(t, "test")
	x := b.Input("x", 4, 4)
	a := b.Node("mul", "Mul", nil, x, b.Scalar(2))
	return b.Output(b.Node("add", "Add", nil, a, b.Scalar(1)))
}

// myOp is the tutorial's custom op: ((x*2)^3 - y) * (x*2)^3.
func myOp(t *testing.T) *ir.Graph {
	b := testkit.New(t, "test")
	x, y := b.Input("x", 4, 4), b.Input("y", 4, 4)
	a := b.Node("mul", "Mul", nil, x, b.Scalar(2))
	p := b.Node("pow", "Pow", nil, a, b.Scalar(3))
	s := b.Node("sub", "Sub", nil, p, y)
	return b.Output(b.Node("mul2", "Mul", nil, s, p))
}

func TestMyNetOneKernel(t *testing.T) {
	g := myNet(t)
	res := checkEquivalent(t, g, "--opt_level=2", cpuBE, 0)
	if got := topOps(g); !slices.Equal(got, []string{ir.OpGraphKernel}) {
		t.Fatalf("top-level ops %v, want one GraphKernel\n%s", got, dumpText(g))
	}
	if len(res.Kernels) != 1 || strings.Join(res.Kernels[0].Ops, ",") != "Mul,Add" {
		t.Fatalf("kernels %+v", res.Kernels)
	}
	k := res.Kernels[0]
	if !slices.Equal(k.SourceNodes, []string{"mul", "add"}) {
		t.Errorf("provenance %v", k.SourceNodes)
	}
	if !regexp.MustCompile(`^Fused_Mul_Add_[0-9]+$`).MatchString(k.KernelName) {
		t.Errorf("kernel name %q", k.KernelName)
	}
	if k.Node != k.KernelName {
		t.Errorf("node %q not renamed to its kernel name %q", k.Node, k.KernelName)
	}
	// Same structure, same name: the hash is stable.
	g2 := myNet(t)
	res2 := run(t, g2, "--opt_level=2", cpuBE)
	if res2.Kernels[0].KernelName != k.KernelName {
		t.Errorf("kernel names differ across runs: %s vs %s", res2.Kernels[0].KernelName, k.KernelName)
	}
}

func TestMyOpOneKernel(t *testing.T) {
	g := myOp(t)
	res := checkEquivalent(t, g, "--opt_level=2", cpuBE, 1e-6)
	if len(res.Kernels) != 1 || len(g.Nodes) != 1 {
		t.Fatalf("want exactly one kernel, got %v\n%s", kernelOps(g), dumpText(g))
	}
	if got := strings.Join(res.Kernels[0].Ops, ","); got != "Mul,Pow,Sub,Mul" {
		t.Errorf("kernel ops %s", got)
	}
	if k := g.Nodes[0]; len(k.Inputs) != 2 {
		t.Errorf("kernel inputs %v, want x and y (scalars inside)", k.Inputs)
	}
}

func TestOptLevelZeroNoKernel(t *testing.T) {
	for _, flags := range []string{"", "--opt_level=0"} {
		g := myNet(t)
		res := run(t, g, flags, cpuBE)
		if len(res.Kernels) != 0 || !slices.Equal(topOps(g), []string{"Mul", "Add"}) {
			t.Fatalf("%q: graph changed: %v", flags, topOps(g))
		}
		for _, p := range res.Passes {
			if p.Ran {
				t.Errorf("%q: pass %s.%s ran", flags, p.Stage, p.Name)
			}
		}
	}
}

func TestOptLevelOneSkipsLevelTwoPasses(t *testing.T) {
	g := myNet(t)
	res := run(t, g, "--opt_level=1", cpuBE)
	if len(res.Kernels) != 1 {
		t.Fatalf("opt_level 1 still clusters: %v", kernelOps(g))
	}
	for _, p := range res.Passes {
		if p.Name == "arithmetic_simplify" && (p.Ran || !strings.Contains(p.Note, "opt_level >= 2")) {
			t.Errorf("arithmetic_simplify at opt_level 1: %+v", p)
		}
	}
}

func layerNormGraph(t *testing.T) *ir.Graph {
	b := testkit.New(t, "test")
	x := b.Input("x", 2, 3, 8)
	y := b.Node("ln", "LayerNorm", ir.Attrs{"axis": ir.IntAttr(-1), "epsilon": ir.FloatAttr(1e-5)}, x, b.Weights(8), b.Weights(8))
	return b.Output(y)
}

func softmaxGraph(t *testing.T) *ir.Graph {
	b := testkit.New(t, "test")
	x := b.Input("x", 4, 16)
	return b.Output(b.Node("sm", "Softmax", ir.Attrs{"axis": ir.IntAttr(-1)}, x))
}

func hasReduce(ops []string) bool {
	return slices.ContainsFunc(ops, func(s string) bool { return strings.HasPrefix(s, "Reduce") })
}

func TestLayerNormAndSoftmaxOneReduceKernel(t *testing.T) {
	for name, mk := range map[string]func(*testing.T) *ir.Graph{"LayerNorm": layerNormGraph, "Softmax": softmaxGraph} {
		t.Run(name, func(t *testing.T) {
			g := mk(t)
			res := checkEquivalent(t, g, "--opt_level=2", cpuBE, 1e-5)
			if len(g.Nodes) != 1 || len(res.Kernels) != 1 || !hasReduce(res.Kernels[0].Ops) {
				t.Fatalf("want one reduce-fused kernel, got %v\n%s", kernelOps(g), dumpText(g))
			}
			if res.Kernels[0].Pattern != "REDUCE" {
				t.Errorf("pattern %s", res.Kernels[0].Pattern)
			}
			// MindSpore's split patterns alone cut the expansion at its reductions.
			g2 := mk(t)
			run(t, g2, "--opt_level=2 --disable_fusion_pattern=expanded_op", cpuBE)
			if len(kernels(g2)) < 2 {
				t.Errorf("without expanded_op: %v", kernelOps(g2))
			}
		})
	}
}

func TestLayerNormExtraOutputs(t *testing.T) {
	b := testkit.New(t, "test")
	x := b.Input("x", 3, 10)
	outs := b.NodeN("ln", "LayerNorm", 3, ir.Attrs{"axis": ir.IntAttr(1)}, x, b.Weights(10), b.Weights(10))
	g := b.Output(outs...)
	checkEquivalent(t, g, "--opt_level=2", cpuBE, 1e-5)
	if len(kernels(g)) != 1 || len(kernels(g)[0].Outputs) != 3 {
		t.Fatalf("%s", dumpText(g))
	}
}

func TestEnableDisablePass(t *testing.T) {
	for _, f := range []string{"--disable_pass=cluster.graph_kernel_cluster", "--disable_pass=1.4"} {
		g := myNet(t)
		res := run(t, g, "--opt_level=2 "+f, cpuBE)
		if len(kernels(g)) != 0 {
			t.Errorf("%s: kernels %v", f, kernelOps(g))
		}
		for _, p := range res.Passes {
			if p.Name == "graph_kernel_cluster" && p.Ran {
				t.Errorf("%s: cluster ran", f)
			}
		}
	}
	// add(x*2, 0): arithmetic_simplify (L2) removes the Add only when it runs.
	mk := func() *ir.Graph {
		b := testkit.New(t, "test")
		m := b.Node("mul", "Mul", nil, b.Input("x", 4, 4), b.Scalar(2))
		return b.Output(b.Node("add", "Add", nil, m, b.Scalar(0)))
	}
	g := mk()
	run(t, g, "--opt_level=1", cpuBE)
	if !slices.Equal(kernelOps(g), []string{"Mul,Add"}) {
		t.Errorf("opt_level 1: %v", kernelOps(g))
	}
	for _, f := range []string{"--enable_pass=highlevelopt1.arithmetic_simplify", "--enable_pass=2.0"} {
		g := mk()
		res := checkEquivalent(t, g, "--opt_level=1 "+f, cpuBE, 0)
		if slices.Contains(topOps(g), "Add") || strings.Contains(strings.Join(kernelOps(g), ","), "Add") {
			t.Errorf("%s: Add(x,0) kept: %v %v", f, topOps(g), kernelOps(g))
		}
		if !slices.ContainsFunc(res.Passes, func(p PassRecord) bool { return p.Name == "arithmetic_simplify" && p.Ran && p.Changed }) {
			t.Errorf("%s: pass record %v", f, res)
		}
	}
}

type fakeBuilder struct{ got []string }

func (f *fakeBuilder) BuildKernels(nodes []*ir.Node) error {
	for _, n := range nodes {
		f.got = append(f.got, n.Attrs.String(ir.GKKernelName, ""))
		n.Attrs["compiled"] = ir.IntAttr(1)
	}
	return nil
}

func TestKernelBuilderAndDump(t *testing.T) {
	g := myOp(t)
	dir := t.TempDir()
	fb := &fakeBuilder{}
	_, err := Run(g, flagsFor(t, "--opt_level=2 --dump_as_text", cpuBE), cpuBE, fb, Options{DumpDir: dir, DumpIR: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(fb.got) != 1 || !strings.HasPrefix(fb.got[0], "Fused_Mul_Pow_Sub_Mul_") || g.Nodes[0].Attrs.Int("compiled", 0) != 1 {
		t.Errorf("builder saw %v", fb.got)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	for _, want := range []string{"0001_stage0_preprocess_0_empty_pass.txt", "before.dot", "after.dot"} {
		if !slices.Contains(names, want) {
			t.Errorf("dump has no %s: %v", want, names)
		}
	}
	if !slices.ContainsFunc(names, func(s string) bool { return strings.HasSuffix(s, "_stage3_split_2_graph_kernel_splitter.txt") }) {
		t.Errorf("no splitter dump: %v", names)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "after.dot"))
	if !strings.Contains(string(after), "subgraph cluster_") || !strings.Contains(string(after), "Mul → Pow → Sub → Mul") {
		t.Errorf("after.dot:\n%s", after)
	}
	// Without a builder the build stage reports it.
	g = myOp(t)
	res := run(t, g, "--opt_level=2", cpuBE)
	i := slices.IndexFunc(res.Passes, func(p PassRecord) bool { return p.Name == "akg_kernel_builder" })
	if !strings.Contains(res.Passes[i].Note, "no kernel builder") {
		t.Errorf("build note %q", res.Passes[i].Note)
	}
}

// TestDumpIR: DumpIR alone (the converter sets it for
// MS_DEV_DUMP_GRAPH_KERNEL_IR=on, internal/convert's TestDumpPlan) writes the
// per-pass IR.
func TestDumpIR(t *testing.T) {
	dir := t.TempDir()
	g := myNet(t)
	if _, err := Run(g, flagsFor(t, "--opt_level=2", cpuBE), cpuBE, nil, Options{DumpDir: dir, DumpIR: true}); err != nil {
		t.Fatal(err)
	}
	dumps, _ := filepath.Glob(filepath.Join(dir, "*_stage1_cluster_4_graph_kernel_cluster.txt"))
	if len(dumps) != 1 {
		entries, _ := os.ReadDir(dir)
		t.Fatalf("want one cluster dump, got %v (dir has %d files)", dumps, len(entries))
	}
	data, err := os.ReadFile(dumps[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "GraphKernel(") {
		t.Errorf("cluster dump:\n%s", data)
	}
}
