package mindir

import (
	"encoding/binary"
	"errors"
	"fmt"
	"gkconv/internal/safefs"
	"maps"
	"os"
	"slices"
	"strings"
	"syscall"

	"gkconv/internal/ir"
	pb "gkconv/internal/mindir/mindirpb"
	"gkconv/internal/textsafe"
)

// ProducerName marks files written by Write; the reader reads their
// attributes back verbatim instead of mapping MindSpore's.
const ProducerName = "gkconv"

// ErrEncrypted is returned (wrapped) for MindSpore-encrypted models.
var ErrEncrypted = errors.New("model is encrypted")

// Unsupported is one MindIR node the converter cannot take.
type Unsupported struct {
	Node   string // MindIR node name
	Op     string // MindSpore primitive name
	Reason string
}

// UnsupportedError lists every unsupported node of a model, one per line as
// "node: prim (reason)".
type UnsupportedError struct {
	File  string
	Items []Unsupported
}

func (e *UnsupportedError) Error() string {
	file := e.File
	if file == "" {
		file = "mindir"
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s: %d unsupported MindSpore node(s):", textsafe.Escape(file), len(e.Items))
	for _, it := range e.Items {
		// Model strings are escaped: a name cannot start a line of its own.
		fmt.Fprintf(&sb, "\n  %s: %s (%s)", textsafe.Escape(it.Node), textsafe.Escape(it.Op), textsafe.Escape(it.Reason))
	}
	return sb.String()
}

// Model is an opened MindIR file. Constant tensors alias the file mapping:
// they stay valid until Close.
type Model struct {
	Graph *ir.Graph
	data  []byte
}

// Open maps path read-only and converts it.
func Open(path string) (*Model, error) {
	f, _, err := safefs.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return OpenFile(f)
}

// OpenFile maps the open file f read-only and converts it (f may be closed
// afterwards), so a caller that has checked f's contents (a signature)
// converts exactly that file, not whatever its path names by then.
func OpenFile(f *os.File) (*Model, error) {
	path := f.Name()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%s)", path, st.Mode().Type())
	}
	size := st.Size()
	if size == 0 {
		return nil, fmt.Errorf("%s: empty file", path)
	}
	if size != int64(int(size)) {
		return nil, fmt.Errorf("%s: file too large to map", path)
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("%s: mmap: %w", path, err)
	}
	g, err := parse(data, path)
	if err != nil {
		syscall.Munmap(data)
		return nil, err
	}
	ir.RegisterMapping(data) // passes may drop weight pages they replaced
	return &Model{Graph: g, data: data}, nil
}

// Close unmaps the file; the graph's constant data must not be used after.
func (m *Model) Close() error {
	if m == nil || m.data == nil {
		return nil
	}
	ir.UnregisterMapping(m.data)
	err := syscall.Munmap(m.data)
	m.data = nil
	return err
}

// Parse converts a MindIR model held in memory. Constant tensors alias data.
func Parse(data []byte) (*ir.Graph, error) { return parse(data, "") }

// MindSpore's encrypted-model magic numbers (AES-GCM, AES-CBC, SM4-CBC),
// little-endian at the start of the file.
var encryptMagic = map[uint32]string{0x7F3A5ED8: "AES-GCM", 0x7F3A5ED9: "AES-CBC", 0x7F3A5EDA: "SM4-CBC"}

func parse(data []byte, file string) (g *ir.Graph, err error) {
	label := file
	if label == "" {
		label = "mindir"
	}
	defer func() {
		// Parsers never panic; a bug here becomes an error naming the file.
		if r := recover(); r != nil {
			g, err = nil, fmt.Errorf("%s: internal error reading MindIR: %v", label, r)
		}
	}()
	if len(data) >= 4 {
		if mode, ok := encryptMagic[binary.LittleEndian.Uint32(data)]; ok {
			return nil, fmt.Errorf("%s: %w (MindSpore %s); decrypt it with MindSpore first, reading encrypted MindIR is not supported", label, ErrEncrypted, mode)
		}
	}
	mp, err := decodeModel(data)
	if err != nil {
		return nil, fmt.Errorf("%s: not a valid MindIR protobuf (%v); if the model was exported with encryption, decrypt it first", label, err)
	}
	if mp.Graph == nil || mp.IrVersion == nil {
		return nil, fmt.Errorf("%s: not a MindIR model (no ir_version or graph); if the model was exported with encryption, decrypt it first", label)
	}
	c := &conv{
		file:  file,
		label: label,
		mp:    mp,
		own:   mp.GetProducerName() == ProducerName,
		prims: map[string]*pb.PrimitiveProto{},
		funcs: map[string]*pb.GraphProto{},
	}
	for _, p := range mp.Primitives {
		c.prims[p.GetName()] = p
	}
	for _, f := range mp.Functions {
		c.funcs[f.GetName()] = f
	}
	g, err = c.msGraph(mp.Graph, 0)
	if err != nil {
		var de *ir.DepthError
		if errors.As(err, &de) {
			return nil, fmt.Errorf("%s: %w", label, de) // one line, not a prefix per level
		}
		return nil, err
	}
	// The recursion allows a graph kernel's body one level below the
	// limit; control-flow bodies there are refused here, as the writer does.
	if err := ir.CheckGraphDepth(g); err != nil {
		return nil, fmt.Errorf("%s: %w", label, err)
	}
	if c.own {
		for k, v := range mp.UserInfo {
			g.Meta[k] = v
		}
	} else {
		g.Meta["producer_name"] = mp.GetProducerName()
		g.Meta["model_version"] = mp.GetModelVersion()
		g.Meta["ir_version"] = mp.GetIrVersion()
		if mp.MindIrVersion != nil {
			g.Meta["mind_ir_version"] = fmt.Sprint(mp.GetMindIrVersion())
		}
	}
	return g, nil
}

// conv holds the state of one conversion.
type conv struct {
	file, label string
	mp          *pb.ModelProto
	own         bool
	prims       map[string]*pb.PrimitiveProto
	funcs       map[string]*pb.GraphProto
	bodies      map[string]*ir.Graph // converted kernel bodies (nil while converting: a cycle)
	depth       int

	// MindSpore mode, per graph
	g           *ir.Graph
	syms        map[string]any
	registered  map[*ir.Value]bool
	names       *ir.Names // value names
	unsupported []Unsupported
	// getitemNamed: values a TupleGetItem already named.
	getitemNamed map[*ir.Value]bool
	// inlining: the functions whose calls are being inlined, innermost
	// last; loopBack: the while-loop body being read (read_loop.go).
	inlining []string
	loopBack *backEdge
}

// graphState is the per-graph part of conv, saved while a body is read.
type graphState struct {
	g            *ir.Graph
	syms         map[string]any
	registered   map[*ir.Value]bool
	names        *ir.Names
	getitemNamed map[*ir.Value]bool
	depth        int
}

func (c *conv) saveState() graphState {
	return graphState{c.g, c.syms, c.registered, c.names, c.getitemNamed, c.depth}
}

func (c *conv) restoreState(s graphState) {
	c.g, c.syms, c.registered, c.names, c.getitemNamed, c.depth = s.g, s.syms, s.registered, s.names, s.getitemNamed, s.depth
}

// body converts a kernel body function once; nodes that name the same
// function share the graph.
func (c *conv) body(name string, depth int) (*ir.Graph, error) {
	if g, ok := c.bodies[name]; ok {
		if g == nil {
			return nil, fmt.Errorf("graph kernel body %q contains itself", name)
		}
		return g, nil
	}
	fp, ok := c.funcs[name]
	if !ok {
		return nil, fmt.Errorf("graph kernel body %q is not in the model's functions", name)
	}
	if c.bodies == nil {
		c.bodies = map[string]*ir.Graph{}
	}
	c.bodies[name] = nil
	saved := c.saveState()
	savedUnsupported := c.unsupported
	c.unsupported = nil
	g, err := c.msGraph(fp, depth+1)
	c.restoreState(saved)
	c.unsupported = savedUnsupported
	if err != nil {
		return nil, fmt.Errorf("graph kernel body %s: %w", name, err)
	}
	// The writer prefixes body names with "<function>/"; the IR names are
	// the part after it.
	prefix := name + "/"
	for _, v := range g.Inputs {
		v.Name = strings.TrimPrefix(v.Name, prefix)
	}
	for _, v := range g.Consts {
		v.Name = strings.TrimPrefix(v.Name, prefix)
	}
	for _, n := range g.Nodes {
		n.Name = strings.TrimPrefix(n.Name, prefix)
		for _, o := range n.Outputs {
			o.Name = strings.TrimPrefix(o.Name, prefix)
		}
	}
	if gn := graphNameAttr(fp); gn != "" {
		g.Name = gn
	}
	c.bodies[name] = g
	return g, nil
}

func graphNameAttr(gp *pb.GraphProto) string {
	for _, a := range gp.Attribute {
		if a.GetName() == "graph_name" {
			return string(a.S)
		}
	}
	return ""
}

// primOf resolves a node's op_type: "REF::Prim:uid" (0.1.1) or a bare
// primitive name (0.1.0). It returns the primitive name and its attributes.
func (c *conv) primOf(n *pb.NodeProto) (string, []*pb.AttributeProto, error) {
	op := n.GetOpType()
	if ref, ok := strings.CutPrefix(op, "REF::"); ok {
		if p, ok := c.prims[ref]; ok {
			name := p.GetOpType()
			if name == "" {
				name, _, _ = strings.Cut(ref, ":")
			}
			return name, p.Attribute, nil
		}
		if _, ok := c.funcs[ref]; ok {
			return "", nil, &unsupportedOp{"call of graph " + ref}
		}
		return "", nil, fmt.Errorf("node %s: primitive %q is not in the model's primitives", n.GetName(), ref)
	}
	return op, nil, nil
}

type unsupportedOp struct{ what string }

func (u *unsupportedOp) Error() string { return u.what }

// ---- MindSpore files ----

func (c *conv) msGraph(gp *pb.GraphProto, depth int) (*ir.Graph, error) {
	if depth > ir.MaxGraphDepth+1 { // a graph kernel's body may be one below the limit (ir.MaxGraphDepth)
		return nil, &ir.DepthError{Where: "function " + gp.GetName()}
	}
	c.g = ir.NewGraph(gp.GetName())
	c.syms = map[string]any{}
	c.registered = map[*ir.Value]bool{}
	c.names = ir.NewNames()
	c.getitemNamed = map[*ir.Value]bool{}
	c.depth = depth
	g := c.g
	for _, vi := range gp.Input {
		v := &ir.Value{Name: c.uniq(vi.GetName())}
		switch {
		case len(vi.Tensor) > 0:
			v.DType, v.Shape, v.DimNames = typeFromProto(vi.Tensor[0], c.own)
		case vi.AttrInfo != nil && len(vi.AttrInfo.Tensors) > 0:
			// a scalar input (MindSpore 2.x): attr_info holds its type
			v.DType, _, _ = typeFromProto(vi.AttrInfo.Tensors[0], false)
			v.Shape = []int64{}
		}
		g.Inputs = append(g.Inputs, v)
		c.syms[vi.GetName()] = v
	}
	var weightless []string
	for _, p := range gp.Parameter {
		if !hasData(p) && p.ExternalData != nil {
			// MindSpore's external weights (model_variables/data_N, beside
			// the file): not read yet. Refused by name rather than turned
			// into a graph input the user would have to feed.
			return nil, &UnsupportedError{File: c.file, Items: []Unsupported{{Node: p.GetName(), Op: "Parameter",
				Reason: fmt.Sprintf("its data is external (%q); reading MindIR external data is not supported yet", p.ExternalData.GetLocation())}}}
		}
		if !hasData(p) {
			// The weights live in a checkpoint, not in the file: keep the
			// parameter as a graph input so the structure is still usable.
			v := &ir.Value{Name: c.uniq(p.GetName())}
			v.DType, v.Shape, _ = typeFromProto(p, false)
			g.Inputs = append(g.Inputs, v)
			c.syms[p.GetName()] = v
			weightless = append(weightless, p.GetName())
			continue
		}
		t, err := tensorFromProto(p)
		if err != nil {
			return nil, fmt.Errorf("%s: parameter %s: %w", c.label, p.GetName(), err)
		}
		c.syms[p.GetName()] = &ir.Value{Name: c.uniq(p.GetName()), DType: t.DType, Shape: append([]int64{}, t.Shape...), Const: t}
	}
	if len(weightless) > 0 {
		g.Meta["mindir.weightless_parameters"] = strings.Join(weightless, ",")
	}
	if err := c.predefineConstants(); err != nil {
		return nil, err
	}
	ret, err := c.runNodes(gp.Node)
	if err != nil {
		return nil, err
	}
	if len(c.unsupported) > 0 {
		return nil, &UnsupportedError{File: c.file, Items: c.unsupported}
	}
	var outs []any
	declared := make([]string, 0, len(gp.Output))
	if len(gp.Output) > 0 {
		for _, vi := range gp.Output {
			s, ok := c.syms[vi.GetName()]
			if !ok {
				return nil, fmt.Errorf("%s: graph output %q is not produced", c.label, vi.GetName())
			}
			outs = append(outs, s)
			declared = append(declared, vi.GetName())
		}
	} else {
		outs = ret
	}
	for i, s := range outs {
		vs := flatten(s)
		for _, v := range vs {
			if v.Const != nil {
				c.register(v)
			} else if v.Producer != nil && len(vs) == 1 && i < len(declared) && v.Name != declared[i] && !c.names.Used(declared[i]) {
				// keep the model's declared output name
				v.Name = declared[i]
				c.names.Reserve(v.Name)
			}
			if i < len(gp.Output) && len(vs) == 1 && len(gp.Output[i].Tensor) > 0 && v.DType == ir.Undefined {
				v.DType, v.Shape, _ = typeFromProto(gp.Output[i].Tensor[0], false)
			}
			g.Outputs = append(g.Outputs, v)
		}
	}
	if len(g.Outputs) == 0 {
		return nil, fmt.Errorf("%s: graph %s has no outputs", c.label, gp.GetName())
	}
	return g, nil
}

// predefineConstants binds the Constant nodes of every function: MindSpore's
// one name map is file-wide, and its exporter shares a constant between
// functions, defined in whichever it wrote first (a while-loop body reads
// the `1.0` its if-branch defines). Constants are values, not computations,
// so binding them up front changes nothing else.
func (c *conv) predefineConstants() error {
	for _, name := range slices.Sorted(maps.Keys(c.funcs)) {
		for _, np := range c.funcs[name].Node {
			if np.GetOpType() != "Constant" {
				continue
			}
			if _, ok := c.syms[np.GetName()]; ok {
				continue
			}
			for _, a := range np.Attribute {
				if a.GetName() == "value" || len(np.Attribute) == 1 {
					x, err := attrValue(a)
					if err != nil {
						return fmt.Errorf("%s: constant %s: %w", c.label, np.GetName(), err)
					}
					c.define(np, c.constSym(x, np.GetName()))
				}
			}
		}
	}
	return nil
}

// runNodes converts a graph's or an inlined function's nodes in order into
// the current graph, binding their names in c.syms; it returns the Return
// node's inputs.
func (c *conv) runNodes(nodes []*pb.NodeProto) ([]any, error) {
	var ret []any
	for _, np := range nodes {
		name := np.GetName()
		if np.GetOpType() == "Constant" {
			var val any = noneVal{}
			for _, a := range np.Attribute {
				if a.GetName() == "value" || len(np.Attribute) == 1 {
					x, err := attrValue(a)
					if err != nil {
						return nil, fmt.Errorf("%s: constant %s: %w", c.label, name, err)
					}
					val = c.constSym(x, name)
				}
			}
			c.define(np, val)
			continue
		}
		if res, handled, err := c.controlNode(np); handled {
			// The If form: Partial, Switch and the call (lower_control.go).
			var u *unsupportedOp
			switch {
			case errors.As(err, &u):
				c.unsupported = append(c.unsupported, Unsupported{Node: name, Op: np.GetOpType(), Reason: u.what})
				c.define(np, poisonVal{})
			case err != nil:
				return nil, fmt.Errorf("%s: node %s: %w", c.label, name, err)
			default:
				c.define(np, res)
			}
			continue
		}
		op, pattrs, err := c.primOf(np)
		if err != nil {
			var u *unsupportedOp
			if errors.As(err, &u) {
				c.unsupported = append(c.unsupported, Unsupported{Node: name, Op: np.GetOpType(), Reason: u.what})
				c.define(np, poisonVal{})
				continue
			}
			return nil, fmt.Errorf("%s: %w", c.label, err)
		}
		ins := make([]any, len(np.Input))
		poisoned := false
		for i, in := range np.Input {
			s, ok := c.syms[in]
			if !ok {
				return nil, fmt.Errorf("%s: node %s (%s): input %q is not defined before use", c.label, name, op, in)
			}
			if _, ok := s.(poisonVal); ok {
				poisoned = true
			}
			ins[i] = s
		}
		if op == "Return" || op == "return" {
			ret = ins
			continue
		}
		if poisoned {
			c.define(np, poisonVal{})
			continue
		}
		if op == "Custom" {
			res, err := c.custom(np, pattrs, ins)
			if err != nil {
				var u *unsupportedOp
				if errors.As(err, &u) {
					c.unsupported = append(c.unsupported, Unsupported{Node: name, Op: op, Reason: u.what})
					c.define(np, poisonVal{})
					continue
				}
				return nil, fmt.Errorf("%s: node %s (%s): %w", c.label, name, op, err)
			}
			c.define(np, res)
			continue
		}
		mn := &mnode{c: c, name: name, op: op, domain: np.GetDomain(), ins: ins, attrs: map[string]any{}}
		mn.provenance, mn.hasProvenance = provenanceOf(np)
		mn.convResidual = c.own && hasMark(np, convResidualAttr)
		mn.convActivation = c.own && hasMark(np, convActivationAttr)
		all := append(append([]*pb.AttributeProto{}, pattrs...), np.Attribute...)
		for i, a := range all {
			an := a.GetName()
			// The node's own "shape" is its output types (the abstract); a
			// primitive attribute named shape (BroadcastTo's) is an argument.
			// Files of ir_version 0.1.0 carry everything on the node.
			fromNode := i >= len(pattrs)
			if (an == "shape" && fromNode) || strings.HasPrefix(a.GetRefAttrName(), "shape:") {
				mn.outTypes = outTypes(a)
				continue
			}
			if an == "" || an == "input_names" || an == "output_names" {
				continue
			}
			x, err := attrValue(a)
			if err != nil {
				continue // an attribute we cannot decode is one no mapping reads
			}
			mn.attrs[an] = x
		}
		if len(np.Output) > 0 {
			mn.out = np.Output[0]
		} else {
			mn.out = name
		}
		res, err := c.mapNode(mn)
		if err != nil {
			var u *unsupportedOp
			if errors.As(err, &u) {
				reason := u.what
				if reason == "" {
					reason = "no IR mapping for this primitive"
				}
				c.unsupported = append(c.unsupported, Unsupported{Node: name, Op: op, Reason: reason})
				c.define(np, poisonVal{})
				continue
			}
			return nil, fmt.Errorf("%s: node %s (%s): %w", c.label, name, op, err)
		}
		restoreAnnotations(mn.emitted, pattrs)
		// Remember MindSpore's own primitive forms (lower_core.go), from any
		// file, so writing again keeps them.
		if _, core := lowerCoreTable[op]; core && (!c.own || c.hasInstanceName(np)) && len(mn.emitted) == 1 && mn.emitted[0].Op != ir.OpGraphKernel {
			if mn.emitted[0].Attrs == nil {
				mn.emitted[0].Attrs = ir.Attrs{}
			}
			mn.emitted[0].Attrs[ir.SourcePrimitive] = ir.StringAttr(op)
		}
		c.define(np, res)
	}
	return ret, nil
}

// define binds a node's output names to its result, and its name where no
// value has it: MindSpore's loader knows a node by output(0) only
// (load_model.cc anfnode_build_map_), so a node name that is also another
// value's name (ONNX allows it) must not shadow that value.
func (c *conv) define(np *pb.NodeProto, s any) {
	if _, taken := c.syms[np.GetName()]; !taken {
		c.syms[np.GetName()] = s
	}
	for _, o := range np.Output {
		c.syms[o] = s
	}
}

// constSym turns a decoded constant into a symbol: tensors and scalars
// become constant values (registered in the graph only once a node uses
// them), tuples of scalars become 1-D tensors.
func (c *conv) constSym(x any, name string) any {
	switch v := x.(type) {
	case *ir.Tensor:
		return c.constValue(name, v)
	case scalar:
		return c.constValue(name, scalarTensor(v))
	case tuple:
		if t, ok := tupleTensor(v); ok {
			cv := c.constValue(name, t)
			return constTuple{cv, v}
		}
		out := make(tuple, len(v))
		for i, e := range v {
			out[i] = c.constSym(e, fmt.Sprintf("%s_%d", name, i))
		}
		return out
	}
	return x
}

// constTuple is a tuple of scalars: usable as a 1-D tensor or as a tuple.
type constTuple struct {
	v     *ir.Value
	items tuple
}

func (c *conv) constValue(name string, t *ir.Tensor) *ir.Value {
	return &ir.Value{Name: c.uniq(name), DType: t.DType, Shape: append([]int64{}, t.Shape...), Const: t}
}

func (c *conv) register(v *ir.Value) {
	if v != nil && v.Const != nil && !c.registered[v] {
		c.registered[v] = true
		c.g.Consts = append(c.g.Consts, v)
	}
}

// uniq returns name, or name with a suffix when another value already uses it.
func (c *conv) uniq(name string) string {
	if name == "" {
		name = "v"
	}
	return c.names.Unique(name)
}

// flatten lists the tensor values of a symbol (tuples expanded, monads and
// None dropped).
func flatten(s any) []*ir.Value {
	switch x := s.(type) {
	case *ir.Value:
		return []*ir.Value{x}
	case constTuple:
		return []*ir.Value{x.v}
	case tuple:
		var out []*ir.Value
		for _, e := range x {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return nil
}

type outType struct {
	dt    ir.DType
	shape []int64
}

// outTypes reads a node's "shape" attribute: one entry per flat output.
func outTypes(a *pb.AttributeProto) []outType {
	var out []outType
	var walk func(a *pb.AttributeProto, depth int)
	walk = func(a *pb.AttributeProto, depth int) {
		if depth > maxDepth {
			return
		}
		if len(a.Values) > 0 {
			for _, v := range a.Values {
				walk(v, depth+1)
			}
			return
		}
		for _, t := range a.Tensors {
			dt, shape, _ := typeFromProto(t, false)
			if a.GetType() == pb.AttributeProto_SCALAR {
				shape = []int64{}
			}
			out = append(out, outType{dt, shape})
		}
	}
	walk(a, 0)
	return out
}

// restoreAnnotations puts the annotation attributes the writer carried as
// extra primitive attributes back on the nodes a mapping emitted.
func restoreAnnotations(nodes []*ir.Node, pattrs []*pb.AttributeProto) {
	for _, a := range pattrs {
		if !ir.IsAnnotation(a.GetName()) || a.GetType() != pb.AttributeProto_STRING {
			continue
		}
		for _, n := range nodes {
			if n.Attrs == nil {
				n.Attrs = ir.Attrs{}
			}
			n.Attrs[a.GetName()] = ir.StringAttr(string(a.S))
		}
	}
}

// hasInstanceName reports whether a node's primitive has an instance_name:
// MindSpore's Python primitives have one; converter_lite's forms, as this
// project writes them, do not.
func (c *conv) hasInstanceName(np *pb.NodeProto) bool {
	ref, ok := strings.CutPrefix(np.GetOpType(), "REF::")
	if !ok {
		return false
	}
	p := c.prims[ref]
	return p != nil && p.InstanceName != nil
}
