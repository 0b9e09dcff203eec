package ir

import (
	"fmt"
	"sort"
)

// Value is an edge of the graph: a graph input, a constant (Const != nil) or
// the output of a node.
type Value struct {
	Name  string
	DType DType
	// Shape: nil = unknown rank; a dim < 0 is unknown (DimNames may name it).
	Shape    []int64
	DimNames []string
	// Elem is the element type of a Sequence value.
	Elem     DType
	Const    *Tensor
	Producer *Node
	OutIndex int
}

func (v *Value) IsConst() bool { return v != nil && v.Const != nil }

// ShapeKnown reports whether rank and every dim are known.
func (v *Value) ShapeKnown() bool {
	if v.Shape == nil {
		return false
	}
	for _, d := range v.Shape {
		if d < 0 {
			return false
		}
	}
	return true
}

func (v *Value) String() string {
	if v == nil {
		return "<none>"
	}
	return fmt.Sprintf("%s:%s%v", v.Name, v.DType, v.Shape)
}

// Node is one operation. Op is a MindSpore primitive name from the op table
// (ops.go); attributes follow the table's conventions.
type Node struct {
	Name    string
	Op      string
	Inputs  []*Value // a nil entry is an omitted optional input
	Outputs []*Value
	Attrs   Attrs
	// Provenance lists the names of the source-model nodes this node came from.
	Provenance []string
	// Body is the subgraph of a fused (GraphKernel) node.
	Body *Graph
}

func (n *Node) String() string { return fmt.Sprintf("%s (%s)", n.Name, n.Op) }

// Input returns input i or nil when absent.
func (n *Node) Input(i int) *Value {
	if i < len(n.Inputs) {
		return n.Inputs[i]
	}
	return nil
}

// Graph is a function: inputs, outputs and nodes in topological order.
type Graph struct {
	Name    string
	Inputs  []*Value
	Outputs []*Value
	Nodes   []*Node
	// Consts are the constant values (initializers) the nodes use.
	Consts []*Value
	// Meta carries model-level strings (producer, opset, ...) into the writer.
	Meta map[string]string
}

func NewGraph(name string) *Graph { return &Graph{Name: name, Meta: map[string]string{}} }

// TopoSort orders Nodes so that producers come before consumers; it keeps the
// existing order where possible (stable) and fails on a cycle.
func (g *Graph) TopoSort() error {
	indeg := map[*Node]int{}
	users := map[*Node][]*Node{}
	index := map[*Node]int{}
	for i, n := range g.Nodes {
		index[n] = i
	}
	for _, n := range g.Nodes {
		seen := map[*Node]bool{}
		for _, in := range n.Inputs {
			if in == nil || in.Producer == nil || seen[in.Producer] {
				continue
			}
			if _, ok := index[in.Producer]; !ok {
				continue
			}
			seen[in.Producer] = true
			indeg[n]++
			users[in.Producer] = append(users[in.Producer], n)
		}
	}
	var ready []*Node
	for _, n := range g.Nodes {
		if indeg[n] == 0 {
			ready = append(ready, n)
		}
	}
	out := make([]*Node, 0, len(g.Nodes))
	for len(ready) > 0 {
		sort.SliceStable(ready, func(a, b int) bool { return index[ready[a]] < index[ready[b]] })
		n := ready[0]
		ready = ready[1:]
		out = append(out, n)
		for _, u := range users[n] {
			indeg[u]--
			if indeg[u] == 0 {
				ready = append(ready, u)
			}
		}
	}
	if len(out) != len(g.Nodes) {
		for _, n := range g.Nodes {
			if indeg[n] > 0 {
				return fmt.Errorf("graph %s has a cycle through node %s", g.Name, n)
			}
		}
	}
	g.Nodes = out
	return nil
}

// OpHistogram counts nodes per op, sorted by name.
func (g *Graph) OpHistogram() []OpCount {
	m := map[string]int{}
	for _, n := range g.Nodes {
		m[n.Op]++
	}
	out := make([]OpCount, 0, len(m))
	for k, v := range m {
		out = append(out, OpCount{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Op < out[j].Op })
	return out
}

type OpCount struct {
	Op    string
	Count int
}

// Validate checks structural invariants: every input is a graph input, a
// const or an earlier node's output; names are unique.
func (g *Graph) Validate() error {
	avail := map[*Value]bool{}
	for _, v := range g.Inputs {
		avail[v] = true
	}
	for _, v := range g.Consts {
		if v.Const == nil {
			return fmt.Errorf("const %s has no data", v.Name)
		}
		avail[v] = true
	}
	names := map[string]bool{}
	for _, n := range g.Nodes {
		for i, in := range n.Inputs {
			if in == nil {
				continue
			}
			if !avail[in] && !in.IsConst() {
				return fmt.Errorf("node %s: input %d (%s) is not defined before use", n, i, in.Name)
			}
		}
		for _, o := range n.Outputs {
			if names[o.Name] && o.Name != "" {
				return fmt.Errorf("node %s: output name %q defined twice", n, o.Name)
			}
			names[o.Name] = true
			avail[o] = true
		}
	}
	for _, o := range g.Outputs {
		if !avail[o] {
			return fmt.Errorf("graph output %s is not produced", o.Name)
		}
	}
	// Control-flow bodies are closed graphs of their own.
	for _, n := range g.Nodes {
		for _, sg := range n.Subgraphs() {
			if err := sg.Graph.Validate(); err != nil {
				return fmt.Errorf("node %s: %s: %w", n, sg.Attr, err)
			}
		}
	}
	return nil
}
