package fusion

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"gkconv/internal/akgcfg"
	"gkconv/internal/ir"
	"gkconv/internal/randgraph"
	"gkconv/internal/runtime/opkernel"
	_ "gkconv/internal/runtime/ops/elementwise"
	_ "gkconv/internal/runtime/ops/nn"
	_ "gkconv/internal/runtime/ops/tensorops"
	"gkconv/internal/testkit"
)

func flagsFor(t *testing.T, s string, be akgcfg.Backend) *akgcfg.Flags {
	t.Helper()
	f, _, err := akgcfg.ParseFlags(s, "test")
	if err != nil {
		t.Fatalf("flags %q: %v", s, err)
	}
	f.Resolve(be)
	return f
}

var cpuBE = akgcfg.Backend{Device: akgcfg.CPU}

// run fuses g with flags s on be and checks the result is a valid graph.
func run(t *testing.T, g *ir.Graph, s string, be akgcfg.Backend) *Result {
	t.Helper()
	res, err := Run(g, flagsFor(t, s, be), be, nil, Options{})
	if err != nil {
		t.Fatalf("Run(%q): %v\n%s", s, err, dumpText(g))
	}
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	return res
}

func dumpText(g *ir.Graph) string {
	var sb strings.Builder
	_ = WriteIR(&sb, g)
	return sb.String()
}

// kernelOps lists the body ops of every kernel, one string per kernel.
func kernelOps(g *ir.Graph) []string {
	var out []string
	for _, k := range kernels(g) {
		var ops []string
		for _, n := range k.Body.Nodes {
			ops = append(ops, n.Op)
		}
		out = append(out, strings.Join(ops, ","))
	}
	return out
}

func topOps(g *ir.Graph) []string {
	var out []string
	for _, n := range g.Nodes {
		out = append(out, n.Op)
	}
	return out
}

// execute runs g on the runtime's op library; GraphKernel nodes run their
// bodies, so fused graphs are checked to be executable.
func execute(t *testing.T, g *ir.Graph, inputs map[string]*ir.Tensor) []*ir.Tensor {
	t.Helper()
	env := map[*ir.Value]*ir.Tensor{}
	for _, v := range g.Inputs {
		env[v] = inputs[v.Name]
	}
	return execGraph(t, g, env)
}

// execGraph runs g on the op library; perturb, when given, is applied to
// every node's outputs (the rounding-noise model of checkEquivalent).
func execGraph(t *testing.T, g *ir.Graph, env map[*ir.Value]*ir.Tensor, perturb ...func(*ir.Tensor)) []*ir.Tensor {
	t.Helper()
	get := func(v *ir.Value) *ir.Tensor {
		if v == nil {
			return nil
		}
		if v.Const != nil {
			return v.Const
		}
		x, ok := env[v]
		if !ok {
			t.Fatalf("value %s has no data", v.Name)
		}
		return x
	}
	prep := opkernel.NewPrep() // as a runtime session: marked MatMuls run packed
	for _, n := range g.Nodes {
		var in []*ir.Tensor
		for _, v := range n.Inputs {
			in = append(in, get(v))
		}
		if n.Op == ir.OpGraphKernel {
			sub := map[*ir.Value]*ir.Tensor{}
			for i, bi := range n.Body.Inputs {
				sub[bi] = in[i]
			}
			outs := execGraph(t, n.Body, sub, perturb...)
			for i, o := range n.Outputs {
				env[o] = outs[i]
			}
			continue
		}
		f, ok, err := prep.Bind(n)
		if !ok || err != nil {
			t.Fatalf("node %s: runtime has no op %s (%v)", n.Name, n.Op, err)
		}
		// Shapes may depend on data (Shape -> Reshape): infer them on a copy
		// whose inputs carry the run-time tensors.
		tmp := &ir.Node{Name: n.Name, Op: n.Op, Attrs: n.Attrs}
		for i, v := range n.Inputs {
			if v == nil {
				tmp.Inputs = append(tmp.Inputs, nil)
				continue
			}
			tmp.Inputs = append(tmp.Inputs, &ir.Value{Name: v.Name, DType: in[i].DType, Shape: in[i].Shape, Const: in[i]})
		}
		for range n.Outputs {
			tmp.Outputs = append(tmp.Outputs, &ir.Value{Producer: tmp})
		}
		if err := ir.InferNode(tmp); err != nil {
			t.Fatalf("node %s: %v", n.Name, err)
		}
		var out []*ir.Tensor
		for _, o := range tmp.Outputs {
			out = append(out, ir.NewTensor(o.DType, o.Shape))
		}
		if err := f(&opkernel.Ctx{Threads: 1}, n, in, out); err != nil {
			t.Fatalf("node %s: %v", n.Name, err)
		}
		for i, o := range n.Outputs {
			for _, p := range perturb {
				p(out[i])
			}
			env[o] = out[i]
		}
	}
	var res []*ir.Tensor
	for _, o := range g.Outputs {
		res = append(res, get(o))
	}
	return res
}

func randInputs(g *ir.Graph, seed int64) map[string]*ir.Tensor {
	r := rand.New(rand.NewSource(seed))
	m := map[string]*ir.Tensor{}
	for _, v := range g.Inputs {
		t := ir.NewTensor(v.DType, v.Shape)
		for i := range t.F32() {
			t.F32()[i] = float32(r.NormFloat64())
		}
		m[v.Name] = t
	}
	return m
}

// checkEquivalent runs g before and after fusion and compares outputs.
func checkEquivalent(t *testing.T, g *ir.Graph, flags string, be akgcfg.Backend, tol float64) *Result {
	t.Helper()
	return checkEquivalentAfter(t, g, nil, flags, be, tol)
}

// checkEquivalentAfter is checkEquivalent with pre (nil: none) run on g
// before the fusion passes, and judged with them against the graph before
// it: RunAnf, so converter_lite's passes and the graph-kernel passes after
// them are checked together, as a conversion runs them.
func checkEquivalentAfter(t *testing.T, g *ir.Graph, pre func(*ir.Graph) error, flags string, be akgcfg.Backend, tol float64) *Result {
	t.Helper()
	ref := testkit.CloneGraph(g)
	in := randInputs(g, 1)
	want := execute(t, ref, in)
	if pre != nil {
		if err := pre(g); err != nil {
			t.Fatalf("before the passes: %v\n%s", err, dumpText(g))
		}
	}
	res := run(t, g, flags, be)
	got := execute(t, g, in)
	var exact []*ir.Tensor // the float64 evaluation, computed when first needed
	var noiseErr []float64 // per output: its error under float32-level rounding noise
	for i := range want {
		w, gt := want[i].F32(), got[i].F32()
		if len(w) != len(gt) {
			t.Fatalf("output %d: %d vs %d elements", i, len(w), len(gt))
		}
		for j := range w {
			if math.IsNaN(float64(gt[j])) != math.IsNaN(float64(w[j])) {
				t.Fatalf("output %d[%d]: fused %g, unfused %g\n%s", i, j, gt[j], w[j], dumpText(g))
			}
			if d := math.Abs(float64(w[j] - gt[j])); d <= tol*(1+math.Abs(float64(w[j]))) {
				continue
			}
			// Two correct float32 evaluations of an ill-conditioned graph
			// (a LayerNorm of saturated erf values: variance ~1e-6) differ
			// by more than tol: every ulp-level difference (the erf
			// expansion, a mean as a float32 sum times 1/n against the op
			// library's) is amplified ~1000x. Judge fused against the
			// float64 evaluation, allowing 8x the error of float32-level
			// rounding: the larger of the unfused float32 graph's own error
			// and that of the float64 graph with every op's result
			// perturbed by up to half a float32 ulp (the graph's
			// sensitivity to rounding anywhere in it). A wrong op or
			// constant is off by O(1); fuzzing found correct fused graphs
			// 2.9x, 4.1x and 55x off the unfused one, and at most 1.7x the
			// rounding noise.
			if exact == nil {
				wide := randgraph.Float64Body(ref)
				exact = execute(t, wide, float64Inputs(in))
				env := map[*ir.Value]*ir.Tensor{}
				for k, v := range float64Inputs(in) {
					for _, gi := range wide.Inputs {
						if gi.Name == k {
							env[gi] = v
						}
					}
				}
				// Four noise draws: one draw's error swings several times
				// between shapes and seeds; the largest is the estimate.
				for seed := int64(1); seed <= 4; seed++ {
					rng := rand.New(rand.NewSource(seed))
					out := execGraph(t, wide, cloneEnv(env), func(x *ir.Tensor) {
						if x.DType == ir.Float64 {
							for k, v := range x.F64() {
								x.F64()[k] = v * (1 + (2*rng.Float64()-1)*0x1p-24)
							}
						}
					})
					for k := range out {
						if len(noiseErr) <= k {
							noiseErr = append(noiseErr, 0)
						}
						noiseErr[k] = max(noiseErr[k], randgraph.ScaledError(out[k], exact[k]))
					}
				}
			}
			unfusedErr, fusedErr := randgraph.ScaledError(want[i], exact[i]), randgraph.ScaledError(got[i], exact[i])
			if fusedErr > max(tol, 8*max(unfusedErr, noiseErr[i])) {
				t.Fatalf("output %d[%d]: fused %g, unfused %g; against float64: fused off by %.3g, unfused by %.3g, float32 rounding noise %.3g (scaled)\n%s",
					i, j, gt[j], w[j], fusedErr, unfusedErr, noiseErr[i], dumpText(g))
			}
			t.Logf("output %d: ill-conditioned: fused off by %.3g, unfused by %.3g, rounding noise %.3g against float64", i, fusedErr, unfusedErr, noiseErr[i])
			break
		}
	}
	return res
}

func cloneEnv(env map[*ir.Value]*ir.Tensor) map[*ir.Value]*ir.Tensor {
	c := make(map[*ir.Value]*ir.Tensor, len(env))
	for k, v := range env {
		c[k] = v
	}
	return c
}

// float64Inputs widens float32 inputs for the float64 evaluation.
func float64Inputs(in map[string]*ir.Tensor) map[string]*ir.Tensor {
	out := map[string]*ir.Tensor{}
	for k, v := range in {
		if v.DType != ir.Float32 {
			out[k] = v
			continue
		}
		w := ir.NewTensor(ir.Float64, v.Shape)
		for i, x := range v.F32() {
			w.F64()[i] = float64(x)
		}
		out[k] = w
	}
	return out
}

// perm is the attributes of a Transpose by p.
func perm(p ...int64) ir.Attrs { return ir.Attrs{"perm": ir.IntsAttr(p...)} }
