package fusion

import (
	"math"
	"slices"
	"strings"
	"testing"

	"gkconv/internal/akgcfg"
	"gkconv/internal/ir"
	kascend "gkconv/internal/kernels/ascend"
	kcpu "gkconv/internal/kernels/cpu"
	kcuda "gkconv/internal/kernels/cuda"
	"gkconv/internal/runtime/native"
	"gkconv/internal/testkit"
)

// decomposedLayerNorm builds an ONNX-exported LayerNorm (opset < 17) over
// the last axis of shape: ReduceMean, Sub, Pow 2, ReduceMean, Add eps, Sqrt,
// Div, Mul gamma, Add beta; with residual, behind an Add of two inputs.
func decomposedLayerNorm(t *testing.T, residual bool, shape ...int64) *ir.Graph {
	b := testkit.New(t, "test")
	x := b.Input("x", shape...)
	if residual {
		x = b.Node("res", "Add", nil, x, b.Input("r", shape...))
	}
	n := shape[len(shape)-1]
	keep := ir.Attrs{"keepdims": ir.IntAttr(1)}
	mean := b.Node("mean", "ReduceMean", keep, x, b.Ints(-1))
	d := b.Node("sub", "Sub", nil, x, mean)
	sq := b.Node("pow", "Pow", nil, d, b.Scalar(2))
	v := b.Node("var", "ReduceMean", keep, sq, b.Ints(-1))
	sd := b.Node("sqrt", "Sqrt", nil, b.Node("eps", "Add", nil, v, b.Scalar(1e-5)))
	y := b.Node("div", "RealDiv", nil, d, sd)
	y = b.Node("gamma", "Mul", nil, y, b.Weights(n))
	y = b.Node("beta", "Add", nil, y, b.Weights(n))
	return b.Output(y)
}

const (
	lnKernel1 = "ReduceSum,RealDiv,Sub,Mul"                  // mean (sum / n, as onnxruntime divides), x - mean, its square
	lnKernel2 = "ReduceSum,RealDiv,Add,Sqrt,RealDiv,Mul,Add" // variance, normalise, affine
)

var lnCases = []struct {
	name     string
	residual bool
	shape    []int64
}{
	{"rows4x96", false, []int64{4, 96}},
	{"residual", true, []int64{4, 96}},
	{"rank3", false, []int64{2, 8, 96}},
}

func TestLayerNormPatternOneKernel(t *testing.T) {
	for _, c := range lnCases {
		t.Run(c.name, func(t *testing.T) {
			want := lnKernel1 + "," + lnKernel2
			if c.residual {
				want = "Add," + want
			}
			g := decomposedLayerNorm(t, c.residual, c.shape...)
			ref := testkit.CloneGraph(g)
			res := checkEquivalent(t, g, "--opt_level=2", cpuBE, 1e-5)
			if !slices.Equal(topOps(g), []string{ir.OpGraphKernel}) || len(res.Kernels) != 1 {
				t.Fatalf("want the graph to be one GraphKernel, got %v\n%s", topOps(g), dumpText(g))
			}
			if got := kernelOps(g)[0]; got != want {
				t.Errorf("kernel ops %s, want %s", got, want)
			}
			if res.Kernels[0].Pattern != "REDUCE" {
				t.Errorf("pattern %s", res.Kernels[0].Pattern)
			}
			checkGenerators(t, g, ref)
		})
	}
}

// checkGenerators: every kernel of g is generated row-wise by the CPU, CUDA
// and Ascend generators, and the compiled CPU kernels reproduce the
// unfused graph ref.
func checkGenerators(t *testing.T, g, ref *ir.Graph) {
	t.Helper()
	for _, k := range kernels(g) {
		if _, l, err := kcuda.Generate("k", k.Body); err != nil || l.Strategy != "row" {
			t.Errorf("CUDA generator: strategy %q, err %v", l.Strategy, err)
		}
		if _, p, err := kascend.Generate("k", k.Body); err != nil || p.Strategy != "vector" {
			t.Errorf("Ascend generator: strategy %q, err %v", p.Strategy, err)
		}
	}
	b := kcpu.NewBuilder(kcpu.Options{CacheDir: t.TempDir()})
	if err := b.BuildKernels(kernels(g)); err != nil {
		t.Fatalf("build: %v", err)
	}
	for _, k := range kernels(g) {
		if src := k.Attrs.String(ir.GKKernelSource, ""); !strings.Contains(src, "row-wise") {
			t.Errorf("kernel %s is not row-wise:\n%s", k.Name, src)
		}
	}
	if !native.Available {
		t.Log("built without cgo: compiled kernels not run")
		return
	}
	in := randInputs(ref, 2)
	want := execute(t, ref, in)
	env := map[*ir.Value]*ir.Tensor{}
	for _, v := range g.Inputs {
		env[v] = in[v.Name]
	}
	for _, n := range g.Nodes {
		if n.Op != ir.OpGraphKernel {
			t.Fatalf("unexpected top-level op %s", n.Op)
		}
		lib, err := native.Load(n.Attrs[ir.GKKernelSO].B, n.Attrs.String(ir.GKKernelSOHash, ""), n.Attrs.String(ir.GKKernelName, ""))
		if err != nil {
			t.Fatal(err)
		}
		var bufs [][]byte
		for _, v := range n.Inputs {
			x := v.Const
			if x == nil {
				x = env[v]
			}
			bufs = append(bufs, x.Data)
		}
		for _, o := range n.Outputs {
			env[o] = ir.NewTensor(o.DType, o.Shape)
			bufs = append(bufs, env[o].Data)
		}
		lib.Call(1, bufs)
	}
	for i, o := range g.Outputs {
		w, got := want[i].F32(), env[o].F32()
		for j := range w {
			if d := math.Abs(float64(w[j] - got[j])); d > 1e-5*(1+math.Abs(float64(w[j]))) {
				t.Fatalf("compiled output %d[%d] = %g, runtime %g", i, j, got[j], w[j])
			}
		}
	}
}

func TestLayerNormPatternDisabled(t *testing.T) {
	for _, c := range lnCases {
		t.Run(c.name, func(t *testing.T) {
			first := lnKernel1
			if c.residual {
				first = "Add," + first
			}
			g := decomposedLayerNorm(t, c.residual, c.shape...)
			checkEquivalent(t, g, "--opt_level=2 --disable_fusion_pattern=layer_norm", cpuBE, 1e-5)
			if got := kernelOps(g); !slices.Equal(got, []string{first, lnKernel2}) {
				t.Errorf("kernels %q, want [%s %s]", got, first, lnKernel2)
			}
		})
	}
}

// Reductions over different axes (a row sum, then a column sum of a tensor
// derived from it) are not rows of one plan: no merge.
func TestLayerNormPatternDifferentAxes(t *testing.T) {
	mk := func() *ir.Graph {
		b := testkit.New(t, "test")
		x := b.Input("x", 8, 16)
		keep := ir.Attrs{"keepdims": ir.IntAttr(1)}
		s1 := b.Node("rows", "ReduceSum", keep, x, b.Ints(1))
		d := b.Node("sub", "Sub", nil, x, s1)
		s2 := b.Node("cols", "ReduceSum", keep, b.Node("sq", "Mul", nil, d, d), b.Ints(0))
		return b.Output(b.Node("scale", "Mul", nil, d, s2))
	}
	g := mk()
	checkEquivalent(t, g, "--opt_level=2", cpuBE, 1e-5)
	for _, ops := range kernelOps(g) {
		if strings.Count(ops, "ReduceSum") > 1 {
			t.Errorf("reductions over different axes merged: %s", ops)
		}
	}
	off := mk()
	run(t, off, "--opt_level=2 --disable_fusion_pattern=layer_norm", cpuBE)
	if a, b := kernelSignature(g), kernelSignature(off); a != b {
		t.Errorf("layer_norm changed the partition:\n%s\nvs\n%s", a, b)
	}
}

// The merge stays within composite_op_limit_size.
func TestLayerNormPatternSizeLimit(t *testing.T) {
	g := decomposedLayerNorm(t, false, 4, 96)
	checkEquivalent(t, g, "--opt_level=2 --composite_op_limit_size=10", cpuBE, 1e-5)
	if len(kernels(g)) < 2 {
		t.Fatalf("11 ops under a limit of 10 became %v", kernelOps(g))
	}
	for _, k := range kernels(g) {
		if len(k.Body.Nodes) > 10 {
			t.Errorf("kernel of %d ops over the limit", len(k.Body.Nodes))
		}
	}
}

// splitAreas runs only the layer_norm pattern on g's nodes.
func splitAreas(g *ir.Graph) []string {
	isOut := map[*ir.Value]bool{}
	for _, o := range g.Outputs {
		isOut[o] = true
	}
	m := newSplitModel(g.Nodes, func(n *ir.Node) bool { return isOut[n.Outputs[0]] }, 200)
	var out []string
	for _, a := range m.run([]fusePattern{layerNormPattern()}) {
		var names []string
		for _, n := range a.ops {
			names = append(names, n.Name)
		}
		slices.Sort(names)
		out = append(out, strings.Join(names, ","))
	}
	slices.Sort(out)
	return out
}

// The bridged form (REDUCE <- ELEMWISE/BROADCAST <- REDUCE) merges as a
// whole, unless an area outside the three lies between them (a cycle).
func TestLayerNormPatternBridgeAndCycle(t *testing.T) {
	mk := func(viaMatMul bool) *ir.Graph {
		b := testkit.New(t, "test")
		x := b.Input("x", 4, 96)
		r1 := b.Node("r1", "ReduceSum", ir.Attrs{"keepdims": ir.IntAttr(1)}, x, b.Ints(-1))
		src := x
		if viaMatMul { // r1 -> MatMul -> e: fusing r1 and e around it is a cycle
			src = b.Node("mm", "MatMul", nil, r1, b.Weights(1, 96))
		}
		e := b.Node("e", "Mul", nil, src, r1)
		r2 := b.Node("r2", "ReduceSum", ir.Attrs{"keepdims": ir.IntAttr(1)}, e, b.Ints(-1))
		return b.Output(r2)
	}
	if got := splitAreas(mk(false)); !slices.Equal(got, []string{"e,r1,r2"}) {
		t.Errorf("bridge: areas %q, want [e,r1,r2]", got)
	}
	if got := splitAreas(mk(true)); !slices.Equal(got, []string{"e", "mm", "r1", "r2"}) {
		t.Errorf("cycle: areas %q, want each op alone", got)
	}
}

// Softmax written out (ReduceMax, Sub, Exp, ReduceSum, Div) has two
// reductions over the same rows too.
func TestLayerNormPatternDecomposedSoftmax(t *testing.T) {
	b := testkit.New(t, "test")
	x := b.Input("x", 6, 40)
	keep := ir.Attrs{"keepdims": ir.IntAttr(1)}
	mx := b.Node("max", "ReduceMax", keep, x, b.Ints(-1))
	e := b.Node("exp", "Exp", nil, b.Node("sub", "Sub", nil, x, mx))
	s := b.Node("sum", "ReduceSum", keep, e, b.Ints(-1))
	g := b.Output(b.Node("div", "RealDiv", nil, e, s))
	checkEquivalent(t, g, "--opt_level=2", cpuBE, 1e-6)
	found := false
	for _, ops := range kernelOps(g) {
		found = found || strings.Contains(ops, "ReduceMax") && strings.Contains(ops, "ReduceSum")
	}
	if !found {
		t.Errorf("ReduceMax and ReduceSum not in one kernel: %v", kernelOps(g))
	}
}

// On GPU and Ascend (where the pattern sits after elemwise_broadcast_bwd,
// as in Lite Ascend) the LayerNorm is one kernel too, and two without it.
func TestLayerNormPatternOtherBackends(t *testing.T) {
	for _, be := range []akgcfg.Backend{{Device: akgcfg.GPU}, {Device: akgcfg.Ascend}} {
		g := decomposedLayerNorm(t, true, 4, 96)
		checkEquivalent(t, g, "--opt_level=2", be, 1e-5)
		if n := len(kernels(g)); n != 1 || len(g.Nodes) != 1 {
			t.Errorf("%v: %v", be.Device, kernelOps(g))
		}
		g = decomposedLayerNorm(t, true, 4, 96)
		checkEquivalent(t, g, "--opt_level=2 --disable_fusion_pattern=layer_norm", be, 1e-5)
		if n := len(kernels(g)); n != 2 {
			t.Errorf("%v without layer_norm: %v", be.Device, kernelOps(g))
		}
	}
}
