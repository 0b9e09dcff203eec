package fusion

import (
	"fmt"
	"slices"
)

// transformBinary are the elementwise ops that transform_op_optimizer moves
// a Transpose of both operands past.
var transformBinary = map[string]bool{"Add": true, "Sub": true, "Mul": true, "RealDiv": true, "Maximum": true, "Minimum": true}

// runTransformOpOptimizer is transform_op_optimizer, reduced to its core
// case: a binary elementwise op whose two inputs are the same Transpose of
// equal shapes computes first and transposes once (2 transforms -> 1).
func runTransformOpOptimizer(st *state) (bool, string, error) {
	total := 0
	for _, k := range kernels(st.g) {
		e := bodyEditor(k.Body)
		for changed := true; changed; {
			changed = false
			for _, n := range k.Body.Nodes {
				if !transformBinary[n.Op] || len(n.Inputs) != 2 {
					continue
				}
				a, b := prod(n.Inputs[0], "Transpose"), prod(n.Inputs[1], "Transpose")
				if a == nil || b == nil || a == b || !e.SoleUse(n.Inputs[0], n) || !e.SoleUse(n.Inputs[1], n) {
					continue
				}
				pa, pb := a.Attrs.Ints("perm", nil), b.Attrs.Ints("perm", nil)
				if len(pa) == 0 || !slices.Equal(pa, pb) || !slices.Equal(a.Inputs[0].Shape, b.Inputs[0].Shape) {
					continue
				}
				y := emitLike(e, n, n.Op, n.Attrs, a.Inputs[0], b.Inputs[0])
				t := emitLike(e, n, "Transpose", a.Attrs, y)
				if keepsShape(t, n) == nil {
					continue
				}
				k.Body.ReplaceUses(n.Outputs[0], t)
				_ = k.Body.TopoSort()
				k.Body.RemoveDead()
				e.RefreshUses()
				total++
				changed = true
				break
			}
		}
	}
	if total == 0 {
		return false, "", nil
	}
	return true, fmt.Sprintf("%d transposes moved", total), nil
}
