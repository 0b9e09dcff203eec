package convert

import (
	"fmt"
	"strings"

	"gkconv/internal/ir"
	"gkconv/internal/mindir"
	"gkconv/internal/onnx"
)

// Load opens a model with the frontend of fmk (ONNX or MINDIR, any case),
// fixing the dynamic input dims named in inputShape. The returned func
// releases the mmapped weights; call it once the graph is no longer used.
func Load(fmk, path string, inputShape map[string][]int64) (*ir.Graph, func(), error) {
	switch strings.ToUpper(fmk) {
	case "ONNX":
		m, err := onnx.Open(path, onnx.Options{InputShapes: inputShape})
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
