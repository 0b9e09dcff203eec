package convert

import (
	"fmt"
	"strings"

	"gkconv/internal/ir"
	"gkconv/internal/mindir"
	"gkconv/internal/onnx"
)

// LoadOptions: how a model is read.
type LoadOptions struct {
	InputShape  map[string][]int64 // fixes dynamic input dims by input name
	KeepFloat16 bool               // ONNX: onnx.Options.KeepFloat16
}

// Load opens a model with the frontend of fmk (ONNX or MINDIR, any case),
// fixing the dynamic input dims named in lo.InputShape. The returned func
// releases the mmapped weights; call it once the graph is no longer used.
func Load(fmk, path string, lo LoadOptions) (*ir.Graph, func(), error) {
	inputShape := lo.InputShape
	switch strings.ToUpper(fmk) {
	case "ONNX":
		m, err := onnx.Open(path, onnx.Options{InputShapes: inputShape, KeepFloat16: lo.KeepFloat16})
		if err != nil {
			return nil, nil, err
		}
		return m.Graph, func() { m.Close() }, nil
	case "MINDIR":
		m, err := mindir.Open(path)
		if err != nil {
			return nil, nil, err
		}
		if len(inputShape) > 0 {
			if err := m.Graph.FixInputShapes(inputShape); err != nil {
				m.Close()
				return nil, nil, fmt.Errorf("%s: %w", path, err)
			}
		}
		return m.Graph, func() { m.Close() }, nil
	}
	return nil, nil, fmt.Errorf("unsupported --fmk=%s", fmk)
}
