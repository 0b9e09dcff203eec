package mindir

import (
	"fmt"
	"strings"

	"gkconv/internal/ir"
	pb "gkconv/internal/mindir/mindirpb"
)

// custom reads a Custom node: a fused kernel in converter_lite's layout
// (type "GraphKernel") or an IR op written as Custom(type "gkconv.<op>").
func (c *conv) custom(np *pb.NodeProto, pattrs []*pb.AttributeProto, syms []any) (any, error) {
	typ := ""
	for _, a := range pattrs {
		if a.GetName() == ir.GKCustomType {
			typ = string(a.S)
		}
	}
	var ins []*ir.Value
	for i, s := range syms {
		switch x := s.(type) {
		case monadVal:
			continue
		case noneVal:
			ins = append(ins, nil)
		default:
			v, err := asValue(x, fmt.Sprintf("input %d", i))
			if err != nil {
				return nil, err
			}
			ins = append(ins, v)
		}
	}
	m := c.nodeOf(np)
	nout, tupled := outCount(np)
	switch {
	case typ == ir.CustomTypeGraphKernel:
		var last *ir.Value
		if len(ins) > 0 {
			last = ins[len(ins)-1]
		}
		attrs, bodyName, usedBinary, err := readGraphKernelAttrs(pattrs, last)
		if err != nil {
			return nil, err
		}
		if usedBinary {
			ins = ins[:len(ins)-1]
		}
		var body *ir.Graph
		if bodyName != "" {
			if body, err = c.body(bodyName, c.depth); err != nil {
				return nil, err
			}
		}
		n := m.emitWith(ir.OpGraphKernel, ins, nout, attrs, body)
		return c.finish(m, outsOf(n, tupled)), nil
	case strings.HasPrefix(typ, CustomTypePrefix):
		op := strings.TrimPrefix(typ, CustomTypePrefix)
		if ir.LookupOp(op) == nil {
			return nil, unsupported("Custom type %q: no IR op %q", typ, op)
		}
		attrs := ir.Attrs{}
		for _, a := range pattrs {
			k := a.GetName()
			if k == ir.GKCustomType || k == "" {
				continue
			}
			if a.GetDocString() == graphAttrDoc {
				// A control-flow body: the function it names.
				body, err := c.body(string(a.S), c.depth)
				if err != nil {
					return nil, fmt.Errorf("attribute %s: %w", k, err)
				}
				attrs[k] = ir.GraphAttr(body)
				continue
			}
			x, err := customAttrValue(a)
			if err != nil {
				return nil, fmt.Errorf("attribute %s: %w", k, err)
			}
			attrs[k] = x
		}
		n := m.emitWith(op, ins, nout, attrs, nil)
		return c.finish(m, outsOf(n, tupled)), nil
	}
	return nil, unsupported("Custom op of type %q", typ)
}

// nodeOf makes the mapping state of a node read outside dispatch.
func (c *conv) nodeOf(np *pb.NodeProto) *mnode {
	m := &mnode{c: c, name: np.GetName(), domain: np.GetDomain(), attrs: map[string]any{}}
	if len(np.Output) > 0 {
		m.out = np.Output[0]
	} else {
		m.out = m.name
	}
	for _, a := range np.Attribute {
		if a.GetName() == "shape" {
			m.outTypes = outTypes(a)
		}
	}
	m.provenance, m.hasProvenance = provenanceOf(np)
	return m
}

// provenanceOf reads the node_attr "provenance" this project writes.
func provenanceOf(np *pb.NodeProto) ([]string, bool) {
	for _, a := range np.NodeAttr {
		if a.GetName() != "provenance" {
			continue
		}
		var out []string
		for _, v := range a.Values {
			for _, s := range v.Strings {
				out = append(out, string(s))
			}
		}
		return out, true
	}
	return nil, false
}

// outCount is the number of outputs a node's shape attribute declares and
// whether the node returns a tuple.
func outCount(np *pb.NodeProto) (int, bool) {
	for _, a := range np.Attribute {
		if a.GetName() != "shape" {
			continue
		}
		if a.GetType() == pb.AttributeProto_TUPLE || a.GetType() == pb.AttributeProto_LIST {
			return len(a.Values), true
		}
		return 1, false
	}
	return 1, false
}

func outsOf(n *ir.Node, tupled bool) any {
	if !tupled {
		return n.Outputs[0]
	}
	t := make(tuple, len(n.Outputs))
	for i, o := range n.Outputs {
		t[i] = o
	}
	return t
}

// emitWith adds an IR node (with a body for a GraphKernel); constant inputs
// are registered in the graph. A mapping that emits several nodes names the
// later ones <node>/<k>.
func (m *mnode) emitWith(op string, ins []*ir.Value, nout int, attrs ir.Attrs, body *ir.Graph) *ir.Node {
	if nout < 1 {
		nout = 1
	}
	c := m.c
	name := m.name
	if len(m.emitted) > 0 {
		name = fmt.Sprintf("%s/%d", m.name, len(m.emitted))
	}
	outs := make([]string, nout)
	for i := range outs {
		outs[i] = c.uniq(fmt.Sprintf("%s/%s_%d", m.out, op, len(m.emitted)))
	}
	for _, in := range ins {
		c.register(in)
	}
	n := ir.NewNode(name, op, ins, attrs, outs...)
	// Body before inference: a GraphKernel's shapes come from it.
	n.Body = body
	n.Provenance = []string{m.name}
	if m.domain != "" {
		n.Provenance = append(n.Provenance, m.domain)
	}
	m.emitted = append(m.emitted, n)
	// Types known while building let later mappings check dtypes; a shape
	// function that fails leaves the outputs as they were.
	c.g.Nodes = append(c.g.Nodes, n)
	ir.TryInfer(n)
	return n
}
