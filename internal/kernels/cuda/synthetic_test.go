package cuda

import (
	"fmt"
	"gkconv/internal/kerneltest"
	"gkconv/internal/testkit"
	"strings"
	"testing"

	"gkconv/internal/ir"
)

// synthetic builds a GraphKernel node around a body made by f.
func synthetic(t *testing.T, name string, f func(b *testkit.Graph) []*ir.Value) *ir.Node {
	t.Helper()
	b := testkit.New(t, name)
	return b.GraphKernel(name, f(b)...)
}

// TestSyntheticStrategies covers what the corpus models do not: a softmax
// row longer than a block (several strided iterations and a 256-thread tree
// reduction), a reduction over a leading axis (inline loops), a reshape
// that moves elements, and multiple outputs of different shapes.
func TestSyntheticStrategies(t *testing.T) {
	needClang(t)
	needCXX(t)
	cases := []struct {
		node     *ir.Node
		strategy string
	}{
		{synthetic(t, "softmax", func(b *testkit.Graph) []*ir.Value {
			x := b.Input("", 3, 1000)
			m := b.Op("ReduceMax", ir.Attrs{"keepdims": ir.IntAttr(1)}, x, b.Ints(-1))
			e := b.Op("Exp", nil, b.Op("Sub", nil, x, m))
			s := b.Op("ReduceSum", ir.Attrs{"keepdims": ir.IntAttr(1)}, e, b.Ints(-1))
			return []*ir.Value{b.Op("RealDiv", nil, e, s), s}
		}), "row"},
		{synthetic(t, "colsum", func(b *testkit.Graph) []*ir.Value {
			x := b.Input("", 50, 7)
			s := b.Op("ReduceSum", ir.Attrs{"keepdims": ir.IntAttr(0)}, b.Op("Tanh", nil, x), b.Ints(0))
			return []*ir.Value{s, b.Op("Sigmoid", nil, x)}
		}), "inline-reduce"},
		{synthetic(t, "reshape", func(b *testkit.Graph) []*ir.Value {
			x := b.Input("", 6, 4)
			shape := b.Ints(4, 6)
			r := b.Op("Reshape", nil, b.Op("Erf", nil, x), shape)
			return []*ir.Value{b.Op("Mul", nil, r, b.Input("", 6))}
		}), "elementwise"},
	}
	for _, c := range cases {
		t.Run(c.node.Name, func(t *testing.T) {
			if err := NewBuilder(Options{CacheDir: t.TempDir()}).BuildKernels([]*ir.Node{c.node}); err != nil {
				t.Fatal(err)
			}
			if s := c.node.Attrs.String(ir.GKStrategy, ""); s != c.strategy {
				t.Errorf("strategy %s, want %s", s, c.strategy)
			}
			ins := kerneltest.BodyInputs(c.node.Body, 7)
			got, err := (&Emulator{}).Run(c.node, ins)
			if err != nil {
				t.Fatal(err)
			}
			want := kerneltest.RefRun(t, c.node.Body, ins)
			for k := range want {
				kerneltest.CompareTensors(t, fmt.Sprintf("output %d", k), got[k], want[k], 1e-5)
			}
		})
	}
}

// TestDeviceMathRefused: an op whose libm call the device math lacks
// (kernels.libmUnary without Device) is refused by name; one it has is not.
func TestDeviceMathRefused(t *testing.T) {
	sin := synthetic(t, "sin", func(b *testkit.Graph) []*ir.Value { return []*ir.Value{b.Op("Sin", nil, b.Input("", 8))} })
	if _, _, err := Generate("gk_sin", sin.Body); err == nil || !strings.Contains(err.Error(), "Sin has no device implementation") {
		t.Errorf("Sin: %v; want it refused by name", err)
	}
	tanh := synthetic(t, "tanh", func(b *testkit.Graph) []*ir.Value { return []*ir.Value{b.Op("Tanh", nil, b.Input("", 8))} })
	if _, _, err := Generate("gk_tanh", tanh.Body); err != nil {
		t.Errorf("Tanh: %v", err)
	}
}
