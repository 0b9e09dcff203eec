package mindir

import (
	"fmt"
	"math"
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

// Primitive name maps for ops that need no attribute work.
var (
	unaryOps = map[string]string{
		"ReLU": "ReLU", "Tanh": "Tanh", "Sigmoid": "Sigmoid", "Exp": "Exp", "Sqrt": "Sqrt", "Rsqrt": "Rsqrt",
		"Neg": "Neg", "Abs": "Abs", "Floor": "Floor", "Ceil": "Ceil", "Sin": "Sin", "Cos": "Cos", "Erf": "Erf",
		"Square": "Square", "Reciprocal": "Reciprocal", "Sign": "Sign", "Softsign": "Softsign", "HSwish": "HSwish",
		"Mish": "Mish", "Tan": "Tan", "Atan": "Atan", "Asin": "Asin", "ACos": "ACos", "Sinh": "Sinh", "Cosh": "Cosh",
		"Asinh": "Asinh", "Acosh": "Acosh", "Atanh": "Atanh", "LogicalNot": "LogicalNot", "IsNan": "IsNan",
		"IsInf": "IsInf", "ReLU6": "ReLU6", "Round": "Round", "Softplus": "Softplus", "SeLU": "SeLU",
		"Flatten": "Flatten", "Shape": "Shape", "TensorShape": "Shape", "Size": "Size",
	}
	binaryOps = map[string]string{
		"Add": "Add", "Sub": "Sub", "Mul": "Mul", "RealDiv": "RealDiv", "Div": "RealDiv", "Maximum": "Maximum",
		"Minimum": "Minimum", "Pow": "Pow", "Equal": "Equal", "Greater": "Greater", "GreaterEqual": "GreaterEqual",
		"Less": "Less", "LessEqual": "LessEqual", "LogicalAnd": "LogicalAnd", "LogicalOr": "LogicalOr",
		"SquaredDifference": "SquaredDifference", "ScalarAdd": "Add", "ScalarSub": "Sub", "ScalarMul": "Mul",
		"ScalarDiv": "RealDiv",
	}
	reduceOps = map[string]string{
		"ReduceSum": "ReduceSum", "ReduceMean": "ReduceMean", "ReduceMax": "ReduceMax", "ReduceMin": "ReduceMin",
		"ReduceProd": "ReduceProd",
	}
)

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

func (m *mnode) dispatch() (any, error) {
	op := m.op
	if f, ok := liftTable[op]; ok {
		return f(m)
	}
	if irop, ok := unaryOps[op]; ok {
		x, err := m.tensor(0)
		if err != nil {
			return nil, err
		}
		return m.emit1(irop, nil, x), nil
	}
	if irop, ok := binaryOps[op]; ok {
		return m.binary(irop)
	}
	if irop, ok := reduceOps[op]; ok {
		return m.reduce(irop)
	}
	switch op {
	case "Load", "Depend", "Identity":
		if len(m.ins) == 0 {
			return nil, fmt.Errorf("no input")
		}
		return m.ins[0], nil
	case "UpdateState":
		return monadVal{}, nil
	case "MakeTuple", "make_tuple":
		return tuple(append([]any{}, m.ins...)), nil
	case "TupleGetItem", "tuple_getitem", "ListGetItem":
		return m.tupleGetItem()
	case "Conv2D":
		return m.conv2d()
	case "MaxPool", "AvgPool":
		return m.pool()
	case "MatMul", "BatchMatMul", "MatMulExt":
		return m.matmul() // MatMulExt: NumPy matmul, no transpose arguments
	case "PadV3":
		return m.padV3()
	case "Muls", "Divs":
		// Tensor-by-Python-scalar arithmetic (muls_op.yaml: input, other
		// number): the scalar becomes a constant of the tensor's dtype.
		x, err := m.tensor(0)
		if err != nil {
			return nil, err
		}
		f, err := m.floatArg(1, 0, "other")
		if err != nil {
			return nil, err
		}
		if !x.DType.IsFloat() {
			return nil, unsupported("%s of a %s tensor", op, x.DType)
		}
		t := ir.NewTensor(x.DType, []int64{})
		t.PutFloat(0, f)
		irop := map[string]string{"Muls": "Mul", "Divs": "RealDiv"}[op]
		return m.emit1(irop, nil, x, m.konst("other", t)), nil
	case "SumExt", "MeanExt":
		// sum_ext_op.yaml: input, dim (None: every axis), keepdim, dtype.
		x, err := m.tensor(0)
		if err != nil {
			return nil, err
		}
		if _, none := m.arg(3, "dtype").(noneVal); m.arg(3, "dtype") != nil && !none {
			return nil, unsupported("%s with a dtype", op)
		}
		keep, err := m.intArg(2, 0, "keepdim")
		if err != nil {
			return nil, err
		}
		irop := map[string]string{"SumExt": "ReduceSum", "MeanExt": "ReduceMean"}[op]
		attrs := ir.Attrs{"keepdims": ir.IntAttr(b2i(keep != 0))}
		if d := m.arg(1, "dim"); d != nil {
			if _, none := d.(noneVal); !none {
				axes, _, err := m.intsArg(1, "dim")
				if err != nil {
					return nil, err
				}
				return m.emit1(irop, attrs, x, m.ints64("axes", axes)), nil
			}
		}
		return m.emit1(irop, attrs, x), nil
	case "ReverseV2":
		// ReverseV2(x, axis): ONNX Slice with step -1 over those axes.
		x, err := m.tensor(0)
		if err != nil {
			return nil, err
		}
		axes, ok, err := m.intsArg(1, "axis")
		if err != nil || !ok {
			return nil, unsupported("axis must be constant integers")
		}
		k := len(axes)
		starts, ends, steps := make([]int64, k), make([]int64, k), make([]int64, k)
		for i := range axes {
			starts[i], ends[i], steps[i] = -1, math.MinInt64, -1
		}
		return m.emit1("Slice", nil, x, m.ints64("starts", starts), m.ints64("ends", ends), m.ints64("axes", axes), m.ints64("steps", steps)), nil
	case "NonZero":
		// MindSpore's NonZero gives [count, rank] int64 (nonzero_op.yaml);
		// ONNX's gives [rank, count].
		x, err := m.tensor(0)
		if err != nil {
			return nil, err
		}
		nz := m.emit1("NonZero", nil, x)
		return m.emit1("Transpose", ir.Attrs{"perm": ir.IntsAttr(1, 0)}, nz), nil
	case "Dense":
		return m.dense()
	case "BiasAdd":
		x, err := m.tensor(0)
		if err != nil {
			return nil, err
		}
		b, err := m.tensor(1)
		if err != nil {
			return nil, err
		}
		f, err := m.formatArg(2, "format", "data_format")
		if err != nil {
			return nil, err
		}
		return m.emit1("BiasAdd", ir.Attrs{"format": ir.StringAttr(f)}, x, b), nil
	case "Reshape":
		return m.reshape()
	case "Softmax", "LogSoftmax":
		x, err := m.tensor(0)
		if err != nil {
			return nil, err
		}
		axes, ok, err := m.intsArg(1, "axis")
		if err != nil {
			return nil, err
		}
		axis := int64(-1)
		if ok {
			if len(axes) != 1 {
				return nil, unsupported("axis %v: only one axis is supported", axes)
			}
			axis = axes[0]
		}
		return m.emit1(op, ir.Attrs{"axis": ir.IntAttr(axis)}, x), nil
	case "Cast":
		return m.cast()
	case "Transpose":
		x, err := m.tensor(0)
		if err != nil {
			return nil, err
		}
		perm, ok, err := m.intsArg(1, "perm", "input_perm")
		if err != nil {
			return nil, err
		}
		attrs := ir.Attrs{}
		if ok {
			attrs["perm"] = ir.IntsAttr(perm...)
		}
		return m.emit1("Transpose", attrs, x), nil
	case "Concat":
		return m.concat()
	case "ExpandDims":
		x, err := m.tensor(0)
		if err != nil {
			return nil, err
		}
		axis, err := m.intArg(1, 0, "axis")
		if err != nil {
			return nil, err
		}
		return m.emit1("Unsqueeze", nil, x, m.ints64("axes", []int64{axis})), nil
	case "Squeeze":
		x, err := m.tensor(0)
		if err != nil {
			return nil, err
		}
		axes, _, err := m.intsArg(1, "axis")
		if err != nil {
			return nil, err
		}
		if len(axes) == 0 {
			return m.emit1("Squeeze", nil, x), nil
		}
		return m.emit1("Squeeze", nil, x, m.ints64("axes", axes)), nil
	case "StridedSlice":
		return m.stridedSlice()
	case "Gather", "GatherV2":
		x, err := m.tensor(0)
		if err != nil {
			return nil, err
		}
		idx, err := m.tensor(1)
		if err != nil {
			return nil, err
		}
		axis, err := m.intArg(2, 0, "axis")
		if err != nil {
			return nil, err
		}
		if bd, _ := m.intArg(3, 0, "batch_dims"); bd != 0 {
			return nil, unsupported("batch_dims %d", bd)
		}
		return m.emit1("Gather", ir.Attrs{"axis": ir.IntAttr(axis)}, x, idx), nil
	case "CeLU":
		return m.celu()
	case "Log":
		return m.log()
	case "GeLU":
		x, err := m.tensor(0)
		if err != nil {
			return nil, err
		}
		// MindSpore's GeLU primitive is the tanh approximation.
		return m.emit1("GeLU", ir.Attrs{"approximate": ir.StringAttr("tanh")}, x), nil
	case "Elu", "LeakyReLU":
		x, err := m.tensor(0)
		if err != nil {
			return nil, err
		}
		def := 1.0
		if op == "LeakyReLU" {
			def = 0.01
		}
		alpha, err := m.floatArg(1, def, "alpha", "negative_slope")
		if err != nil {
			return nil, err
		}
		return m.emit1(op, ir.Attrs{"alpha": ir.FloatAttr(alpha)}, x), nil
	case "HSigmoid":
		x, err := m.tensor(0)
		if err != nil {
			return nil, err
		}
		return m.emit1("HSigmoid", ir.Attrs{"alpha": ir.FloatAttr(1.0 / 6), "beta": ir.FloatAttr(0.5)}, x), nil
	case "BatchNorm":
		return m.batchNorm()
	case "LayerNorm":
		return m.layerNorm()
	case "UpsampleNearest1D", "UpsampleNearest2D", "UpsampleNearest3D":
		return m.upsampleNearest(int(op[len(op)-2] - '0'))
	case "AddN":
		var vs []*ir.Value
		for _, in := range m.ins {
			vs = append(vs, flatten(in)...)
		}
		if len(vs) == 0 {
			return nil, fmt.Errorf("no inputs")
		}
		return m.emit1("AddN", nil, vs...), nil
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
	keep, err := m.intArg(2, 0, "keep_dims")
	if err != nil {
		return nil, err
	}
	attrs := ir.Attrs{"keepdims": ir.IntAttr(b2i(keep != 0))}
	if v, ok := m.arg(1, "axis").(*ir.Value); ok && v.Const == nil && v.DType.IsInt() {
		// Axes computed at run time (a tensor input, as ONNX's axes input).
		return m.emit1(irop, attrs, x, v), nil
	}
	axes, _, err := m.intsArg(1, "axis")
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
