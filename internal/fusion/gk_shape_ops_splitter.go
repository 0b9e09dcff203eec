package fusion

import (
	"fmt"

	"gkconv/internal/ir"
)

// runShapeOpsSplitter is shape_ops_splitter: inside each kernel body, a
// reshape-like op with several users is duplicated so each user has its own
// (the split model's reshape pattern relies on one user per reshape).
func runShapeOpsSplitter(st *state) (bool, string, error) {
	dup := 0
	for _, k := range kernels(st.g) {
		dup += splitShapeOps(k.Body)
	}
	if dup == 0 {
		return false, "", nil
	}
	return true, fmt.Sprintf("%d reshape copies", dup), nil
}

func splitShapeOps(b *ir.Graph) int {
	// The names of the body's nodes and their outputs (not of its inputs and
	// constants, as before the shared ir.Names).
	names := ir.NewNames()
	for _, n := range b.Nodes {
		names.Reserve(n.Name)
		for _, o := range n.Outputs {
			names.Reserve(o.Name)
		}
	}
	isOut := map[*ir.Value]bool{}
	for _, o := range b.Outputs {
		isOut[o] = true
	}
	users := b.Consumers()
	dup := 0
	var out []*ir.Node
	for _, n := range b.Nodes {
		out = append(out, n)
		if !ir.LookupOp(n.Op).IsReshape() || len(n.Outputs) != 1 {
			continue
		}
		v := n.Outputs[0]
		us := users[v]
		extra := len(us) - 1
		if isOut[v] {
			extra = len(us)
		}
		for i := 0; i < extra; i++ {
			u := us[len(us)-1-i]
			c := &ir.Node{Name: names.Unique(n.Name), Op: n.Op, Inputs: append([]*ir.Value{}, n.Inputs...),
				Attrs: n.Attrs.Clone(), Provenance: append([]string(nil), n.Provenance...)}
			nv := &ir.Value{Name: names.Unique(v.Name), DType: v.DType, Shape: append([]int64{}, v.Shape...), Producer: c}
			c.Outputs = []*ir.Value{nv}
			for j, in := range u.Inputs {
				if in == v {
					u.Inputs[j] = nv
				}
			}
			out = append(out, c)
			dup++
		}
	}
	b.Nodes = out
	if dup > 0 {
		_ = b.TopoSort()
	}
	return dup
}
