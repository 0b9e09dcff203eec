package mindir

// Lifting of the MindSpore framework primitives (what mindspore.export
// writes) and of MindIR's graph plumbing: liftCoreTable, and the renaming
// tables of the primitives that become one IR op with no attribute work.
// Argument decoding goes through the schema (schemaArg, lift_args.go);
// the mappings with more attribute work are in ops_prims.go.

import (
	"fmt"
	"math"

	"gkconv/internal/ir"
)

type liftFunc = func(*mnode) (any, error)

// liftCoreTable: MindIR's plumbing (monads, tuples), and the primitives
// MindSpore's own exporter writes whose IR form needs argument work.
var liftCoreTable = map[string]liftFunc{
	"Load":              liftForward,
	"Depend":            liftForward,
	"UpdateState":       func(*mnode) (any, error) { return monadVal{}, nil },
	"MakeTuple":         liftMakeTuple,
	"make_tuple":        liftMakeTuple,
	"TupleGetItem":      (*mnode).tupleGetItem,
	"tuple_getitem":     (*mnode).tupleGetItem,
	"ListGetItem":       (*mnode).tupleGetItem,
	"Conv2D":            (*mnode).conv2d,
	"MaxPool":           (*mnode).pool,
	"AvgPool":           (*mnode).pool,
	"MatMul":            (*mnode).matmul,
	"BatchMatMul":       (*mnode).matmul,
	"MatMulExt":         (*mnode).matmul, // NumPy matmul, no transpose arguments
	"PadV3":             (*mnode).padV3,
	"Muls":              liftScalarArith("Mul"),
	"Divs":              liftScalarArith("RealDiv"),
	"SumExt":            liftReduceExt("ReduceSum"),
	"MeanExt":           liftReduceExt("ReduceMean"),
	"ReverseV2":         liftReverseV2,
	"NonZero":           liftNonZero,
	"Dense":             (*mnode).dense,
	"BiasAdd":           liftBiasAdd,
	"Softmax":           liftSoftmax,
	"LogSoftmax":        liftSoftmax,
	"Cast":              (*mnode).cast,
	"Transpose":         liftTranspose,
	"Concat":            (*mnode).concat,
	"ExpandDims":        liftExpandDims,
	"Squeeze":           liftSqueeze,
	"Gather":            liftGather,
	"GatherV2":          liftGather,
	"CeLU":              (*mnode).celu,
	"Log":               (*mnode).log,
	"GeLU":              liftGeLU,
	"Elu":               liftElu,
	"LeakyReLU":         liftLeakyReLU,
	"HSigmoid":          liftHSigmoid,
	"BatchNorm":         (*mnode).batchNorm,
	"UpsampleNearest1D": liftUpsampleNearest(1),
	"UpsampleNearest2D": liftUpsampleNearest(2),
	"UpsampleNearest3D": liftUpsampleNearest(3),
	"AddN":              liftAddN,
}

// Primitives that are one IR op of another name, or of the same name but
// written otherwise (ReLU is written as Activation, Exp as ExpFusion), with
// no attribute work: one input, two inputs, reductions.
var (
	liftUnaryAs = map[string]string{
		"ReLU": "ReLU", "Tanh": "Tanh", "Sigmoid": "Sigmoid", "Exp": "Exp", "Round": "Round",
		"Softplus": "Softplus", "SeLU": "SeLU", "Shape": "Shape", "TensorShape": "Shape", "Size": "Size",
	}
	liftBinaryAs = map[string]string{
		"Add": "Add", "Sub": "Sub", "Mul": "Mul", "RealDiv": "RealDiv", "Div": "RealDiv", "Maximum": "Maximum",
		"Minimum": "Minimum", "Pow": "Pow", "ScalarAdd": "Add", "ScalarSub": "Sub", "ScalarMul": "Mul",
		"ScalarDiv": "RealDiv",
	}
	liftReduceAs = map[string]string{
		"ReduceSum": "ReduceSum", "ReduceMean": "ReduceMean", "ReduceMax": "ReduceMax", "ReduceMin": "ReduceMin",
		"ReduceProd": "ReduceProd",
	}
)

// liftRenameTable turns the renaming tables into lifts.
func liftRenameTable() map[string]liftFunc {
	t := map[string]liftFunc{}
	for prim, op := range liftUnaryAs {
		t[prim] = func(m *mnode) (any, error) {
			x, err := m.tensor(0)
			if err != nil {
				return nil, err
			}
			return m.emit1(op, nil, x), nil
		}
	}
	for prim, op := range liftBinaryAs {
		t[prim] = func(m *mnode) (any, error) { return m.binary(op) }
	}
	for prim, op := range liftReduceAs {
		t[prim] = func(m *mnode) (any, error) { return m.reduce(op) }
	}
	return t
}

// liftSameTable: the sameOps (lower_ops.go) read back by liftSame.
func liftSameTable() map[string]liftFunc {
	t := map[string]liftFunc{}
	for _, op := range sameOps {
		t[op] = liftSame
	}
	return t
}

// liftSame reads a primitive of the same name as its IR op: the op's
// required inputs (the IR table's arity), no attributes.
func liftSame(m *mnode) (any, error) {
	info := ir.LookupOp(m.op)
	ins := make([]*ir.Value, info.In.Min)
	for i := range ins {
		v, err := m.tensor(i)
		if err != nil {
			return nil, err
		}
		ins[i] = v
	}
	return m.emit1(m.op, nil, ins...), nil
}

// liftForward: Load and Depend stand for their first input.
func liftForward(m *mnode) (any, error) {
	if len(m.ins) == 0 {
		return nil, fmt.Errorf("no input")
	}
	return m.ins[0], nil
}

func liftMakeTuple(m *mnode) (any, error) { return tuple(append([]any{}, m.ins...)), nil }

// liftScalarArith: tensor-by-Python-scalar arithmetic (muls_op.yaml: input,
// other number): the scalar becomes a constant of the tensor's dtype.
func liftScalarArith(irop string) liftFunc {
	return func(m *mnode) (any, error) {
		x, err := m.tensor(0)
		if err != nil {
			return nil, err
		}
		// Absent (the schema requires it): 0, as before the schema.
		f, err := m.schemaArg("other").FloatOr(0)
		if err != nil {
			return nil, err
		}
		if !x.DType.IsFloat() {
			return nil, unsupported("%s of a %s tensor", m.op, x.DType)
		}
		t := ir.NewTensor(x.DType, []int64{})
		t.PutFloat(0, f)
		return m.emit1(irop, nil, x, m.konst("other", t)), nil
	}
}

// liftReduceExt: sum_ext_op.yaml: input, dim (None: every axis), keepdim, dtype.
func liftReduceExt(irop string) liftFunc {
	return func(m *mnode) (any, error) {
		x, err := m.tensor(0)
		if err != nil {
			return nil, err
		}
		dt, err := m.schemaArg("dtype").Value()
		if err != nil {
			return nil, err
		}
		if _, none := dt.(noneVal); dt != nil && !none {
			return nil, unsupported("%s with a dtype", m.op)
		}
		keep, err := m.schemaArg("keepdim").Int()
		if err != nil {
			return nil, err
		}
		attrs := ir.Attrs{"keepdims": ir.IntAttr(b2i(keep != 0))}
		dim := m.schemaArg("dim")
		if d, _ := dim.Value(); d != nil {
			if _, none := d.(noneVal); !none {
				axes, _, err := dim.Ints()
				if err != nil {
					return nil, err
				}
				return m.emit1(irop, attrs, x, m.ints64("axes", axes)), nil
			}
		}
		return m.emit1(irop, attrs, x), nil
	}
}

// liftReverseV2: ReverseV2(x, axis) is ONNX Slice with step -1 over those axes.
func liftReverseV2(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	axes, ok, err := m.schemaArg("axis").Ints()
	if err != nil || !ok {
		return nil, unsupported("axis must be constant integers")
	}
	k := len(axes)
	starts, ends, steps := make([]int64, k), make([]int64, k), make([]int64, k)
	for i := range axes {
		starts[i], ends[i], steps[i] = -1, math.MinInt64, -1
	}
	return m.emit1("Slice", nil, x, m.ints64("starts", starts), m.ints64("ends", ends), m.ints64("axes", axes), m.ints64("steps", steps)), nil
}

// liftNonZero: MindSpore's NonZero gives [count, rank] int64
// (nonzero_op.yaml); ONNX's gives [rank, count].
func liftNonZero(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	nz := m.emit1("NonZero", nil, x)
	return m.emit1("Transpose", ir.Attrs{"perm": ir.IntsAttr(1, 0)}, nz), nil
}

func liftBiasAdd(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	b, err := m.tensor(1)
	if err != nil {
		return nil, err
	}
	f, err := m.schemaArg("data_format", "format").Format()
	if err != nil {
		return nil, err
	}
	return m.emit1("BiasAdd", ir.Attrs{"format": ir.StringAttr(f)}, x, b), nil
}

// liftSoftmax: Softmax's axis is a one-element tuple, LogSoftmax's an int.
func liftSoftmax(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	axes, ok, err := m.schemaArg("axis").Ints()
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
	return m.emit1(m.op, ir.Attrs{"axis": ir.IntAttr(axis)}, x), nil
}

func liftTranspose(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	perm, ok, err := m.schemaArg("input_perm", "perm").Ints()
	if err != nil {
		return nil, err
	}
	attrs := ir.Attrs{}
	if ok {
		attrs["perm"] = ir.IntsAttr(perm...)
	}
	return m.emit1("Transpose", attrs, x), nil
}

func liftExpandDims(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	// Absent (the schema requires it): axis 0, as before the schema.
	axis, err := m.schemaArg("axis").IntOr(0)
	if err != nil {
		return nil, err
	}
	return m.emit1("Unsqueeze", nil, x, m.ints64("axes", []int64{axis})), nil
}

func liftSqueeze(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	axes, _, err := m.schemaArg("axis").Ints()
	if err != nil {
		return nil, err
	}
	if len(axes) == 0 {
		return m.emit1("Squeeze", nil, x), nil
	}
	return m.emit1("Squeeze", nil, x, m.ints64("axes", axes)), nil
}

// liftGather reads Gather and its older name GatherV2 by Gather's schema.
func liftGather(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	idx, err := m.tensor(1)
	if err != nil {
		return nil, err
	}
	// Absent (the schema requires it): axis 0, as before the schema.
	axis, err := m.schemaArgOf("Gather", "axis").IntOr(0)
	if err != nil {
		return nil, err
	}
	if bd, _ := m.schemaArgOf("Gather", "batch_dims").Int(); bd != 0 {
		return nil, unsupported("batch_dims %d", bd)
	}
	return m.emit1("Gather", ir.Attrs{"axis": ir.IntAttr(axis)}, x, idx), nil
}

// liftGeLU: MindSpore's GeLU primitive is the tanh approximation.
func liftGeLU(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	return m.emit1("GeLU", ir.Attrs{"approximate": ir.StringAttr("tanh")}, x), nil
}

func liftElu(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	alpha, err := m.schemaArg("alpha").Float()
	if err != nil {
		return nil, err
	}
	return m.emit1("Elu", ir.Attrs{"alpha": ir.FloatAttr(alpha)}, x), nil
}

// liftLeakyReLU: the older primitive the schema does not have (MindSpore
// 2.x writes LeakyReLUExt): alpha, or negative_slope, as input 1 or an
// attribute.
func liftLeakyReLU(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	alpha, err := m.floatArg(1, 0.01, "alpha", "negative_slope")
	if err != nil {
		return nil, err
	}
	return m.emit1("LeakyReLU", ir.Attrs{"alpha": ir.FloatAttr(alpha)}, x), nil
}

// liftHSigmoid: MindSpore's HSigmoid is relu6(x+3)/6.
func liftHSigmoid(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	return m.emit1("HSigmoid", ir.Attrs{"alpha": ir.FloatAttr(1.0 / 6), "beta": ir.FloatAttr(0.5)}, x), nil
}

func liftUpsampleNearest(nd int) liftFunc {
	return func(m *mnode) (any, error) { return m.upsampleNearest(nd) }
}

func liftAddN(m *mnode) (any, error) {
	var vs []*ir.Value
	for _, in := range m.ins {
		vs = append(vs, flatten(in)...)
	}
	if len(vs) == 0 {
		return nil, fmt.Errorf("no inputs")
	}
	return m.emit1("AddN", nil, vs...), nil
}
