//go:build !cgo

package elementwise

import "gkconv/internal/ir"

// exactUnaryF32: without cgo every op takes the Go path (floatUnary).
func exactUnaryF32(*ir.Node, int) (func(d, s []float32), bool) { return nil, false }
