package mindir

import (
	"fmt"
	"slices"
	"strings"

	"gkconv/internal/ir"
	pb "gkconv/internal/mindir/mindirpb"
)

// lowerControlTable and liftControlTable: the issue-13 op family's MindSpore
// primitives (written by lower, read back by lift); IR ops of the family
// that have no MindSpore primitive are written as Custom(type="gkconv.<op>").
//
// If is written in MindSpore's own form (Switch of Partial functions and a
// call, writeIf below). Loop and Scan are written as
// Custom(type="gkconv.<op>"): MindSpore's schema (prims_gen.go) has no
// While primitive, converter_lite's While form (a cond graph,
// TensorListStack for scan outputs) does not mean the same as ONNX Loop,
// and MindSpore's own loops are recursive graphs this writer does not
// produce. Each body is a MindIR function (as
// converter_lite writes subgraphs as FuncGraphs); the Custom attribute of
// the body's name holds the function's name, marked by doc_string "graph".
var lowerControlTable = schemaGated(map[string]lowerFunc{})

var liftControlTable = map[string]func(*mnode) (any, error){}

// graphAttrDoc marks a Custom string attribute that names a body function.
const graphAttrDoc = "graph"

// controlFlowCustom writes n's bodies as functions and n as Custom.
func (gw *graphWriter) controlFlowCustom(n *ir.Node) (*msNode, error) {
	flat := *n
	flat.Attrs = n.Attrs.Clone()
	var graphs []string
	for _, sg := range n.Subgraphs() {
		name, err := gw.wr.graphFunction(sg.Graph, n.Name+"_"+sg.Attr, gw.depth)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sg.Attr, err)
		}
		flat.Attrs[sg.Attr] = ir.StringAttr(name)
		graphs = append(graphs, sg.Attr)
	}
	m, err := customFallback(&lowerCtx{n: &flat})
	if err != nil {
		return nil, err
	}
	for _, a := range m.attrs {
		for _, g := range graphs {
			if a.GetName() == g {
				a.DocString = ptr(graphAttrDoc)
			}
		}
	}
	return m, nil
}

// If is written as MindSpore's frontend writes an `if`: each branch a
// function, bound to the captured values by Partial, chosen by Switch and
// called:
//
//	p_then = Partial(then_fn, caps...)      abstract PARTIALCLOSURE p_then
//	p_else = Partial(else_fn, caps...)      abstract PARTIALCLOSURE p_else
//	sw     = Switch(cond, p_then, p_else)   abstract UNIONFUNCCLOSURE
//	out    = sw()                           (op_type REF::sw: a call)
//
// with TupleGetItem per output when there are several. The loader resolves
// function names in inputs to the functions (load_model.cc GetAnfNode) and
// REF::<node> to a call of that node's value; the reader turns the pattern
// back into one If node.
func (gw *graphWriter) writeIf(n *ir.Node, defined map[*ir.Value]bool) error {
	wr := gw.wr
	cond := n.Input(0)
	if cond == nil {
		return fmt.Errorf("mindir: node %s (If): no condition", n.Name)
	}
	caps := make([]string, 0, len(n.Inputs)-1)
	for i, in := range n.Inputs[1:] {
		if in == nil || !defined[in] {
			return fmt.Errorf("mindir: node %s (If): captured input %d is not defined before use", n.Name, i)
		}
		caps = append(caps, gw.name(in))
	}
	partial := func(attr, suffix string) (string, error) {
		fn, err := wr.graphFunction(n.Attrs.Graph(attr), n.Name+"_"+attr, gw.depth)
		if err != nil {
			return "", fmt.Errorf("mindir: node %s (If): %s: %w", n.Name, attr, err)
		}
		ref := wr.primRef("Partial")
		if err := wr.addPrim(&pb.PrimitiveProto{Name: ptr(ref), OpType: ptr("Partial"), PrimType: pb.PrimitiveProto_PRIMITIVE.Enum()}); err != nil {
			return "", err
		}
		name := wr.uniq(gw.prefix + n.Name + ":" + suffix)
		gw.gp.Node = append(gw.gp.Node, &pb.NodeProto{Name: ptr(name), OpType: ptr("REF::" + ref),
			Input: append([]string{fn}, caps...), Output: []string{name},
			Attribute: []*pb.AttributeProto{partialClosure("shape", name)}})
		return name, nil
	}
	pThen, err := partial("then_branch", "then")
	if err != nil {
		return err
	}
	pElse, err := partial("else_branch", "else")
	if err != nil {
		return err
	}
	ref := wr.primRef("Switch")
	if err := wr.addPrim(&pb.PrimitiveProto{Name: ptr(ref), OpType: ptr("Switch"), PrimType: pb.PrimitiveProto_PRIMITIVE.Enum()}); err != nil {
		return err
	}
	sw := wr.uniq(gw.prefix + n.Name + ":switch")
	gw.gp.Node = append(gw.gp.Node, &pb.NodeProto{Name: ptr(sw), OpType: ptr("REF::" + ref),
		Input: []string{gw.name(cond), pThen, pElse}, Output: []string{sw},
		Attribute: []*pb.AttributeProto{{Name: ptr("shape"), Type: pb.AttributeProto_UNIONFUNCCLOSURE.Enum(),
			Values: []*pb.AttributeProto{partialClosure("", pThen), partialClosure("", pElse)}}}})
	call := &pb.NodeProto{Name: ptr(gw.prefix + n.Name), OpType: ptr("REF::" + sw)}
	shape := &pb.AttributeProto{Name: ptr("shape")}
	tupled := len(n.Outputs) != 1
	if tupled {
		call.Output = []string{wr.uniq(gw.prefix + n.Name + ":tuple")}
		shape.Type = pb.AttributeProto_TUPLE.Enum()
		for _, o := range n.Outputs {
			shape.Values = append(shape.Values, &pb.AttributeProto{Type: pb.AttributeProto_TENSORS.Enum(), Tensors: []*pb.TensorProto{typeToProto(o)}})
		}
	} else {
		call.Output = []string{gw.name(n.Outputs[0])}
		shape.Type = pb.AttributeProto_TENSORS.Enum()
		shape.Tensors = []*pb.TensorProto{typeToProto(n.Outputs[0])}
	}
	call.Attribute = []*pb.AttributeProto{shape}
	call.NodeAttr = []*pb.AttributeProto{aStrs("provenance", n.Provenance...)}
	gw.gp.Node = append(gw.gp.Node, call)
	if tupled {
		for i, o := range n.Outputs {
			if o == nil || o.Name == "" {
				continue
			}
			if err := gw.tupleGetItem(n, call.Output[0], i, o); err != nil {
				return err
			}
		}
	}
	for _, o := range n.Outputs {
		defined[o] = true
	}
	return nil
}

func partialClosure(name, node string) *pb.AttributeProto {
	a := &pb.AttributeProto{Type: pb.AttributeProto_PARTIALCLOSURE.Enum(), S: []byte(node)}
	if name != "" {
		a.Name = ptr(name)
	}
	return a
}

// Reading the If form back.

// partialVal is a Partial node's value: a function bound to arguments.
type partialVal struct {
	fn   string
	args []*ir.Value
}

// branchFunc is a Switch operand: a Partial node's value or a function.
func (c *conv) branchFunc(name string) (partialVal, bool) {
	if p, ok := c.syms[name].(partialVal); ok {
		return p, true
	}
	if _, ok := c.funcs[name]; ok {
		return partialVal{fn: name}, true
	}
	return partialVal{}, false
}

// switchVal is a Switch node's value: one of two partials.
type switchVal struct {
	cond       *ir.Value
	then, els  partialVal
	node, name string
}

// controlNode reads the nodes of the If form: Partial of a function,
// Switch of two functions or partials, and the call of a Switch, with or
// without arguments of its own (the If). handled is false for every other
// node.
func (c *conv) controlNode(np *pb.NodeProto) (res any, handled bool, err error) {
	ref, ok := strings.CutPrefix(np.GetOpType(), "REF::")
	if !ok {
		return nil, false, nil
	}
	if p, ok := c.prims[ref]; ok {
		switch primBaseName(p.GetOpType()) {
		case "Partial":
			if len(np.Input) == 0 {
				return nil, false, nil
			}
			if _, ok := c.funcs[np.Input[0]]; !ok {
				return nil, false, nil
			}
			pv := partialVal{fn: np.Input[0]}
			for i, in := range np.Input[1:] {
				v, err := asValue(c.syms[in], fmt.Sprintf("Partial argument %d", i))
				if err != nil {
					return nil, true, err
				}
				pv.args = append(pv.args, v)
			}
			return pv, true, nil
		case "Switch":
			if len(np.Input) != 3 {
				return nil, false, nil
			}
			a, okA := c.branchFunc(np.Input[1])
			b, okB := c.branchFunc(np.Input[2])
			if !okA || !okB {
				return nil, true, &unsupportedOp{"Switch of values other than two functions or Partial functions"}
			}
			cond, err := asValue(c.syms[np.Input[0]], "Switch condition")
			if err != nil {
				return nil, true, err
			}
			return switchVal{cond: cond, then: a, els: b}, true, nil
		}
		return nil, false, nil
	}
	if _, ok := c.funcs[ref]; ok {
		// A direct call of a function graph (read_loop.go).
		res, err := c.callGraph(np, ref)
		return res, true, err
	}
	sw, ok := c.syms[ref].(switchVal)
	if !ok {
		return nil, false, nil
	}
	if h, ok := c.loopHeader(sw); ok {
		res, err := c.whileLoop(np, h, ref, sw)
		return res, true, err
	}
	// The call's own arguments go to both branches, after their partial ones.
	var callArgs []*ir.Value
	for i, in := range np.Input {
		v, err := asValue(c.syms[in], fmt.Sprintf("call argument %d", i))
		if err != nil {
			return nil, true, err
		}
		callArgs = append(callArgs, v)
	}
	thenArgs := append(append([]*ir.Value{}, sw.then.args...), callArgs...)
	elseArgs := append(append([]*ir.Value{}, sw.els.args...), callArgs...)
	then, err := c.body(sw.then.fn, c.depth)
	if err != nil {
		return nil, true, err
	}
	els, err := c.body(sw.els.fn, c.depth)
	if err != nil {
		return nil, true, err
	}
	// The If's captured values: both branches' arguments, each branch's
	// inputs reordered to them (an argument only the other branch takes is
	// an unused input).
	var caps []*ir.Value
	for _, v := range append(append([]*ir.Value{}, thenArgs...), elseArgs...) {
		if !slices.Contains(caps, v) {
			caps = append(caps, v)
		}
	}
	for _, br := range []struct {
		g    *ir.Graph
		args []*ir.Value
	}{{then, thenArgs}, {els, elseArgs}} {
		if len(br.g.Inputs) != len(br.args) {
			return nil, true, fmt.Errorf("branch %s takes %d inputs, called with %d", br.g.Name, len(br.g.Inputs), len(br.args))
		}
		ins := make([]*ir.Value, len(caps))
		for i, v := range br.args {
			j := slices.Index(caps, v)
			if ins[j] != nil {
				return nil, true, &unsupportedOp{"a branch called with the same value twice"}
			}
			ins[j] = br.g.Inputs[i]
		}
		for j, v := range caps {
			if ins[j] == nil {
				ins[j] = &ir.Value{Name: v.Name, DType: v.DType, Shape: v.Shape}
			}
		}
		br.g.Inputs = ins
	}
	attrs := ir.Attrs{"then_branch": ir.GraphAttr(then), "else_branch": ir.GraphAttr(els)}
	if k := len(caps); k > 0 {
		attrs[ir.CapturedInputs] = ir.IntAttr(int64(k))
	}
	m := c.nodeOf(np)
	nout, tupled := outCount(np)
	n := m.emitWith("If", append([]*ir.Value{sw.cond}, caps...), nout, attrs, nil)
	return c.finish(m, outsOf(n, tupled)), true, nil
}
