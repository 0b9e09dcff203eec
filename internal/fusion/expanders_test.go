package fusion

import (
	"math"
	"slices"
	"testing"

	"gkconv/internal/akgcfg"
	"gkconv/internal/ir"
	"gkconv/internal/runtime/kernel"
)

type expandCase struct {
	name string
	op   string
	be   akgcfg.Backend
	tol  float64
	mk   func(b *gb) []*ir.Value
}

func unary(op string, attrs ir.Attrs) func(b *gb) []*ir.Value {
	return func(b *gb) []*ir.Value { return []*ir.Value{b.op("n", op, attrs, b.input("x", 3, 5))} }
}

var ascendBE = akgcfg.Backend{Device: akgcfg.Ascend}

func expandCases() []expandCase {
	return []expandCase{
		{"GeLU-erf", "GeLU", cpuBE, 1e-6, unary("GeLU", nil)},
		{"GeLU-tanh-cpu", "GeLU", cpuBE, 1e-6, unary("GeLU", ir.Attrs{"approximate": ir.StringAttr("tanh")})},
		{"GeLU-tanh-ascend", "GeLU", ascendBE, 2e-4, unary("GeLU", ir.Attrs{"approximate": ir.StringAttr("tanh")})},
		{"Sigmoid", "Sigmoid", cpuBE, 1e-6, unary("Sigmoid", nil)},
		{"HSigmoid", "HSigmoid", cpuBE, 1e-6, unary("HSigmoid", ir.Attrs{"alpha": ir.FloatAttr(1.0 / 6)})},
		{"HSwish", "HSwish", cpuBE, 1e-6, unary("HSwish", nil)},
		{"Mish", "Mish", cpuBE, 1e-5, unary("Mish", nil)},
		{"Tanh", "Tanh", cpuBE, 1e-6, unary("Tanh", nil)},
		{"ReLU", "ReLU", cpuBE, 0, unary("ReLU", nil)},
		{"Rsqrt", "Rsqrt", cpuBE, 1e-6, func(b *gb) []*ir.Value {
			return []*ir.Value{b.op("n", "Rsqrt", nil, b.op("a", "Abs", nil, b.input("x", 3, 5)))}
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
		{"Clip", "Clip", cpuBE, 0, func(b *gb) []*ir.Value {
			return []*ir.Value{b.op("n", "Clip", nil, b.input("x", 3, 5), b.scalar(-0.5), b.scalar(0.7))}
		}},
		{"SquaredDifference", "SquaredDifference", cpuBE, 0, func(b *gb) []*ir.Value {
			return []*ir.Value{b.op("n", "SquaredDifference", nil, b.input("x", 3, 5), b.input("y", 5))}
		}},
		{"AddN", "AddN", cpuBE, 0, func(b *gb) []*ir.Value {
			return []*ir.Value{b.op("n", "AddN", nil, b.input("x", 3, 5), b.input("y", 3, 5), b.input("z", 5))}
		}},
		{"BiasAdd-NCHW", "BiasAdd", cpuBE, 0, func(b *gb) []*ir.Value {
			return []*ir.Value{b.op("n", "BiasAdd", nil, b.input("x", 2, 3, 4, 4), b.weights(3))}
		}},
		{"BiasAdd-NHWC", "BiasAdd", cpuBE, 0, func(b *gb) []*ir.Value {
			return []*ir.Value{b.op("n", "BiasAdd", ir.Attrs{"format": ir.StringAttr("NHWC")}, b.input("x", 2, 4, 4, 3), b.weights(3))}
		}},
		{"ReduceMean", "ReduceMean", cpuBE, 1e-6, func(b *gb) []*ir.Value {
			return []*ir.Value{b.op("n", "ReduceMean", ir.Attrs{"keepdims": ir.IntAttr(0)}, b.input("x", 3, 4, 5), b.ints(-1, 0))}
		}},
		{"Tile", "Tile", cpuBE, 0, func(b *gb) []*ir.Value {
			return []*ir.Value{b.op("n", "Tile", nil, b.input("x", 3, 1), b.ints(1, 4))}
		}},
		{"BatchNorm", "BatchNorm", cpuBE, 1e-5, func(b *gb) []*ir.Value {
			return []*ir.Value{b.op("n", "BatchNorm", ir.Attrs{"epsilon": ir.FloatAttr(1e-3)},
				b.input("x", 2, 3, 4, 4), b.weights(3), b.weights(3), b.weights(3), b.weights(3))}
		}},
		{"InstanceNorm", "InstanceNorm", cpuBE, 1e-5, func(b *gb) []*ir.Value {
			return []*ir.Value{b.op("n", "InstanceNorm", nil, b.input("x", 2, 3, 4, 4), b.weights(3), b.weights(3))}
		}},
		{"LayerNorm-axis1", "LayerNorm", cpuBE, 1e-5, func(b *gb) []*ir.Value {
			return []*ir.Value{b.op("n", "LayerNorm", ir.Attrs{"axis": ir.IntAttr(1)}, b.input("x", 2, 3, 4), b.weights(3, 4))}
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
			b := newGB(t)
			g := b.output(mk(b)...)
			flags := "--opt_level=2 --enable_expand_ops_only=" + c.op
			if _, ok := kernel.Lookup(c.op); ok && c.mk != nil {
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
		b := newGB(t)
		attrs := ir.Attrs{}
		if approx != "" {
			attrs["approximate"] = ir.StringAttr(approx)
		}
		g := b.output(b.op("n", "GeLU", attrs, b.input("x", 8)))
		run(t, g, "--opt_level=2", be)
		var out []string
		for _, n := range kernels(g)[0].Body.Nodes {
			out = append(out, n.Op)
		}
		return out
	}
	if o := ops("", cpuBE); !slices.Contains(o, "Erf") {
		t.Errorf("approximate=none: %v", o)
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
	b := newGB(t)
	x := b.input("x", 3, 5)
	n := b.g.AddNode("n", "FastGeLU", []*ir.Value{x}, "y")
	n.Outputs[0].DType, n.Outputs[0].Shape = ir.Float32, []int64{3, 5}
	g := b.output(n.Outputs[0])
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
	b := newGB(t)
	g := b.output(b.op("n", "Tile", nil, b.input("x", 3, 2), b.ints(2, 2)))
	res := run(t, g, "--opt_level=2", cpuBE)
	if !slices.Equal(topOps(g), []string{"Tile"}) {
		t.Errorf("ops %v", topOps(g))
	}
	if res.Passes[4].Name != "graph_kernel_expander" || res.Passes[4].Note == "" {
		t.Errorf("expander note %+v", res.Passes[4])
	}
}
