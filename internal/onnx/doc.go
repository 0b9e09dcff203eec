// Package onnx is the ONNX frontend: it reads an ONNX model file without
// copying its weights (the file is mmapped and tensor raw_data stays a
// sub-slice of the mapping) and builds an *ir.Graph that follows the op
// table's conventions, turning old-opset attribute forms into the inputs of
// the newest opset.
package onnx

//go:generate sh -c "protoc --plugin=protoc-gen-go=$(go env GOPATH)/bin/protoc-gen-go --go_out=onnxpb --go_opt=paths=source_relative onnx.proto"
