package onnx

import (
	"container/heap"
	"errors"
	"fmt"

	"gkconv/internal/ir"
	"gkconv/internal/onnx/onnxpb"
)

// builder turns a decoded model into an ir.Graph.
type builder struct {
	l     *loader
	rm    *rawModel
	opset int64
	opts  Options
	g     *ir.Graph
	// edit adds nodes and constants to g; its names are the value names
	// (every ONNX value name is reserved up front).
	edit *ir.Editor

	env      map[string]*ir.Value // ONNX value name -> IR value
	nodes    *ir.Names            // IR node names: the explicit ONNX node names reserved, those assigned
	claimed  map[string]bool      // explicit ONNX node names already given to a node
	vinfo    map[string]*onnxpb.ValueInfoProto
	uses     map[string]int // node-input uses of each ONNX value
	graphOut map[string]bool
	funcs    map[string]bool // "domain:name" of model-local functions
	// placeholders stand for the outputs of unsupported nodes.
	placeholders map[*ir.Value]bool

	unsupported []Unsupported

	// A subgraph's builder (control-flow body): parent builds the
	// enclosing graph, rg is the body and captures are the outer-scope
	// values the body reads, in order of first use (subgraph.go).
	parent   *builder
	rg       *rawGraph
	captures []capture
}

func newBuilder(l *loader, rm *rawModel, opset int64, opts Options) *builder {
	b := &builder{
		l: l, rm: rm, opset: opset, opts: opts,
		edit:         &ir.Editor{Names: ir.NewNames()},
		env:          map[string]*ir.Value{},
		nodes:        ir.NewNames(),
		claimed:      map[string]bool{},
		vinfo:        map[string]*onnxpb.ValueInfoProto{},
		uses:         map[string]int{},
		graphOut:     map[string]bool{},
		funcs:        map[string]bool{},
		placeholders: map[*ir.Value]bool{},
	}
	for _, f := range rm.pb.GetFunctions() {
		b.funcs[f.GetDomain()+":"+f.GetName()] = true
	}
	return b
}

// errUnsupported marks a form of a node the converter cannot take; it is
// collected with the others instead of stopping the load.
type errUnsupported struct{ reason string }

func (e *errUnsupported) Error() string { return e.reason }

func unsupportedf(format string, args ...any) error {
	return &errUnsupported{fmt.Sprintf(format, args...)}
}

func (b *builder) build() (*ir.Graph, error) {
	b.rg = b.rm.graph
	g, err := b.buildGraph()
	if err != nil || b.opts.KeepFloat16 {
		return g, err
	}
	if !mayHaveFloat16OrCast(b.rg) {
		return g, nil
	}
	// The first build typed the values (the full inference fills in what
	// building could not; its errors are load's to report); with those types,
	// replay the Casts onnxruntime inserts and removes (ort_float16.go) and
	// build again.
	if allInfer(g) {
		_ = ir.InferShapes(g)
	}
	rw := b.ortFloat16Rewrite(b.rg)
	if !rw.changedAny {
		return g, nil
	}
	nb := newBuilder(b.l, b.rm, b.opset, b.opts)
	nb.rg = &rawGraph{pb: b.rg.pb, nodes: rw.nodes, inits: b.rg.inits}
	g, err = nb.buildGraph()
	if err != nil {
		return nil, err
	}
	g.Meta["onnx.float16_as_onnxruntime"] = rw.describe()
	return g, nil
}

// buildGraph converts b.rg: the model's main graph, or a body when b has a
// parent (then its errors carry no file name: the parent adds the path).
func (b *builder) buildGraph() (*ir.Graph, error) {
	rg := b.rg
	file := b.l.file
	if b.parent != nil {
		file = "subgraph"
	}
	name := rg.pb.GetName()
	if name == "" {
		name = "main"
	}
	g := ir.NewGraph(name)
	b.g = g
	b.edit.G = g
	for _, vi := range rg.pb.GetValueInfo() {
		if err := checkDims("value_info", vi); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		b.vinfo[vi.GetName()] = vi
	}
	for _, vi := range rg.pb.GetOutput() {
		if err := checkDims("graph output", vi); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		b.vinfo[vi.GetName()] = vi
		b.graphOut[vi.GetName()] = true
	}
	for _, vi := range rg.pb.GetInput() {
		if err := checkDims("graph input", vi); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	}
	if err := checkProducers(rg); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	// Reserve every name of the model so that generated names never collide.
	for _, vi := range rg.pb.GetInput() {
		b.edit.Reserve(vi.GetName())
	}
	for _, t := range rg.inits {
		b.edit.Reserve(t.pb.GetName())
	}
	for _, n := range rg.nodes {
		for _, o := range n.pb.GetOutput() {
			b.edit.Reserve(o)
		}
		for _, in := range n.pb.GetInput() {
			b.uses[in]++
		}
		if n.pb.GetName() != "" {
			b.nodes.Reserve(n.pb.GetName())
		}
	}

	for i, rt := range rg.inits {
		iname := rt.pb.GetName()
		if iname == "" {
			return nil, fmt.Errorf("%s: initializer %d has no name", file, i)
		}
		t, err := b.l.tensor(rt)
		if err != nil {
			return nil, fmt.Errorf("%s: initializer %s: %w", file, iname, err)
		}
		b.env[iname] = g.AddConst(iname, t)
	}
	if n := len(rg.pb.GetSparseInitializer()); n > 0 {
		return nil, fmt.Errorf("%s: %d sparse initializer(s): sparse tensors are not supported", file, n)
	}

	for _, vi := range rg.pb.GetInput() {
		iname := vi.GetName()
		if _, isConst := b.env[iname]; isConst {
			continue // old exporters list initializers as inputs too
		}
		if iname == "" {
			return nil, fmt.Errorf("%s: a graph input has no name", file)
		}
		v := &ir.Value{Name: iname}
		if err := setType(v, vi); err != nil {
			b.unsupported = append(b.unsupported, Unsupported{Node: iname, Op: "graph input", Reason: err.Error()})
		}
		g.Inputs = append(g.Inputs, v)
		b.env[iname] = v
	}
	if b.parent == nil {
		if err := b.applyInputShapes(); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	}

	order, err := orderNodes(rg.nodes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	for _, idx := range order {
		if err := b.convertNode(idx, rg.nodes[idx]); err != nil {
			return nil, err
		}
	}
	if b.parent == nil {
		// Sequence values live inside the graph only: a run's outputs are
		// tensors.
		for _, vi := range rg.pb.GetOutput() {
			if err := setType(&ir.Value{}, vi); err != nil {
				b.unsupported = append(b.unsupported, Unsupported{Node: vi.GetName(), Op: "graph output", Reason: err.Error()})
			}
		}
	}
	if len(b.unsupported) > 0 && b.parent == nil {
		return nil, &UnsupportedError{File: file, Items: b.unsupported}
	}
	for _, vi := range rg.pb.GetOutput() {
		v, ok := b.lookup(vi.GetName())
		if !ok {
			return nil, fmt.Errorf("%s: graph output %q is not produced by any node, input or initializer", file, vi.GetName())
		}
		g.Outputs = append(g.Outputs, v)
	}
	return g, nil
}

// checkDims rejects a negative dim_value in a ValueInfo's tensor shape: ONNX
// requires dim_value >= 0; an unknown dim has a dim_param or no value.
func checkDims(kind string, vi *onnxpb.ValueInfoProto) error {
	tt := vi.GetType().GetTensorType()
	if tt == nil || tt.GetShape() == nil {
		return nil
	}
	for i, d := range tt.GetShape().GetDim() {
		if x, ok := d.GetValue().(*onnxpb.TensorShapeProto_Dimension_DimValue); ok && x.DimValue < 0 {
			return fmt.Errorf("%s %q: dim %d has dim_value %d; dim_value must be >= 0 (an unknown dim has a dim_param or no value)",
				kind, vi.GetName(), i, x.DimValue)
		}
	}
	return nil
}

// checkProducers requires each tensor name to have one producer: a graph
// input, an initializer or one output of one node. A graph input may repeat
// an initializer's name (old exporters list initializers as inputs too).
func checkProducers(rg *rawGraph) error {
	producer := map[string]string{}
	inits := map[string]bool{}
	for _, t := range rg.inits {
		name := t.pb.GetName()
		if name == "" {
			continue // reported when the initializer is read
		}
		if inits[name] {
			return fmt.Errorf("tensor %s is produced by two initializers", name)
		}
		inits[name] = true
		producer[name] = "initializer " + name
	}
	inputs := map[string]bool{}
	for _, vi := range rg.pb.GetInput() {
		name := vi.GetName()
		if name == "" {
			continue
		}
		if inputs[name] {
			return fmt.Errorf("tensor %s is produced by two graph inputs", name)
		}
		inputs[name] = true
		if !inits[name] {
			producer[name] = "graph input " + name
		}
	}
	for i, n := range rg.nodes {
		label := n.pb.GetName()
		if label == "" {
			label = fmt.Sprintf("%s_%d", n.pb.GetOpType(), i)
		}
		label = fmt.Sprintf("node %s (%s)", label, n.pb.GetOpType())
		for _, o := range n.pb.GetOutput() {
			if o == "" {
				continue
			}
			if p, ok := producer[o]; ok {
				if p == label {
					return fmt.Errorf("tensor %s is produced twice by %s", o, label)
				}
				return fmt.Errorf("tensor %s is produced by both %s and %s", o, p, label)
			}
			producer[o] = label
		}
	}
	return nil
}

// applyInputShapes fixes dynamic input dims from Options.InputShapes.
func (b *builder) applyInputShapes() error { return b.g.FixInputShapes(b.opts.InputShapes) }

// setType copies a ValueInfo's tensor type onto v; symbolic dims become -1
// with their names in DimNames.
func setType(v *ir.Value, vi *onnxpb.ValueInfoProto) error {
	tp := vi.GetType()
	if tp == nil {
		return nil
	}
	var tt *onnxpb.TypeProto_Tensor
	switch x := tp.GetValue().(type) {
	case nil:
		return nil
	case *onnxpb.TypeProto_TensorType:
		tt = x.TensorType
	case *onnxpb.TypeProto_SequenceType:
		return fmt.Errorf("sequence type is not supported")
	case *onnxpb.TypeProto_OptionalType:
		return fmt.Errorf("optional type is not supported")
	case *onnxpb.TypeProto_MapType:
		return fmt.Errorf("map type is not supported")
	case *onnxpb.TypeProto_SparseTensorType:
		return fmt.Errorf("sparse tensor type is not supported")
	}
	if et := tt.GetElemType(); et != 0 {
		dt, err := irDType(et)
		if err != nil {
			return err
		}
		v.DType = dt
	}
	if tt.GetShape() == nil {
		return nil
	}
	dims := tt.GetShape().GetDim()
	v.Shape = make([]int64, len(dims))
	v.DimNames = nil
	for i, d := range dims {
		switch x := d.GetValue().(type) {
		case *onnxpb.TensorShapeProto_Dimension_DimValue:
			v.Shape[i] = x.DimValue
			if x.DimValue < 0 {
				v.Shape[i] = -1
			}
		case *onnxpb.TensorShapeProto_Dimension_DimParam:
			v.Shape[i] = -1
			if v.DimNames == nil {
				v.DimNames = make([]string, len(dims))
			}
			v.DimNames[i] = x.DimParam
		default:
			v.Shape[i] = -1
		}
	}
	return nil
}

// orderNodes returns the nodes in a topological order, keeping the file's
// order where it is already valid (the usual case).
func orderNodes(nodes []*rawNode) ([]int, error) {
	producer := make(map[string]int, len(nodes))
	for i, n := range nodes {
		for _, o := range n.pb.GetOutput() {
			if o != "" {
				producer[o] = i
			}
		}
	}
	order := make([]int, len(nodes))
	sorted := true
	for i, n := range nodes {
		order[i] = i
		for _, in := range n.pb.GetInput() {
			if p, ok := producer[in]; ok && p >= i {
				sorted = false
			}
		}
	}
	if sorted {
		return order, nil
	}
	indeg := make([]int, len(nodes))
	users := make([][]int, len(nodes))
	for i, n := range nodes {
		seen := map[int]bool{}
		for _, in := range n.pb.GetInput() {
			if p, ok := producer[in]; ok && !seen[p] {
				seen[p] = true
				indeg[i]++
				users[p] = append(users[p], i)
			}
		}
	}
	ready := &intHeap{}
	for i := range nodes {
		if indeg[i] == 0 {
			heap.Push(ready, i)
		}
	}
	order = order[:0]
	for ready.Len() > 0 {
		i := heap.Pop(ready).(int)
		order = append(order, i)
		for _, u := range users[i] {
			if indeg[u]--; indeg[u] == 0 {
				heap.Push(ready, u)
			}
		}
	}
	if len(order) != len(nodes) {
		for i, n := range nodes {
			if indeg[i] > 0 {
				return nil, fmt.Errorf("the graph has a cycle through node %q (%s)", n.pb.GetName(), n.pb.GetOpType())
			}
		}
	}
	return order, nil
}

type intHeap []int

func (h intHeap) Len() int           { return len(h) }
func (h intHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h intHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *intHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *intHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// nodeCtx is the conversion of one ONNX node.
type nodeCtx struct {
	b      *builder
	name   string // ONNX node name, or <op>_<index>; the provenance
	irName string // unique IR name of the first node emitted
	op     string
	rn     *rawNode
	in     []*ir.Value
	attrs  ir.Attrs
	outs   []string
	nEmit  int
}

func (b *builder) convertNode(idx int, rn *rawNode) error {
	pb := rn.pb
	op := pb.GetOpType()
	c := &nodeCtx{b: b, op: op, rn: rn, outs: pb.GetOutput()}
	c.name = pb.GetName()
	if c.name == "" {
		c.name = fmt.Sprintf("%s_%d", op, idx)
		c.irName = b.nodes.Unique(c.name)
	} else {
		// Explicit names were reserved up front; a repeated one gets a suffix.
		c.irName = c.name
		if b.claimed[c.name] {
			c.irName = b.nodes.Unique(c.name)
		}
		b.claimed[c.name] = true
	}
	fail := func(reason string) {
		label := op
		if d := pb.GetDomain(); d != "" && d != "ai.onnx" {
			label = d + "::" + op
		}
		b.unsupported = append(b.unsupported, Unsupported{Node: c.name, Op: label, Reason: reason})
		for _, o := range c.outs {
			if o != "" {
				v := &ir.Value{Name: o} // lets later nodes resolve
				b.env[o] = v
				b.placeholders[v] = true
			}
		}
	}
	hard := func(err error) error {
		if b.parent != nil {
			return fmt.Errorf("node %s (%s): %w", c.name, op, err)
		}
		return fmt.Errorf("%s: node %s (%s): %w", b.l.file, c.name, op, err)
	}
	if op == "" {
		return hard(errors.New("empty op_type"))
	}
	for _, in := range pb.GetInput() {
		if in == "" {
			c.in = append(c.in, nil)
			continue
		}
		v, ok := b.lookup(in)
		if !ok {
			return hard(fmt.Errorf("input %q is not a graph input, an initializer or the output of a node", in))
		}
		c.in = append(c.in, v)
	}
	contrib := pb.GetDomain() == "com.microsoft" && msContrib[op] != nil
	if d := pb.GetDomain(); d != "" && d != "ai.onnx" && !contrib {
		if b.funcs[d+":"+op] {
			fail("model-local function; functions are not inlined")
		} else {
			fail(fmt.Sprintf("domain %q is not supported%s", d, contribNote(d)))
		}
		return nil
	}
	var info *ir.OpInfo
	switch {
	case contrib:
	case op == "Constant", op == "Gemm", op == "Upsample", op == "CastLike", op == "GlobalMaxPool", op == "OptionalHasElement", op == "OptionalGetElement":
	default:
		var ok bool
		if info, ok = ir.OpFromOnnx(op); !ok {
			if b.funcs[":"+op] {
				fail("model-local function; functions are not inlined")
			} else {
				fail("op is not in the converter's op table")
			}
			return nil
		}
	}
	c.attrs = ir.Attrs{}
	for _, ra := range rn.attrs {
		if ra.g != nil && info != nil && ir.IsControlFlow(info.Name) {
			continue // bodies are built by controlFlow
		}
		a, err := b.l.attr(ra)
		if err != nil {
			var ue *errUnsupported
			if errors.As(err, &ue) {
				fail(ue.reason)
				return nil
			}
			return hard(err)
		}
		c.attrs[ra.pb.GetName()] = a
	}
	delete(c.attrs, "consumed_inputs") // opset <= 5 memory hint, meaningless here
	convert := c.convert
	if contrib {
		convert = func(*ir.OpInfo) error { return msContrib[op](c) }
	} else if info != nil && ir.IsControlFlow(info.Name) {
		convert = c.controlFlow
	} else if op == "OptionalHasElement" || op == "OptionalGetElement" {
		convert = c.optional
	}
	if err := convert(info); err != nil {
		var ue *errUnsupported
		if errors.As(err, &ue) {
			fail(ue.reason)
			return nil
		}
		return hard(err)
	}
	return nil
}

// attr converts one attribute; kinds the IR cannot hold are unsupported.
func (l *loader) attr(ra *rawAttr) (ir.Attr, error) {
	pb := ra.pb
	name := pb.GetName()
	if pb.GetRefAttrName() != "" {
		return ir.Attr{}, unsupportedf("attribute %s refers to a function attribute", name)
	}
	typ := pb.GetType()
	if typ == onnxpb.AttributeProto_UNDEFINED {
		// IR version 1 attributes carry no type: take the field that is set.
		switch {
		case ra.t != nil:
			typ = onnxpb.AttributeProto_TENSOR
		case pb.F != nil:
			typ = onnxpb.AttributeProto_FLOAT
		case pb.I != nil:
			typ = onnxpb.AttributeProto_INT
		case pb.S != nil:
			typ = onnxpb.AttributeProto_STRING
		case ra.g != nil:
			typ = onnxpb.AttributeProto_GRAPH
		case len(pb.Floats) > 0:
			typ = onnxpb.AttributeProto_FLOATS
		case len(pb.Ints) > 0:
			typ = onnxpb.AttributeProto_INTS
		case len(pb.Strings) > 0:
			typ = onnxpb.AttributeProto_STRINGS
		case len(ra.tensors) > 0:
			typ = onnxpb.AttributeProto_TENSORS
		case len(ra.graphs) > 0:
			typ = onnxpb.AttributeProto_GRAPHS
		default:
			return ir.Attr{}, fmt.Errorf("attribute %s has neither a type nor a value", name)
		}
	}
	switch typ {
	case onnxpb.AttributeProto_FLOAT:
		return ir.FloatAttr(float64(pb.GetF())), nil
	case onnxpb.AttributeProto_INT:
		return ir.IntAttr(pb.GetI()), nil
	case onnxpb.AttributeProto_STRING:
		return ir.StringAttr(string(pb.GetS())), nil
	case onnxpb.AttributeProto_FLOATS:
		fs := make([]float64, len(pb.GetFloats()))
		for i, f := range pb.GetFloats() {
			fs[i] = float64(f)
		}
		return ir.FloatsAttr(fs...), nil
	case onnxpb.AttributeProto_INTS:
		return ir.IntsAttr(append([]int64{}, pb.GetInts()...)...), nil
	case onnxpb.AttributeProto_STRINGS:
		ss := make([]string, len(pb.GetStrings()))
		for i, s := range pb.GetStrings() {
			ss[i] = string(s)
		}
		return ir.StringsAttr(ss...), nil
	case onnxpb.AttributeProto_TENSOR:
		if ra.t == nil {
			return ir.Attr{}, fmt.Errorf("tensor attribute %s has no tensor", name)
		}
		t, err := l.tensor(ra.t)
		if err != nil {
			return ir.Attr{}, fmt.Errorf("attribute %s: %w", name, err)
		}
		return ir.TensorAttr(t), nil
	case onnxpb.AttributeProto_GRAPH, onnxpb.AttributeProto_GRAPHS:
		return ir.Attr{}, unsupportedf("subgraph attribute %s (control flow is not supported)", name)
	}
	return ir.Attr{}, unsupportedf("attribute %s of type %s", name, typ)
}

// emit adds one IR node for this ONNX node (ir.Editor.Place: typed as far
// as the types known so far allow). Output names that are the ONNX node's
// outputs are bound in the environment and take their value_info.
func (c *nodeCtx) emit(op string, inputs []*ir.Value, attrs ir.Attrs, outNames ...string) *ir.Node {
	b := c.b
	name := c.irName
	if c.nEmit > 0 {
		name = b.nodes.Unique(c.irName + "/" + op)
	}
	c.nEmit++
	n := ir.NewNode(name, op, inputs, attrs, outNames...)
	n.Provenance = []string{c.name}
	for _, o := range n.Outputs {
		if o.Name == "" {
			continue
		}
		b.env[o.Name] = o
		if vi, ok := b.vinfo[o.Name]; ok {
			_ = setType(o, vi)
		}
	}
	// Shapes known while building let later normalizations (Softmax, Gemm
	// bias, legacy broadcast) pick the simplest form; failures are reported
	// by the full inference pass after the build.
	b.edit.Place(n)
	return n
}

// out returns a name for output i of the ONNX node when last is true, or a
// fresh intermediate name otherwise.
func (c *nodeCtx) out(last bool, suffix string) string {
	if last {
		return c.outs[0]
	}
	return c.b.edit.Unique(c.name + "/" + suffix)
}

// constant registers a generated constant.
func (c *nodeCtx) constant(suffix string, t *ir.Tensor) *ir.Value {
	return c.b.edit.Const(c.name+"/"+suffix, t)
}

func (c *nodeCtx) input(i int) *ir.Value {
	if i < len(c.in) {
		return c.in[i]
	}
	return nil
}

func (c *nodeCtx) setInput(i int, v *ir.Value) {
	for len(c.in) <= i {
		c.in = append(c.in, nil)
	}
	c.in[i] = v
}
