package testkit

import (
	"bytes"
	"fmt"
	"reflect"

	"gkconv/internal/ir"
)

// GraphDiff describes the first difference between two graphs (names,
// meta, inputs, outputs, constants, nodes with their attributes,
// provenance and bodies), or "".
func GraphDiff(a, b *ir.Graph) string {
	if a.Name != b.Name {
		return fmt.Sprintf("name %q vs %q", a.Name, b.Name)
	}
	if !reflect.DeepEqual(a.Meta, b.Meta) {
		return fmt.Sprintf("meta %v vs %v", a.Meta, b.Meta)
	}
	if d := ValuesDiff("input", a.Inputs, b.Inputs); d != "" {
		return d
	}
	if d := ValuesDiff("output", a.Outputs, b.Outputs); d != "" {
		return d
	}
	if d := ValuesDiff("const", a.Consts, b.Consts); d != "" {
		return d
	}
	if len(a.Nodes) != len(b.Nodes) {
		return fmt.Sprintf("%d nodes vs %d", len(a.Nodes), len(b.Nodes))
	}
	for i, x := range a.Nodes {
		y := b.Nodes[i]
		if x.Name != y.Name || x.Op != y.Op {
			return fmt.Sprintf("node %d: %s vs %s", i, x, y)
		}
		if !reflect.DeepEqual(x.Provenance, y.Provenance) {
			return fmt.Sprintf("node %s provenance %q vs %q", x, x.Provenance, y.Provenance)
		}
		if d := ValuesDiff("node "+x.Name+" input", x.Inputs, y.Inputs); d != "" {
			return d
		}
		if d := ValuesDiff("node "+x.Name+" output", x.Outputs, y.Outputs); d != "" {
			return d
		}
		if d := AttrsDiff(x.Attrs, y.Attrs); d != "" {
			return "node " + x.Name + ": " + d
		}
		if (x.Body == nil) != (y.Body == nil) {
			return "node " + x.Name + ": body presence differs"
		}
		if x.Body != nil {
			if d := GraphDiff(x.Body, y.Body); d != "" {
				return "node " + x.Name + " body: " + d
			}
		}
	}
	return ""
}

// ValuesDiff describes the first difference between two value lists (name,
// dtype, shape, dim names, constant data), or "".
func ValuesDiff(what string, a, b []*ir.Value) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%s count %d vs %d", what, len(a), len(b))
	}
	for i := range a {
		x, y := a[i], b[i]
		if (x == nil) != (y == nil) {
			return fmt.Sprintf("%s %d: nil vs non-nil", what, i)
		}
		if x == nil {
			continue
		}
		if x.Name != y.Name || x.DType != y.DType || !reflect.DeepEqual(x.Shape, y.Shape) || !sameStrings(x.DimNames, y.DimNames) {
			return fmt.Sprintf("%s %d: %v%q vs %v%q", what, i, x, x.DimNames, y, y.DimNames)
		}
		if (x.Const == nil) != (y.Const == nil) {
			return fmt.Sprintf("%s %s: const presence differs", what, x.Name)
		}
		if x.Const != nil && !TensorEqual(x.Const, y.Const) {
			return fmt.Sprintf("%s %s: const %s vs %s", what, x.Name, x.Const.Summary(4), y.Const.Summary(4))
		}
	}
	return ""
}

func sameStrings(a, b []string) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}

// TensorEqual: same dtype, shape (nil and [] alike), bytes and strings.
func TensorEqual(a, b *ir.Tensor) bool {
	return a.DType == b.DType && reflect.DeepEqual(normShape(a.Shape), normShape(b.Shape)) &&
		bytes.Equal(a.Data, b.Data) && sameStrings(a.Strings, b.Strings)
}

func normShape(s []int64) []int64 {
	if len(s) == 0 {
		return []int64{}
	}
	return s
}

// AttrsDiff describes the first difference between two attribute maps, or
// "". It ignores ir.SourcePrimitive: a hint the MindIR reader sets for the
// writer (which primitive form to write), not part of the node's meaning.
func AttrsDiff(a, b ir.Attrs) string {
	a, b = withoutHint(a), withoutHint(b)
	if len(a) != len(b) {
		return fmt.Sprintf("attrs %v vs %v", a.Keys(), b.Keys())
	}
	for k, x := range a {
		y, ok := b[k]
		if !ok {
			return "attr " + k + " missing"
		}
		if x.Kind != y.Kind {
			return fmt.Sprintf("attr %s kind %d vs %d", k, x.Kind, y.Kind)
		}
		same := true
		switch x.Kind {
		case ir.AttrInt:
			same = x.I == y.I
		case ir.AttrFloat:
			same = x.F == y.F
		case ir.AttrString:
			same = x.S == y.S
		case ir.AttrBytes:
			same = bytes.Equal(x.B, y.B)
		case ir.AttrInts:
			same = len(x.Ints) == len(y.Ints) && (len(x.Ints) == 0 || reflect.DeepEqual(x.Ints, y.Ints))
		case ir.AttrFloats:
			same = len(x.Floats) == len(y.Floats) && (len(x.Floats) == 0 || reflect.DeepEqual(x.Floats, y.Floats))
		case ir.AttrStrings:
			same = sameStrings(x.Strings, y.Strings)
		case ir.AttrTensor:
			same = TensorEqual(x.T, y.T)
		case ir.AttrGraph:
			if d := GraphDiff(x.G, y.G); d != "" {
				return "attr " + k + " graph: " + d
			}
		}
		if !same {
			return fmt.Sprintf("attr %s: %#v vs %#v", k, x, y)
		}
	}
	return ""
}

func withoutHint(a ir.Attrs) ir.Attrs {
	if !a.Has(ir.SourcePrimitive) {
		return a
	}
	out := ir.Attrs{}
	for k, v := range a {
		if k != ir.SourcePrimitive {
			out[k] = v
		}
	}
	return out
}

// CloneGraph deep-copies the top level of g (values and nodes; bodies and
// constant tensors are shared), so a graph can be run before and after a
// pass that rewrites it in place.
func CloneGraph(g *ir.Graph) *ir.Graph {
	c := ir.NewGraph(g.Name)
	vm := map[*ir.Value]*ir.Value{}
	cp := func(v *ir.Value) *ir.Value {
		if v == nil {
			return nil
		}
		if m, ok := vm[v]; ok {
			return m
		}
		m := &ir.Value{Name: v.Name, DType: v.DType, Shape: append([]int64(nil), v.Shape...), Const: v.Const}
		vm[v] = m
		return m
	}
	for _, v := range g.Inputs {
		c.Inputs = append(c.Inputs, cp(v))
	}
	for _, v := range g.Consts {
		c.Consts = append(c.Consts, cp(v))
	}
	for _, n := range g.Nodes {
		m := &ir.Node{Name: n.Name, Op: n.Op, Attrs: n.Attrs.Clone(), Provenance: n.Provenance, Body: n.Body}
		for _, in := range n.Inputs {
			m.Inputs = append(m.Inputs, cp(in))
		}
		for i, o := range n.Outputs {
			mo := cp(o)
			mo.Producer, mo.OutIndex = m, i
			m.Outputs = append(m.Outputs, mo)
		}
		c.Nodes = append(c.Nodes, m)
	}
	for _, o := range g.Outputs {
		c.Outputs = append(c.Outputs, cp(o))
	}
	return c
}
