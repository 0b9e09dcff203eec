package onnx

import (
	"io/fs"

	"google.golang.org/protobuf/proto"

	"gkconv/internal/ir"
	"gkconv/internal/onnx/onnxpb"
	"gkconv/internal/safefs"
)

// WriteTensorFile writes t as one ONNX TensorProto file (raw_data, the
// backend tests' input_N.pb form), crash-safely (safefs.WriteOutput). ir's dtype numbering is
// ONNX's.
func WriteTensorFile(path, name string, t *ir.Tensor) error {
	pb := &onnxpb.TensorProto{Name: proto.String(name), Dims: append([]int64{}, t.Shape...), DataType: proto.Int32(int32(t.DType))}
	if t.DType == ir.String {
		for _, s := range t.Strings {
			pb.StringData = append(pb.StringData, []byte(s))
		}
	} else {
		pb.RawData = t.Data
	}
	b, err := proto.Marshal(pb)
	if err != nil {
		return err
	}
	return safefs.WriteOutputBytes(path, b, fs.FileMode(0o644))
}
