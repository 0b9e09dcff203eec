package fusion

import (
	"fmt"
	"slices"

	"gkconv/internal/ir"
)

// transpose_to_reshape (preprocess, level 2, CPU): one of this converter's
// layout passes, which remove copies that only move data before clustering,
// bit for bit. A Transpose that only moves size-1 axes keeps the element
// order, so it is a Reshape, which the runtime runs as an alias (batch-1
// transformers: [1,S,D] <-> [S,1,D]).
func runTransposeToReshape(st *state) (bool, string, error) {
	g := st.g
	changed := 0
	for _, n := range g.Nodes {
		if n.Op != "Transpose" || len(n.Inputs) != 1 || len(n.Outputs) != 1 || !n.Attrs.Has("perm") {
			continue
		}
		x, y := n.Inputs[0], n.Outputs[0]
		if !x.ShapeKnown() || !y.ShapeKnown() || !keepsOrder(x.Shape, n.Attrs.Ints("perm", nil)) || slices.Contains(y.Shape, 0) {
			continue
		}
		shape := st.edit.Const(n.Name+"_shape", ir.Int64Tensor([]int64{int64(len(y.Shape))}, y.Shape...))
		n.Op, n.Inputs, n.Attrs = "Reshape", []*ir.Value{x, shape}, ir.Attrs{}
		if err := ir.InferNode(n); err != nil {
			return false, "", err
		}
		changed++
	}
	if changed == 0 {
		return false, "no Transpose moves only size-1 axes", nil
	}
	return true, fmt.Sprintf("%d Transpose -> Reshape", changed), nil
}

// keepsOrder reports whether perm, applied to shape, leaves the axes longer
// than 1 in their order.
func keepsOrder(shape, perm []int64) bool {
	if len(perm) != len(shape) {
		return false
	}
	last := int64(-1)
	for _, p := range perm {
		if p < 0 || p >= int64(len(shape)) {
			return false
		}
		if shape[p] == 1 {
			continue
		}
		if p < last {
			return false
		}
		last = p
	}
	return true
}
