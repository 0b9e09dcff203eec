package fusion

import (
	"fmt"
	"slices"

	"gkconv/internal/ir"
)

// transpose_matmul_fusion (MindSpore's L2 pass of that name, here on CPU):
// a Transpose read only by a MatMul operand is folded into the MatMul's
// transpose_a/transpose_b when, after swapping its last two axes, it leaves
// the last axis in place: the Transpose then disappears (a plain swap of the
// last two axes) or becomes a copy of whole rows instead of an element
// gather (attention's K^T: [S,H,D] perm [1,2,0] -> [1,0,2] + transpose_b).
// The one layout pass (with transpose_to_reshape and matmul_slice_split)
// that is not bit for bit: the GEMM reads the operand transposed, the same
// products summed in its own order, as any MatMul.
func runTransposeMatMulFusion(st *state) (bool, string, error) {
	g := st.g
	users := g.Consumers()
	graphOut := graphOutputs(g)
	removed := map[*ir.Node]bool{}
	folded := 0
	for _, mm := range g.Nodes {
		if mm.Op != "MatMul" || len(mm.Inputs) < 2 || removed[mm] {
			continue
		}
		for i, flag := range []string{"transpose_a", "transpose_b"} {
			v := mm.Inputs[i]
			t := v.Producer
			if t == nil || t.Op != "Transpose" || removed[t] || graphOut[v] || len(users[v]) != 1 || !t.Attrs.Has("perm") ||
				len(t.Inputs) != 1 || !t.Inputs[0].ShapeKnown() {
				continue
			}
			perm := slices.Clone(t.Attrs.Ints("perm", nil))
			r := len(perm)
			if r < 2 || len(t.Inputs[0].Shape) != r {
				continue
			}
			perm[r-2], perm[r-1] = perm[r-1], perm[r-2]
			if perm[r-1] != int64(r-1) {
				continue // the new Transpose would gather elements too
			}
			mm.Attrs = mm.Attrs.Clone()
			mm.Attrs[flag] = ir.IntAttr(1 - mm.Attrs.Int(flag, 0))
			if isIdentityPerm(perm) {
				mm.Inputs[i] = t.Inputs[0]
				removed[t] = true
			} else {
				t.Attrs = t.Attrs.Clone()
				t.Attrs["perm"] = ir.IntsAttr(perm...)
				if err := ir.InferNode(t); err != nil {
					return false, "", err
				}
			}
			if err := ir.InferNode(mm); err != nil {
				return false, "", err
			}
			folded++
		}
	}
	if folded == 0 {
		return false, "no Transpose feeds a MatMul alone", nil
	}
	g.Nodes = slices.DeleteFunc(g.Nodes, func(n *ir.Node) bool { return removed[n] })
	return true, fmt.Sprintf("%d Transpose folded into MatMul (%d removed)", folded, len(removed)), nil
}

func isIdentityPerm(p []int64) bool {
	for i, v := range p {
		if v != int64(i) {
			return false
		}
	}
	return true
}
