package mindir

import (
	"fmt"
	"strings"

	"gkconv/internal/ir"
)

// mnode is one MindSpore CNode being mapped.
type mnode struct {
	c        *conv
	name     string // MindIR node name
	op       string // MindSpore primitive name
	domain   string // scope
	out      string // MindIR output name
	ins      []any  // inputs with monads removed
	attrs    map[string]any
	outTypes []outType
	emitted  []*ir.Node
	// provenance: the source nodes this project recorded (node_attr
	// "provenance" of its own files); replaces the default provenance.
	provenance    []string
	hasProvenance bool
	// convResidual: an AddFusion the writer marked as a Conv2D's residual
	// Add (conv_residual.go).
	convResidual bool
	// convActivation: an Activation the writer marked as a Conv2D's fused
	// activation (conv_residual.go).
	convActivation bool
}

func unsupported(format string, a ...any) error { return &unsupportedOp{fmt.Sprintf(format, a...)} }

// mapNode converts one CNode; it returns the symbol its output stands for.
func (c *conv) mapNode(m *mnode) (any, error) {
	ins := m.ins[:0:0]
	for _, in := range m.ins {
		if _, ok := in.(monadVal); !ok {
			ins = append(ins, in)
		}
	}
	m.ins = ins
	res, err := m.dispatch()
	if err != nil {
		return nil, err
	}
	return c.finish(m, res), nil
}

// finish gives the values a mapping produced the MindIR output name and the
// node's stated types.
func (c *conv) finish(m *mnode, res any) any {
	// Give the produced values the MindIR output name and the node's types.
	flat := flatten(res)
	for i, v := range flat {
		if v.Producer == nil || !m.emittedHere(v.Producer) {
			continue
		}
		want := m.out
		if len(flat) > 1 {
			want = fmt.Sprintf("%s_%d", m.out, i)
		}
		if v.Name != want {
			c.names.Release(v.Name)
			v.Name = c.uniq(want)
		}
		// The model's own types win over inference when it states them (and
		// always in this project's own files, which state what it inferred).
		if i < len(m.outTypes) && (m.outTypes[i].dt != ir.Undefined || c.own) {
			v.DType = m.outTypes[i].dt
			if m.outTypes[i].shape != nil || v.Shape == nil || c.own {
				v.Shape = m.outTypes[i].shape
			}
		}
	}
	if m.hasProvenance {
		for _, n := range m.emitted {
			n.Provenance = m.provenance
		}
	}
	return res
}

func (m *mnode) emittedHere(n *ir.Node) bool {
	for _, e := range m.emitted {
		if e == n {
			return true
		}
	}
	return false
}

// emit adds an IR node; constant inputs are registered in the graph.
func (m *mnode) emit(op string, ins []*ir.Value, nout int, attrs ir.Attrs) *ir.Node {
	return m.emitWith(op, ins, nout, attrs, nil)
}

func (m *mnode) emit1(op string, attrs ir.Attrs, ins ...*ir.Value) *ir.Value {
	return m.emit(op, ins, 1, attrs).Outputs[0]
}

// konst makes a constant value for a node input.
func (m *mnode) konst(suffix string, t *ir.Tensor) *ir.Value {
	return m.c.constValue(m.out+"/"+suffix, t)
}

func (m *mnode) ints64(suffix string, v []int64) *ir.Value {
	return m.konst(suffix, ir.Int64Tensor([]int64{int64(len(v))}, v...))
}

// tensor returns input i as a tensor value.
func (m *mnode) tensor(i int) (*ir.Value, error) {
	if i >= len(m.ins) {
		return nil, fmt.Errorf("input %d is missing (%d inputs)", i, len(m.ins))
	}
	return asValue(m.ins[i], fmt.Sprintf("input %d", i))
}

func asValue(s any, what string) (*ir.Value, error) {
	switch x := s.(type) {
	case *ir.Value:
		return x, nil
	case constTuple:
		return x.v, nil
	}
	return nil, fmt.Errorf("%s is a %s, not a tensor", what, kindOf(s))
}

func kindOf(s any) string {
	switch s.(type) {
	case tuple:
		return "tuple"
	case noneVal:
		return "None"
	case dtypeVal:
		return "type"
	case scalar:
		return "scalar"
	}
	return fmt.Sprintf("%T", s)
}

// arg returns a parameter that MindSpore passes as input i (2.x primitive
// functions, and constant inputs of older ops) or as one of the named
// attributes (older primitives); nil when absent.
func (m *mnode) arg(i int, names ...string) any {
	if i >= 0 && i < len(m.ins) {
		if _, none := m.ins[i].(noneVal); !none {
			return m.ins[i]
		}
	}
	for _, n := range names {
		if v, ok := m.attrs[n]; ok {
			return v
		}
	}
	return nil
}

func (m *mnode) intArg(i int, def int64, names ...string) (int64, error) {
	v := m.arg(i, names...)
	if v == nil {
		return def, nil
	}
	if ct, ok := v.(constTuple); ok {
		v = ct.items
	}
	x, ok := asInt(v)
	if !ok {
		return 0, unsupported("%s must be a constant integer", argName(i, names))
	}
	return x, nil
}

func (m *mnode) intsArg(i int, names ...string) ([]int64, bool, error) {
	v := m.arg(i, names...)
	if v == nil {
		return nil, false, nil
	}
	if ct, ok := v.(constTuple); ok {
		v = ct.items
	}
	x, ok := asInts(v)
	if !ok {
		return nil, true, unsupported("%s must be constant integers", argName(i, names))
	}
	return x, true, nil
}

func (m *mnode) floatArg(i int, def float64, names ...string) (float64, error) {
	v := m.arg(i, names...)
	if v == nil {
		return def, nil
	}
	x, ok := asFloat(v)
	if !ok {
		return 0, unsupported("%s must be a constant number", argName(i, names))
	}
	return x, nil
}

func argName(i int, names []string) string {
	if len(names) > 0 {
		return names[0]
	}
	return fmt.Sprintf("input %d", i)
}

// formatArg reads a data format given as a string or as MindSpore's Format
// enum (0 NCHW, 1 NHWC).
func (m *mnode) formatArg(i int, names ...string) (string, error) {
	v := m.arg(i, names...)
	if v == nil {
		return "NCHW", nil
	}
	if s, ok := asString(v); ok {
		return strings.ToUpper(s), nil
	}
	if x, ok := asInt(v); ok {
		switch x {
		case 0:
			return "NCHW", nil
		case 1:
			return "NHWC", nil
		}
	}
	return "", unsupported("format %v", v)
}

// padModeArg reads pad_mode given as a string or as MindSpore's PadMode enum
// (0 PAD, 1 SAME, 2 VALID).
func (m *mnode) padModeArg(i int, names ...string) (string, error) {
	v := m.arg(i, names...)
	if v == nil {
		return "VALID", nil
	}
	if s, ok := asString(v); ok {
		s = strings.ToUpper(s)
		switch s {
		case "PAD", "SAME", "VALID", "CALCULATED":
			if s == "CALCULATED" {
				s = "PAD"
			}
			return s, nil
		}
	}
	if x, ok := asInt(v); ok && x >= 0 && x <= 2 {
		return [...]string{"PAD", "SAME", "VALID"}[x], nil
	}
	return "", unsupported("pad_mode %v", v)
}

// spatial2 takes the H, W entries of a MindSpore 1-, 2- or 4-tuple (NCHW).
func spatial2(v []int64, what string) ([]int64, error) {
	switch len(v) {
	case 1:
		return []int64{v[0], v[0]}, nil
	case 2:
		return []int64{v[0], v[1]}, nil
	case 4:
		return []int64{v[2], v[3]}, nil
	}
	return nil, unsupported("%s %v", what, v)
}

// dispatch lifts the node through liftTable (lower_ops.go), the one table
// of the primitives the reader maps.
func (m *mnode) dispatch() (any, error) {
	if f, ok := liftTable[m.op]; ok {
		return f(m)
	}
	return nil, unsupported("")
}

func (m *mnode) binary(irop string) (any, error) {
	a, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	b, err := m.tensor(1)
	if err != nil {
		return nil, err
	}
	// Scalar arithmetic promotes int to float, as Python does.
	if strings.HasPrefix(m.op, "Scalar") && a.DType != b.DType {
		switch {
		case a.DType.IsFloat() && b.DType.IsInt():
			b = m.emit1("Cast", ir.Attrs{"to": ir.IntAttr(int64(a.DType))}, b)
		case b.DType.IsFloat() && a.DType.IsInt():
			a = m.emit1("Cast", ir.Attrs{"to": ir.IntAttr(int64(b.DType))}, a)
		}
	}
	return m.emit1(irop, nil, a, b), nil
}

func (m *mnode) reduce(irop string) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	keep, err := m.schemaArg("keep_dims").Int()
	if err != nil {
		return nil, err
	}
	attrs := ir.Attrs{"keepdims": ir.IntAttr(b2i(keep != 0))}
	axis := m.schemaArg("axis")
	if v, ok := axis.value().(*ir.Value); ok && axis.err == nil && v.Const == nil && v.DType.IsInt() {
		// Axes computed at run time (a tensor input, as ONNX's axes input).
		return m.emit1(irop, attrs, x, v), nil
	}
	axes, _, err := axis.Ints()
	if err != nil {
		return nil, err
	}
	if len(axes) == 0 {
		return m.emit1(irop, attrs, x), nil // MindSpore: empty axis reduces all
	}
	return m.emit1(irop, attrs, x, m.ints64("axes", axes)), nil
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func (m *mnode) tupleGetItem() (any, error) {
	if len(m.ins) < 2 {
		return nil, fmt.Errorf("needs 2 inputs, has %d", len(m.ins))
	}
	idx, ok := asInt(m.ins[1])
	if !ok {
		if v, isV := m.ins[1].(*ir.Value); isV && v.Const != nil {
			idx, ok = asInt(v.Const)
		}
	}
	if !ok {
		return nil, unsupported("non-constant index")
	}
	pick := func(n int) (int, error) {
		i := int(idx)
		if i < 0 {
			i += n
		}
		if i < 0 || i >= n {
			return 0, fmt.Errorf("index %d out of range for %d items", idx, n)
		}
		return i, nil
	}
	switch t := m.ins[0].(type) {
	case tuple:
		i, err := pick(len(t))
		if err != nil {
			return nil, err
		}
		if _, bad := t[i].(poisonVal); bad {
			return nil, unsupported("output %d of its producer is not supported", i)
		}
		// The element takes the TupleGetItem's output name (the name the
		// writer gave the IR value), unless another getitem named it first.
		if v, ok := t[i].(*ir.Value); ok && v.Producer != nil && v.Const == nil && !m.c.getitemNamed[v] && m.out != "" {
			m.c.getitemNamed[v] = true
			if v.Name != m.out && !m.c.names.Used(m.out) {
				m.c.names.Release(v.Name)
				v.Name = m.out
				m.c.names.Reserve(m.out)
			}
		}
		return t[i], nil
	case constTuple:
		i, err := pick(len(t.items))
		if err != nil {
			return nil, err
		}
		return m.c.constSym(t.items[i], m.out), nil
	case *ir.Value:
		// A tuple of scalars held as a 1-D tensor (a Shape result).
		return m.emit1("Gather", ir.Attrs{"axis": ir.IntAttr(0)}, t, m.konst("index", ir.Int64Tensor([]int64{}, idx))), nil
	}
	return nil, fmt.Errorf("input 0 is a %s, not a tuple", kindOf(m.ins[0]))
}
