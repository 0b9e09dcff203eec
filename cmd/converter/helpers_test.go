package main

import (
	"bytes"

	"gkconv/internal/ir"
	"gkconv/internal/mindir"
	"gkconv/internal/runtime"
)

type fusionMode int

const (
	fuseNone fusionMode = iota
)

// roundTrip applies the conversion steps of `--optimize=none` in-process:
// constant folding, shape inference, MindIR write and read back.
func roundTrip(g *ir.Graph, _ fusionMode) (*ir.Graph, error) {
	if _, err := runtime.FoldConstants(g); err != nil {
		return nil, err
	}
	g.RemoveDead()
	var buf bytes.Buffer
	if err := mindir.Write(&buf, g, mindir.WriteOptions{}); err != nil {
		return nil, err
	}
	return mindir.Parse(buf.Bytes())
}
