// Package testkit holds the graph builders and graph comparison that the
// tests of several packages share (fusion, kernels/*, runtime, mindir).
// Tests only: no non-test code may import it (internal/archtest).
package testkit

import (
	"fmt"
	"testing"

	"gkconv/internal/ir"
)

// Graph builds a test graph. Every node is typed by its op's shape function
// when it is added; a failure stops the test. Generated names are numbered
// by one counter: constants c<k> (float scalars), i<k> (int64 vectors) and
// w<k> (weights); unnamed nodes <op>_<k> with output v<k>; unnamed inputs
// in<i>.
type Graph struct {
	t testing.TB
	G *ir.Graph
	e *ir.Editor
	n int
}

// New starts an empty graph.
func New(t testing.TB, name string) *Graph {
	g := ir.NewGraph(name)
	return &Graph{t: t, G: g, e: ir.NewEditor(g)}
}

// Input adds a float32 graph input (name "": in<i>).
func (b *Graph) Input(name string, shape ...int64) *ir.Value {
	return b.InputOf(name, ir.Float32, shape...)
}

// InputOf adds a graph input of dtype dt (name "": in<i>).
func (b *Graph) InputOf(name string, dt ir.DType, shape ...int64) *ir.Value {
	if name == "" {
		name = fmt.Sprintf("in%d", len(b.G.Inputs))
	}
	v := &ir.Value{Name: name, DType: dt, Shape: shape}
	b.G.Inputs = append(b.G.Inputs, v)
	return v
}

// Const adds a constant.
func (b *Graph) Const(name string, t *ir.Tensor) *ir.Value { return b.G.AddConst(name, t) }

// Scalar adds a float32 scalar constant c<k>.
func (b *Graph) Scalar(x float32) *ir.Value {
	b.n++
	return b.Const(fmt.Sprintf("c%d", b.n), ir.Float32Tensor([]int64{}, x))
}

// Ints adds an int64 vector constant i<k> (axes, shapes).
func (b *Graph) Ints(vals ...int64) *ir.Value {
	b.n++
	return b.Const(fmt.Sprintf("i%d", b.n), ir.Int64Tensor([]int64{int64(len(vals))}, vals...))
}

// Weights adds a float32 constant w<k> of shape, filled with small
// deterministic values.
func (b *Graph) Weights(shape ...int64) *ir.Value {
	b.n++
	t := ir.NewTensor(ir.Float32, shape)
	for i := range t.F32() {
		t.F32()[i] = float32(i%7)*0.25 + 0.5
	}
	return b.Const(fmt.Sprintf("w%d", b.n), t)
}

// Op adds an unnamed node (<op>_<k>, output v<k>) and returns its output.
func (b *Graph) Op(op string, attrs ir.Attrs, ins ...*ir.Value) *ir.Value {
	b.t.Helper()
	b.n++
	return b.add(fmt.Sprintf("%s_%d", op, b.n), op, attrs, ins, fmt.Sprintf("v%d", b.n))[0]
}

// Node adds the node name (output <name>_out0) and returns its output.
func (b *Graph) Node(name, op string, attrs ir.Attrs, ins ...*ir.Value) *ir.Value {
	b.t.Helper()
	return b.NodeN(name, op, 1, attrs, ins...)[0]
}

// NodeN adds the node name with nout outputs <name>_out<i>.
func (b *Graph) NodeN(name, op string, nout int, attrs ir.Attrs, ins ...*ir.Value) []*ir.Value {
	b.t.Helper()
	outs := make([]string, nout)
	for i := range outs {
		outs[i] = fmt.Sprintf("%s_out%d", name, i)
	}
	return b.add(name, op, attrs, ins, outs...)
}

func (b *Graph) add(name, op string, attrs ir.Attrs, ins []*ir.Value, outs ...string) []*ir.Value {
	b.t.Helper()
	n := ir.NewNode(name, op, ins, attrs.Clone(), outs...)
	if err := b.e.Emit(n); err != nil {
		b.t.Fatalf("%s: %v", name, err)
	}
	return n.Outputs
}

// Output appends graph outputs and returns the graph, checked by Validate.
func (b *Graph) Output(vs ...*ir.Value) *ir.Graph {
	b.t.Helper()
	b.G.Outputs = append(b.G.Outputs, vs...)
	if err := b.G.Validate(); err != nil {
		b.t.Fatal(err)
	}
	return b.G
}

// GraphKernel makes the graph, with outs as its outputs, the body of a
// GraphKernel node named name. The node reads and writes new values typed as
// the body's inputs and outputs (outer_<name>), in no graph.
func (b *Graph) GraphKernel(name string, outs ...*ir.Value) *ir.Node {
	b.G.Outputs = outs
	n := &ir.Node{Name: name, Op: ir.OpGraphKernel, Attrs: ir.Attrs{}, Body: b.G}
	for _, v := range b.G.Inputs {
		n.Inputs = append(n.Inputs, &ir.Value{Name: "outer_" + v.Name, DType: v.DType, Shape: v.Shape})
	}
	for i, v := range outs {
		n.Outputs = append(n.Outputs, &ir.Value{Name: "outer_" + v.Name, DType: v.DType, Shape: v.Shape, Producer: n, OutIndex: i})
	}
	return n
}
