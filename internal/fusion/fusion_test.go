package fusion

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gkconv/internal/akgcfg"
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

func softmaxAndLayerNorm(t *testing.T) *ir.Graph {
	b := testkit.New(t, "test")
	x := b.Input("x", 2, 8)
	s := b.Node("sm", "Softmax", ir.Attrs{"axis": ir.IntAttr(-1)}, x)
	m := b.Node("mm", "MatMul", nil, s, b.Weights(8, 8)) // not clusterable on CPU: keeps the two apart
	y := b.Node("ln", "LayerNorm", ir.Attrs{"axis": ir.IntAttr(-1)}, m, b.Weights(8), b.Weights(8))
	return b.Output(y)
}

func TestExpandFlags(t *testing.T) {
	cases := []struct {
		flags string
		want  []string // remaining top-level ops
	}{
		{"--opt_level=2", []string{ir.OpGraphKernel, "MatMul", ir.OpGraphKernel}},
		{"--opt_level=2 --disable_expand_ops=Softmax", []string{"Softmax", "MatMul", ir.OpGraphKernel}},
		{"--opt_level=2 --enable_expand_ops_only=Softmax", []string{ir.OpGraphKernel, "MatMul", "LayerNorm"}},
		{"--opt_level=2 --fusion_ops_level=0", []string{"Softmax", "MatMul", "LayerNorm"}},
	}
	for _, c := range cases {
		g := softmaxAndLayerNorm(t)
		run(t, g, c.flags, cpuBE)
		if got := topOps(g); !slices.Equal(got, c.want) {
			t.Errorf("%s: ops %v, want %v", c.flags, got, c.want)
		}
	}
	// enable_expand_ops adds an op outside the default table.
	mk := func() *ir.Graph {
		b := testkit.New(t, "test")
		return b.Output(b.Node("mish", "Mish", nil, b.Input("x", 4, 4)))
	}
	g := mk()
	run(t, g, "--opt_level=2", cpuBE)
	if !slices.Equal(topOps(g), []string{"Mish"}) {
		t.Errorf("Mish expanded by default: %v", topOps(g))
	}
	g = mk()
	checkEquivalent(t, g, "--opt_level=2 --enable_expand_ops=Mish", cpuBE, 1e-5)
	if !slices.Equal(topOps(g), []string{ir.OpGraphKernel}) {
		t.Errorf("enable_expand_ops=Mish: %v", topOps(g))
	}
}

func TestClusterFlags(t *testing.T) {
	g := myNet(t)
	run(t, g, "--opt_level=2 --disable_cluster_ops=Add", cpuBE)
	if !slices.Equal(topOps(g), []string{"Mul", "Add"}) {
		t.Errorf("disable_cluster_ops=Add: %v", topOps(g))
	}

	chain := func() *ir.Graph {
		b := testkit.New(t, "test")
		x := b.Input("x", 4, 4)
		e := b.Node("erf", "Erf", nil, x)
		m := b.Node("m1", "Mul", nil, e, b.Scalar(2))
		return b.Output(b.Node("a1", "Add", nil, m, b.Scalar(1)))
	}
	// Erf is clustered whole on CPU (the kernel computes onnxruntime's erf);
	// disable_cluster_ops=Erf leaves it out.
	const noErfExpand = "--opt_level=2 --disable_expand_ops=Erf"
	g = chain()
	checkEquivalent(t, g, noErfExpand, cpuBE, 0)
	if !slices.Equal(kernelOps(g), []string{"Erf,Mul,Add"}) {
		t.Errorf("default: %v", kernelOps(g))
	}
	g = chain()
	run(t, g, noErfExpand+" --disable_cluster_ops=Erf", cpuBE)
	if !slices.Equal(topOps(g), []string{"Erf", ir.OpGraphKernel}) {
		t.Errorf("disable_cluster_ops=Erf: %v", topOps(g))
	}
	g = chain()
	run(t, g, noErfExpand+" --enable_cluster_ops_only=Erf,Mul", cpuBE)
	if !slices.Equal(kernelOps(g), []string{"Erf,Mul"}) || !slices.Equal(topOps(g), []string{ir.OpGraphKernel, "Add"}) {
		t.Errorf("enable_cluster_ops_only=Erf,Mul: %v %v", topOps(g), kernelOps(g))
	}
}

func TestFusionPatternFlags(t *testing.T) {
	cases := []struct {
		flags   string
		kernels int
	}{
		{"--opt_level=2", 1},
		{"--opt_level=2 --disable_fusion_pattern=elemwise_fwd", 1}, // elemwise_broadcast_* still fuse
		{"--opt_level=2 --disable_fusion_pattern=elemwise", 0},     // substring: every elemwise pattern
		{"--opt_level=2 --enable_fusion_pattern_only=reduce_fwd", 0},
		{"--opt_level=2 --enable_fusion_pattern_only=elemwise_broadcast_bwd_depth", 1},
	}
	for _, c := range cases {
		g := myNet(t)
		run(t, g, c.flags, cpuBE)
		if n := len(kernels(g)); n != c.kernels {
			t.Errorf("%s: %d kernels, want %d: %v", c.flags, n, c.kernels, topOps(g))
		}
	}
}

// reduceChain: five elementwise ops (also a graph output) feeding a ReduceSum.
func reduceChain(t *testing.T) *ir.Graph {
	b := testkit.New(t, "test")
	x := b.Input("x", 4, 8)
	v := x
	for i, op := range []string{"Exp", "Neg", "Abs", "Sqrt", "Exp"} {
		v = b.Node("e"+string(rune('0'+i)), op, nil, v)
	}
	r := b.Node("sum", "ReduceSum", ir.Attrs{"keepdims": ir.IntAttr(0)}, v, b.Ints(1))
	return b.Output(r, v)
}

func TestReduceFuseDepth(t *testing.T) {
	g := reduceChain(t)
	checkEquivalent(t, g, "--opt_level=2", cpuBE, 1e-6)
	if ops := kernelOps(g); len(ops) != 1 || ops[0] != "Exp,Neg,Abs,Sqrt,Exp,ReduceSum" {
		t.Errorf("default depth: %v", ops)
	}
	g = reduceChain(t)
	run(t, g, "--opt_level=2 --reduce_fuse_depth=3", cpuBE)
	if ops := kernelOps(g); len(ops) != 1 || ops[0] != "Exp,Neg,Abs,Sqrt,Exp" || !slices.Contains(topOps(g), "ReduceSum") {
		t.Errorf("reduce_fuse_depth=3: %v %v", topOps(g), ops)
	}
}

func TestCompositeOpLimitSize(t *testing.T) {
	mk := func() *ir.Graph {
		b := testkit.New(t, "test")
		v := b.Input("x", 4, 4)
		for i := 0; i < 6; i++ {
			op := "Mul"
			if i%2 == 1 {
				op = "Add"
			}
			v = b.Node("n"+string(rune('0'+i)), op, nil, v, b.Scalar(float32(i+1)))
		}
		return b.Output(v)
	}
	g := mk()
	run(t, g, "--opt_level=2", cpuBE)
	if len(kernels(g)) != 1 {
		t.Fatalf("default: %v", kernelOps(g))
	}
	g = mk()
	checkEquivalent(t, g, "--opt_level=2 --composite_op_limit_size=3", cpuBE, 0)
	ks := kernels(g)
	if len(ks) < 2 {
		t.Fatalf("limit 3: %v", kernelOps(g))
	}
	for _, k := range ks {
		if len(k.Body.Nodes) > 3 {
			t.Errorf("kernel of %d ops over the limit", len(k.Body.Nodes))
		}
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

func simplifyGraph(t *testing.T) *ir.Graph {
	b := testkit.New(t, "test")
	x := b.Input("x", 4, 4)
	m := b.Node("mul", "Mul", nil, x, b.Scalar(2))
	a := b.Node("add0", "Add", nil, m, b.Scalar(0))
	n1 := b.Node("neg1", "Neg", nil, a)
	n2 := b.Node("neg2", "Neg", nil, n1)
	return b.Output(b.Node("mul3", "Mul", nil, n2, b.Scalar(3)))
}

func TestSimplifyExprFlags(t *testing.T) {
	cases := []struct{ flags, want string }{
		{"--opt_level=2", "Mul,Mul"},
		{"--opt_level=2 --disable_simplify_exprs=1", "Mul,Add,Mul"},
		{"--opt_level=2 --enable_simplify_exprs_only=24", "Mul,Add,Mul"},
		{"--opt_level=2 --enable_simplify_exprs_only=1", "Mul,Neg,Neg,Mul"},
		// Mul(Mul(x,2),3) = Mul(x,6): a lone basic op is inlined, no kernel.
		{"--opt_level=2 --exact_precision_mode=false", ""},
	}
	for _, c := range cases {
		g := simplifyGraph(t)
		checkEquivalent(t, g, c.flags, cpuBE, 1e-6)
		if got := strings.Join(kernelOps(g), "|"); got != c.want {
			t.Errorf("%s: kernel %s, want %s", c.flags, got, c.want)
		}
		if c.want == "" && !slices.Equal(topOps(g), []string{"Mul"}) {
			t.Errorf("%s: ops %v", c.flags, topOps(g))
		}
	}
}

func TestExactPrecisionKeepsInexactRules(t *testing.T) {
	// x / sqrt(y): rule 48 rewrites to x * rsqrt(y) only when inexact is allowed.
	mk := func() *ir.Graph {
		b := testkit.New(t, "test")
		x, y := b.Input("x", 4, 4), b.Input("y", 4, 4)
		s := b.Node("sqrt", "Sqrt", nil, b.Node("abs", "Abs", nil, y))
		return b.Output(b.Node("div", "RealDiv", nil, x, s))
	}
	g := mk()
	run(t, g, "--opt_level=2", cpuBE)
	if got := strings.Join(kernelOps(g), "|"); got != "Abs,Sqrt,RealDiv" {
		t.Errorf("exact mode: %s", got)
	}
	g = mk()
	checkEquivalent(t, g, "--opt_level=2 --exact_precision_mode=false", cpuBE, 1e-5)
	if got := strings.Join(kernelOps(g), "|"); got != "Abs,Rsqrt,Mul" {
		t.Errorf("inexact mode: %s", got)
	}
}

// A diamond where fusing Exp with Add would enclose the MatMul in a cycle.
func TestNoCycleDiamond(t *testing.T) {
	b := testkit.New(t, "test")
	x := b.Input("x", 4, 4)
	e := b.Node("exp", "Exp", nil, x)
	m := b.Node("mm", "MatMul", nil, e, b.Weights(4, 4))
	a := b.Node("add", "Add", nil, e, m)
	g := b.Output(b.Node("log", "Log", nil, b.Node("abs", "Abs", nil, a)))
	checkEquivalent(t, g, "--opt_level=2", cpuBE, 1e-5)
	if err := g.TopoSort(); err != nil {
		t.Fatal(err)
	}
	for _, k := range kernels(g) {
		var ops []string
		for _, n := range k.Body.Nodes {
			ops = append(ops, n.Op)
		}
		if slices.Contains(ops, "Exp") && slices.Contains(ops, "Add") {
			t.Fatalf("kernel %v spans the MatMul: cycle", ops)
		}
	}
	if got := strings.Join(kernelOps(g), "|"); got != "Add,Abs,Log" {
		t.Errorf("kernels %s", got)
	}
}

func TestCSEInsideKernel(t *testing.T) {
	b := testkit.New(t, "test")
	x := b.Input("x", 4, 4)
	a := b.Node("m1", "Mul", nil, b.Node("e1", "Exp", nil, x), b.Scalar(2))
	c := b.Node("m2", "Mul", nil, b.Node("e2", "Exp", nil, x), b.Scalar(2))
	g := b.Output(b.Node("add", "Add", nil, a, c))
	checkEquivalent(t, g, "--opt_level=2", cpuBE, 0)
	if got := strings.Join(kernelOps(g), "|"); got != "Exp,Mul,Add" {
		t.Errorf("kernel %s", got)
	}
}

func TestOptLevel3Backends(t *testing.T) {
	mk := func() *ir.Graph {
		b := testkit.New(t, "test")
		x := b.Input("x", 4, 4)
		y1 := b.Node("a1", "Add", nil, b.Node("m1", "Mul", nil, x, b.Scalar(2)), b.Scalar(1))
		y2 := b.Node("a2", "Sub", nil, b.Node("m2", "Mul", nil, x, b.Scalar(3)), b.Scalar(1))
		return b.Output(y1, y2)
	}
	g := mk()
	res := run(t, g, "--opt_level=3", cpuBE)
	for _, name := range []string{"reduce_stitch", "parallel_fusion"} {
		i := slices.IndexFunc(res.Passes, func(p PassRecord) bool { return p.Name == name })
		if i < 0 || res.Passes[i].Ran || res.Passes[i].Note != "not applicable on CPU" {
			t.Errorf("%s on CPU: %+v", name, res.Passes[i])
		}
	}
	gpu := akgcfg.Backend{Device: akgcfg.GPU}
	g = mk()
	res = run(t, g, "--opt_level=3", gpu)
	ks := kernels(g)
	if len(ks) != 2 {
		t.Fatalf("GPU kernels %v", kernelOps(g))
	}
	g0, g1 := ks[0].Attrs.String(ir.GKParallelGroup, ""), ks[1].Attrs.String(ir.GKParallelGroup, "")
	if g0 == "" || g0 != g1 {
		t.Errorf("parallel groups %q %q\n%s", g0, g1, res)
	}
}

func TestStitchOnGPU(t *testing.T) {
	b := testkit.New(t, "test")
	x := b.Input("x", 64, 256)
	sum := b.Node("sum", "ReduceSum", ir.Attrs{"keepdims": ir.IntAttr(1)}, b.Node("e", "Exp", nil, x), b.Ints(1))
	y := b.Node("div", "RealDiv", nil, b.Node("abs", "Abs", nil, x), sum)
	g := b.Output(y)
	gpu := akgcfg.Backend{Device: akgcfg.GPU}
	checkEquivalent(t, g, "--opt_level=3", gpu, 1e-5)
	ks := kernels(g)
	if len(ks) != 1 || len(ks[0].Attrs.Strings(ir.GKStitch)) != 1 {
		t.Fatalf("want one stitched kernel: %v", kernelOps(g))
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

func TestShapeOpsInKernel(t *testing.T) {
	// A Reshape between elementwise ops is fused by the reshape pattern.
	b := testkit.New(t, "test")
	x := b.Input("x", 4, 6)
	e := b.Node("exp", "Exp", nil, x)
	r := b.Node("rs", "Reshape", nil, e, b.Ints(2, 12))
	g := b.Output(b.Node("mul", "Mul", nil, r, b.Scalar(2)))
	checkEquivalent(t, g, "--opt_level=2", cpuBE, 0)
	if got := strings.Join(kernelOps(g), "|"); got != "Exp,Reshape,Mul" {
		t.Errorf("kernels %s\n%s", got, dumpText(g))
	}
}

func TestOpCombinerLevel3(t *testing.T) {
	b := testkit.New(t, "test")
	x := b.Input("x", 2, 4)
	y1 := b.Node("mm1", "MatMul", nil, x, b.Weights(4, 3))
	y2 := b.Node("mm2", "MatMul", nil, x, b.Weights(4, 5))
	g := b.Output(y1, y2)
	// At level 3 on CPU the combined constant weight is then marked for
	// packing at load (and runs packed in checkEquivalent).
	checkEquivalent(t, g, "--opt_level=3", cpuBE, 1e-6)
	if got := topOps(g); !slices.Equal(got, []string{"MatMul", "Split"}) || !ir.PackBMarked(g.Nodes[0]) {
		t.Errorf("ops %v, attrs %v", got, g.Nodes[0].Attrs)
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
