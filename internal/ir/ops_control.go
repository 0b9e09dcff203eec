package ir

// controlFlowOps: control flow and sequence/optional values: If, Loop, Scan (issue 13).
//
// Bodies are graph attributes (AttrGraph: If's then_branch and else_branch,
// Loop's and Scan's body), never Node.Body, which stays the fused
// GraphKernel's. A body is a closed function: the values of enclosing graphs
// it reads (ONNX outer-scope references) are passed in explicitly, as
// converter_lite does (onnx_model_parser.cc adds them as extra subgraph
// parameters and extra inputs of the control node). The last
// CapturedInputs node inputs are those outer values; each body's last
// CapturedInputs inputs receive them, in the same order.
var controlFlowOps = []OpInfo{
	{Name: "If", Onnx: "If", In: Arity{1, -1}, Out: Arity{1, -1}, Infer: inferIf, Pattern: PatternOpaque,
		Note: "then_branch/else_branch are graph attributes; the last captured_inputs inputs are outer-scope values, the inputs of both branches"},
	{Name: "Loop", Onnx: "Loop", In: Arity{0, -1}, Out: Arity{1, -1}, Infer: inferLoop, Pattern: PatternOpaque,
		Note: "body is a graph attribute; the last captured_inputs inputs are outer-scope values, the body's last inputs"},
	{Name: "Scan", Onnx: "Scan", In: Arity{1, -1}, Out: Arity{1, -1}, Infer: inferScan, Pattern: PatternOpaque,
		Note: "opset >= 9 form; body is a graph attribute; the last captured_inputs inputs are outer-scope values, the body's last inputs"},
	// Sequence values (DType Sequence, element type in Value.Elem).
	{Name: "SequenceEmpty", Onnx: "SequenceEmpty", In: Arity{0, 0}, Out: Arity{1, 1}, Infer: inferSequenceEmpty, Pattern: PatternOpaque},
	{Name: "SequenceConstruct", Onnx: "SequenceConstruct", In: Arity{1, -1}, Out: Arity{1, 1}, Infer: inferSequenceConstruct, Pattern: PatternOpaque},
	{Name: "SequenceInsert", Onnx: "SequenceInsert", In: Arity{2, 3}, Out: Arity{1, 1}, Infer: inferSequenceSame, Pattern: PatternOpaque},
	{Name: "SequenceErase", Onnx: "SequenceErase", In: Arity{1, 2}, Out: Arity{1, 1}, Infer: inferSequenceSame, Pattern: PatternOpaque},
	{Name: "SequenceAt", Onnx: "SequenceAt", In: Arity{2, 2}, Out: Arity{1, 1}, Infer: inferSequenceElem, Pattern: PatternOpaque},
	{Name: "SequenceLength", Onnx: "SequenceLength", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferSequenceLength, Pattern: PatternOpaque},
	{Name: "SplitToSequence", Onnx: "SplitToSequence", In: Arity{1, 2}, Out: Arity{1, 1}, Infer: inferSplitToSequence, Pattern: PatternOpaque},
	{Name: "ConcatFromSequence", Onnx: "ConcatFromSequence", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferSequenceElem, Pattern: PatternOpaque},
}

// IsSequenceOp reports the ops that take or make Sequence values; the
// runtime computes their outputs directly (no preallocated tensors).
func IsSequenceOp(op string) bool {
	switch op {
	case "SequenceEmpty", "SequenceConstruct", "SequenceInsert", "SequenceErase", "SequenceAt",
		"SequenceLength", "SplitToSequence", "ConcatFromSequence":
		return true
	}
	return false
}

// CapturedInputs is the IR attribute counting a control-flow node's trailing
// outer-scope inputs (absent: none).
const CapturedInputs = "captured_inputs"

// SubgraphAttr is one graph attribute of a node.
type SubgraphAttr struct {
	Attr  string
	Graph *Graph
}

// Subgraphs returns the node's graph attributes (control-flow bodies),
// sorted by attribute name; fused kernels' Node.Body is not among them.
func (n *Node) Subgraphs() []SubgraphAttr {
	var out []SubgraphAttr
	for _, k := range n.Attrs.Keys() {
		if a := n.Attrs[k]; a.Kind == AttrGraph && a.G != nil {
			out = append(out, SubgraphAttr{k, a.G})
		}
	}
	return out
}

// GraphAttr returns a graph attribute, nil when absent.
func (a Attrs) Graph(name string) *Graph {
	if v, ok := a[name]; ok && v.Kind == AttrGraph {
		return v.G
	}
	return nil
}

// GraphAttr makes a graph attribute.
func GraphAttr(g *Graph) Attr { return Attr{Kind: AttrGraph, G: g} }

// IsControlFlow reports whether op runs subgraphs (If, Loop, Scan).
func IsControlFlow(op string) bool { return op == "If" || op == "Loop" || op == "Scan" }
