package main

import (
	"bytes"
	"fmt"

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
	// Every file the suite writes must pass MindSpore's loader rules.
	rep, err := mindir.CheckBytes(buf.Bytes(), g.Name)
	if err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	if !rep.OK() {
		return nil, fmt.Errorf("check: %d violation(s), first: %s", len(rep.Violations), rep.Violations[0])
	}
	return mindir.Parse(buf.Bytes())
}
