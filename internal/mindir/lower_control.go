package mindir

import (
	"fmt"

	"gkconv/internal/ir"
)

// lowerControlTable and liftControlTable: the issue-13 op family's MindSpore
// primitives (written by lower, read back by lift); IR ops of the family
// that have no MindSpore primitive are written as Custom(type="gkconv.<op>").
//
// If, Loop and Scan are written as Custom(type="gkconv.<op>"): MindSpore's
// schema (prims_gen.go) has no If or While primitive, and converter_lite's
// While form (a cond graph, TensorListStack for scan outputs) does not
// mean the same as ONNX Loop. Each body is a MindIR function (as
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
