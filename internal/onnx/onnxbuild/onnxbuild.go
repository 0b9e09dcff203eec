// Package onnxbuild writes small ONNX models and TensorProto files for tests:
// a model is declared input by input, initializer by initializer and node by
// node, and serialized deterministically.
package onnxbuild

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"

	"google.golang.org/protobuf/proto"

	"gkconv/internal/onnx/onnxpb"
)

// Element types, for brevity in tests.
const (
	Float   = int32(onnxpb.TensorProto_FLOAT)
	Double  = int32(onnxpb.TensorProto_DOUBLE)
	Int64   = int32(onnxpb.TensorProto_INT64)
	Int32   = int32(onnxpb.TensorProto_INT32)
	Float16 = int32(onnxpb.TensorProto_FLOAT16)
	Bool    = int32(onnxpb.TensorProto_BOOL)
	Uint8   = int32(onnxpb.TensorProto_UINT8)
)

// Model is a ModelProto under construction.
type Model struct {
	pb *onnxpb.ModelProto
}

// New starts a model with one graph importing the default domain at opset.
func New(graphName string, opset int64) *Model {
	return &Model{pb: &onnxpb.ModelProto{
		IrVersion:       proto.Int64(8),
		ProducerName:    proto.String("gkconv-onnxbuild"),
		ProducerVersion: proto.String("1"),
		OpsetImport:     []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(opset)}},
		Graph:           &onnxpb.GraphProto{Name: proto.String(graphName)},
	}}
}

// Graph is the model's graph message.
func (m *Model) Graph() *onnxpb.GraphProto { return m.pb.Graph }

// Import adds an opset import for another domain.
func (m *Model) Import(domain string, version int64) *Model {
	m.pb.OpsetImport = append(m.pb.OpsetImport, &onnxpb.OperatorSetIdProto{Domain: proto.String(domain), Version: proto.Int64(version)})
	return m
}

// ValueInfo builds a tensor ValueInfoProto. A dim is an int (a negative one
// is unknown) or a string (a symbolic dim); no dims at all with nil means
// unknown rank: use ValueInfoRank(name, dt, nil).
func ValueInfo(name string, elem int32, dims ...any) *onnxpb.ValueInfoProto {
	shape := &onnxpb.TensorShapeProto{}
	for _, d := range dims {
		dim := &onnxpb.TensorShapeProto_Dimension{}
		switch x := d.(type) {
		case int:
			if x >= 0 {
				dim.Value = &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: int64(x)}
			}
		case int64:
			if x >= 0 {
				dim.Value = &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: x}
			}
		case string:
			dim.Value = &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: x}
		default:
			panic(fmt.Sprintf("onnxbuild: dim %v of type %T", d, d))
		}
		shape.Dim = append(shape.Dim, dim)
	}
	return &onnxpb.ValueInfoProto{
		Name: proto.String(name),
		Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{
			ElemType: proto.Int32(elem), Shape: shape,
		}}},
	}
}

// Input declares a graph input (see ValueInfo for dims).
func (m *Model) Input(name string, elem int32, dims ...any) *Model {
	m.pb.Graph.Input = append(m.pb.Graph.Input, ValueInfo(name, elem, dims...))
	return m
}

// Output declares a graph output.
func (m *Model) Output(name string, elem int32, dims ...any) *Model {
	m.pb.Graph.Output = append(m.pb.Graph.Output, ValueInfo(name, elem, dims...))
	return m
}

// Init adds initializers.
func (m *Model) Init(ts ...*onnxpb.TensorProto) *Model {
	m.pb.Graph.Initializer = append(m.pb.Graph.Initializer, ts...)
	return m
}

// Node appends a node and returns it so that callers can set a domain.
func (m *Model) Node(name, op string, inputs, outputs []string, attrs ...*onnxpb.AttributeProto) *onnxpb.NodeProto {
	n := &onnxpb.NodeProto{OpType: proto.String(op), Input: inputs, Output: outputs, Attribute: attrs}
	if name != "" {
		n.Name = proto.String(name)
	}
	m.pb.Graph.Node = append(m.pb.Graph.Node, n)
	return n
}

// Bytes serializes the model deterministically.
func (m *Model) Bytes() ([]byte, error) { return Marshal(m.pb) }

// WriteFile writes the model.
func (m *Model) WriteFile(path string) error {
	b, err := m.Bytes()
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// Marshal serializes any message deterministically.
func Marshal(msg proto.Message) ([]byte, error) {
	return proto.MarshalOptions{Deterministic: true}.Marshal(msg)
}

// Attribute constructors.

func Int(name string, v int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(v)}
}

func Float32Attr(name string, v float32) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_FLOAT.Enum(), F: proto.Float32(v)}
}

func String(name, v string) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_STRING.Enum(), S: []byte(v)}
}

func Ints(name string, v ...int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INTS.Enum(), Ints: v}
}

func Floats(name string, v ...float32) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_FLOATS.Enum(), Floats: v}
}

func Strings(name string, v ...string) *onnxpb.AttributeProto {
	a := &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_STRINGS.Enum()}
	for _, s := range v {
		a.Strings = append(a.Strings, []byte(s))
	}
	return a
}

func Tensor(name string, t *onnxpb.TensorProto) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_TENSOR.Enum(), T: t}
}

// Graph makes a graph attribute (a control-flow body).
func Graph(name string, g *onnxpb.GraphProto) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_GRAPH.Enum(), G: g}
}

// Tensor constructors. They store raw_data (little-endian), as exporters do.

func dims64(dims []int64) []int64 { return append([]int64{}, dims...) }

// Raw builds a tensor from little-endian bytes.
func Raw(name string, elem int32, dims []int64, raw []byte) *onnxpb.TensorProto {
	t := &onnxpb.TensorProto{Dims: dims64(dims), DataType: proto.Int32(elem), RawData: raw}
	if name != "" {
		t.Name = proto.String(name)
	}
	return t
}

func Float32s(name string, dims []int64, vals []float32) *onnxpb.TensorProto {
	raw := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	return Raw(name, Float, dims, raw)
}

func Int64s(name string, dims []int64, vals []int64) *onnxpb.TensorProto {
	raw := make([]byte, 8*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(v))
	}
	return Raw(name, Int64, dims, raw)
}

// Scalar is a rank-0 float32 tensor.
func Scalar(name string, v float32) *onnxpb.TensorProto { return Float32s(name, nil, []float32{v}) }

// Fill is a float32 tensor with every element v.
func Fill(name string, dims []int64, v float32) *onnxpb.TensorProto {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	vals := make([]float32, n)
	for i := range vals {
		vals[i] = v
	}
	return Float32s(name, dims, vals)
}
