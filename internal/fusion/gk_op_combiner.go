package fusion

import (
	"fmt"
	"slices"

	"gkconv/internal/ir"
)

// runOpCombiner is graph_kernel_op_combiner (opt_level 3): MatMuls that
// share their left operand and have constant 2-D right operands become one
// MatMul over the concatenated weights followed by a Split.
func runOpCombiner(st *state) (bool, string, error) {
	g := st.g
	users := g.Consumers()
	combined := 0
	for _, a := range allValues(g) {
		var mms []*ir.Node
		for _, u := range users[a] {
			if u.Op == "MatMul" && len(u.Inputs) == 2 && u.Inputs[0] == a && combinableMatMul(u, a) && !slices.Contains(mms, u) {
				mms = append(mms, u)
			}
		}
		if len(mms) < 2 {
			continue
		}
		if err := st.combineMatMuls(a, mms); err != nil {
			return false, "", err
		}
		combined++
	}
	if combined == 0 {
		return false, "no MatMuls share an input", nil
	}
	if err := g.TopoSort(); err != nil {
		return false, "", err
	}
	return true, fmt.Sprintf("%d MatMul groups combined", combined), nil
}

func combinableMatMul(n *ir.Node, a *ir.Value) bool {
	w := n.Inputs[1]
	if w.Const == nil || w.DType != a.DType || len(w.Shape) != 2 || !a.ShapeKnown() || len(a.Shape) < 1 {
		return false
	}
	if n.Attrs.Int("transpose_a", 0) != 0 || n.Attrs.Int("transpose_b", 0) != 0 || n.Attrs.Has(ir.AttrActivation) {
		return false
	}
	return w.DType.Size() > 0 && a.Shape[len(a.Shape)-1] == w.Shape[0]
}

func (st *state) combineMatMuls(a *ir.Value, mms []*ir.Node) error {
	k := mms[0].Inputs[1].Shape[0]
	es := mms[0].Inputs[1].DType.Size()
	var total int64
	var split []int64
	for _, m := range mms {
		if m.Inputs[1].Shape[0] != k {
			return nil
		}
		split = append(split, m.Inputs[1].Shape[1])
		total += m.Inputs[1].Shape[1]
	}
	w := ir.NewTensor(mms[0].Inputs[1].DType, []int64{k, total})
	for r := int64(0); r < k; r++ {
		off := r * total * int64(es)
		for _, m := range mms {
			nc := m.Inputs[1].Shape[1] * int64(es)
			src := m.Inputs[1].Const.Data[r*nc : (r+1)*nc]
			copy(w.Data[off:off+nc], src)
			off += nc
		}
	}
	g := st.g
	wv := st.edit.Const(mms[0].Name+"_combined_w", w)
	mm := ir.NewNode(st.edit.Unique(mms[0].Name+"_combined"), "MatMul", []*ir.Value{a, wv}, nil, st.edit.Unique(mms[0].Name+"_combined_out"))
	if err := ir.InferNode(mm); err != nil {
		return err
	}
	sv := st.edit.Const(mms[0].Name+"_split", ir.Int64Tensor([]int64{int64(len(split))}, split...))
	var outNames []string
	for _, m := range mms {
		outNames = append(outNames, m.Outputs[0].Name)
	}
	sp := ir.NewNode(st.edit.Unique(mms[0].Name+"_split"), "Split", []*ir.Value{mm.Outputs[0], sv}, ir.Attrs{"axis": ir.IntAttr(-1)}, outNames...)
	for _, m := range mms {
		sp.Provenance = append(sp.Provenance, m.Provenance...)
		mm.Provenance = append(mm.Provenance, m.Provenance...)
	}
	outs := sp.Outputs
	if err := ir.InferNode(sp); err != nil {
		return err
	}
	for i, m := range mms {
		if !slices.Equal(outs[i].Shape, m.Outputs[0].Shape) {
			return fmt.Errorf("combined MatMul output %v differs from %v", outs[i].Shape, m.Outputs[0].Shape)
		}
	}
	// Reuse the MatMuls' output values so consumers and graph outputs keep them.
	for i, m := range mms {
		o := m.Outputs[0]
		o.Producer, o.OutIndex = sp, i
		sp.Outputs[i] = o
	}
	var nodes []*ir.Node
	for _, n := range g.Nodes {
		if slices.Contains(mms, n) {
			if n == mms[0] {
				nodes = append(nodes, mm, sp)
			}
			continue
		}
		nodes = append(nodes, n)
	}
	g.Nodes = nodes
	return nil
}
