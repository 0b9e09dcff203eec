package fusion

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"gkconv/internal/ir"
)

// namer hands out node and value names not yet used in the top-level graph.
type namer struct{ used map[string]bool }

func newNamer(g *ir.Graph) *namer {
	m := &namer{used: map[string]bool{}}
	for _, v := range g.Inputs {
		m.used[v.Name] = true
	}
	for _, v := range g.Consts {
		m.used[v.Name] = true
	}
	for _, n := range g.Nodes {
		m.used[n.Name] = true
		for _, o := range n.Outputs {
			if o != nil {
				m.used[o.Name] = true
			}
		}
	}
	return m
}

func (m *namer) unique(base string) string {
	name := base
	for i := 1; m.used[name]; i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	m.used[name] = true
	return name
}

// bodyBuilder assembles a kernel body from outer nodes.
type bodyBuilder struct {
	body  *ir.Graph
	vmap  map[*ir.Value]*ir.Value // outer (or inlined body) value -> new body value
	outer []*ir.Value             // kernel inputs, parallel to body.Inputs
	names map[string]bool
}

func newBodyBuilder(name string) *bodyBuilder {
	return &bodyBuilder{body: ir.NewGraph(name), vmap: map[*ir.Value]*ir.Value{}, names: map[string]bool{}}
}

func (bb *bodyBuilder) unique(base string) string {
	name := base
	for i := 1; bb.names[name]; i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	bb.names[name] = true
	return name
}

// in maps an outer value used by a member node into the body.
func (bb *bodyBuilder) in(v *ir.Value) *ir.Value {
	if v == nil {
		return nil
	}
	if bv, ok := bb.vmap[v]; ok {
		return bv
	}
	var bv *ir.Value
	if inlineConst(v) {
		bv = &ir.Value{Name: bb.unique(v.Name), DType: v.DType, Shape: append([]int64{}, v.Shape...), Const: v.Const}
		bb.body.Consts = append(bb.body.Consts, bv)
	} else {
		bv = &ir.Value{Name: bb.unique(v.Name), DType: v.DType, Shape: append([]int64{}, v.Shape...)}
		bb.body.Inputs = append(bb.body.Inputs, bv)
		bb.outer = append(bb.outer, v)
	}
	bb.vmap[v] = bv
	return bv
}

// clone copies node n into the body, mapping inputs through lookup.
func (bb *bodyBuilder) clone(n *ir.Node, lookup func(*ir.Value) *ir.Value) *ir.Node {
	c := &ir.Node{Name: bb.unique(n.Name), Op: n.Op, Attrs: cloneAttrs(n.Attrs),
		Provenance: append([]string(nil), n.Provenance...)}
	for _, in := range n.Inputs {
		c.Inputs = append(c.Inputs, lookup(in))
	}
	for i, o := range n.Outputs {
		nv := &ir.Value{Name: bb.unique(o.Name), DType: o.DType, Shape: append([]int64{}, o.Shape...),
			DimNames: o.DimNames, Producer: c, OutIndex: i}
		c.Outputs = append(c.Outputs, nv)
		bb.vmap[o] = nv
	}
	bb.body.Nodes = append(bb.body.Nodes, c)
	return c
}

// add copies member n; a GraphKernel member has its body inlined.
func (bb *bodyBuilder) add(n *ir.Node) {
	if n.Op != ir.OpGraphKernel || n.Body == nil {
		bb.clone(n, bb.in)
		return
	}
	local := map[*ir.Value]*ir.Value{}
	for i, bi := range n.Body.Inputs {
		local[bi] = bb.in(n.Inputs[i])
	}
	lookup := func(v *ir.Value) *ir.Value {
		if v == nil {
			return nil
		}
		if m, ok := local[v]; ok {
			return m
		}
		if v.Const != nil {
			c := &ir.Value{Name: bb.unique(v.Name), DType: v.DType, Shape: append([]int64{}, v.Shape...), Const: v.Const}
			bb.body.Consts = append(bb.body.Consts, c)
			local[v] = c
			return c
		}
		return bb.vmap[v]
	}
	for _, in := range n.Body.Nodes {
		c := bb.clone(in, lookup)
		for i, o := range in.Outputs {
			local[o] = c.Outputs[i]
		}
	}
	for i, o := range n.Outputs {
		if i < len(n.Body.Outputs) {
			bb.vmap[o] = lookup(n.Body.Outputs[i])
		}
	}
}

func cloneAttrs(a ir.Attrs) ir.Attrs {
	c := make(ir.Attrs, len(a))
	for k, v := range a {
		c[k] = v
	}
	return c
}

// fuseNodes replaces the top-level member nodes with one GraphKernel node
// and returns it. Members must be acyclic as a group (the callers' cluster
// and split models guarantee it); with sort the graph is re-sorted at once,
// otherwise the caller sorts after a batch of fusions.
func (st *state) fuseNodes(members []*ir.Node, origin string, sort bool) (*ir.Node, error) {
	g := st.g
	in := make(map[*ir.Node]bool, len(members))
	for _, m := range members {
		in[m] = true
	}
	var order []*ir.Node
	first := -1
	for i, n := range g.Nodes {
		if in[n] {
			if first < 0 {
				first = i
			}
			order = append(order, n)
		}
	}
	if len(order) != len(members) {
		return nil, fmt.Errorf("fuse: %d of %d members are not in the graph", len(members)-len(order), len(members))
	}
	bb := newBodyBuilder(origin)
	for _, n := range order {
		bb.add(n)
	}
	// Outputs: member values read outside the group or returned by the graph.
	external := map[*ir.Value]bool{}
	for _, o := range g.Outputs {
		external[o] = true
	}
	for _, n := range g.Nodes {
		if in[n] {
			continue
		}
		for _, v := range n.Inputs {
			if v != nil {
				external[v] = true
			}
		}
	}
	k := &ir.Node{Op: ir.OpGraphKernel, Attrs: ir.Attrs{ir.GKGraphKernel: ir.StringAttr(origin)}, Body: bb.body}
	seenProv := map[string]bool{}
	for _, n := range order {
		for _, p := range n.Provenance {
			if !seenProv[p] {
				seenProv[p] = true
				k.Provenance = append(k.Provenance, p)
			}
		}
		for _, o := range n.Outputs {
			if !external[o] {
				continue
			}
			bv := bb.vmap[o]
			if bv == nil {
				return nil, fmt.Errorf("fuse: output %s of %s has no body value", o.Name, n.Name)
			}
			o.Producer, o.OutIndex = k, len(k.Outputs)
			k.Outputs = append(k.Outputs, o)
			bb.body.Outputs = append(bb.body.Outputs, bv)
		}
	}
	if len(k.Outputs) == 0 {
		return nil, fmt.Errorf("fuse: group of %d nodes has no used output", len(order))
	}
	k.Inputs = bb.outer
	k.Name = st.names.unique("GraphKernel_" + origin)
	bb.body.Name = k.Name
	nodes := make([]*ir.Node, 0, len(g.Nodes)-len(order)+1)
	for i, n := range g.Nodes {
		if i == first {
			nodes = append(nodes, k)
		}
		if !in[n] {
			nodes = append(nodes, n)
		}
	}
	g.Nodes = nodes
	if sort {
		if err := g.TopoSort(); err != nil {
			return nil, fmt.Errorf("fuse: %w", err)
		}
	}
	return k, nil
}

// inlineKernel puts the body of GraphKernel k back into the top-level graph
// and returns the new nodes in order. k's output values are reused by the
// nodes that produce them, so consumers and graph outputs keep their names.
func (st *state) inlineKernel(k *ir.Node) []*ir.Node {
	g := st.g
	vm := map[*ir.Value]*ir.Value{}
	for i, bi := range k.Body.Inputs {
		vm[bi] = k.Inputs[i]
	}
	for _, c := range k.Body.Consts {
		vm[c] = g.AddConst(st.names.unique(c.Name), c.Const)
	}
	// Body value -> the kernel output that reuses it (first occurrence).
	reuse := map[*ir.Value]*ir.Value{}
	for i, bo := range k.Body.Outputs {
		if _, ok := reuse[bo]; !ok && bo.Producer != nil {
			reuse[bo] = k.Outputs[i]
		}
	}
	lookup := func(v *ir.Value) *ir.Value {
		if v == nil {
			return nil
		}
		if m, ok := vm[v]; ok {
			return m
		}
		if v.Const != nil { // a constant the body used without registering
			m := g.AddConst(st.names.unique(v.Name), v.Const)
			vm[v] = m
			return m
		}
		return v
	}
	var out []*ir.Node
	for _, bn := range k.Body.Nodes {
		c := &ir.Node{Name: st.names.unique(bn.Name), Op: bn.Op, Attrs: cloneAttrs(bn.Attrs),
			Provenance: append([]string(nil), bn.Provenance...), Body: bn.Body}
		for _, in := range bn.Inputs {
			c.Inputs = append(c.Inputs, lookup(in))
		}
		for i, o := range bn.Outputs {
			nv := reuse[o]
			if nv == nil {
				nv = &ir.Value{Name: st.names.unique(o.Name), DType: o.DType, Shape: append([]int64{}, o.Shape...), DimNames: o.DimNames}
			}
			nv.Producer, nv.OutIndex = c, i
			c.Outputs = append(c.Outputs, nv)
			vm[o] = nv
		}
		out = append(out, c)
	}
	// Kernel outputs that repeat another output or pass an input through.
	for i, bo := range k.Body.Outputs {
		if m := vm[bo]; m != k.Outputs[i] {
			g.ReplaceUses(k.Outputs[i], m)
		}
	}
	nodes := make([]*ir.Node, 0, len(g.Nodes)+len(out))
	for _, n := range g.Nodes {
		if n == k {
			nodes = append(nodes, out...)
			continue
		}
		nodes = append(nodes, n)
	}
	g.Nodes = nodes
	return out
}

// finalizeKernel sets kernel_name (AKG style: Fused_<ops>_<hash>, the op
// list truncated past 80 characters with "_more") and the pattern attr.
func finalizeKernel(k *ir.Node) {
	var ops []string
	for _, n := range k.Body.Nodes {
		ops = append(ops, n.Op)
	}
	name := strings.Join(ops, "_")
	if len(name) > 80 {
		name = name[:80] + "_more"
	}
	h := fnv.New64a()
	writeCanonical(h, k.Body)
	k.Attrs[ir.GKKernelName] = ir.StringAttr(fmt.Sprintf("Fused_%s_%d", name, h.Sum64()))
	k.Attrs[ir.GKPattern] = ir.StringAttr(bodyPattern(k.Body).String())
}

// bodyPattern is the highest split-model pattern among the body ops.
func bodyPattern(b *ir.Graph) pattern {
	p := patVirtual
	for _, n := range b.Nodes {
		if q := opPattern(n); q > p {
			p = q
		}
	}
	return p
}

type stringWriter interface{ Write([]byte) (int, error) }

// writeCanonical serializes a body without names, so structurally equal
// kernels hash equal: values are numbered by first definition.
func writeCanonical(w stringWriter, b *ir.Graph) {
	id := map[*ir.Value]int{}
	var sb strings.Builder
	next := 0
	def := func(v *ir.Value) {
		id[v] = next
		next++
	}
	for _, v := range b.Inputs {
		def(v)
		fmt.Fprintf(&sb, "in %s%v;", v.DType, v.Shape)
	}
	ref := func(v *ir.Value) string {
		if v == nil {
			return "_"
		}
		if i, ok := id[v]; ok {
			return "%" + strconv.Itoa(i)
		}
		if v.Const != nil {
			return fmt.Sprintf("c(%s%v:%x)", v.DType, v.Shape, v.Const.Data)
		}
		return "?"
	}
	for _, n := range b.Nodes {
		fmt.Fprintf(&sb, "%s(", n.Op)
		for i, in := range n.Inputs {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(ref(in))
		}
		sb.WriteString(")")
		for _, k := range n.Attrs.Keys() {
			if k == ir.GKExpandFrom {
				continue
			}
			fmt.Fprintf(&sb, " %s=%s", k, n.Attrs[k].GoString())
		}
		for _, o := range n.Outputs {
			def(o)
			fmt.Fprintf(&sb, " ->%s%v", o.DType, o.Shape)
		}
		sb.WriteByte(';')
	}
	sb.WriteString("out")
	for _, o := range b.Outputs {
		sb.WriteString(" " + ref(o))
	}
	_, _ = w.Write([]byte(sb.String()))
}
