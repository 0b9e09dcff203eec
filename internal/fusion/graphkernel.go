package fusion

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"gkconv/internal/ir"
)

// kernelBody copies the members (in graph order) into a new body graph: the
// outer values they read become body inputs (e.Outer, the kernel inputs) or,
// small constants, body constants; a GraphKernel member has its body
// inlined. vmap maps every member output to its body value.
func kernelBody(name string, order []*ir.Node) (e *ir.Editor, vmap map[*ir.Value]*ir.Value) {
	e = ir.NewEditor(ir.NewGraph(name))
	vmap = map[*ir.Value]*ir.Value{}
	in := func(v *ir.Value) *ir.Value {
		if v == nil {
			return nil
		}
		if bv, ok := vmap[v]; ok {
			return bv
		}
		var bv *ir.Value
		if inlineConst(v) {
			bv = e.Const(v.Name, v.Const)
		} else {
			bv = e.Capture(v)
		}
		vmap[v] = bv
		return bv
	}
	for _, n := range order {
		if n.Op != ir.OpGraphKernel || n.Body == nil {
			c := e.Copy(n, in)
			for i, o := range n.Outputs {
				vmap[o] = c.Outputs[i]
			}
			continue
		}
		local := map[*ir.Value]*ir.Value{}
		for i, bi := range n.Body.Inputs {
			local[bi] = in(n.Inputs[i])
		}
		lookup := func(v *ir.Value) *ir.Value {
			if v == nil {
				return nil
			}
			if m, ok := local[v]; ok {
				return m
			}
			if v.Const != nil {
				c := e.Const(v.Name, v.Const)
				local[v] = c
				return c
			}
			return vmap[v]
		}
		for _, bn := range n.Body.Nodes {
			c := e.Copy(bn, lookup)
			c.Body = nil // an inlined body is flat; a nested kernel is not carried
			for i, o := range bn.Outputs {
				vmap[o] = c.Outputs[i]
				local[o] = c.Outputs[i]
			}
		}
		for i, o := range n.Outputs {
			if i < len(n.Body.Outputs) {
				vmap[o] = lookup(n.Body.Outputs[i])
			}
		}
	}
	return e, vmap
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
	body, vmap := kernelBody(origin, order)
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
	k := &ir.Node{Op: ir.OpGraphKernel, Attrs: ir.Attrs{ir.GKGraphKernel: ir.StringAttr(origin)}, Body: body.G}
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
			bv := vmap[o]
			if bv == nil {
				return nil, fmt.Errorf("fuse: output %s of %s has no body value", o.Name, n.Name)
			}
			o.Producer, o.OutIndex = k, len(k.Outputs)
			k.Outputs = append(k.Outputs, o)
			body.G.Outputs = append(body.G.Outputs, bv)
		}
	}
	if len(k.Outputs) == 0 {
		return nil, fmt.Errorf("fuse: group of %d nodes has no used output", len(order))
	}
	k.Inputs = body.Outer
	k.Name = st.edit.Unique("GraphKernel_" + origin)
	body.G.Name = k.Name
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
		vm[c] = st.edit.Const(c.Name, c.Const)
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
			m := st.edit.Const(v.Name, v.Const)
			vm[v] = m
			return m
		}
		return v
	}
	var out []*ir.Node
	for _, bn := range k.Body.Nodes {
		c := &ir.Node{Name: st.edit.Unique(bn.Name), Op: bn.Op, Attrs: bn.Attrs.Clone(),
			Provenance: append([]string(nil), bn.Provenance...), Body: bn.Body}
		for _, in := range bn.Inputs {
			c.Inputs = append(c.Inputs, lookup(in))
		}
		for i, o := range bn.Outputs {
			nv := reuse[o]
			if nv == nil {
				nv = &ir.Value{Name: st.edit.Unique(o.Name), DType: o.DType, Shape: append([]int64{}, o.Shape...), DimNames: o.DimNames}
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
func bodyPattern(b *ir.Graph) ir.Pattern {
	p := ir.PatternVirtual
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

// kernels are g's GraphKernel nodes, in node order.
func kernels(g *ir.Graph) []*ir.Node {
	var ks []*ir.Node
	for _, n := range g.Nodes {
		if n.Op == ir.OpGraphKernel && n.Body != nil {
			ks = append(ks, n)
		}
	}
	return ks
}

// supportedDType: AKG's dtypes for fused kernels (float32/float16 compute;
// bool and int32 for masks, comparisons and indices).
func supportedDType(d ir.DType) bool {
	switch d {
	case ir.Float32, ir.Float16, ir.Bool, ir.Int32:
		return true
	}
	return false
}

// staticNode reports whether every input and output of n has a known shape.
func staticNode(n *ir.Node) bool {
	for _, v := range n.Inputs {
		if v != nil && !v.ShapeKnown() {
			return false
		}
	}
	for _, v := range n.Outputs {
		if v == nil || !v.ShapeKnown() { // a nil output is an omitted optional one
			return false
		}
	}
	return true
}
