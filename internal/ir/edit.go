package ir

import "strconv"

// The graph-editing API. Everything that builds or rewrites a graph (the
// ONNX and MindIR readers, the fusion passes and expanders) goes through these
// pieces:
//
//   - Names hands out names that are unique in one namespace.
//   - NewNode makes a node with its output values; an Editor appends it typed
//     by its op's shape function (Emit), or typed where it can be (Place, for
//     readers that type the rest once the graph is complete).
//   - Editor ties a graph to the names it uses and adds inputs, constants,
//     nodes and copies of nodes from another graph.
//   - Graph.ReplaceUses, Graph.RemoveDead, Graph.Consumers and
//     Editor.SoleUse rewrite a graph in place.

// Names is one namespace: Unique hands out base itself while it is free,
// else the first free base_1, base_2, ...
type Names struct{ used map[string]bool }

// NewNames is an empty namespace.
func NewNames() *Names { return &Names{used: map[string]bool{}} }

// GraphNames is the namespace of g: every name of its inputs, constants,
// nodes and node outputs is taken.
func GraphNames(g *Graph) *Names {
	s := NewNames()
	for _, v := range g.Inputs {
		s.used[v.Name] = true
	}
	for _, v := range g.Consts {
		s.used[v.Name] = true
	}
	for _, n := range g.Nodes {
		s.used[n.Name] = true
		for _, o := range n.Outputs {
			if o != nil {
				s.used[o.Name] = true
			}
		}
	}
	return s
}

// Reserve marks name as taken.
func (s *Names) Reserve(name string) { s.used[name] = true }

// Release frees name (a value that was renamed).
func (s *Names) Release(name string) { delete(s.used, name) }

// Used reports whether name is taken.
func (s *Names) Used(name string) bool { return s.used[name] }

// Unique takes and returns base, or base_<i> with the smallest i >= 1 that
// is free.
func (s *Names) Unique(base string) string {
	name := base
	for i := 1; s.used[name]; i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	s.used[name] = true
	return name
}

// NewNode returns a node of op reading inputs, with attrs (nil: none) and
// one output value per name, produced by it. It is in no graph yet.
func NewNode(name, op string, inputs []*Value, attrs Attrs, outNames ...string) *Node {
	if attrs == nil {
		attrs = Attrs{}
	}
	n := &Node{Name: name, Op: op, Inputs: inputs, Attrs: attrs}
	for i, on := range outNames {
		n.Outputs = append(n.Outputs, &Value{Name: on, Producer: n, OutIndex: i})
	}
	return n
}

// TryInfer types the outputs of n when it can: the op has a shape function,
// every present input has a dtype and the function succeeds. Otherwise the
// outputs keep what they had and it reports false. Readers use it while
// building, so that later steps see the types known so far; the full
// inference pass reports what is still wrong.
func TryInfer(n *Node) bool {
	if !HasInfer(n.Op) {
		return false
	}
	for _, in := range n.Inputs {
		if in != nil && in.DType == Undefined {
			return false
		}
	}
	saved := make([]Value, len(n.Outputs))
	for i, o := range n.Outputs {
		saved[i] = *o
	}
	if err := InferNode(n); err != nil {
		for i, o := range n.Outputs {
			*o = saved[i]
		}
		return false
	}
	return true
}

// Editor edits one graph: the names it hands out are unique in the graph,
// and the nodes it adds are typed by their op's shape function.
type Editor struct {
	G *Graph
	*Names
	// Outer lists, per input added by Capture, the value of the enclosing
	// graph it stands for: a GraphKernel body's kernel inputs.
	Outer []*Value

	seq     int
	readers map[*Value][]*Node
	outputs map[*Value]bool
}

// NewEditor edits g; the names g already uses are taken.
func NewEditor(g *Graph) *Editor { return &Editor{G: g, Names: GraphNames(g)} }

// Seq counts 1, 2, ...: a sequence number for generated node names.
func (e *Editor) Seq() int {
	e.seq++
	return e.seq
}

// Const adds a constant named after base.
func (e *Editor) Const(base string, t *Tensor) *Value { return e.G.AddConst(e.Unique(base), t) }

// Capture adds a graph input standing for outer, a value of the enclosing
// graph: named after it, with its dtype and shape; outer is appended to
// Outer.
func (e *Editor) Capture(outer *Value) *Value {
	v := &Value{Name: e.Unique(outer.Name), DType: outer.DType, Shape: append([]int64{}, outer.Shape...)}
	e.G.Inputs = append(e.G.Inputs, v)
	e.Outer = append(e.Outer, outer)
	return v
}

// Emit types the outputs of n with its op's shape function and appends n.
// When the function fails n is not added and the error is returned.
func (e *Editor) Emit(n *Node) error {
	if err := InferNode(n); err != nil {
		return err
	}
	e.G.Nodes = append(e.G.Nodes, n)
	return nil
}

// Place appends n and types its outputs where it can (TryInfer).
func (e *Editor) Place(n *Node) bool {
	e.G.Nodes = append(e.G.Nodes, n)
	return TryInfer(n)
}

// Copy appends a copy of n, a node of another graph, named after it: its
// inputs mapped by input, its attributes copied, its outputs new values
// typed as n's. The copy has n's body, if any.
func (e *Editor) Copy(n *Node, input func(*Value) *Value) *Node {
	c := &Node{Name: e.Unique(n.Name), Op: n.Op, Attrs: n.Attrs.Clone(),
		Provenance: append([]string(nil), n.Provenance...), Body: n.Body}
	for _, in := range n.Inputs {
		c.Inputs = append(c.Inputs, input(in))
	}
	for i, o := range n.Outputs {
		c.Outputs = append(c.Outputs, &Value{Name: e.Unique(o.Name), DType: o.DType, Shape: append([]int64{}, o.Shape...),
			DimNames: o.DimNames, Producer: c, OutIndex: i})
	}
	e.G.Nodes = append(e.G.Nodes, c)
	return c
}

// RefreshUses records who reads each value now: SoleUse answers from this
// record until the next RefreshUses.
func (e *Editor) RefreshUses() {
	e.readers = e.G.Consumers()
	e.outputs = map[*Value]bool{}
	for _, o := range e.G.Outputs {
		e.outputs[o] = true
	}
}

// SoleUse reports whether v is computed by a node, is not a graph output and
// is read by no node but n (MindSpore's OutsideRely), as of the last
// RefreshUses.
func (e *Editor) SoleUse(v *Value, n *Node) bool {
	if v == nil || v.Producer == nil || e.outputs[v] {
		return false
	}
	for _, u := range e.readers[v] {
		if u != n {
			return false
		}
	}
	return true
}

// Clone is a copy of the attribute map (the values are shared).
func (a Attrs) Clone() Attrs {
	c := make(Attrs, len(a))
	for k, v := range a {
		c[k] = v
	}
	return c
}

// AddNode appends a node, creating one output value per name and wiring Producer.
func (g *Graph) AddNode(name, op string, inputs []*Value, outputNames ...string) *Node {
	n := NewNode(name, op, inputs, nil, outputNames...)
	g.Nodes = append(g.Nodes, n)
	return n
}

// AddConst registers a constant value.
func (g *Graph) AddConst(name string, t *Tensor) *Value {
	v := &Value{Name: name, DType: t.DType, Shape: append([]int64{}, t.Shape...), Const: t}
	g.Consts = append(g.Consts, v)
	return v
}

// Consumers maps every value to the nodes that read it (in node order).
func (g *Graph) Consumers() map[*Value][]*Node {
	m := map[*Value][]*Node{}
	for _, n := range g.Nodes {
		for _, in := range n.Inputs {
			if in != nil {
				m[in] = append(m[in], n)
			}
		}
	}
	return m
}

// ReplaceUses points every use of old (node inputs and graph outputs) to nv.
func (g *Graph) ReplaceUses(old, nv *Value) {
	for _, n := range g.Nodes {
		for i, in := range n.Inputs {
			if in == old {
				n.Inputs[i] = nv
			}
		}
	}
	for i, o := range g.Outputs {
		if o == old {
			g.Outputs[i] = nv
		}
	}
}

// RemoveDead drops nodes whose outputs reach no graph output, and unused consts.
func (g *Graph) RemoveDead() int {
	live := map[*Value]bool{}
	for _, o := range g.Outputs {
		live[o] = true
	}
	kept := make([]*Node, 0, len(g.Nodes))
	for i := len(g.Nodes) - 1; i >= 0; i-- {
		n := g.Nodes[i]
		used := false
		for _, o := range n.Outputs {
			if live[o] {
				used = true
			}
		}
		if !used {
			continue
		}
		kept = append(kept, n)
		for _, in := range n.Inputs {
			if in != nil {
				live[in] = true
			}
		}
	}
	removed := len(g.Nodes) - len(kept)
	for i, j := 0, len(kept)-1; i < j; i, j = i+1, j-1 {
		kept[i], kept[j] = kept[j], kept[i]
	}
	g.Nodes = kept
	consts := g.Consts[:0]
	for _, c := range g.Consts {
		if live[c] {
			consts = append(consts, c)
		}
	}
	g.Consts = consts
	return removed
}

// SingleNodeGraph is a graph whose only node is a copy of n (same name, op,
// attributes and body) reading new graph inputs typed as n's inputs, its
// outputs the graph outputs: one node run or written on its own (the kernel
// self-check, `converter bisect`'s repro).
func SingleNodeGraph(n *Node) *Graph {
	g := NewGraph(n.Name)
	c := &Node{Name: n.Name, Op: n.Op, Attrs: n.Attrs, Body: n.Body, Provenance: n.Provenance}
	for _, v := range n.Inputs {
		in := &Value{Name: v.Name, DType: v.DType, Shape: v.Shape}
		g.Inputs = append(g.Inputs, in)
		c.Inputs = append(c.Inputs, in)
	}
	for i, v := range n.Outputs {
		c.Outputs = append(c.Outputs, &Value{Name: v.Name, DType: v.DType, Shape: v.Shape, Producer: c, OutIndex: i})
	}
	g.Nodes, g.Outputs = []*Node{c}, c.Outputs
	return g
}
