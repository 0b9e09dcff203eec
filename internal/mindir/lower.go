package mindir

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"gkconv/internal/ir"
	pb "gkconv/internal/mindir/mindirpb"
)

// Lowering: how an IR node is written as a MindSpore CNode. Each IR op has a
// lowering (lower_ops.go) that names the primitive converter_lite writes for
// it, the node inputs in MindSpore's order and the primitive attributes with
// MindSpore's names and value types. An IR op without a MindSpore primitive
// is written as a Custom node of type "gkconv.<IR op>" (customFallback),
// which MindSpore loads as an opaque custom op and this project reads back.

// msNode is one MindSpore CNode the writer emits for an IR node.
type msNode struct {
	prim   string
	inputs []*ir.Value // constants made by the lowering come from lowerCtx.konst
	attrs  []*pb.AttributeProto
	// outs lists MindSpore's outputs when they differ from the IR node's
	// (BatchNorm has 5, LayerNorm 3, ...): outs[i].v is the IR output that
	// MindSpore output i stands for, nil for one the IR node does not have
	// (then dt/shape type it). nil outs: the IR outputs as they are.
	outs []msOut
	// tuple: the primitive returns a tuple even with one output (Split into
	// one part, TopK, ...): the writer then always adds TupleGetItem.
	tuple bool
	// pack, when set, makes inputs[pack[0]:pack[1]] one node input: a
	// MakeTuple of them, as MindSpore passes a tuple[tensor] argument
	// (Concat's tensors, AddN's x, Einsum's x).
	pack *[2]int
	// core: a MindSpore Python primitive form (lower_core.go). Such
	// primitives carry an instance_name, as MindSpore writes them, which is
	// also how the reader tells them from converter_lite's forms.
	core bool
	// primFunc: a MindSpore op_def primitive written as PRIMITIVE_FUNCTION,
	// every argument a node input (the framework form, lower_framework.go).
	primFunc bool
	// values: inputs that are Constant value nodes (scalars, tuples) rather
	// than tensors, keyed by their placeholder in inputs (msNode.with).
	values map[*ir.Value]*pb.AttributeProto
	// nodeAttrs are written as the CNode's node_attr after "provenance"
	// (MindSpore keeps node attributes it does not know).
	nodeAttrs []*pb.AttributeProto
}

type msOut struct {
	v     *ir.Value
	dt    ir.DType
	shape []int64
}

// nodeInputs is the number of inputs the CNode gets (a packed group is one).
func (m *msNode) nodeInputs() int {
	if m.pack == nil {
		return len(m.inputs)
	}
	return len(m.inputs) - (m.pack[1] - m.pack[0]) + 1
}

// lowerCtx is what a lowering may use.
type lowerCtx struct {
	gw *graphWriter
	n  *ir.Node
}

// konst makes a constant node input (written as a graph parameter, the way
// converter_lite stores constant inputs).
func (c *lowerCtx) konst(suffix string, t *ir.Tensor) *ir.Value {
	v := &ir.Value{Name: c.n.Name + "/" + suffix, DType: t.DType, Shape: append([]int64{}, t.Shape...), Const: t}
	c.gw.extra = append(c.gw.extra, v)
	return v
}

func (c *lowerCtx) ints(suffix string, v ...int64) *ir.Value {
	return c.konst(suffix, ir.Int64Tensor([]int64{int64(len(v))}, v...))
}

// in returns input i or nil.
func (c *lowerCtx) in(i int) *ir.Value {
	if i < len(c.n.Inputs) {
		return c.n.Inputs[i]
	}
	return nil
}

// constInts reads input i as constant integers.
func (c *lowerCtx) constInts(i int) ([]int64, bool) {
	v := c.in(i)
	if v == nil || v.Const == nil {
		return nil, false
	}
	x, err := v.Const.Int64s()
	return x, err == nil
}

// optConstInts reads an optional input i as constant integers: nil and true
// when it is absent.
func (c *lowerCtx) optConstInts(i int) ([]int64, bool) {
	if c.in(i) == nil {
		return nil, true
	}
	return c.constInts(i)
}

// lowerFunc lowers one IR node.
type lowerFunc func(c *lowerCtx) (*msNode, error)

// lower picks the lowering of n.
// Annotation attributes (ir.AnnotationAttrs) are hidden from the lowering
// and written as extra primitive attributes, which MindSpore keeps as they
// are.
func (gw *graphWriter) lower(n *ir.Node) (*msNode, error) {
	orig := n
	var notes []string
	for k := range n.Attrs {
		if ir.IsAnnotation(k) {
			notes = append(notes, k)
		}
	}
	if len(notes) > 0 {
		sort.Strings(notes)
		clean := *n
		clean.Attrs = ir.Attrs{}
		for k, a := range n.Attrs {
			if !ir.IsAnnotation(k) {
				clean.Attrs[k] = a
			}
		}
		n = &clean
	}
	c := &lowerCtx{gw: gw, n: n}
	m, err := (*msNode)(nil), errNoPrimitive
	// The framework form first (WriteOptions.MindSporePrimitives).
	if gw.wr.opts.MindSporePrimitives {
		if f, ok := lowerFrameworkTable[n.Op]; ok {
			m, err = f(c)
		}
	}
	// A node read from a MindSpore file is written as the primitive it was,
	// when that form can express it.
	if src := orig.Attrs.String(ir.SourcePrimitive, ""); src != "" && errors.Is(err, errNoPrimitive) {
		if f, ok := lowerCoreTable[src]; ok {
			m, err = f(c)
		}
	}
	if f, ok := lowerTable[n.Op]; ok && errors.Is(err, errNoPrimitive) {
		m, err = f(c)
	}
	if errors.Is(err, errNoPrimitive) {
		m, err = customFallback(c)
	}
	if err != nil {
		return nil, err
	}
	if gw.wr.opts.MindSporePrimitives {
		if f := c.asPrimFunc(m); f != nil {
			m = f
		}
	}
	for _, k := range notes {
		if k == ir.SourcePrimitive {
			continue // used above; not a primitive attribute
		}
		a, err := irAttrProto(k, orig.Attrs[k])
		if err != nil {
			return nil, err
		}
		m.attrs = append(m.attrs, a)
	}
	return m, nil
}

// errNoPrimitive from a lowering means "this instance has no MindSpore form"
// (e.g. a mode MindSpore's primitive lacks): the node is written as Custom.
var errNoPrimitive = errors.New("no MindSpore primitive for this form")

// CustomTypePrefix starts the Custom `type` of IR ops written as Custom.
const CustomTypePrefix = "gkconv."

// customFallback writes n as Custom(type="gkconv.<op>") with its IR
// attributes as typed primitive attributes. Sequence attributes carry their
// kind in doc_string ("ints", "floats", "strings", "bytes") so an empty list
// reads back with its kind; MindSpore ignores doc_string.
func customFallback(c *lowerCtx) (*msNode, error) {
	n := c.n
	m := &msNode{prim: "Custom", inputs: n.Inputs}
	m.attrs = append(m.attrs, aStr("type", CustomTypePrefix+n.Op))
	for _, k := range n.Attrs.Keys() {
		if k == "type" {
			return nil, fmt.Errorf("attribute %q clashes with Custom's type", k)
		}
		a, err := irAttrProto(k, n.Attrs[k])
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", k, err)
		}
		m.attrs = append(m.attrs, a)
	}
	return m, nil
}

// irAttrProto encodes an IR attribute as MindSpore would encode the same
// Python value: int INT64 in i, float FLOAT in f (DOUBLE in d when float32
// would round it), string STRING in s, lists TUPLE with elements in values,
// bytes TUPLE of UINT8, tensors TENSORS.
func irAttrProto(name string, a ir.Attr) (*pb.AttributeProto, error) {
	switch a.Kind {
	case ir.AttrInt:
		return aInt(name, a.I), nil
	case ir.AttrFloat:
		if float64(float32(a.F)) == a.F || math.IsNaN(a.F) {
			return aFloat(name, float32(a.F)), nil
		}
		return &pb.AttributeProto{Name: ptr(name), Type: pb.AttributeProto_DOUBLE.Enum(), D: ptr(a.F)}, nil
	case ir.AttrString:
		return aStr(name, a.S), nil
	case ir.AttrInts:
		p := aInts(name, a.Ints...)
		p.DocString = ptr("ints")
		return p, nil
	case ir.AttrFloats:
		p := &pb.AttributeProto{Name: ptr(name), Type: pb.AttributeProto_TUPLE.Enum(), DocString: ptr("floats")}
		for _, f := range a.Floats {
			p.Values = append(p.Values, &pb.AttributeProto{Type: pb.AttributeProto_DOUBLE.Enum(), Doubles: []float64{f}})
		}
		return p, nil
	case ir.AttrStrings:
		p := aStrs(name, a.Strings...)
		p.DocString = ptr("strings")
		return p, nil
	case ir.AttrBytes:
		p := aBytes(name, a.B)
		p.DocString = ptr("bytes")
		return p, nil
	case ir.AttrTensor:
		if a.T == nil {
			return nil, errors.New("nil tensor")
		}
		return aTensor(name, a.T)
	}
	return nil, fmt.Errorf("attribute kind %d cannot be written to MindIR", a.Kind)
}

// Attribute constructors, in the forms load_model.cc reads
// (ObtainCNodeAttrInSingleScalarForm: scalars in i/f/s; ObtainValueInSequenceForm:
// sequence elements in values, each scalar at ints(0)/floats(0)/strings(0)).

func aInt(name string, v int64) *pb.AttributeProto {
	return &pb.AttributeProto{Name: ptr(name), Type: pb.AttributeProto_INT64.Enum(), I: ptr(v)}
}

func aBool(name string, v bool) *pb.AttributeProto {
	return &pb.AttributeProto{Name: ptr(name), Type: pb.AttributeProto_BOOL.Enum(), I: ptr(b2i(v))}
}

func aFloat(name string, v float32) *pb.AttributeProto {
	return &pb.AttributeProto{Name: ptr(name), Type: pb.AttributeProto_FLOAT.Enum(), F: ptr(v)}
}

func aStr(name, v string) *pb.AttributeProto {
	return &pb.AttributeProto{Name: ptr(name), Type: pb.AttributeProto_STRING.Enum(), S: []byte(v)}
}

// aInts is a TUPLE of INT64 (MakeValue of a std::vector<int64_t>).
func aInts(name string, v ...int64) *pb.AttributeProto {
	p := &pb.AttributeProto{Name: ptr(name), Type: pb.AttributeProto_TUPLE.Enum()}
	for _, x := range v {
		p.Values = append(p.Values, &pb.AttributeProto{Type: pb.AttributeProto_INT64.Enum(), Ints: []int64{x}})
	}
	return p
}

// aIntsList is a LIST of INT64 (a Python list attribute).
func aIntsList(name string, v ...int64) *pb.AttributeProto {
	p := aInts(name, v...)
	p.Type = pb.AttributeProto_LIST.Enum()
	return p
}

func aFloats(name string, v ...float32) *pb.AttributeProto {
	p := &pb.AttributeProto{Name: ptr(name), Type: pb.AttributeProto_TUPLE.Enum()}
	for _, x := range v {
		p.Values = append(p.Values, &pb.AttributeProto{Type: pb.AttributeProto_FLOAT.Enum(), Floats: []float32{x}})
	}
	return p
}

// aStrs is a LIST of STRING (input_names and the like are Python lists).
func aStrs(name string, v ...string) *pb.AttributeProto {
	p := &pb.AttributeProto{Name: ptr(name), Type: pb.AttributeProto_LIST.Enum()}
	for _, x := range v {
		p.Values = append(p.Values, &pb.AttributeProto{Type: pb.AttributeProto_STRING.Enum(), Strings: [][]byte{[]byte(x)}})
	}
	return p
}

// aBytes is a TUPLE of UINT8: MakeValue of a std::vector<uint8_t>, as
// ops::Custom::set_attr stores each value of its attr map.
func aBytes(name string, b []byte) *pb.AttributeProto {
	p := &pb.AttributeProto{Type: pb.AttributeProto_TUPLE.Enum()}
	if name != "" {
		p.Name = ptr(name)
	}
	p.Values = make([]*pb.AttributeProto, len(b))
	elems := make([]pb.AttributeProto, len(b))
	ints := make([]int64, len(b))
	for i, x := range b {
		ints[i] = int64(x)
		elems[i].Type = pb.AttributeProto_UINT8.Enum()
		elems[i].Ints = ints[i : i+1 : i+1]
		p.Values[i] = &elems[i]
	}
	return p
}

// aType is a dtype attribute: TENSORS whose tensor has only data_type.
func aType(name string, dt ir.DType) *pb.AttributeProto {
	return &pb.AttributeProto{Name: ptr(name), Type: pb.AttributeProto_TENSORS.Enum(), Tensors: []*pb.TensorProto{{DataType: ptr(int32(dt))}}}
}

// aTensor is a tensor value attribute (small tensors only: data inline).
func aTensor(name string, t *ir.Tensor) (*pb.AttributeProto, error) {
	if t.DType == ir.String || t.DType.Size() == 0 {
		return nil, fmt.Errorf("tensor attribute of dtype %s", t.DType)
	}
	tp := &pb.TensorProto{Dims: append([]int64{}, t.Shape...), DataType: ptr(int32(t.DType)), RawData: append([]byte{}, t.Data...)}
	if len(tp.Dims) == 0 {
		tp.Dims = nil
	}
	return &pb.AttributeProto{Name: ptr(name), Type: pb.AttributeProto_TENSORS.Enum(), Tensors: []*pb.TensorProto{tp}}, nil
}

// ---- GraphKernel nodes ----

// graphKernelCustom lowers a fused kernel node to converter_lite's Custom
// layout (ir/graphkernel.go): prim attrs type and attr, the binary as the
// last input.
func (gw *graphWriter) graphKernelCustom(n *ir.Node, bodyName string) (*msNode, error) {
	process := n.Attrs.String(ir.GKProcess, "cpu")
	m := &msNode{prim: "Custom", inputs: append([]*ir.Value{}, n.Inputs...)}
	m.attrs = append(m.attrs, aStr(ir.GKCustomType, ir.CustomTypeGraphKernel))
	list := &pb.AttributeProto{Name: ptr(ir.GKAttrList), Type: pb.AttributeProto_TUPLE.Enum()}
	addPair := func(k string, b []byte) {
		list.Values = append(list.Values, &pb.AttributeProto{Type: pb.AttributeProto_STRING.Enum(), Strings: [][]byte{[]byte(k)}}, aBytes("", b))
	}
	var prim []*pb.AttributeProto
	var binary *ir.Value
	kname := n.Attrs.String(ir.GKKernelName, n.Name)
	for _, k := range n.Attrs.Keys() {
		a := n.Attrs[k]
		row, ok := ir.LookupGKAttr(k, process)
		if !ok {
			return nil, fmt.Errorf("graph kernel attribute %q is not in the GraphKernel schema (ir/graphkernel.go)", k)
		}
		if a.Kind != row.Kind {
			return nil, fmt.Errorf("graph kernel attribute %q is a %v, the schema says %v", k, a.Kind, row.Kind)
		}
		switch row.Place {
		case ir.GKInBinaryInput:
			binary = gw.binaryInput(kname, ir.GKBinarySuffix(k), a.B)
			if k == ir.GKKernelPTX {
				addPair(ir.GKPTXPath, []byte(binary.Name))
			}
		case ir.GKInPrimAttr:
			p, err := irAttrProto(k, a)
			if err != nil {
				return nil, fmt.Errorf("graph kernel attribute %s: %w", k, err)
			}
			prim = append(prim, p)
		default:
			switch a.Kind {
			case ir.AttrString:
				addPair(k, []byte(a.S))
			case ir.AttrBytes:
				addPair(k, a.B)
			case ir.AttrInt:
				addPair(k, []byte(fmt.Sprint(a.I)))
			default:
				return nil, fmt.Errorf("graph kernel attribute %q: kind %v cannot go in the attr list", k, a.Kind)
			}
		}
	}
	if bodyName != "" {
		addPair(ir.GKBody, []byte(bodyName))
	}
	m.attrs = append(m.attrs, list)
	m.attrs = append(m.attrs, prim...)
	if binary != nil {
		m.inputs = append(m.inputs, binary)
	}
	return m, nil
}

// binaryInput is the uint8 parameter holding a kernel binary, named
// <kernel_name><suffix> (MindSpore Lite's runtime finds the .so by that
// suffix). Nodes that run the same kernel share one parameter, as
// converter_lite compiles each kernel name once.
func (gw *graphWriter) binaryInput(kname, suffix string, b []byte) *ir.Value {
	if gw.binaries == nil {
		gw.binaries = map[string]*ir.Value{}
	}
	name := kname + suffix
	for i := 1; ; i++ {
		v, ok := gw.binaries[name]
		if !ok {
			break
		}
		if bytes.Equal(v.Const.Data, b) {
			return v
		}
		name = fmt.Sprintf("%s_%d%s", kname, i, suffix)
	}
	t := &ir.Tensor{DType: ir.Uint8, Shape: []int64{int64(len(b))}, Data: b}
	v := &ir.Value{Name: name, DType: ir.Uint8, Shape: t.Shape, Const: t}
	gw.binaries[name] = v
	gw.extra = append(gw.extra, v)
	return v
}

// readGraphKernelAttrs restores a GraphKernel node's IR attributes from the
// Custom primitive's attributes and its last input (the reverse of
// graphKernelCustom). It returns the attributes, the body function's name
// and whether the last input was the binary.
func readGraphKernelAttrs(pattrs []*pb.AttributeProto, lastInput *ir.Value) (ir.Attrs, string, bool, error) {
	attrs := ir.Attrs{}
	body := ""
	list := map[string][]byte{}
	var order []string
	for _, a := range pattrs {
		switch a.GetName() {
		case ir.GKCustomType, "shape", "":
			continue
		case ir.GKAttrList:
			vs := a.Values
			if len(vs)%2 != 0 {
				return nil, "", false, fmt.Errorf("Custom attr list has %d entries, want name/value pairs", len(vs))
			}
			for i := 0; i < len(vs); i += 2 {
				if len(vs[i].Strings) != 1 {
					return nil, "", false, fmt.Errorf("Custom attr list entry %d is not a name", i/2)
				}
				k := string(vs[i].Strings[0])
				b := make([]byte, len(vs[i+1].Values))
				for j, e := range vs[i+1].Values {
					if len(e.Ints) != 1 || e.Ints[0] < 0 || e.Ints[0] > 255 {
						return nil, "", false, fmt.Errorf("Custom attr %q: byte %d is not a UINT8", k, j)
					}
					b[j] = byte(e.Ints[0])
				}
				list[k] = b
				order = append(order, k)
			}
			continue
		}
		x, err := customAttrValue(a)
		if err != nil {
			return nil, "", false, fmt.Errorf("Custom attribute %s: %w", a.GetName(), err)
		}
		attrs[a.GetName()] = x
	}
	process := string(list[ir.GKProcess])
	if process == "" {
		process = "cpu"
	}
	for _, k := range order {
		b := list[k]
		switch k {
		case ir.GKBody:
			body = string(b)
			continue
		case ir.GKPTXPath:
			continue
		}
		row, ok := ir.LookupGKAttr(k, process)
		kind := ir.AttrString
		if ok {
			kind = row.Kind
		}
		switch kind {
		case ir.AttrInt:
			var v int64
			if _, err := fmt.Sscan(string(b), &v); err != nil {
				return nil, "", false, fmt.Errorf("Custom attr %q: %q is not an integer", k, b)
			}
			attrs[k] = ir.IntAttr(v)
		case ir.AttrBytes:
			attrs[k] = ir.BytesAttr(b)
		default:
			attrs[k] = ir.StringAttr(string(b))
		}
	}
	usedBinary := false
	if name, suffix := ir.GKBinaryAttr(process); name != "" && lastInput != nil && lastInput.Const != nil &&
		lastInput.DType == ir.Uint8 && len(lastInput.Shape) == 1 && strings.HasSuffix(lastInput.Name, suffix) {
		attrs[name] = ir.BytesAttr(lastInput.Const.Data)
		usedBinary = true
	}
	return attrs, body, usedBinary, nil
}

// customAttrValue decodes an attribute written by irAttrProto.
func customAttrValue(a *pb.AttributeProto) (ir.Attr, error) {
	switch a.GetType() {
	case pb.AttributeProto_INT64, pb.AttributeProto_INT32, pb.AttributeProto_BOOL:
		return ir.IntAttr(a.GetI()), nil
	case pb.AttributeProto_FLOAT:
		return ir.FloatAttr(float64(a.GetF())), nil
	case pb.AttributeProto_DOUBLE:
		return ir.FloatAttr(a.GetD()), nil
	case pb.AttributeProto_STRING:
		return ir.StringAttr(string(a.S)), nil
	case pb.AttributeProto_TENSORS:
		if len(a.Tensors) != 1 {
			return ir.Attr{}, errors.New("TENSORS attribute without one tensor")
		}
		t, err := tensorFromProto(a.Tensors[0])
		if err != nil {
			return ir.Attr{}, err
		}
		return ir.TensorAttr(t), nil
	case pb.AttributeProto_TUPLE, pb.AttributeProto_LIST:
		kind := a.GetDocString()
		if kind == "" && len(a.Values) > 0 {
			switch a.Values[0].GetType() {
			case pb.AttributeProto_STRING:
				kind = "strings"
			case pb.AttributeProto_FLOAT, pb.AttributeProto_DOUBLE:
				kind = "floats"
			case pb.AttributeProto_UINT8:
				kind = "bytes"
			default:
				kind = "ints"
			}
		}
		switch kind {
		case "strings":
			ss := make([]string, len(a.Values))
			for i, v := range a.Values {
				if len(v.Strings) != 1 {
					return ir.Attr{}, fmt.Errorf("element %d is not a string", i)
				}
				ss[i] = string(v.Strings[0])
			}
			return ir.Attr{Kind: ir.AttrStrings, Strings: ss}, nil
		case "floats":
			fs := make([]float64, len(a.Values))
			for i, v := range a.Values {
				switch {
				case len(v.Doubles) == 1:
					fs[i] = v.Doubles[0]
				case len(v.Floats) == 1:
					fs[i] = float64(v.Floats[0])
				default:
					return ir.Attr{}, fmt.Errorf("element %d is not a number", i)
				}
			}
			return ir.Attr{Kind: ir.AttrFloats, Floats: fs}, nil
		case "bytes":
			b := make([]byte, len(a.Values))
			for i, v := range a.Values {
				if len(v.Ints) != 1 {
					return ir.Attr{}, fmt.Errorf("element %d is not a byte", i)
				}
				b[i] = byte(v.Ints[0])
			}
			return ir.BytesAttr(b), nil
		default:
			is := make([]int64, len(a.Values))
			for i, v := range a.Values {
				if len(v.Ints) != 1 {
					return ir.Attr{}, fmt.Errorf("element %d is not an integer", i)
				}
				is[i] = v.Ints[0]
			}
			return ir.Attr{Kind: ir.AttrInts, Ints: is}, nil
		}
	}
	return ir.Attr{}, fmt.Errorf("unexpected attribute type %s", a.GetType())
}

// LoweredPrimitive says which MindSpore primitive the writer writes for n
// (Custom with a gkconv.<op> type when MindSpore has none for this form).
// It lowers the node alone, outside any file.
func LoweredPrimitive(n *ir.Node) (prim, customType string, err error) {
	wr := &writer{funcNames: map[*ir.Graph]string{}, names: map[string]bool{}}
	gw := &graphWriter{wr: wr, g: ir.NewGraph("doc"), mname: map[*ir.Value]string{}, gp: &pb.GraphProto{}, index: map[int]string{}}
	var m *msNode
	switch {
	case n.Op == ir.OpGraphKernel:
		m, err = gw.graphKernelCustom(n, "")
	case n.Op == "If":
		return "Switch(Partial, Partial) call", "", nil // writeIf
	case ir.IsControlFlow(n.Op):
		m, err = gw.controlFlowCustom(n)
	default:
		m, err = gw.lower(n)
	}
	if err != nil {
		return "", "", err
	}
	for _, a := range m.attrs {
		if m.prim == "Custom" && a.GetName() == ir.GKCustomType {
			customType = string(a.S)
		}
	}
	return m.prim, customType, nil
}
