//go:build !cgo

package elementwise

import (
	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// exactUnaryF32: without cgo every op takes the Go path (floatUnary).
func exactUnaryF32(*ir.Node, int) (func(d, s []float32), bool) { return nil, false }

// cubeF32: without cgo Pow takes the Go path.
func cubeF32(*opkernel.Ctx, []float32, []float32) bool { return false }

// exactUnaryCodes: no op has a C loop without cgo.
var exactUnaryCodes = map[string]int{}
