package main

import (
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/kernels/cpu"
	"gkconv/internal/mindir"
	ob "gkconv/internal/onnx/onnxbuild"
	"gkconv/internal/onnx/onnxpb"
	"gkconv/internal/runtime"
)

// randVal is an ONNX value of the random graph with its static shape.
type randVal struct {
	name  string
	shape []int64
}

// randGraph builds a random but valid ONNX model out of the patterns graph
// kernel fusion targets (the ONNX twin of internal/fusion's buildFuzzGraph):
// MatMul/Gemm with constant weights and biases, elementwise and unary ops,
// Max/Min/Pow, Transposes, last-axis Slices, decomposed and ONNX
// LayerNorms, Softmaxes on any axis, erf-GeLUs, Reshapes, row reductions and
// reductions over other axes. Shapes are small (rows 1..7, last dims 1..70,
// so row-wise reductions see rows both shorter and longer than 64). Every
// value nothing reads is a graph output, so no step is dead.
type randGraph struct {
	r       *rand.Rand
	m       *ob.Model
	vals    []randVal
	n       int
	used    map[string]bool // values some node reads
	steps   []string        // what was built, for failure messages
	fusible bool            // a step built a chain of >=2 fusible ops
}

func (g *randGraph) fresh(p string) string {
	g.n++
	return p + strconv.Itoa(g.n)
}

// pick prefers the newest value so that graphs grow deep as well as wide.
func (g *randGraph) pick() randVal {
	if g.r.Intn(2) == 0 {
		return g.vals[len(g.vals)-1]
	}
	return g.vals[g.r.Intn(len(g.vals))]
}

// node adds an ONNX node with one output of the given shape.
func (g *randGraph) node(op string, shape []int64, ins []string, attrs ...*onnxpb.AttributeProto) randVal {
	out := g.fresh(strings.ToLower(op) + "_")
	for _, in := range ins {
		g.used[in] = true
	}
	g.m.Node(out, op, ins, []string{out}, attrs...)
	return randVal{out, shape}
}

// weight is a random constant scaled by 1/sqrt(fanIn) so values stay O(1)
// through MatMul chains.
func (g *randGraph) weight(fanIn int64, dims ...int64) string {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	s := 1 / math.Sqrt(float64(fanIn))
	vals := make([]float32, n)
	for i := range vals {
		vals[i] = float32((2*g.r.Float64() - 1) * s)
	}
	name := g.fresh("w_")
	g.m.Init(ob.Float32s(name, dims, vals))
	return name
}

func (g *randGraph) ints(vals ...int64) string {
	name := g.fresh("i_")
	g.m.Init(ob.Int64s(name, []int64{int64(len(vals))}, vals))
	return name
}

func (g *randGraph) scalar(v float32) string {
	name := g.fresh("c_")
	g.m.Init(ob.Scalar(name, v))
	return name
}

func withLast(shape []int64, last int64) []int64 {
	s := append([]int64{}, shape...)
	s[len(s)-1] = last
	return s
}

func dimsAny(s []int64) []any {
	out := make([]any, len(s))
	for i, d := range s {
		out[i] = d
	}
	return out
}

// step adds one random pattern reading a random existing value.
func (g *randGraph) step() {
	v := g.pick()
	r := len(v.shape)
	last := v.shape[r-1]
	add := func(desc string, out randVal, fusible bool) {
		g.vals = append(g.vals, out)
		g.steps = append(g.steps, fmt.Sprintf("%s(%s%v)->%s%v", desc, v.name, v.shape, out.name, out.shape))
		g.fusible = g.fusible || fusible
	}
	switch g.r.Intn(18) {
	case 0, 1: // MatMul with a constant weight, maybe + bias
		n := 1 + g.r.Int63n(70)
		mm := g.node("MatMul", withLast(v.shape, n), []string{v.name, g.weight(last, last, n)})
		if g.r.Intn(2) == 0 {
			mm = g.node("Add", mm.shape, []string{mm.name, g.weight(1, n)})
		}
		add("MatMul", mm, false)
	case 2: // Gemm (2-D only): MatMul transpose_b + BiasAdd, maybe alpha
		if r != 2 {
			return
		}
		n := 1 + g.r.Int63n(70)
		attrs := []*onnxpb.AttributeProto{}
		w := g.weight(last, last, n)
		if g.r.Intn(2) == 0 {
			w = g.weight(last, n, last)
			attrs = append(attrs, ob.Int("transB", 1))
		}
		if g.r.Intn(3) == 0 {
			attrs = append(attrs, ob.Float32Attr("alpha", 0.5))
		}
		add("Gemm", g.node("Gemm", withLast(v.shape, n), []string{v.name, w, g.weight(1, n)}, attrs...), false)
	case 3: // binary op with a value of the same shape, or itself
		w := v
		for _, c := range g.vals {
			if c.name != v.name && slices.Equal(c.shape, v.shape) && g.r.Intn(2) == 0 {
				w = c
			}
		}
		op := []string{"Add", "Mul", "Sub"}[g.r.Intn(3)]
		add(op, g.node(op, v.shape, []string{v.name, w.name}), false)
	case 4: // broadcasts: a row vector constant, or a row reduction back
		if g.r.Intn(2) == 0 {
			op := []string{"Add", "Mul"}[g.r.Intn(2)]
			add(op+"Row", g.node(op, v.shape, []string{v.name, g.weight(1, last)}), false)
		} else {
			mx := g.node("ReduceMax", withLast(v.shape, 1), []string{v.name, g.ints(-1)})
			// Not fusible alone: MindSpore's split model fuses no
			// REDUCE area forward into a BROADCAST user.
			add("SubRowMax", g.node("Sub", v.shape, []string{v.name, mx.name}), false)
		}
	case 5: // unary
		switch g.r.Intn(6) {
		case 0:
			add("Erf", g.node("Erf", v.shape, []string{v.name}), false)
		case 1:
			th := g.node("Tanh", v.shape, []string{v.name})
			add("ExpTanh", g.node("Exp", v.shape, []string{th.name}), true)
		case 2:
			add("Neg", g.node("Neg", v.shape, []string{v.name}), false)
		case 3:
			add("Sigmoid", g.node("Sigmoid", v.shape, []string{v.name}), false)
		case 4:
			add("Relu", g.node("Relu", v.shape, []string{v.name}), false)
		default:
			ab := g.node("Abs", v.shape, []string{v.name})
			add("SqrtAbs", g.node("Sqrt", v.shape, []string{ab.name}), true)
		}
	case 6: // Transpose with a random permutation
		p := g.r.Perm(r)
		perm := make([]int64, r)
		shape := make([]int64, r)
		for i, j := range p {
			perm[i], shape[i] = int64(j), v.shape[j]
		}
		add("Transpose", g.node("Transpose", shape, []string{v.name}, ob.Ints("perm", perm...)), false)
	case 7: // last-axis column Slices of the same value
		lo := g.r.Int63n(last)
		hi := lo + 1 + g.r.Int63n(last-lo)
		add("Slice", g.node("Slice", withLast(v.shape, hi-lo), []string{v.name, g.ints(lo), g.ints(hi), g.ints(-1)}), false)
		if hi < last && g.r.Intn(2) == 0 {
			add("SliceRest", g.node("Slice", withLast(v.shape, last-hi), []string{v.name, g.ints(hi), g.ints(last), g.ints(int64(r - 1))}), false)
		}
	case 8: // decomposed LayerNorm over the last axis, maybe with gamma/beta
		row := withLast(v.shape, 1)
		mean := g.node("ReduceMean", row, []string{v.name, g.ints(-1)})
		d := g.node("Sub", v.shape, []string{v.name, mean.name})
		dd := g.node("Mul", v.shape, []string{d.name, d.name})
		vr := g.node("ReduceMean", row, []string{dd.name, g.ints(-1)})
		eps := g.node("Add", row, []string{vr.name, g.scalar(1e-5)})
		std := g.node("Sqrt", row, []string{eps.name})
		ln := g.node("Div", v.shape, []string{d.name, std.name})
		if g.r.Intn(2) == 0 {
			ln = g.node("Mul", v.shape, []string{ln.name, g.weight(1, last)})
			ln = g.node("Add", v.shape, []string{ln.name, g.weight(1, last)})
		}
		add("LayerNorm", ln, true)
	case 9:
		add("Softmax", g.node("Softmax", v.shape, []string{v.name}, ob.Int("axis", -1)), true)
	case 10: // GeLU, erf form
		dv := g.node("Div", v.shape, []string{v.name, g.scalar(1.4142135)})
		e := g.node("Erf", v.shape, []string{dv.name})
		one := g.node("Add", v.shape, []string{e.name, g.scalar(1)})
		x := g.node("Mul", v.shape, []string{v.name, one.name})
		add("GeLU", g.node("Mul", v.shape, []string{x.name, g.scalar(0.5)}), true)
	case 11: // Reshape to [rows, last] or [1, rows, last]
		rows := ir.NumElements(v.shape) / last
		shape := []int64{rows, last}
		if g.r.Intn(2) == 0 {
			shape = []int64{1, rows, last}
		}
		add("Reshape", g.node("Reshape", shape, []string{v.name, g.ints(shape...)}), false)
	case 12:
		add("DivConst", g.node("Div", v.shape, []string{v.name, g.scalar(8)}), false)
	case 13: // a reduction kept as a row value
		op := []string{"ReduceMax", "ReduceSum", "ReduceMean"}[g.r.Intn(3)]
		add(op, g.node(op, withLast(v.shape, 1), []string{v.name, g.ints(-1)}), false)
	case 14: // a reduction over other axes (the kernels' general path), maybe
		// dropping the axis when the rank stays >= 2
		var axes []int64
		shape := append([]int64{}, v.shape...)
		for len(axes) == 0 {
			axes = axes[:0]
			for a := 0; a < r; a++ {
				if g.r.Intn(2) == 0 {
					axes = append(axes, int64(a))
				}
			}
		}
		keep := int64(1)
		if r == 3 && len(axes) == 1 && g.r.Intn(2) == 0 {
			keep = 0
			shape = append(shape[:axes[0]], shape[axes[0]+1:]...)
		} else {
			for _, a := range axes {
				shape[a] = 1
			}
		}
		op := []string{"ReduceMax", "ReduceSum", "ReduceMean", "ReduceMin"}[g.r.Intn(4)]
		red := g.node(op, shape, []string{v.name, g.ints(axes...)}, ob.Int("keepdims", keep))
		if keep == 1 && g.r.Intn(2) == 0 { // broadcast back over v
			red = g.node("Mul", v.shape, []string{v.name, red.name})
		}
		add(fmt.Sprintf("%s%v", op, axes), red, false)
	case 15: // Max/Min with another same-shape value, or Pow 2
		w := v
		for _, c := range g.vals {
			if c.name != v.name && slices.Equal(c.shape, v.shape) && g.r.Intn(2) == 0 {
				w = c
			}
		}
		switch g.r.Intn(3) {
		case 0:
			add("Max", g.node("Max", v.shape, []string{v.name, w.name}), false)
		case 1:
			add("Min", g.node("Min", v.shape, []string{v.name, w.name}), false)
		default:
			add("Pow2", g.node("Pow", v.shape, []string{v.name, g.scalar(2)}), false)
		}
	case 16: // Softmax on any axis
		axis := int64(g.r.Intn(r))
		add(fmt.Sprintf("Softmax%d", axis), g.node("Softmax", v.shape, []string{v.name}, ob.Int("axis", axis)), true)
	default: // LayerNormalization (opset 17) over the trailing axes from a random one
		axis := int64(r - 1)
		if g.r.Intn(3) == 0 {
			axis = int64(g.r.Intn(r))
		}
		norm := v.shape[axis:]
		ln := g.node("LayerNormalization", v.shape, []string{v.name, g.weight(1, norm...), g.weight(1, norm...)},
			ob.Int("axis", axis), ob.Float32Attr("epsilon", 1e-5))
		add(fmt.Sprintf("LayerNormalization%d", axis), ln, true)
	}
}

// buildRandomModel makes the model of one seed; the same seed gives the
// same model.
func buildRandomModel(seed int64) *randGraph {
	g := &randGraph{r: rand.New(rand.NewSource(seed)), m: ob.New("random", 18), used: map[string]bool{}}
	rows, last := 1+g.r.Int63n(7), 1+g.r.Int63n(70)
	in := randVal{"x", []int64{rows, last}}
	if g.r.Intn(2) == 0 {
		in.shape = []int64{1 + g.r.Int63n(3), rows, last}
	}
	g.m.Input(in.name, ob.Float, dimsAny(in.shape)...)
	g.vals = []randVal{in}
	for steps := 1 + g.r.Intn(14); len(g.steps) < steps; {
		g.step()
	}
	// Every value nothing reads is an output: no step is dead, and fused
	// kernels get several outputs.
	for _, v := range g.vals[1:] {
		if !g.used[v.name] {
			g.m.Output(v.name, ob.Float, dimsAny(v.shape)...)
		}
	}
	return g
}

// runMindIR runs a converted model on inputs with the CPU runtime.
func runMindIR(t *testing.T, path string, inputs []*ir.Tensor) []*ir.Tensor {
	t.Helper()
	m, err := mindir.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	sess, err := runtime.NewSession(m.Graph, runtime.Options{Threads: 2})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	outs, err := sess.Run(inputs)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return outs
}

// compareOutputs checks |got-want| <= 1e-4 + 1e-3*|want| element-wise, NaN
// iff NaN, and returns the first mismatch ("" when none).
func compareOutputs(got, want *ir.Tensor) string {
	if !slices.Equal(got.Shape, want.Shape) || got.DType != want.DType {
		return fmt.Sprintf("%s%v vs %s%v", got.DType, got.Shape, want.DType, want.Shape)
	}
	a, b := got.F32(), want.F32()
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		switch {
		case math.IsNaN(x) || math.IsNaN(y):
			if math.IsNaN(x) != math.IsNaN(y) {
				return fmt.Sprintf("element %d: %g vs %g", i, x, y)
			}
		case math.IsInf(y, 0):
			if x != y {
				return fmt.Sprintf("element %d: %g vs %g", i, x, y)
			}
		case math.Abs(x-y) > 1e-4+1e-3*math.Abs(y):
			return fmt.Sprintf("element %d: fused %g, unfused %g", i, x, y)
		}
	}
	return ""
}

// convertRandom converts model with extra flags and returns the .mindir
// path and the report.
func convertRandom(t *testing.T, model string, extra ...string) (string, report) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "model")
	rep := filepath.Join(t.TempDir(), "report.json")
	args := append([]string{"--fmk=ONNX", "--modelFile=" + model, "--outputFile=" + out, "--reportFile=" + rep,
		"--kernelCacheDir=" + kernelCache}, extra...)
	r := runCLI(t, nil, args...)
	if r.code != 0 || lastLine(r.stdout) != "CONVERT RESULT SUCCESS:0" {
		t.Fatalf("convert %v: exit %d\nstdout: %s\nstderr: %s", extra, r.code, r.stdout, r.stderr)
	}
	return out + ".mindir", readReport(t, rep)
}

// TestRandomFusedGraphs: for random graphs of fusible patterns, the model
// fused and compiled to C kernels at opt_level 1-3 computes what the
// unfused model computes on the same random input. internal/fusion's
// FuzzPasses runs fused bodies with the op library; this runs the generated
// C end to end, through the CLI and the runtime.
func TestRandomFusedGraphs(t *testing.T) {
	if !cpu.Available {
		t.Skip("built without cgo: compiled kernels cannot be loaded")
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	if _, err := exec.LookPath(strings.Fields(cc + " ")[0]); err != nil {
		t.Skipf("no C compiler (%s): fused kernels cannot be built: %v", cc, err)
	}
	seeds := 40
	if testing.Short() {
		seeds = 20 // still catches the reduce-merge bug (seeds 16, 19)
	}
	// GKCONV_RANDOM_SEEDS=N explores more graphs (seeds 1..N). Seeds 1-1500
	// were checked; of those only 580 fails, by cancellation, not a bug: a
	// LayerNorm of sums of LayerNorm outputs (float32 noise ~1e-5, within
	// tolerance) scales that noise by 1/sqrt(eps).
	if s := os.Getenv("GKCONV_RANDOM_SEEDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("GKCONV_RANDOM_SEEDS=%q: want a positive count", s)
		}
		seeds = n
	}
	type tally struct{ fusible, kernels bool }
	results := make([]tally, seeds)
	// The seeds run as parallel subtests of one group, which returns when
	// they all have.
	t.Run("group", func(t *testing.T) {
		for seed := 1; seed <= seeds; seed++ {
			t.Run(fmt.Sprintf("seed_%d", seed), func(t *testing.T) {
				t.Parallel()
				g := buildRandomModel(int64(seed))
				defer func() {
					if t.Failed() {
						t.Logf("seed %d graph:\n  %s", seed, strings.Join(g.steps, "\n  "))
					}
				}()
				model := filepath.Join(t.TempDir(), "model.onnx")
				if err := g.m.WriteFile(model); err != nil {
					t.Fatal(err)
				}
				plain, _ := convertRandom(t, model, "--optimize=none")
				rng := rand.New(rand.NewSource(int64(seed) * 7919))
				shape := g.vals[0].shape
				x := ir.NewTensor(ir.Float32, shape)
				for i := range x.F32() {
					x.F32()[i] = float32(4*rng.Float64() - 2)
				}
				want := runMindIR(t, plain, []*ir.Tensor{x})

				levels := []int{2}
				if seed%3 == 0 {
					levels = append(levels, 1, 3)
				}
				for _, level := range levels {
					cfg := writeConfig(t, fmt.Sprintf("[graph_kernel_param]\nopt_level=%d\n", level))
					path, rep := convertRandom(t, model, "--configFile="+cfg)
					for _, k := range rep.Kernels {
						if k.BinaryBytes == 0 || k.Target != "cpu" {
							t.Errorf("O%d: kernel %s is not a compiled CPU kernel: %+v", level, k.Name, k)
						}
					}
					if level == 2 {
						results[seed-1] = tally{g.fusible, len(rep.Kernels) > 0}
						if g.fusible && len(rep.Kernels) == 0 {
							t.Errorf("O2: the graph has fusible chains but no GraphKernel was made")
						}
					}
					got := runMindIR(t, path, []*ir.Tensor{x})
					if len(got) != len(want) {
						t.Fatalf("O%d: %d outputs, unfused %d", level, len(got), len(want))
					}
					for i := range want {
						if msg := compareOutputs(got[i], want[i]); msg != "" {
							var ks []string
							for _, k := range rep.Kernels {
								ks = append(ks, fmt.Sprintf("%s %s %v", k.Name, k.Pattern, k.Ops))
							}
							t.Errorf("O%d: output %d differs: %s\nkernels:\n  %s", level, i, msg, strings.Join(ks, "\n  "))
						}
					}
				}
			})
		}
	})
	fusible, fused := 0, 0
	for _, r := range results {
		if r.fusible {
			fusible++
		}
		if r.kernels {
			fused++
		}
	}
	t.Logf("%d seeds: %d with always-fusible patterns, %d fused into kernels at opt_level 2", seeds, fusible, fused)
}
