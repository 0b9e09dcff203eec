package cpu

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/native"
)

// bodyBuilder assembles a shape-inferred body graph.
type bodyBuilder struct {
	t testing.TB
	g *ir.Graph
	n int
}

func newBody(t testing.TB, name string) *bodyBuilder {
	return &bodyBuilder{t: t, g: ir.NewGraph(name)}
}

func (b *bodyBuilder) input(dt ir.DType, shape ...int64) *ir.Value {
	v := &ir.Value{Name: fmt.Sprintf("in%d", len(b.g.Inputs)), DType: dt, Shape: shape}
	b.g.Inputs = append(b.g.Inputs, v)
	return v
}

func (b *bodyBuilder) scalar(x float32) *ir.Value {
	b.n++
	return b.g.AddConst(fmt.Sprintf("c%d", b.n), ir.Float32Tensor(nil, x))
}

func (b *bodyBuilder) ints(vals ...int64) *ir.Value {
	b.n++
	return b.g.AddConst(fmt.Sprintf("c%d", b.n), ir.Int64Tensor([]int64{int64(len(vals))}, vals...))
}

func (b *bodyBuilder) op(op string, attrs ir.Attrs, ins ...*ir.Value) *ir.Value {
	b.t.Helper()
	b.n++
	n := b.g.AddNode(fmt.Sprintf("%s_%d", op, b.n), op, ins, fmt.Sprintf("v%d", b.n))
	if attrs != nil {
		n.Attrs = attrs
	}
	if err := ir.InferNode(n); err != nil {
		b.t.Fatal(err)
	}
	return n.Outputs[0]
}

// node wraps the body in a GraphKernel node.
func (b *bodyBuilder) node(name string, outs ...*ir.Value) *ir.Node {
	b.g.Outputs = outs
	n := &ir.Node{Name: name, Op: ir.OpGraphKernel, Attrs: ir.Attrs{}, Body: b.g}
	for _, v := range b.g.Inputs {
		n.Inputs = append(n.Inputs, &ir.Value{Name: "outer_" + v.Name, DType: v.DType, Shape: v.Shape})
	}
	for _, v := range outs {
		n.Outputs = append(n.Outputs, &ir.Value{Name: "outer_" + v.Name, DType: v.DType, Shape: v.Shape, Producer: n})
	}
	return n
}

func randTensor(r *rand.Rand, shape []int64, lo, hi float64) *ir.Tensor {
	t := ir.NewTensor(ir.Float32, shape)
	for i := range t.F32() {
		t.F32()[i] = float32(lo + (hi-lo)*r.Float64())
	}
	return t
}

// run builds (into a per-test cache) and calls the node's kernel.
func runKernel(t testing.TB, n *ir.Node, threads int, ins ...*ir.Tensor) []*ir.Tensor {
	t.Helper()
	if !native.Available {
		t.Skip("built without cgo: kernels cannot be loaded")
	}
	k, err := native.Load(n.Attrs[ir.GKKernelSO].B, n.Attrs.String(ir.GKKernelSOHash, ""), n.Attrs.String(ir.GKKernelName, ""))
	if err != nil {
		t.Fatal(err)
	}
	var bufs [][]byte
	for _, x := range ins {
		bufs = append(bufs, x.Data)
	}
	var outs []*ir.Tensor
	for _, v := range n.Body.Outputs {
		o := ir.NewTensor(v.DType, v.Shape)
		outs = append(outs, o)
		bufs = append(bufs, o.Data)
	}
	k.Call(threads, bufs)
	return outs
}

func build(t testing.TB, dir string, nodes ...*ir.Node) *Builder {
	t.Helper()
	b := NewBuilder(Options{CacheDir: dir})
	if err := b.BuildKernels(nodes); err != nil {
		t.Fatal(err)
	}
	return b
}

// checkClose compares float32 results with a float64 reference: the error
// must be within rel of max(|want|, scale). scale is the size of the terms
// that cancel in the result (float32 cannot do better than that); use 1e-3
// when nothing cancels.
func checkClose(t *testing.T, what string, got []float32, want []float64, rel float64, scale ...float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	bad := 0
	for i := range got {
		w := want[i]
		d := math.Abs(float64(got[i]) - w)
		sc := 1e-3
		if len(scale) == 1 {
			sc = scale[0]
		} else if len(scale) == len(want) {
			sc = scale[i]
		}
		if d > rel*math.Max(math.Abs(w), sc) || math.IsNaN(float64(got[i])) != math.IsNaN(w) {
			if bad < 5 {
				t.Errorf("%s[%d] = %g, want %g (rel err %.3g)", what, i, got[i], w, d/math.Max(math.Abs(w), 1e-30))
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d values off", what, bad, len(got))
	}
}
