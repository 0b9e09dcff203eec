package mindir

import (
	"encoding/binary"
	"fmt"
	"strings"

	"gkconv/internal/ir"
	pb "gkconv/internal/mindir/mindirpb"
)

// Values a MindSpore attribute or Constant node can hold, besides *ir.Value
// (a tensor) and *ir.Tensor (constant data not yet turned into a value).
type (
	scalar struct {
		dt ir.DType // Bool, an integer, a float or String
		i  int64
		f  float64
		s  string
	}
	tuple    []any
	noneVal  struct{}
	monadVal struct{}
	dtypeVal struct{ dt ir.DType }
	// poisonVal is the result of a node that could not be converted; nodes
	// that use it are skipped so one unsupported op is reported once.
	poisonVal struct{}
)

type AT = pb.AttributeProto_AttributeType

func isScalarType(t AT) bool { return t >= pb.AttributeProto_FLOAT && t <= pb.AttributeProto_BFLOAT16 }

// attrValue decodes a MindSpore AttributeProto (0.1.0 ref_attr_name forms and
// 0.1.1 typed forms) into a Go value.
func attrValue(a *pb.AttributeProto) (any, error) {
	return attrValueDepth(a, 0)
}

func attrValueDepth(a *pb.AttributeProto, depth int) (any, error) {
	if depth > maxDepth {
		return nil, errTooDeep
	}
	ref := a.GetRefAttrName()
	typ := a.GetType()
	switch {
	case strings.HasPrefix(ref, "Monad:"), typ == pb.AttributeProto_UMONAD, typ == pb.AttributeProto_IOMONAD:
		return monadVal{}, nil
	case typ == pb.AttributeProto_NONE, ref == "none", strings.HasPrefix(ref, "none:"):
		return noneVal{}, nil
	case strings.HasPrefix(ref, "type:"):
		if len(a.Tensors) > 0 {
			dt, err := mindDType(a.Tensors[0].GetDataType())
			return dtypeVal{dt}, err
		}
		return nil, fmt.Errorf("type attribute %q without a tensor", a.GetName())
	case typ == pb.AttributeProto_TUPLE || typ == pb.AttributeProto_LIST:
		out := make(tuple, 0, len(a.Values))
		for _, v := range a.Values {
			x, err := attrValueDepth(v, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, x)
		}
		return out, nil
	case typ == pb.AttributeProto_TENSOR || a.T != nil:
		if a.T == nil {
			return nil, fmt.Errorf("tensor attribute %q without a tensor", a.GetName())
		}
		return tensorOrType(a.T)
	case typ == pb.AttributeProto_TENSORS || (typ == pb.AttributeProto_UNDEFINED && len(a.Tensors) > 0):
		if len(a.Tensors) == 1 {
			return tensorOrType(a.Tensors[0])
		}
		out := make(tuple, 0, len(a.Tensors))
		for _, t := range a.Tensors {
			x, err := tensorOrType(t)
			if err != nil {
				return nil, err
			}
			out = append(out, x)
		}
		return out, nil
	case isScalarType(typ):
		dt, err := mindDType(int32(typ))
		if err != nil {
			return nil, err
		}
		list := strings.Contains(ref, "Tuple[") || strings.Contains(ref, "List[")
		items := scalarItems(a, dt)
		if list {
			out := make(tuple, len(items))
			for i, s := range items {
				out[i] = s
			}
			return out, nil
		}
		if single, ok := singleScalar(a, dt); ok {
			return single, nil
		}
		if len(items) == 1 {
			return items[0], nil
		}
		out := make(tuple, len(items))
		for i, s := range items {
			out[i] = s
		}
		return out, nil
	case typ == pb.AttributeProto_UNDEFINED && ref == "" && len(a.Values) == 0:
		return noneVal{}, nil
	}
	return nil, fmt.Errorf("attribute %q of type %s is not supported", a.GetName(), typ)
}

// singleScalar reads the singular field of a scalar attribute, if set.
func singleScalar(a *pb.AttributeProto, dt ir.DType) (scalar, bool) {
	switch {
	case dt == ir.String:
		if a.S != nil {
			return scalar{dt: dt, s: string(a.S)}, true
		}
	case dt == ir.Float64:
		if a.D != nil {
			return scalar{dt: dt, f: *a.D}, true
		}
		if a.F != nil {
			return scalar{dt: dt, f: float64(*a.F)}, true
		}
	case dt.IsFloat():
		if a.F != nil {
			return scalar{dt: dt, f: float64(*a.F)}, true
		}
		if a.D != nil {
			return scalar{dt: dt, f: *a.D}, true
		}
	default:
		if a.I != nil {
			return scalar{dt: dt, i: *a.I}, true
		}
	}
	return scalar{}, false
}

// scalarItems reads the repeated fields of a scalar-typed attribute.
func scalarItems(a *pb.AttributeProto, dt ir.DType) []scalar {
	var out []scalar
	switch {
	case dt == ir.String:
		for _, s := range a.Strings {
			out = append(out, scalar{dt: dt, s: string(s)})
		}
	case dt.IsFloat():
		for _, f := range a.Floats {
			out = append(out, scalar{dt: dt, f: float64(f)})
		}
		for _, d := range a.Doubles {
			out = append(out, scalar{dt: dt, f: d})
		}
	default:
		for _, i := range a.Ints {
			out = append(out, scalar{dt: dt, i: i})
		}
	}
	return out
}

// tensorOrType: a TensorProto with data is a constant; one without data and
// without elements is a dtype value (how MindSpore exports Cast's type).
func tensorOrType(t *pb.TensorProto) (any, error) {
	if hasData(t) {
		return tensorFromProto(t)
	}
	n, err := numElements(t.Dims)
	if err == nil && n == 0 && len(t.Dims) > 0 {
		return tensorFromProto(t) // a real empty tensor
	}
	dt, err := mindDType(t.GetDataType())
	if err != nil {
		return nil, err
	}
	return dtypeVal{dt}, nil
}

// scalarTensor turns a scalar into a rank-0 tensor of its dtype.
func scalarTensor(s scalar) *ir.Tensor {
	switch {
	case s.dt == ir.String:
		return &ir.Tensor{DType: ir.String, Shape: []int64{}, Strings: []string{s.s}}
	case s.dt.IsFloat():
		t := ir.NewTensor(s.dt, []int64{})
		t.PutFloat(0, s.f)
		return t
	}
	t := ir.NewTensor(s.dt, []int64{})
	putInts(t, []int64{s.i})
	return t
}

// tupleTensor turns a tuple of scalars of one kind into a 1-D tensor.
func tupleTensor(tp tuple) (*ir.Tensor, bool) {
	if len(tp) == 0 {
		return ir.NewTensor(ir.Int64, []int64{0}), true
	}
	first, ok := tp[0].(scalar)
	if !ok || first.dt == ir.String {
		return nil, false
	}
	dt := first.dt
	for _, x := range tp {
		s, ok := x.(scalar)
		if !ok || s.dt.IsFloat() != dt.IsFloat() || s.dt == ir.String {
			return nil, false
		}
		if s.dt.Size() > dt.Size() {
			dt = s.dt
		}
	}
	t := ir.NewTensor(dt, []int64{int64(len(tp))})
	for i, x := range tp {
		s := x.(scalar)
		if dt.IsFloat() {
			t.PutFloat(i, s.f)
		} else {
			switch dt.Size() {
			case 1:
				t.Data[i] = byte(s.i)
			case 2:
				binary.LittleEndian.PutUint16(t.Data[2*i:], uint16(s.i))
			case 4:
				binary.LittleEndian.PutUint32(t.Data[4*i:], uint32(s.i))
			default:
				binary.LittleEndian.PutUint64(t.Data[8*i:], uint64(s.i))
			}
		}
	}
	return t, true
}

// asInts reads an integer or a tuple/tensor of integers.
func asInts(v any) ([]int64, bool) {
	switch x := v.(type) {
	case scalar:
		if x.dt.IsInt() || x.dt == ir.Bool {
			return []int64{x.i}, true
		}
	case tuple:
		out := make([]int64, 0, len(x))
		for _, e := range x {
			s, ok := e.(scalar)
			if !ok || !(s.dt.IsInt() || s.dt == ir.Bool) {
				return nil, false
			}
			out = append(out, s.i)
		}
		return out, true
	case *ir.Tensor:
		if x.DType.IsInt() || x.DType == ir.Bool {
			v, err := x.Int64s()
			return v, err == nil
		}
	case *ir.Value:
		if x.Const != nil {
			return asInts(x.Const)
		}
	}
	return nil, false
}

func asInt(v any) (int64, bool) {
	if s, ok := v.(scalar); ok && s.dt.IsFloat() {
		return int64(s.f), true
	}
	xs, ok := asInts(v)
	if !ok || len(xs) != 1 {
		return 0, false
	}
	return xs[0], true
}

func asFloats(v any) ([]float64, bool) {
	switch x := v.(type) {
	case scalar:
		if x.dt.IsFloat() {
			return []float64{x.f}, true
		}
		if x.dt.IsInt() || x.dt == ir.Bool {
			return []float64{float64(x.i)}, true
		}
	case tuple:
		out := make([]float64, 0, len(x))
		for _, e := range x {
			f, ok := asFloats(e)
			if !ok || len(f) != 1 {
				return nil, false
			}
			out = append(out, f[0])
		}
		return out, true
	case *ir.Tensor:
		if x.DType != ir.String {
			v, err := x.Float64s()
			return v, err == nil
		}
	case *ir.Value:
		if x.Const != nil {
			return asFloats(x.Const)
		}
	}
	return nil, false
}

func asFloat(v any) (float64, bool) {
	f, ok := asFloats(v)
	if !ok || len(f) != 1 {
		return 0, false
	}
	return f[0], true
}

func asString(v any) (string, bool) {
	switch x := v.(type) {
	case scalar:
		if x.dt == ir.String {
			return x.s, true
		}
	case *ir.Tensor:
		if x.DType == ir.String && len(x.Strings) == 1 {
			return x.Strings[0], true
		}
	case *ir.Value:
		if x.Const != nil {
			return asString(x.Const)
		}
	}
	return "", false
}
