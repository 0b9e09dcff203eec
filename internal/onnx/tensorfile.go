package onnx

import (
	"fmt"
	"path/filepath"

	"gkconv/internal/ir"
	"gkconv/internal/safefs"
)

// ReadTensorFile reads one ONNX TensorProto file, as in the backend tests'
// test_data_set_N/input_K.pb, and returns the tensor and its name ("" when
// the file has none). The data is owned by the caller.
func ReadTensorFile(path string) (*ir.Tensor, string, error) {
	// A FIFO or device is refused before it is opened (it would block or
	// never end); the read is bounded by the size stat declared, and a
	// tensor file holds at most one tensor of the largest size allowed.
	data, err := safefs.ReadRegular(path, ir.MaxTensorBytes+1<<20)
	if err != nil {
		return nil, "", err
	}
	t, name, err := ParseTensor(data, filepath.Dir(path))
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	return t, name, nil
}

// ParseTensor decodes a serialized TensorProto; dir resolves external data.
func ParseTensor(data []byte, dir string) (*ir.Tensor, string, error) {
	rt, err := decodeTensor(data)
	if err != nil {
		return nil, "", fmt.Errorf("not a valid ONNX TensorProto (truncated or corrupt): %w", err)
	}
	l := &loader{model: &Model{}, file: "", dir: dir}
	t, err := l.tensor(rt)
	if err != nil {
		return nil, "", err
	}
	return t, rt.pb.GetName(), nil
}
