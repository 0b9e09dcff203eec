package check

// The graph walk of `converter check` (see check.go): BuildPrimitiveNode,
// the graph builders of load_model.cc (inputs, parameters, map parameters,
// the return node, CNodes and value nodes) as the checker's build* methods,
// which define every name in the shared name map and apply the node rules,
// and finishPartials for the partial calls resolved at the end.

import (
	"fmt"
	"strings"

	"gkconv/internal/mindir"
	pb "gkconv/internal/mindir/mindirpb"
)

// buildPrimitive implements BuildPrimitiveNode (load_model.cc:2522-2565):
// every attribute must load through SetPrimitiveAttrWithType /
// GetValueFromAttributeProto (a failure fails the load), and primitive names
// are unique (load_model.cc:2559).
func (c *checker) buildPrimitive(i int, p *pb.PrimitiveProto) {
	name := p.GetName()
	l := loc{graph: "primitives", node: name}
	if name == "" {
		l.node = fmt.Sprintf("primitives[%d]", i)
	}
	if p.GetOpType() == "" {
		c.at(l.with("op_type"), "primitive has no op_type (the loader builds Primitive(\"\"))", "the primitive's name", "empty",
			"load_model.cc:2524 BuildPrimitiveNode")
	}
	for _, a := range p.Attribute {
		c.checkValue(l.with(a.GetName()), a, modeGetValue, 0)
	}
	if d := c.names[name]; d != nil {
		c.at(l, "duplicate primitive name", "a unique name", "already the name of a "+d.kind.String(),
			"load_model.cc:2560 BuildPrimitiveNode")
		return
	}
	c.names[name] = &def{kind: defPrim, prim: p, op: p.GetOpType()}
}

// buildGraph implements BuildFuncGraph (load_model.cc:2120-2150): the graph
// needs a name; graph attributes load through GetValueFromAttributeProto
// (BuildAttrForFuncGraph, 2106); then ImportParametersForGraph (1167),
// ImportMapParametersForGraph (1197), ImportNodesForGraph (2080) and
// BuildReturnForFuncGraph (2023).
func (c *checker) buildGraph(g *pb.GraphProto, label string, depth int) {
	c.rep.Graphs++
	if label == "" {
		label = g.GetName()
	}
	if label == "" {
		label = "<unnamed>"
	}
	gl := loc{graph: label}
	if g.Name == nil {
		c.at(gl, "graph has no name", "name", "none", "load_model.cc:2124 BuildFuncGraph")
	}
	for _, a := range g.Attribute {
		c.checkValue(gl.with(a.GetName()), a, modeGetValue, depth)
	}
	// ImportParametersForGraph: inputs, then parameters (load_model.cc:1167-1195).
	for i, in := range g.Input {
		c.buildInput(gl, i, in, depth)
	}
	for i, p := range g.Parameter {
		c.rep.Parameters++
		c.buildParameter(gl, i, p)
	}
	for i, mpar := range g.MapParameter {
		c.rep.Parameters++
		c.buildMapParameter(gl, i, mpar)
	}
	for i, n := range g.Node {
		c.rep.Nodes++
		c.buildNode(label, i, n, depth)
	}
	c.buildReturn(g, label)
}

// buildInput implements BuildInputForFuncGraph (load_model.cc:1098-1165).
func (c *checker) buildInput(gl loc, i int, in *pb.ValueInfoProto, depth int) {
	l := loc{graph: gl.graph, node: in.GetName()}
	if in.Name == nil {
		l.node = fmt.Sprintf("input[%d]", i)
		c.at(l, "graph input has no name", "name", "none", "load_model.cc:1101 BuildInputForFuncGraph")
		return
	}
	monad := false
	if len(in.Tensor) > 0 {
		if msg := c.absTensorProblem(in.Tensor[0]); msg != "" {
			c.at(l.with("tensor[0]"), "graph input tensor type unreadable (the graph fails to load)", "a data_type of kDefaultValueSwitchMap", msg,
				"load_model.cc:1113 BuildInputForFuncGraph")
		}
	} else if in.Denotation != nil {
		monad = in.GetDenotation() == "UMonadType" || in.GetDenotation() == "IOMonadType"
	}
	if a := in.AttrInfo; a != nil {
		al := l.with("attr_info")
		if a.RefAttrName != nil {
			c.checkOldShape(al, a, "load_model.cc:1146 BuildInputForFuncGraph")
		} else {
			c.checkAbstract(al, a, depth, "load_model.cc:1151 BuildInputForFuncGraph")
		}
		if t := a.GetType(); t == pb.AttributeProto_UMONAD || t == pb.AttributeProto_IOMONAD {
			monad = true
		}
	}
	c.define(in.GetName(), &def{kind: defInput, graph: gl.graph, monad: monad}, l)
}

// buildParameter implements BuildParameterForFuncGraph (load_model.cc:815-844).
func (c *checker) buildParameter(gl loc, i int, p *pb.TensorProto) {
	l := loc{graph: gl.graph, node: p.GetName()}
	if p.Name == nil {
		l.node = fmt.Sprintf("parameter[%d]", i)
		c.at(l, "parameter has no name", "name", "none", "load_model.cc:819 BuildParameterForFuncGraph")
		return
	}
	c.checkTensor(l, p, "load_model.cc:833 BuildParameterForFuncGraph")
	c.define(p.GetName(), &def{kind: defParam, graph: gl.graph, param: p}, l)
}

// buildMapParameter implements BuildMapParameterFromMapTensorProto
// (load_model.cc:951-1021): name, default value, key/value/status tensors.
func (c *checker) buildMapParameter(gl loc, i int, p *pb.MapTensorProto) {
	l := loc{graph: gl.graph, node: p.GetName()}
	if p.Name == nil {
		l.node = fmt.Sprintf("map_parameter[%d]", i)
		c.at(l, "map parameter has no name", "name", "none", "load_model.cc:955 BuildMapParameterFromMapTensorProto")
		return
	}
	const ref = "load_model.cc:970 BuildMapParameterFromMapTensorProto"
	if p.DefaultValue == nil {
		c.at(l.with("default_value"), "map parameter needs a default value", "present", "absent", ref)
	} else {
		c.checkValue(l.with("default_value"), p.DefaultValue, modeBuildValue, 1)
	}
	for _, t := range []struct {
		name string
		t    *pb.TensorProto
	}{{"key_tensor", p.KeyTensor}, {"value_tensor", p.ValueTensor}, {"status_tensor", p.StatusTensor}} {
		if t.t == nil {
			c.at(l.with(t.name), "map parameter needs "+t.name, "present", "absent", ref)
			continue
		}
		c.checkTensor(l.with(t.name), t.t, ref)
	}
	c.define(p.GetName(), &def{kind: defParam, graph: gl.graph}, l)
}

// buildReturn implements BuildReturnForFuncGraph (load_model.cc:2023-2078):
// a graph needs at least one output and every output name must resolve;
// with one output the loader also registers <graph>_return_prim_node and
// <graph>_return_node.
func (c *checker) buildReturn(g *pb.GraphProto, label string) {
	gl := loc{graph: label}
	if len(g.Output) == 0 {
		c.at(gl.with("output"), "graph has no output (BuildReturnForFuncGraph returns false)", "at least 1 output", "0",
			"load_model.cc:2077 BuildReturnForFuncGraph")
		return
	}
	for i, o := range g.Output {
		if c.resolve(o.GetName()) == nil {
			l := gl.with(fmt.Sprintf("output[%d]", i))
			c.at(l, "graph output does not resolve (\"Miss return node\")", "a defined name", c.explainMissing(o.GetName()),
				"load_model.cc:2035 BuildReturnForFuncGraph")
		}
	}
	if len(g.Output) == 1 {
		name := g.GetName()
		c.names[name+"_return_prim_node"] = &def{kind: defReturn, graph: label}
		c.names[name+"_return_node"] = &def{kind: defReturn, graph: label}
	}
}

// explainMissing describes why a name is not in the map.
func (c *checker) explainMissing(name string) string {
	if c.unbuilt[name] {
		return fmt.Sprintf("%q, a Constant node the loader does not build (see its violation)", name)
	}
	if s, ok := c.secondary[name]; ok {
		return fmt.Sprintf("%q, output(%d) of node %s%s: the loader registers only output(0); use TupleGetItem", name, s.index, s.node, inGraph(s.graph))
	}
	if w, ok := c.defined[name]; ok {
		return fmt.Sprintf("%q, a %s defined later%s (the name map is filled in file order)", name, w.kind, inGraph(w.graph))
	}
	return fmt.Sprintf("%q, which is not defined", name)
}

// buildNode implements ImportNodesForGraph's per-node step
// (load_model.cc:2080-2104): Constant nodes through BuildValueNodeForFuncGraph,
// everything else through BuildCNodeForFuncGraph (1971-2021).
func (c *checker) buildNode(graph string, i int, n *pb.NodeProto, depth int) {
	nodeName := n.GetName()
	if len(n.Output) > 0 {
		nodeName = n.Output[0]
	}
	if nodeName == "" {
		nodeName = fmt.Sprintf("node[%d]", i)
	}
	l := loc{graph: graph, node: nodeName}
	if n.GetOpType() == "Constant" {
		c.buildValueNode(l, n, depth)
		return
	}
	if n.OpType == nil {
		c.at(l.with("op_type"), "CNode has no op_type (\"Get CNode op_type failed\")", "op_type", "none", "load_model.cc:1974 BuildCNodeForFuncGraph")
	}
	if len(n.Output) == 0 {
		c.at(l.with("output"), "CNode has no output (\"Get CNode out failed\")", "1 output name", "0", "load_model.cc:1978 BuildCNodeForFuncGraph")
	}
	// BuildOperatorNode (load_model.cc:1881-1917).
	op := n.GetOpType()
	var prim *pb.PrimitiveProto
	primName := ""
	isPrim := false
	if ref, ok := strings.CutPrefix(op, "REF::"); ok && ref != "" {
		d := c.resolve(ref)
		switch {
		case d == nil:
			c.at(l.with("op_type"), "REF:: op_type does not resolve (\"Can't find the ref\")", "a primitive, function graph or earlier node name",
				c.explainMissing(ref), "load_model.cc:1891 BuildOperatorNode")
		case d.kind == defPrim:
			prim, primName, isPrim = d.prim, mindir.PrimBaseName(d.prim.GetOpType()), true
		}
	} else if op != "" {
		primName, isPrim = mindir.PrimBaseName(op), true
	}
	// Inputs (load_model.cc:1991-1998): each must already be in the map.
	monads := make([]bool, len(n.Input))
	for k, in := range n.Input {
		d := c.resolve(in)
		if d == nil {
			rule := "input is not defined before use (\"can't find in nodes have parsed\")"
			if _, ok := c.secondary[in]; ok {
				rule = "input uses output(1..) of a multi-output node (only output(0) is registered; MindSpore uses TupleGetItem)"
			}
			c.at(l.with(fmt.Sprintf("input[%d]", k)), rule, "a graph input, parameter, earlier node output(0), function or primitive name",
				c.explainMissing(in), "load_model.cc:1995 BuildCNodeForFuncGraph")
			continue
		}
		monads[k] = d.monad
	}
	if len(n.Output) > 0 {
		monad := primName == "UpdateState"
		for _, a := range n.Attribute {
			if isShapeAttr(a) && (a.GetType() == pb.AttributeProto_UMONAD || a.GetType() == pb.AttributeProto_IOMONAD ||
				strings.Contains(a.GetRefAttrName(), "MonadType")) {
				monad = true
			}
		}
		c.define(n.Output[0], &def{kind: defCNode, graph: graph, op: primName, monad: monad}, l)
	}
	// SetCNodePrimAttrAndAbstract (load_model.cc:754-783): the shape attribute
	// builds the abstract; every other attribute goes to the primitive (and is
	// ignored when the operator is not a primitive).
	var shapeAttr *pb.AttributeProto
	for _, a := range n.Attribute {
		al := l.with(attrLabel(a))
		if isShapeAttr(a) {
			shapeAttr = a
			if a.RefAttrName != nil {
				c.checkOldShape(al, a, "load_model.cc:764 SetCNodePrimAttrAndAbstract")
			} else {
				c.checkAbstract(al, a, depth, "load_model.cc:774 SetCNodePrimAttrAndAbstract")
			}
			continue
		}
		if !isPrim {
			continue
		}
		if a.RefAttrName != nil {
			c.checkOldCNodeAttr(al, a)
		} else {
			c.checkValue(al, a, modeGetValue, depth)
		}
	}
	// BuildAttrForCNode (load_model.cc:2658-2677).
	for _, a := range n.NodeAttr {
		c.checkValue(l.with("node_attr:"+a.GetName()), a, modeGetValue, depth)
	}
	for _, a := range n.PrimalAttr {
		c.checkValue(l.with("primal_attr:"+a.GetName()), a, modeGetValue, depth)
	}
	// A node written with several outputs: its abstract must be a tuple of
	// that many elements; the extra names are unusable (checked at each use).
	if len(n.Output) > 1 {
		c.checkTupleShape(l, shapeAttr, len(n.Output), "the node lists "+fmt.Sprint(len(n.Output))+" outputs",
			"load_model.cc:1955 SetCNodeAbstract")
	}
	if isPrim {
		attrs := make([]*pb.AttributeProto, 0, len(n.Attribute))
		if prim != nil {
			attrs = append(attrs, prim.Attribute...)
		}
		for _, a := range n.Attribute {
			if !isShapeAttr(a) {
				attrs = append(attrs, a)
			}
		}
		c.checkSchema(l, primName, prim, attrs, n.Input, monads, shapeAttr)
		if primName == "Custom" {
			c.checkGraphKernel(l, attrs, n.Input)
		}
	}
}

func isShapeAttr(a *pb.AttributeProto) bool {
	if a.RefAttrName != nil {
		return strings.Contains(a.GetRefAttrName(), "shape:")
	}
	return a.GetName() == "shape"
}

func attrLabel(a *pb.AttributeProto) string {
	if a.GetName() != "" {
		return a.GetName()
	}
	if a.RefAttrName != nil {
		return a.GetRefAttrName()
	}
	return "attribute"
}

// buildValueNode implements BuildValueNodeForFuncGraph (load_model.cc:1857-1868).
func (c *checker) buildValueNode(l loc, n *pb.NodeProto, depth int) {
	if len(n.Output) == 0 {
		c.at(l.with("output"), "Constant node has no output (\"The Proto output is empty\")", "1 output name", "0",
			"load_model.cc:1859 BuildValueNodeForFuncGraph")
		return
	}
	if len(n.Attribute) == 0 {
		c.at(l.with("attribute"), "Constant node has no value attribute (the loader reads attribute(0))", "1 attribute", "0",
			"load_model.cc:1863 BuildValueNodeForFuncGraph")
		return
	}
	a := n.Attribute[0]
	al := l.with(attrLabel(a))
	monad := false
	registered := true
	if a.RefAttrName != nil {
		registered = c.checkOldValueNode(al, a)
		monad = strings.HasPrefix(a.GetRefAttrName(), "Monad")
	} else {
		c.checkValue(al, a, modeBuildValue, depth)
		monad = a.GetType() == pb.AttributeProto_UMONAD || a.GetType() == pb.AttributeProto_IOMONAD
	}
	if registered {
		c.define(n.Output[0], &def{kind: defConst, graph: l.graph, monad: monad}, l)
	} else {
		c.unbuilt[n.Output[0]] = true
	}
}

// finishPartials implements the PARTIALCLOSURE case of BuildAbstractFunction
// (load_model.cc:2579-2623): the closure names a Partial CNode. The loader
// retries unresolved abstracts after all graphs (TrytoBuildCNodeAbstract,
// 2196), so the name is looked up in the final map.
func (c *checker) finishPartials() {
	for _, p := range c.partials {
		d := c.resolve(p.ref)
		l := loc{p.graph, p.node, p.attr}
		if d == nil {
			c.at(l, "PARTIALCLOSURE names no node", "the name of a Partial CNode", fmt.Sprintf("%q, which is not defined", p.ref),
				"load_model.cc:2579 BuildAbstractFunction")
		} else if d.kind != defCNode || d.op != "Partial" {
			c.at(l, "PARTIALCLOSURE must name a Partial CNode (\"Not partial CNode\")", "a Partial CNode",
				fmt.Sprintf("%q, a %s %s", p.ref, d.kind, d.op), "load_model.cc:2585 BuildAbstractFunction")
		}
	}
}
