package onnx

import (
	"fmt"

	"gkconv/internal/ir"
)

// Control-flow bodies (If's branches, Loop's and Scan's body) are built by a
// child builder whose names are its own. A body may read a value of an
// enclosing graph by name (outer scope): the child then captures it, an
// extra body input fed by an extra input of the control node (as
// converter_lite's onnx_model_parser.cc does), so every IR graph is closed.
// Outer constants are copied into the body instead.

// capture is one outer-scope value a body reads.
type capture struct {
	name  string
	outer *ir.Value // the value in the parent's graph
	inner *ir.Value // the body input standing for it
}

// lookup resolves an ONNX value name in this graph or, for a body, in the
// enclosing graphs (capturing it).
func (b *builder) lookup(name string) (*ir.Value, bool) {
	if v, ok := b.env[name]; ok {
		return v, true
	}
	if b.parent == nil {
		return nil, false
	}
	ov, ok := b.parent.lookup(name)
	if !ok {
		return nil, false
	}
	if ov.Const != nil {
		v := b.g.AddConst(name, ov.Const)
		b.env[name] = v
		return v, true
	}
	v := b.captureValue(name, ov)
	return v, true
}

func (b *builder) captureValue(name string, ov *ir.Value) *ir.Value {
	v := &ir.Value{Name: name, DType: ov.DType, Shape: append([]int64(nil), ov.Shape...), DimNames: ov.DimNames}
	if ov.Shape == nil {
		v.Shape = nil
	}
	if b.parent.placeholders[ov] {
		b.placeholders[v] = true
	}
	b.env[name] = v
	b.edit.Reserve(name)
	b.captures = append(b.captures, capture{name, ov, v})
	return v
}

// subgraph builds the body held by graph attribute attr of this node.
func (c *nodeCtx) subgraph(attr string) (*ir.Graph, *builder, error) {
	var ra *rawAttr
	for _, a := range c.rn.attrs {
		if a.pb.GetName() == attr {
			ra = a
		}
	}
	if ra == nil || ra.g == nil {
		return nil, nil, fmt.Errorf("%s has no graph attribute %s", c.op, attr)
	}
	b := c.b
	child := newBuilder(b.l, b.rm, b.opset, b.opts)
	child.parent, child.rg = b, ra.g
	g, err := child.buildGraph()
	for _, it := range child.unsupported {
		it.Node = c.name + "/" + attr + "/" + it.Node
		b.unsupported = append(b.unsupported, it)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", attr, err)
	}
	if ra.g.pb.GetName() == "" {
		g.Name = attr
	}
	return g, child, nil
}

// controlFlow converts If, Loop and Scan: builds the bodies, checks them
// against the node and each other, and emits the node with the captured
// outer values as trailing inputs.
func (c *nodeCtx) controlFlow(info *ir.OpInfo) error {
	attrs := []string{"body"}
	if c.op == "If" {
		attrs = []string{"then_branch", "else_branch"}
	}
	scan8 := c.op == "Scan" && c.b.opset < 9
	if scan8 {
		if c.input(0) != nil {
			return unsupportedf("Scan-8 with sequence_lens is not supported; re-export with opset >= 9")
		}
		c.in = c.in[1:]
		if d := c.attrs.Ints("directions", nil); d != nil {
			c.attrs["scan_input_directions"] = ir.IntsAttr(d...)
		}
		delete(c.attrs, "directions")
	}
	if c.op == "Loop" {
		for len(c.in) < 2 {
			c.in = append(c.in, nil)
		}
	}
	bodies := make([]*ir.Graph, len(attrs))
	kids := make([]*builder, len(attrs))
	before := len(c.b.unsupported)
	for i, a := range attrs {
		g, kid, err := c.subgraph(a)
		if err != nil {
			return err
		}
		bodies[i], kids[i] = g, kid
	}
	nOut := len(c.outs)
	for i, g := range bodies {
		formal := len(kids[i].rg.pb.GetInput())
		switch c.op {
		case "If":
			if formal != 0 {
				return fmt.Errorf("%s has %d inputs; If branches take none", attrs[i], formal)
			}
			if len(g.Outputs) != nOut {
				return fmt.Errorf("%s has %d outputs, the node %d", attrs[i], len(g.Outputs), nOut)
			}
		case "Loop":
			carried := len(c.in) - 2
			if formal != 2+carried {
				return fmt.Errorf("body has %d inputs, want 2 + %d loop-carried values (iteration number, condition, the node's inputs after M and cond)", formal, carried)
			}
			if len(g.Outputs) != 1+nOut || nOut < carried {
				return fmt.Errorf("body has %d outputs, want 1 (condition) + the node's %d outputs (%d loop-carried + scan outputs)", len(g.Outputs), nOut, carried)
			}
		case "Scan":
			if formal != len(c.in) {
				return fmt.Errorf("body has %d inputs, the node %d", formal, len(c.in))
			}
			if len(g.Outputs) != nOut {
				return fmt.Errorf("body has %d outputs, the node %d", len(g.Outputs), nOut)
			}
		}
	}
	if c.op == "If" {
		for i := range nOut {
			a, b := bodies[0].Outputs[i], bodies[1].Outputs[i]
			if a.DType != ir.Undefined && b.DType != ir.Undefined && a.DType != b.DType {
				return fmt.Errorf("output %d is %s in then_branch and %s in else_branch", i, a.DType, b.DType)
			}
		}
	}
	// The captured values: the union over the bodies, in order of first use.
	var outer []*ir.Value
	seen := map[string]bool{}
	for _, kid := range kids {
		for _, cp := range kid.captures {
			if !seen[cp.name] {
				seen[cp.name] = true
				outer = append(outer, cp.outer)
			}
		}
	}
	for i, kid := range kids {
		have := map[string]*ir.Value{}
		for _, cp := range kid.captures {
			have[cp.name] = cp.inner
		}
		g := bodies[i]
		for _, ov := range outer {
			v := have[ov.Name]
			if v == nil {
				v = kid.captureValue(ov.Name, ov) // read by the other branch only
			}
			g.Inputs = append(g.Inputs, v)
		}
	}
	if len(c.b.unsupported) > before {
		// The bodies hold unsupported nodes (listed with their paths): the
		// node's outputs are placeholders so later nodes still resolve.
		for _, o := range c.outs {
			if o != "" {
				v := &ir.Value{Name: o}
				c.b.env[o] = v
				c.b.placeholders[v] = true
			}
		}
		return nil
	}
	for i, a := range attrs {
		c.attrs[a] = ir.GraphAttr(bodies[i])
	}
	if len(outer) > 0 {
		c.attrs[ir.CapturedInputs] = ir.IntAttr(int64(len(outer)))
	}
	if scan8 {
		c.scan8(outer)
		return nil
	}
	c.emit(info.Name, append(c.in, outer...), c.attrs, c.outs...)
	return nil
}

// scan8 emits an opset-8 Scan (every input and output has a leading batch
// axis; the body sees one batch element) as two opset-9 Scans: an outer
// one over the batch axis, every input a scan input, whose body is the
// original Scan over the time axis.
func (c *nodeCtx) scan8(outer []*ir.Value) {
	inner := ir.NewGraph(c.name + "_batch")
	var innerIns []*ir.Value
	for i, v := range append(append([]*ir.Value{}, c.in...), outer...) {
		name := fmt.Sprintf("batch_input_%d", i)
		if i >= len(c.in) {
			name = v.Name
		}
		b := &ir.Value{Name: name}
		inner.Inputs = append(inner.Inputs, b)
		innerIns = append(innerIns, b)
	}
	var outNames []string
	for i := range c.outs {
		outNames = append(outNames, fmt.Sprintf("batch_output_%d", i))
	}
	n := ir.NewNode(c.name, "Scan", innerIns, c.attrs, outNames...)
	n.Provenance = []string{c.name}
	inner.Nodes = []*ir.Node{n}
	inner.Outputs = n.Outputs
	attrs := ir.Attrs{"body": ir.GraphAttr(inner), "num_scan_inputs": ir.IntAttr(int64(len(c.in)))}
	if len(outer) > 0 {
		attrs[ir.CapturedInputs] = ir.IntAttr(int64(len(outer)))
	}
	c.emit("Scan", append(c.in, outer...), attrs, c.outs...)
}

// optional reads OptionalHasElement and OptionalGetElement on what the IR
// has: a tensor (always an element) or an omitted input (none). Values of
// ONNX's optional type are not supported.
func (c *nodeCtx) optional(*ir.OpInfo) error {
	in := c.input(0)
	if in != nil && c.b.placeholders[in] {
		return unsupportedf("optional-typed values are not supported")
	}
	if len(c.outs) != 1 || c.outs[0] == "" {
		return fmt.Errorf("%s has %d outputs, want 1", c.op, len(c.outs))
	}
	if c.op == "OptionalGetElement" {
		if in == nil {
			return fmt.Errorf("OptionalGetElement of an omitted input has no element")
		}
		c.emit("Identity", []*ir.Value{in}, ir.Attrs{}, c.outs[0])
		return nil
	}
	t := ir.NewTensor(ir.Bool, []int64{})
	if in != nil {
		t.Data[0] = 1
	}
	c.b.env[c.outs[0]] = c.b.g.AddConst(c.outs[0], t)
	return nil
}
