package fusion

import (
	"fmt"
	"math"

	"gkconv/internal/ir"
)

// Builder is the expander DSL (MindSpore's inner::GraphBuilder): every
// method emits one basic op into the body being built, through the body's
// ir.Editor, which types it. The first error sticks; later calls return nil
// values and Err reports it, so expanders read as straight-line formulas.
type Builder struct {
	e      *ir.Editor // the body; e.Outer are the kernel inputs
	src    *ir.Node   // the node being expanded
	dt     ir.DType   // dtype of Const
	err    error
	consts map[string]*ir.Value
	ins    map[int]*ir.Value
}

func newBuilder(src *ir.Node) *Builder {
	b := &Builder{e: ir.NewEditor(ir.NewGraph(src.Name)), src: src,
		consts: map[string]*ir.Value{}, ins: map[int]*ir.Value{}, dt: ir.Float32}
	if x := src.Input(0); x != nil && x.DType.IsFloat() {
		b.dt = x.DType
	}
	return b
}

// Err is the first error of the build.
func (b *Builder) Err() error { return b.err }

func (b *Builder) fail(format string, args ...any) *ir.Value {
	if b.err == nil {
		b.err = fmt.Errorf(format, args...)
	}
	return nil
}

// In is the body value of input i of the expanded node (nil when absent).
// Small constants become body constants, everything else a body input.
func (b *Builder) In(i int) *ir.Value {
	v := b.src.Input(i)
	if v == nil {
		return nil
	}
	if bv, ok := b.ins[i]; ok {
		return bv
	}
	var bv *ir.Value
	if inlineConst(v) {
		bv = b.constValue(v.Name, v.Const)
	} else {
		bv = b.e.Capture(v)
	}
	b.ins[i] = bv
	return bv
}

// constValue registers t as a body constant, sharing equal scalars.
func (b *Builder) constValue(name string, t *ir.Tensor) *ir.Value {
	key := constKey(t)
	if v, ok := b.consts[key]; ok && key != "" {
		return v
	}
	v := b.e.Const(name, t)
	if key != "" {
		b.consts[key] = v
	}
	return v
}

// constKey identifies small constants by dtype, shape and bytes ("" = do not share).
func constKey(t *ir.Tensor) string {
	if len(t.Data) > 64 || t.DType == ir.String {
		return ""
	}
	return fmt.Sprintf("%d%v%x", t.DType, t.Shape, t.Data)
}

// Const is a scalar of the expansion's compute dtype.
func (b *Builder) Const(v float64) *ir.Value { return b.ConstOf(v, b.dt) }

// ConstOf is a scalar of dtype dt.
func (b *Builder) ConstOf(v float64, dt ir.DType) *ir.Value {
	return b.constValue("c", scalarTensor(v, dt))
}

// Ints is an int64 vector constant (axes, shapes).
func (b *Builder) Ints(vals ...int64) *ir.Value {
	return b.constValue("i", ir.Int64Tensor([]int64{int64(len(vals))}, vals...))
}

func scalarTensor(v float64, dt ir.DType) *ir.Tensor {
	t := ir.NewTensor(dt, []int64{})
	switch {
	case dt.IsFloat():
		t.PutFloat(0, v)
	case dt == ir.Int64:
		t.I64()[0] = int64(v)
	case dt == ir.Int32:
		t.I32()[0] = int32(v)
	case dt == ir.Bool:
		if v != 0 {
			t.Data[0] = 1
		}
	default:
		t = ir.Float32Tensor([]int64{}, float32(v))
	}
	return t
}

// Emit adds one node of op with attrs and returns its first output.
func (b *Builder) Emit(op string, attrs ir.Attrs, inputs ...*ir.Value) *ir.Value {
	outs := b.EmitN(op, 1, attrs, inputs...)
	if outs == nil {
		return nil
	}
	return outs[0]
}

// EmitN adds a node with nout outputs.
func (b *Builder) EmitN(op string, nout int, attrs ir.Attrs, inputs ...*ir.Value) []*ir.Value {
	if b.err != nil {
		return nil
	}
	for _, in := range inputs {
		if in == nil {
			b.fail("%s: nil input to %s", b.src.Name, op)
			return nil
		}
	}
	name := b.e.Unique(fmt.Sprintf("%s/%s_%d", b.src.Name, op, b.e.Seq()))
	outs := make([]string, nout)
	for i := range outs {
		oname := name
		if i > 0 {
			oname = fmt.Sprintf("%s:%d", name, i)
		}
		outs[i] = b.e.Unique(oname)
	}
	n := ir.NewNode(name, op, inputs, attrs.Clone(), outs...)
	n.Attrs[ir.GKExpandFrom] = ir.StringAttr(b.src.Op)
	n.Provenance = append([]string(nil), b.src.Provenance...)
	if err := b.e.Emit(n); err != nil {
		b.fail("%s: expanding %s: %w", b.src.Name, b.src.Op, err)
		return nil
	}
	return n.Outputs
}

func (b *Builder) Add(x, y *ir.Value) *ir.Value     { return b.Emit("Add", nil, x, y) }
func (b *Builder) Sub(x, y *ir.Value) *ir.Value     { return b.Emit("Sub", nil, x, y) }
func (b *Builder) Mul(x, y *ir.Value) *ir.Value     { return b.Emit("Mul", nil, x, y) }
func (b *Builder) Div(x, y *ir.Value) *ir.Value     { return b.Emit("RealDiv", nil, x, y) }
func (b *Builder) Maximum(x, y *ir.Value) *ir.Value { return b.Emit("Maximum", nil, x, y) }
func (b *Builder) Minimum(x, y *ir.Value) *ir.Value { return b.Emit("Minimum", nil, x, y) }
func (b *Builder) Greater(x, y *ir.Value) *ir.Value { return b.Emit("Greater", nil, x, y) }
func (b *Builder) Less(x, y *ir.Value) *ir.Value    { return b.Emit("Less", nil, x, y) }
func (b *Builder) Select(c, x, y *ir.Value) *ir.Value {
	return b.Emit("Select", nil, c, x, y)
}
func (b *Builder) Neg(x *ir.Value) *ir.Value   { return b.Emit("Neg", nil, x) }
func (b *Builder) Exp(x *ir.Value) *ir.Value   { return b.Emit("Exp", nil, x) }
func (b *Builder) Log(x *ir.Value) *ir.Value   { return b.Emit("Log", nil, x) }
func (b *Builder) Sqrt(x *ir.Value) *ir.Value  { return b.Emit("Sqrt", nil, x) }
func (b *Builder) Rsqrt(x *ir.Value) *ir.Value { return b.Emit("Rsqrt", nil, x) }
func (b *Builder) Abs(x *ir.Value) *ir.Value   { return b.Emit("Abs", nil, x) }
func (b *Builder) Sign(x *ir.Value) *ir.Value  { return b.Emit("Sign", nil, x) }
func (b *Builder) Tanh(x *ir.Value) *ir.Value  { return b.Emit("Tanh", nil, x) }
func (b *Builder) Erf(x *ir.Value) *ir.Value   { return b.Emit("Erf", nil, x) }

// Cast converts x to dt (no node when it already has that dtype).
func (b *Builder) Cast(x *ir.Value, dt ir.DType) *ir.Value {
	if x != nil && x.DType == dt {
		return x
	}
	return b.Emit("Cast", ir.Attrs{"to": ir.IntAttr(int64(dt))}, x)
}

// ReduceSum/ReduceMax over axes (normalized, non-empty).
func (b *Builder) ReduceSum(x *ir.Value, axes []int64, keep bool) *ir.Value {
	return b.reduce("ReduceSum", x, axes, keep)
}
func (b *Builder) ReduceMax(x *ir.Value, axes []int64, keep bool) *ir.Value {
	return b.reduce("ReduceMax", x, axes, keep)
}

func (b *Builder) reduce(op string, x *ir.Value, axes []int64, keep bool) *ir.Value {
	k := int64(0)
	if keep {
		k = 1
	}
	return b.Emit(op, ir.Attrs{"keepdims": ir.IntAttr(k)}, x, b.Ints(axes...))
}

func (b *Builder) Reshape(x *ir.Value, shape []int64) *ir.Value {
	return b.Emit("Reshape", nil, x, b.Ints(shape...))
}

func (b *Builder) BroadcastTo(x *ir.Value, shape []int64) *ir.Value {
	return b.Emit("BroadcastTo", nil, x, b.Ints(shape...))
}

// inlineConst says whether a constant operand goes into a body as a body
// constant (scalars and small integer shape/axes vectors, which shape
// inference needs as data) instead of becoming a kernel input.
func inlineConst(v *ir.Value) bool {
	if v == nil || v.Const == nil {
		return false
	}
	n := v.Const.NumElements()
	if n <= 1 {
		return true
	}
	return (v.DType == ir.Int64 || v.DType == ir.Int32) && n <= 64
}

// constScalar reads a numeric scalar constant (any rank with one element).
func constScalar(v *ir.Value) (float64, bool) {
	if v == nil || v.Const == nil || v.Const.NumElements() != 1 {
		return 0, false
	}
	f, err := v.Const.Float64s()
	if err != nil || len(f) != 1 || math.IsNaN(f[0]) {
		return 0, false
	}
	return f[0], true
}
