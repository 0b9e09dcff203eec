package mindir

// Reading MindSpore's function calls and while loops (mindspore.export of a
// GRAPH_MODE construct with a data-dependent `while`, MindSpore 2.7):
//
//	main:   r = REF::H(n, i, x)                    a direct call of a function graph
//	H(n, i, x):                                    the loop header
//	        c = Less(i, n)
//	        t = Partial(B, x, i, n)                the body
//	        e = Partial(A, x)                      what follows the loop
//	        s = Switch(c, t, e);  r = REF::s()     the call of the chosen branch
//	B(x, i, n): ...; r = REF::H(n, i', x')         the body ends by calling H again
//	A(x): ...                                      the code after the loop
//
// A direct call of a function graph is inlined (its nodes converted into the
// calling graph with its parameters bound to the arguments). A call of a
// Switch inside an inlined H whose first branch calls H again is a while
// loop, read as one IR Loop: the carried values are H's parameters; the body
// graph runs H's other nodes (the condition and the Partial arguments), B up
// to its call of H (whose arguments are the next carried values) and H's
// nodes again for the next condition; after the Loop, H's nodes run once
// more on the final values to give A's arguments, and A is inlined. Loops
// nest through the same inlining. Any other recursion is refused.

import (
	"fmt"
	"maps"
	"slices"

	"gkconv/internal/ir"
	pb "gkconv/internal/mindir/mindirpb"
)

// backEdge is the loop body being read: a call of fn records its arguments
// (the next carried values) instead of being inlined.
type backEdge struct {
	fn   string
	args []*ir.Value
	hit  bool
}

// callGraph converts REF::fn(args...): the back edge of the loop being
// read, or an inlined call.
func (c *conv) callGraph(np *pb.NodeProto, fn string) (any, error) {
	var args []*ir.Value
	for i, in := range np.Input {
		s, ok := c.syms[in]
		if !ok {
			return nil, fmt.Errorf("call of %s: argument %d (%s) is not defined before use", fn, i, in)
		}
		v, err := asValue(s, fmt.Sprintf("argument %d of the call of %s", i, fn))
		if err != nil {
			return nil, err
		}
		args = append(args, v)
	}
	if be := c.loopBack; be != nil && be.fn == fn {
		if be.hit {
			return nil, &unsupportedOp{"a loop body that calls its loop header twice"}
		}
		be.args, be.hit = args, true
		return noneVal{}, nil
	}
	if slices.Contains(c.inlining, fn) {
		return nil, &unsupportedOp{"recursive call of graph " + fn + " (only the while-loop form is read)"}
	}
	return c.inline(fn, args)
}

// maxInline bounds nested inlined calls (each a Go stack frame chain).
const maxInline = ir.MaxGraphDepth

// inline converts function fn's nodes into the current graph with its
// inputs bound to args and returns its result.
func (c *conv) inline(fn string, args []*ir.Value) (any, error) {
	fp := c.funcs[fn]
	if len(fp.Input) != len(args) {
		return nil, fmt.Errorf("graph %s takes %d inputs, called with %d", fn, len(fp.Input), len(args))
	}
	if len(c.inlining) >= maxInline {
		return nil, &unsupportedOp{"function calls nested too deeply"}
	}
	for i, in := range fp.Input {
		c.syms[in.GetName()] = args[i]
	}
	for _, p := range fp.Parameter {
		if !hasData(p) {
			return nil, &unsupportedOp{"function " + fn + " has a parameter without data"}
		}
		t, err := tensorFromProto(p)
		if err != nil {
			return nil, fmt.Errorf("function %s: parameter %s: %w", fn, p.GetName(), err)
		}
		c.syms[p.GetName()] = &ir.Value{Name: c.uniq(p.GetName()), DType: t.DType, Shape: append([]int64{}, t.Shape...), Const: t}
	}
	c.inlining = append(c.inlining, fn)
	ret, err := c.runNodes(fp.Node)
	c.inlining = c.inlining[:len(c.inlining)-1]
	if err != nil {
		return nil, err
	}
	if len(fp.Output) > 0 {
		var outs tuple
		for _, o := range fp.Output {
			s, ok := c.syms[o.GetName()]
			if !ok {
				return nil, fmt.Errorf("graph %s: output %q is not produced", fn, o.GetName())
			}
			outs = append(outs, s)
		}
		if len(outs) == 1 {
			return outs[0], nil
		}
		return outs, nil
	}
	if len(ret) != 1 {
		return nil, fmt.Errorf("graph %s returns %d values", fn, len(ret))
	}
	return ret[0], nil
}

// callsGraph reports whether function fn calls function target directly.
func (c *conv) callsGraph(fn, target string) bool {
	fp, ok := c.funcs[fn]
	if !ok {
		return false
	}
	for _, n := range fp.Node {
		if n.GetOpType() == "REF::"+target {
			return true
		}
	}
	return false
}

// loopHeader returns the innermost inlined function whose Switch call np
// is, when the Switch's first branch calls that function again (a while
// loop).
func (c *conv) loopHeader(sw switchVal) (string, bool) {
	if len(c.inlining) == 0 {
		return "", false
	}
	h := c.inlining[len(c.inlining)-1]
	return h, c.callsGraph(sw.then.fn, h)
}

// whileLoop reads the while loop whose header h calls switch node sw via
// np (see the file comment).
func (c *conv) whileLoop(np *pb.NodeProto, h string, swNode string, sw switchVal) (any, error) {
	hp := c.funcs[h]
	var swp *pb.NodeProto
	var pre []*pb.NodeProto
	for _, n := range hp.Node {
		switch {
		case n.GetName() == swNode || slices.Contains(n.Output, swNode):
			swp = n
		case n == np, n.GetOpType() == "Return", n.GetOpType() == "return":
		default:
			pre = append(pre, n)
		}
	}
	if swp == nil || len(swp.Input) != 3 || len(np.Input) != 0 {
		return nil, &unsupportedOp{"a while loop whose branch call takes arguments"}
	}
	var carried []*ir.Value
	for i, in := range hp.Input {
		v, err := asValue(c.syms[in.GetName()], fmt.Sprintf("loop value %d", i))
		if err != nil {
			return nil, err
		}
		carried = append(carried, v)
	}

	// The body graph: (iteration, condition, carried...) -> (condition, carried...).
	saved := c.saveState()
	c.g = ir.NewGraph(h + "_body")
	c.syms = maps.Clone(c.syms)
	c.registered = map[*ir.Value]bool{}
	c.names = ir.NewNames()
	c.getitemNamed = map[*ir.Value]bool{}
	body := c.g
	iter := &ir.Value{Name: c.uniq("iteration"), DType: ir.Int64, Shape: []int64{}}
	condIn := &ir.Value{Name: c.uniq("condition"), DType: ir.Bool, Shape: []int64{}}
	body.Inputs = []*ir.Value{iter, condIn}
	var params []*ir.Value
	for i, in := range hp.Input {
		p := &ir.Value{Name: c.uniq(in.GetName()), DType: carried[i].DType, Shape: carried[i].Shape}
		params = append(params, p)
		body.Inputs = append(body.Inputs, p)
	}
	next, cond, err := c.loopStep(h, hp, pre, swp, params)
	c.restoreState(saved)
	if err != nil {
		return nil, err
	}
	body.Outputs = append([]*ir.Value{cond}, next...)
	caps := captureOuter(body)

	m := c.nodeOf(np)
	ins := append([]*ir.Value{nil, sw.cond}, carried...)
	ins = append(ins, caps...)
	attrs := ir.Attrs{"body": ir.GraphAttr(body)}
	if len(caps) > 0 {
		attrs[ir.CapturedInputs] = ir.IntAttr(int64(len(caps)))
	}
	loop := m.emitWith("Loop", ins, len(carried), attrs, nil)

	// After the loop: the header's nodes on the final values give what
	// follows the loop its arguments.
	for i, in := range hp.Input {
		c.syms[in.GetName()] = loop.Outputs[i]
	}
	if _, err := c.runNodes(pre); err != nil {
		return nil, err
	}
	after, ok := c.branchFunc(swp.Input[2])
	if !ok {
		return nil, &unsupportedOp{"a while loop whose exit is not a function"}
	}
	return c.inline(after.fn, after.args)
}

// loopStep converts one iteration into the current (body) graph: header
// h's nodes on params give the body's Partial arguments, the body runs up
// to its call of h (the next values), and h's nodes on those give the next
// condition.
func (c *conv) loopStep(h string, hp *pb.GraphProto, pre []*pb.NodeProto, swp *pb.NodeProto, params []*ir.Value) ([]*ir.Value, *ir.Value, error) {
	for i, in := range hp.Input {
		c.syms[in.GetName()] = params[i]
	}
	if _, err := c.runNodes(pre); err != nil {
		return nil, nil, err
	}
	then, ok := c.branchFunc(swp.Input[1])
	if !ok {
		return nil, nil, &unsupportedOp{"a while loop whose body is not a function"}
	}
	savedBack := c.loopBack
	be := &backEdge{fn: h}
	c.loopBack = be
	c.inlining = append(c.inlining, h) // a call of h elsewhere in the body is recursion
	_, err := c.inline(then.fn, then.args)
	c.inlining = c.inlining[:len(c.inlining)-1]
	c.loopBack = savedBack
	if err != nil {
		return nil, nil, err
	}
	if !be.hit || len(be.args) != len(params) {
		return nil, nil, &unsupportedOp{"a while-loop body that does not end by calling its header with every loop value"}
	}
	for i, in := range hp.Input {
		c.syms[in.GetName()] = be.args[i]
	}
	if _, err := c.runNodes(pre); err != nil {
		return nil, nil, err
	}
	cond, err := asValue(c.syms[swp.Input[0]], "loop condition")
	if err != nil {
		return nil, nil, err
	}
	next := slices.Clone(be.args)
	for i, v := range next {
		// A value passed through unchanged is the body input itself; the
		// IR wants a body output produced in the body.
		if slices.Contains(c.g.Inputs, v) || v.Const != nil {
			next[i] = (&mnode{c: c, name: hp.Input[i].GetName() + "/next", out: hp.Input[i].GetName() + "/next", attrs: map[string]any{}}).emit1("Identity", nil, v)
		}
	}
	if cond.Const != nil || slices.Contains(c.g.Inputs, cond) {
		cond = (&mnode{c: c, name: "condition/next", out: "condition/next", attrs: map[string]any{}}).emit1("Identity", nil, cond)
	}
	return next, cond, nil
}

// captureOuter makes the values body reads from enclosing graphs (neither
// its inputs, constants nor outputs of its nodes) trailing body inputs and
// returns the outer values, in order (ir.CapturedInputs).
func captureOuter(body *ir.Graph) []*ir.Value {
	own := map[*ir.Value]bool{}
	for _, v := range body.Inputs {
		own[v] = true
	}
	for _, n := range body.Nodes {
		for _, o := range n.Outputs {
			own[o] = true
		}
	}
	var caps []*ir.Value
	inner := map[*ir.Value]*ir.Value{}
	for _, n := range body.Nodes {
		for i, v := range n.Inputs {
			if v == nil || own[v] || v.Const != nil {
				continue
			}
			in, ok := inner[v]
			if !ok {
				in = &ir.Value{Name: v.Name, DType: v.DType, Shape: v.Shape}
				inner[v] = in
				caps = append(caps, v)
				body.Inputs = append(body.Inputs, in)
			}
			n.Inputs[i] = in
		}
	}
	return caps
}
