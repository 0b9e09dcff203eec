package fusion

import (
	"math"
	"slices"
	"strings"
	"testing"

	"gkconv/internal/akgcfg"
	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
	"gkconv/internal/testkit"
)

type expandCase struct {
	name string
	op   string
	be   akgcfg.Backend
	tol  float64
	mk   func(b *testkit.Graph) []*ir.Value
}

func unary(op string, attrs ir.Attrs) func(b *testkit.Graph) []*ir.Value {
	return func(b *testkit.Graph) []*ir.Value { return []*ir.Value{b.Node("n", op, attrs, b.Input("x", 3, 5))} }
}

var ascendBE = akgcfg.Backend{Device: akgcfg.Ascend}

func expandCases() []expandCase {
	return []expandCase{
		{"GeLU-erf", "GeLU", cpuBE, 1e-6, unary("GeLU", nil)},
		{"Erf", "Erf", cpuBE, 1e-6, unary("Erf", nil)},
		{"GeLU-tanh-cpu", "GeLU", cpuBE, 1e-6, unary("GeLU", ir.Attrs{"approximate": ir.StringAttr("tanh")})},
		{"GeLU-tanh-ascend", "GeLU", ascendBE, 2e-4, unary("GeLU", ir.Attrs{"approximate": ir.StringAttr("tanh")})},
		{"Sigmoid", "Sigmoid", cpuBE, 1e-6, unary("Sigmoid", nil)},
		{"HSigmoid", "HSigmoid", cpuBE, 1e-6, unary("HSigmoid", ir.Attrs{"alpha": ir.FloatAttr(1.0 / 6)})},
		{"HSwish", "HSwish", cpuBE, 1e-6, unary("HSwish", nil)},
		{"Mish", "Mish", cpuBE, 1e-5, unary("Mish", nil)},
		{"Tanh", "Tanh", cpuBE, 1e-6, unary("Tanh", nil)},
		{"ReLU", "ReLU", cpuBE, 0, unary("ReLU", nil)},
		{"Rsqrt", "Rsqrt", cpuBE, 1e-6, func(b *testkit.Graph) []*ir.Value {
			return []*ir.Value{b.Node("n", "Rsqrt", nil, b.Node("a", "Abs", nil, b.Input("x", 3, 5)))}
		}},
		{"Reciprocal", "Reciprocal", cpuBE, 0, unary("Reciprocal", nil)},
		{"Square", "Square", cpuBE, 0, unary("Square", nil)},
		{"Softplus", "Softplus", cpuBE, 1e-6, unary("Softplus", nil)},
		{"Softsign", "Softsign", cpuBE, 1e-6, unary("Softsign", nil)},
		{"Cosh", "Cosh", cpuBE, 1e-6, unary("Cosh", nil)},
		{"Sinh", "Sinh", cpuBE, 1e-6, unary("Sinh", nil)},
		{"LeakyReLU", "LeakyReLU", cpuBE, 1e-6, unary("LeakyReLU", ir.Attrs{"alpha": ir.FloatAttr(0.1)})},
		{"Elu", "Elu", cpuBE, 1e-6, unary("Elu", nil)},
		{"LogSoftmax", "LogSoftmax", cpuBE, 1e-6, unary("LogSoftmax", ir.Attrs{"axis": ir.IntAttr(1)})},
		{"Softmax-axis0", "Softmax", cpuBE, 1e-6, unary("Softmax", ir.Attrs{"axis": ir.IntAttr(0)})},
		{"ReLU6", "ReLU6", cpuBE, 0, unary("ReLU6", nil)},
		{"Clip", "Clip", cpuBE, 0, func(b *testkit.Graph) []*ir.Value {
			return []*ir.Value{b.Node("n", "Clip", nil, b.Input("x", 3, 5), b.Scalar(-0.5), b.Scalar(0.7))}
		}},
		{"SquaredDifference", "SquaredDifference", cpuBE, 0, func(b *testkit.Graph) []*ir.Value {
			return []*ir.Value{b.Node("n", "SquaredDifference", nil, b.Input("x", 3, 5), b.Input("y", 5))}
		}},
		{"AddN", "AddN", cpuBE, 0, func(b *testkit.Graph) []*ir.Value {
			return []*ir.Value{b.Node("n", "AddN", nil, b.Input("x", 3, 5), b.Input("y", 3, 5), b.Input("z", 5))}
		}},
		{"BiasAdd-NCHW", "BiasAdd", cpuBE, 0, func(b *testkit.Graph) []*ir.Value {
			return []*ir.Value{b.Node("n", "BiasAdd", nil, b.Input("x", 2, 3, 4, 4), b.Weights(3))}
		}},
		{"BiasAdd-NHWC", "BiasAdd", cpuBE, 0, func(b *testkit.Graph) []*ir.Value {
			return []*ir.Value{b.Node("n", "BiasAdd", ir.Attrs{"format": ir.StringAttr("NHWC")}, b.Input("x", 2, 4, 4, 3), b.Weights(3))}
		}},
		{"ReduceMean", "ReduceMean", cpuBE, 1e-6, func(b *testkit.Graph) []*ir.Value {
			return []*ir.Value{b.Node("n", "ReduceMean", ir.Attrs{"keepdims": ir.IntAttr(0)}, b.Input("x", 3, 4, 5), b.Ints(-1, 0))}
		}},
		{"Tile", "Tile", cpuBE, 0, func(b *testkit.Graph) []*ir.Value {
			return []*ir.Value{b.Node("n", "Tile", nil, b.Input("x", 3, 1), b.Ints(1, 4))}
		}},
		{"BatchNorm", "BatchNorm", cpuBE, 1e-5, func(b *testkit.Graph) []*ir.Value {
			return []*ir.Value{b.Node("n", "BatchNorm", ir.Attrs{"epsilon": ir.FloatAttr(1e-3)},
				b.Input("x", 2, 3, 4, 4), b.Weights(3), b.Weights(3), b.Weights(3), b.Weights(3))}
		}},
		{"InstanceNorm", "InstanceNorm", cpuBE, 1e-5, func(b *testkit.Graph) []*ir.Value {
			return []*ir.Value{b.Node("n", "InstanceNorm", nil, b.Input("x", 2, 3, 4, 4), b.Weights(3), b.Weights(3))}
		}},
		{"LayerNorm-axis1", "LayerNorm", cpuBE, 1e-5, func(b *testkit.Graph) []*ir.Value {
			return []*ir.Value{b.Node("n", "LayerNorm", ir.Attrs{"axis": ir.IntAttr(1)}, b.Input("x", 2, 3, 4), b.Weights(3, 4))}
		}},
	}
}

// TestExpanders: each expander removes its op and, where the runtime has
// the op, computes the same values.
func TestExpanders(t *testing.T) {
	for _, c := range expandCases() {
		t.Run(c.name, func(t *testing.T) {
			mk := c.mk
			if mk == nil {
				mk = unary(c.op, nil)
			}
			b := testkit.New(t, "test")
			g := b.Output(mk(b)...)
			flags := "--opt_level=2 --enable_expand_ops_only=" + c.op
			if _, ok := opkernel.Lookup(c.op); ok && c.mk != nil {
				checkEquivalent(t, g, flags, c.be, c.tol)
			} else {
				run(t, g, flags, c.be)
			}
			if slices.Contains(topOps(g), c.op) || len(kernels(g)) != 1 {
				t.Fatalf("%s not expanded into one kernel: %v", c.op, topOps(g))
			}
			for _, n := range kernels(g)[0].Body.Nodes {
				if n.Op == c.op {
					t.Errorf("body still has %s", c.op)
				}
			}
		})
	}
}

func TestGeLUForms(t *testing.T) {
	ops := func(approx string, be akgcfg.Backend) []string {
		b := testkit.New(t, "test")
		attrs := ir.Attrs{}
		if approx != "" {
			attrs["approximate"] = ir.StringAttr(approx)
		}
		g := b.Output(b.Node("n", "GeLU", attrs, b.Input("x", 8)))
		run(t, g, "--opt_level=2", be)
		var out []string
		for _, n := range kernels(g)[0].Body.Nodes {
			out = append(out, n.Op)
		}
		return out
	}
	// The erf form keeps Erf where the backend generates it, and is basic
	// ops on CPU (whose cluster list has no Erf).
	if o := ops("", cpuBE); slices.Contains(o, "Erf") || !slices.Contains(o, "Exp") {
		t.Errorf("approximate=none on CPU: %v", o)
	}
	if o := ops("", akgcfg.Backend{Device: akgcfg.GPU}); !slices.Contains(o, "Erf") {
		t.Errorf("approximate=none on GPU: %v", o)
	}
	if o := ops("", ascendBE); !slices.Contains(o, "Erf") {
		t.Errorf("approximate=none on Ascend: %v", o)
	}
	if o := ops("tanh", akgcfg.Backend{Device: akgcfg.GPU}); !slices.Contains(o, "Tanh") || slices.Contains(o, "Exp") {
		t.Errorf("tanh form on GPU: %v", o)
	}
	if o := ops("tanh", ascendBE); !slices.Contains(o, "Exp") || slices.Contains(o, "Tanh") {
		t.Errorf("exp form on Ascend: %v", o)
	}
}

// TestFastGeLUFormula checks the FastGeLU expansion against its formula
// (the runtime has no FastGeLU op).
func TestFastGeLUFormula(t *testing.T) {
	// The IR table has no FastGeLU yet (MindSpore-only op): type it by hand.
	b := testkit.New(t, "test")
	x := b.Input("x", 3, 5)
	n := b.G.AddNode("n", "FastGeLU", []*ir.Value{x}, "y")
	n.Outputs[0].DType, n.Outputs[0].Shape = ir.Float32, []int64{3, 5}
	g := b.Output(n.Outputs[0])
	run(t, g, "--opt_level=2 --enable_expand_ops_only=FastGeLU", cpuBE)
	in := randInputs(g, 3)
	got := execute(t, g, in)[0].F32()
	for i, x := range in["x"].F32() {
		xf := float64(x)
		want := xf / (1 + math.Exp(-1.702*xf))
		if math.Abs(float64(got[i])-want) > 1e-5*(1+math.Abs(want)) {
			t.Fatalf("x=%g: %g, want %g", x, got[i], want)
		}
	}
}

func TestTileNotBroadcastStays(t *testing.T) {
	b := testkit.New(t, "test")
	g := b.Output(b.Node("n", "Tile", nil, b.Input("x", 3, 2), b.Ints(2, 2)))
	res := run(t, g, "--opt_level=2", cpuBE)
	if !slices.Equal(topOps(g), []string{"Tile"}) {
		t.Errorf("ops %v", topOps(g))
	}
	if rec := passRecord(res, "cluster", "graph_kernel_expander"); rec.Note == "" {
		t.Errorf("expander note %+v", rec)
	}
}

// erfInputs: a dense sweep of [-6, 6], the float32 neighbours of the
// branch split and the clamp, tiny and subnormal values, and the specials.
func erfInputs() []float32 {
	var xs []float32
	for i := -600000; i <= 600000; i++ {
		xs = append(xs, float32(i)*1e-5)
	}
	for _, c := range []float32{erfSplit, erfClamp, 1, 0.5, 2} {
		v := c
		for range 64 {
			xs = append(xs, v, -v)
			v = math.Nextafter32(v, 0)
		}
		v = c
		for range 64 {
			v = math.Nextafter32(v, 10)
			xs = append(xs, v, -v)
		}
	}
	for e := -30.0; e <= -3; e += 0.01 {
		v := float32(math.Pow(10, e))
		xs = append(xs, v, -v)
	}
	for _, v := range []float32{1e-45, 3e-45, 1e-40, 1e-39, math.Float32frombits(0x007fffff), math.SmallestNonzeroFloat32,
		0x1p-126, 7, 10, 100, 1e10, math.MaxFloat32} {
		xs = append(xs, v, -v)
	}
	return append(xs, 0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()))
}

// expandedErf builds Erf over xs, expands it (enable_expand_ops) and runs
// the expansion on the runtime's float32 op library.
func expandedErf(t *testing.T, xs []float32) []float32 {
	t.Helper()
	b := testkit.New(t, "test")
	g := b.Output(b.Node("erf", "Erf", nil, b.Input("x", int64(len(xs)))))
	run(t, g, "--opt_level=1 --enable_expand_ops=Erf", cpuBE)
	if !slices.Equal(topOps(g), []string{ir.OpGraphKernel}) {
		t.Fatalf("Erf not expanded into one kernel: %v", topOps(g))
	}
	for _, n := range kernels(g)[0].Body.Nodes {
		if n.Op == "Erf" {
			t.Fatal("kernel body still has Erf")
		}
	}
	in := ir.Float32Tensor([]int64{int64(len(xs))}, xs...)
	return execute(t, g, map[string]*ir.Tensor{"x": in})[0].F32()
}

// TestErfApproxAccuracy: the expansion evaluated in float32 is within 2e-7
// of erf everywhere and within 1e-6 relative for 0 < |x| < 1 (a subnormal
// result may be one subnormal ulp off: float32 cannot do better), and is
// exact at ±0, ±Inf and NaN.
func TestErfApproxAccuracy(t *testing.T) {
	xs := erfInputs()
	got := expandedErf(t, xs)
	const subnormalULP = 0x1p-149
	var maxAbs, maxRel float64
	for i, x := range xs {
		y, want := float64(got[i]), math.Erf(float64(x))
		switch {
		case math.IsNaN(float64(x)):
			if !math.IsNaN(y) {
				t.Errorf("erf(NaN) = %g", y)
			}
			continue
		case x == 0:
			if y != 0 || math.Signbit(y) != math.Signbit(float64(x)) {
				t.Errorf("erf(%g) = %g, want a zero of the same sign", x, y)
			}
			continue
		case math.IsInf(float64(x), 0) || math.Abs(float64(x)) >= erfClamp:
			if w := float64(float32(want)); y != w { // ±1 exactly: erfc(4) is below half an ulp of 1
				t.Errorf("erf(%g) = %g, want %g", x, y, w)
			}
			continue
		}
		d := math.Abs(y - want)
		if d > maxAbs {
			maxAbs = d
		}
		if d > 2e-7 {
			t.Fatalf("erf(%g) = %.9g, want %.9g: abs error %.3g", x, y, want, d)
		}
		if ax := math.Abs(float64(x)); ax < 1 {
			slack := 0.0
			if math.Abs(want) < 0x1p-126 {
				slack = subnormalULP
			}
			if d > 1e-6*math.Abs(want)+slack {
				t.Fatalf("erf(%g) = %.9g, want %.9g: relative error %.3g", x, y, want, d/math.Abs(want))
			}
			if want >= 0x1p-126 || want <= -0x1p-126 {
				maxRel = math.Max(maxRel, d/math.Abs(want))
			}
		}
	}
	t.Logf("%d points: max abs error %.3g, max relative error (|x| < 1, normal results) %.3g", len(xs), maxAbs, maxRel)
}

// TestErfExpandTable: Erf is not expanded by default (on CPU it is clustered
// whole and computed as onnxruntime does); enable_expand_ops=Erf expands it
// (float32 and float16) but not in float64; GPU keeps its native Erf.
func TestErfExpandTable(t *testing.T) {
	erfGraph := func(dt ir.DType) *ir.Graph {
		b := testkit.New(t, "test")
		x := b.Input("x", 3, 5)
		x.DType = dt
		return b.Output(b.Node("erf", "Erf", nil, x))
	}
	cases := []struct {
		name  string
		dt    ir.DType
		flags string
		be    akgcfg.Backend
		want  []string
	}{
		{"cpu-default", ir.Float32, "--opt_level=2", cpuBE, []string{"Erf"}},
		{"cpu-enabled", ir.Float32, "--opt_level=1 --enable_expand_ops=Erf", cpuBE, []string{ir.OpGraphKernel}},
		{"cpu-float16", ir.Float16, "--opt_level=1 --enable_expand_ops=Erf", cpuBE, []string{ir.OpGraphKernel}},
		{"cpu-float64", ir.Float64, "--opt_level=2 --enable_expand_ops=Erf", cpuBE, []string{"Erf"}},
		{"gpu-default", ir.Float32, "--opt_level=2", akgcfg.Backend{Device: akgcfg.GPU}, []string{"Erf"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := erfGraph(c.dt)
			run(t, g, c.flags, c.be)
			if !slices.Equal(topOps(g), c.want) {
				t.Fatalf("ops %v, want %v", topOps(g), c.want)
			}
			if c.want[0] != ir.OpGraphKernel {
				return
			}
			k := kernels(g)[0]
			if k.Attrs.String(ir.GKGraphKernel, "") != "Erf" {
				t.Errorf("kernel from %q", k.Attrs.String(ir.GKGraphKernel, ""))
			}
			if out := k.Body.Outputs[0]; out.DType != c.dt {
				t.Errorf("kernel output dtype %s, want %s", out.DType, c.dt)
			}
			// Computed in float32 and rounded once to the output dtype.
			in := ir.NewTensor(c.dt, []int64{3, 5})
			for i := range 15 {
				in.PutFloat(i, float64(i-7)*0.37)
			}
			got, err := execute(t, g, map[string]*ir.Tensor{"x": in})[0].Float64s()
			if err != nil {
				t.Fatal(err)
			}
			xs, _ := in.Float64s()
			for i, x := range xs {
				want := ir.NewTensor(c.dt, []int64{1})
				want.PutFloat(0, math.Erf(x))
				w, _ := want.Float64s()
				if math.Abs(got[i]-w[0]) > 1e-7 {
					t.Errorf("erf(%g) = %g, want %g", x, got[i], w[0])
				}
			}
		})
	}
}

// TestErfGeLUFusesOnCPU: an ONNX-style erf GeLU after a MatMul and its bias
// (MatMul -> Add -> Div -> Erf -> Add -> Mul -> Mul) becomes MatMul plus a
// single kernel holding everything from the bias Add on (at O2+ the bias may
// instead be folded into the MatMul).
func TestErfGeLUFusesOnCPU(t *testing.T) {
	for _, level := range []string{"1", "2", "3"} {
		t.Run("O"+level, func(t *testing.T) {
			b := testkit.New(t, "test")
			h := b.Node("bias", "Add", nil, b.Node("mm", "MatMul", nil, b.Input("x", 4, 8), b.Weights(8, 16)), b.Weights(16))
			e := b.Node("erf", "Erf", nil, b.Node("div", "RealDiv", nil, h, b.Scalar(float32(math.Sqrt2))))
			m := b.Node("mul", "Mul", nil, h, b.Node("add1", "Add", nil, e, b.Scalar(1)))
			g := b.Output(b.Node("half", "Mul", nil, m, b.Scalar(0.5)))
			checkEquivalent(t, g, "--opt_level="+level, cpuBE, 1e-6)
			ops := topOps(g) // O2 packs the MatMul's constant B
			if len(ops) != 2 || !strings.HasSuffix(ops[0], "MatMul") || ops[1] != ir.OpGraphKernel {
				t.Fatalf("ops %v, want MatMul and one kernel\n%s", ops, dumpText(g))
			}
			var prov []string
			for _, n := range kernels(g)[0].Body.Nodes {
				prov = append(prov, n.Provenance...)
			}
			want := []string{"bias", "div", "erf", "add1", "mul", "half"}
			if level != "1" && len(g.Nodes[0].Inputs) == 3 {
				want = want[1:] // matmul_bias_fold (O2+) moved the bias into the MatMul
			}
			for _, name := range want {
				if !slices.Contains(prov, name) {
					t.Errorf("kernel does not hold %s (provenance %v)", name, prov)
				}
			}
		})
	}
}
