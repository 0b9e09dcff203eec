// Package ir is the converter's internal graph: tensors, values, nodes and
// graphs, the op table that maps frontend ops to MindSpore primitive names,
// and shape inference. It imports nothing else of the project.
package ir

import "fmt"

// DType numbers follow ONNX TensorProto.DataType so the ONNX frontend needs no
// table; the MindIR codec maps its own numbering (FLOAT64=11 or 17) itself.
type DType int32

const (
	Undefined  DType = 0
	Float32    DType = 1
	Uint8      DType = 2
	Int8       DType = 3
	Uint16     DType = 4
	Int16      DType = 5
	Int32      DType = 6
	Int64      DType = 7
	String     DType = 8
	Bool       DType = 9
	Float16    DType = 10
	Float64    DType = 11
	Uint32     DType = 12
	Uint64     DType = 13
	Complex64  DType = 14
	Complex128 DType = 15
	BFloat16   DType = 16
	// Sequence is not an element type: a value of this type is an ONNX
	// seq(tensor) (Value.Elem is the element type; at run time the
	// Tensor's Seq holds the tensors).
	Sequence DType = 100
)

var dtypeNames = map[DType]string{
	Undefined: "undefined", Float32: "float32", Uint8: "uint8", Int8: "int8", Uint16: "uint16",
	Int16: "int16", Int32: "int32", Int64: "int64", String: "string", Bool: "bool",
	Float16: "float16", Float64: "float64", Uint32: "uint32", Uint64: "uint64",
	Complex64: "complex64", Complex128: "complex128", BFloat16: "bfloat16", Sequence: "sequence",
}

func (d DType) String() string {
	if s, ok := dtypeNames[d]; ok {
		return s
	}
	return fmt.Sprintf("dtype(%d)", int32(d))
}

// ParseDType accepts the names String returns.
func ParseDType(s string) (DType, bool) {
	for d, n := range dtypeNames {
		if n == s {
			return d, true
		}
	}
	return Undefined, false
}

// Size is the element size in bytes; 0 for string and undefined.
func (d DType) Size() int {
	switch d {
	case Bool, Uint8, Int8:
		return 1
	case Uint16, Int16, Float16, BFloat16:
		return 2
	case Int32, Uint32, Float32:
		return 4
	case Int64, Uint64, Float64, Complex64:
		return 8
	case Complex128:
		return 16
	}
	return 0
}

func (d DType) IsFloat() bool {
	return d == Float32 || d == Float64 || d == Float16 || d == BFloat16
}

func (d DType) IsInt() bool {
	switch d {
	case Uint8, Int8, Uint16, Int16, Int32, Int64, Uint32, Uint64:
		return true
	}
	return false
}

func (d DType) IsSigned() bool {
	switch d {
	case Int8, Int16, Int32, Int64:
		return true
	}
	return d.IsFloat()
}
