package cuda

import (
	"fmt"
	"gkconv/internal/kerneltest"
	"testing"

	"gkconv/internal/ir"
)

// synthetic builds a GraphKernel node around a body made by f.
func synthetic(t *testing.T, name string, f func(b *ir.Graph, op func(string, ir.Attrs, ...*ir.Value) *ir.Value) []*ir.Value) *ir.Node {
	t.Helper()
	g := ir.NewGraph(name)
	k := 0
	op := func(o string, attrs ir.Attrs, ins ...*ir.Value) *ir.Value {
		k++
		n := g.AddNode(fmt.Sprintf("%s_%d", o, k), o, ins, fmt.Sprintf("v%d", k))
		if attrs != nil {
			n.Attrs = attrs
		}
		if err := ir.InferNode(n); err != nil {
			t.Fatal(err)
		}
		return n.Outputs[0]
	}
	g.Outputs = f(g, op)
	n := &ir.Node{Name: name, Op: ir.OpGraphKernel, Attrs: ir.Attrs{}, Body: g}
	for _, v := range g.Inputs {
		n.Inputs = append(n.Inputs, &ir.Value{Name: "o_" + v.Name, DType: v.DType, Shape: v.Shape})
	}
	for _, v := range g.Outputs {
		n.Outputs = append(n.Outputs, &ir.Value{Name: "o_" + v.Name, DType: v.DType, Shape: v.Shape, Producer: n})
	}
	return n
}

// TestSyntheticStrategies covers what the corpus models do not: a softmax
// row longer than a block (several strided iterations and a 256-thread tree
// reduction), a reduction over a leading axis (inline loops), a reshape
// that moves elements, and multiple outputs of different shapes.
func TestSyntheticStrategies(t *testing.T) {
	needClang(t)
	needCXX(t)
	in := func(g *ir.Graph, shape ...int64) *ir.Value {
		v := &ir.Value{Name: fmt.Sprintf("x%d", len(g.Inputs)), DType: ir.Float32, Shape: shape}
		g.Inputs = append(g.Inputs, v)
		return v
	}
	axes := func(g *ir.Graph, a ...int64) *ir.Value {
		return g.AddConst(fmt.Sprintf("axes%d", len(g.Consts)), ir.Int64Tensor([]int64{int64(len(a))}, a...))
	}
	cases := []struct {
		node     *ir.Node
		strategy string
	}{
		{synthetic(t, "softmax", func(g *ir.Graph, op func(string, ir.Attrs, ...*ir.Value) *ir.Value) []*ir.Value {
			x := in(g, 3, 1000)
			m := op("ReduceMax", ir.Attrs{"keepdims": ir.IntAttr(1)}, x, axes(g, -1))
			e := op("Exp", nil, op("Sub", nil, x, m))
			s := op("ReduceSum", ir.Attrs{"keepdims": ir.IntAttr(1)}, e, axes(g, -1))
			return []*ir.Value{op("RealDiv", nil, e, s), s}
		}), "row"},
		{synthetic(t, "colsum", func(g *ir.Graph, op func(string, ir.Attrs, ...*ir.Value) *ir.Value) []*ir.Value {
			x := in(g, 50, 7)
			s := op("ReduceSum", ir.Attrs{"keepdims": ir.IntAttr(0)}, op("Tanh", nil, x), axes(g, 0))
			return []*ir.Value{s, op("Sigmoid", nil, x)}
		}), "inline-reduce"},
		{synthetic(t, "reshape", func(g *ir.Graph, op func(string, ir.Attrs, ...*ir.Value) *ir.Value) []*ir.Value {
			x := in(g, 6, 4)
			shape := g.AddConst("shape", ir.Int64Tensor([]int64{2}, 4, 6))
			r := op("Reshape", nil, op("Erf", nil, x), shape)
			return []*ir.Value{op("Mul", nil, r, in(g, 6))}
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
