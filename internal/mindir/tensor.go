package mindir

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"

	"gkconv/internal/ir"
	pb "gkconv/internal/mindir/mindirpb"
)

// fp16Marker is the TensorProto.doc_string of a float32 constant that Write
// stored as float16 (WriteOptions.FP16): data_type is FLOAT16, and the reader
// widens it back to float32 so the graph's types do not change.
const fp16Marker = "gkconv:fp16-of-float32"

// mindDType maps a TensorProto.DataType (also AttributeType 1..16, which uses
// the same numbers) to the IR. Numbers 0..16 coincide with ONNX's; MindSpore
// writes FLOAT64 as 17 as well as DOUBLE 11.
func mindDType(dt int32) (ir.DType, error) {
	switch {
	case dt >= 1 && dt <= 16 && dt != 8:
		return ir.DType(dt), nil
	case dt == 8:
		return ir.String, nil
	case dt == 17:
		return ir.Float64, nil
	}
	return ir.Undefined, fmt.Errorf("unsupported MindIR data type %d", dt)
}

// numElements multiplies dims, refusing negative dims and overflow.
func numElements(dims []int64) (int64, error) {
	n := int64(1)
	for _, d := range dims {
		if d < 0 {
			return 0, fmt.Errorf("negative dim in %v", dims)
		}
		if d != 0 && n > math.MaxInt32*int64(64)/d {
			return 0, fmt.Errorf("dims %v too large", dims)
		}
		n *= d
	}
	return n, nil
}

// hasData reports whether a TensorProto carries element data (a tensor
// without data is a type or a parameter stored elsewhere).
func hasData(t *pb.TensorProto) bool {
	return t.RawData != nil || len(t.FloatData) > 0 || len(t.Int32Data) > 0 || len(t.Int64Data) > 0 ||
		len(t.DoubleData) > 0 || len(t.Uint64Data) > 0 || len(t.StringData) > 0
}

// tensorFromProto converts a TensorProto with data. raw_data is aliased, not
// copied: the tensor is read-only.
func tensorFromProto(t *pb.TensorProto) (*ir.Tensor, error) {
	dt, err := mindDType(t.GetDataType())
	if err != nil {
		return nil, err
	}
	shape := append([]int64{}, t.Dims...)
	n, err := numElements(shape)
	if err != nil {
		return nil, err
	}
	if dt == ir.String {
		if int64(len(t.StringData)) != n {
			return nil, fmt.Errorf("string tensor %v has %d elements", shape, len(t.StringData))
		}
		out := &ir.Tensor{DType: dt, Shape: shape, Strings: make([]string, n)}
		for i, s := range t.StringData {
			out.Strings[i] = string(s)
		}
		return out, nil
	}
	size := int64(dt.Size())
	if dt == ir.Float16 && t.GetDocString() == fp16Marker {
		if t.RawData == nil || int64(len(t.RawData)) != n*2 {
			return nil, fmt.Errorf("fp16 tensor %v has %d bytes, want %d", shape, len(t.RawData), n*2)
		}
		out := &ir.Tensor{DType: ir.Float32, Shape: shape, Data: make([]byte, n*4)}
		for i := int64(0); i < n; i++ {
			h := binary.LittleEndian.Uint16(t.RawData[2*i:])
			binary.LittleEndian.PutUint32(out.Data[4*i:], math.Float32bits(ir.F16ToF32(h)))
		}
		return out, nil
	}
	out := &ir.Tensor{DType: dt, Shape: shape}
	if t.RawData != nil {
		if int64(len(t.RawData)) != n*size {
			return nil, fmt.Errorf("%s%v tensor has %d bytes of raw_data, want %d", dt, shape, len(t.RawData), n*size)
		}
		out.Data = t.RawData
		return out, nil
	}
	// Check the element count before allocating: dims come from the file.
	avail := max(len(t.FloatData), len(t.DoubleData), len(t.Int64Data), len(t.Int32Data), len(t.Uint64Data))
	if int64(avail) != n {
		return nil, fmt.Errorf("%s%v tensor has %d elements, want %d", dt, shape, avail, n)
	}
	out.Data = make([]byte, n*size)
	count := func(k int) error {
		if int64(k) != n {
			return fmt.Errorf("%s%v tensor has %d elements, want %d", dt, shape, k, n)
		}
		return nil
	}
	switch {
	case len(t.FloatData) > 0 && dt == ir.Float32:
		if err := count(len(t.FloatData)); err != nil {
			return nil, err
		}
		for i, v := range t.FloatData {
			binary.LittleEndian.PutUint32(out.Data[4*i:], math.Float32bits(v))
		}
	case len(t.DoubleData) > 0 && dt == ir.Float64:
		if err := count(len(t.DoubleData)); err != nil {
			return nil, err
		}
		for i, v := range t.DoubleData {
			binary.LittleEndian.PutUint64(out.Data[8*i:], math.Float64bits(v))
		}
	case len(t.Int64Data) > 0 && (dt == ir.Int64 || dt == ir.Int32 || dt == ir.Int16 || dt == ir.Int8 || dt == ir.Uint8 || dt == ir.Bool):
		if err := count(len(t.Int64Data)); err != nil {
			return nil, err
		}
		putInts(out, t.Int64Data)
	case len(t.Int32Data) > 0 && dt != ir.Float32 && dt != ir.Float64 && size <= 4:
		if err := count(len(t.Int32Data)); err != nil {
			return nil, err
		}
		v := make([]int64, len(t.Int32Data))
		for i, x := range t.Int32Data {
			v[i] = int64(x)
		}
		putInts(out, v)
	case len(t.Uint64Data) > 0 && (dt == ir.Uint64 || dt == ir.Uint32):
		if err := count(len(t.Uint64Data)); err != nil {
			return nil, err
		}
		v := make([]int64, len(t.Uint64Data))
		for i, x := range t.Uint64Data {
			v[i] = int64(x)
		}
		putInts(out, v)
	default:
		if n != 0 {
			return nil, fmt.Errorf("%s%v tensor has no data it can use", dt, shape)
		}
	}
	return out, nil
}

// putInts stores integers (or float16/bfloat16 bit patterns) into an integer-like tensor.
func putInts(t *ir.Tensor, v []int64) {
	switch t.DType.Size() {
	case 1:
		for i, x := range v {
			t.Data[i] = byte(x)
		}
	case 2:
		for i, x := range v {
			binary.LittleEndian.PutUint16(t.Data[2*i:], uint16(x))
		}
	case 4:
		for i, x := range v {
			binary.LittleEndian.PutUint32(t.Data[4*i:], uint32(x))
		}
	case 8:
		for i, x := range v {
			binary.LittleEndian.PutUint64(t.Data[8*i:], uint64(x))
		}
	}
}

// typeInfo is how a value's type travels in our own files: dims (-1 unknown)
// and data_type in a TensorProto, plus doc_string JSON for what dims cannot say.
type typeInfo struct {
	UnknownRank bool     `json:"unknown_rank,omitempty"`
	DimNames    []string `json:"dim_names,omitempty"`
	// Sequence: the value is a sequence of tensors of the data_type (a
	// Custom op's value; MindSpore's abstract says tensor).
	Sequence bool `json:"sequence,omitempty"`
}

func typeToProto(v *ir.Value) *pb.TensorProto {
	if v.DType == ir.Sequence {
		elem := v.Elem
		if elem == ir.Undefined {
			elem = ir.Float32
		}
		b, _ := json.Marshal(typeInfo{Sequence: true})
		return &pb.TensorProto{DataType: ptr(int32(elem)), Dims: []int64{-2}, DocString: ptr(string(b))}
	}
	t := &pb.TensorProto{DataType: ptr(int32(v.DType))}
	var info typeInfo
	if v.Shape == nil {
		// MindSpore's unknown rank (abstract::Shape::kShapeRankAny).
		t.Dims = []int64{-2}
	} else {
		t.Dims = append([]int64{}, v.Shape...)
		if len(t.Dims) == 0 {
			t.Dims = nil
		}
	}
	for _, n := range v.DimNames {
		if n != "" {
			info.DimNames = v.DimNames
			break
		}
	}
	if info.UnknownRank || info.DimNames != nil {
		b, _ := json.Marshal(info)
		t.DocString = ptr(string(b))
	}
	return t
}

// typeFromProto reads a value type (dims, dtype) from a TensorProto. own
// selects our doc_string extension; MindSpore's -2 dim means unknown rank.
func typeFromProto(t *pb.TensorProto, own bool) (ir.DType, []int64, []string) {
	dt, err := mindDType(t.GetDataType())
	if err != nil {
		dt = ir.Undefined
	}
	shape := append([]int64{}, t.Dims...)
	if own && t.DocString != nil {
		var info typeInfo
		if json.Unmarshal([]byte(*t.DocString), &info) == nil && info.Sequence {
			return ir.Sequence, nil, nil
		}
	}
	for _, d := range shape {
		if d == -2 {
			return dt, nil, nil
		}
	}
	for i, d := range shape {
		if d < 0 {
			shape[i] = -1
		}
	}
	var names []string
	if own && t.DocString != nil {
		var info typeInfo
		if json.Unmarshal([]byte(*t.DocString), &info) == nil {
			if info.UnknownRank {
				return dt, nil, nil
			}
			if len(info.DimNames) == len(shape) {
				names = info.DimNames
			}
		}
	}
	return dt, shape, names
}

func ptr[T any](v T) *T { return &v }
