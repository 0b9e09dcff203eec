package fusion

import (
	"fmt"
	"slices"

	"gkconv/internal/ir"
)

// matmul_slice_split (preprocess, level 2, CPU): one of this converter's
// layout passes, which remove copies that only move data before clustering
// (with transpose_to_reshape and transpose_matmul_fusion). When every reader of a MatMul with a constant B takes
// disjoint column ranges of it (Slices, or a Split, of the last axis: a fused
// QKV projection split into Q, K and V), each range becomes its own MatMul
// over those columns of B (and of the bias). Every output column is the same
// dot product as before, so the values are identical, and the copies into
// the Slices are gone.
func runMatMulSliceSplit(st *state) (bool, string, error) {
	g := st.g
	users := g.Consumers()
	graphOut := graphOutputs(g)
	type part struct {
		lo, hi int64
		out    *ir.Value
		from   *ir.Node // the Slice or Split it replaces
	}
	drop := map[*ir.Node]bool{}
	var added []*ir.Node
	split := 0
	for _, mm := range g.Nodes {
		if mm.Op != "MatMul" || len(mm.Inputs) < 2 || len(mm.Outputs) != 1 {
			continue
		}
		v, b := mm.Inputs[1], mm.Outputs[0]
		if graphOut[b] || !v.IsConst() || len(v.Const.Shape) != 2 || !b.ShapeKnown() || len(b.Shape) < 2 || len(users[b]) == 0 ||
			(len(mm.Inputs) == 3 && !ir.IsRowBias(mm.Inputs[2], -1)) {
			continue
		}
		var parts []part
		for _, u := range slices.Compact(slices.Clone(users[b])) {
			if lo, hi, ok := lastAxisSlice(u, b); ok {
				parts = append(parts, part{lo, hi, u.Outputs[0], u})
				continue
			}
			ranges, ok := lastAxisSplit(u, b)
			if !ok {
				parts = nil
				break
			}
			for i, r := range ranges {
				parts = append(parts, part{r[0], r[1], u.Outputs[i], u})
			}
		}
		ranges := make([][2]int64, len(parts))
		for i, p := range parts {
			ranges[i] = [2]int64{p.lo, p.hi}
		}
		if len(parts) == 0 || !disjoint(ranges) {
			continue
		}
		for _, p := range parts {
			ins := []*ir.Value{mm.Inputs[0], st.edit.Const(v.Name+"_cols", columns(v.Const, mm.Attrs.Int("transpose_b", 0) != 0, p.lo, p.hi))}
			if len(mm.Inputs) == 3 {
				ins = append(ins, st.edit.Const(mm.Inputs[2].Name+"_cols", ir.Float32Tensor([]int64{p.hi - p.lo}, mm.Inputs[2].Const.F32()[p.lo:p.hi]...)))
			}
			n := &ir.Node{Name: st.edit.Unique(p.out.Name + "_matmul"), Op: "MatMul", Inputs: ins, Attrs: mm.Attrs.Clone(),
				Provenance: append(slices.Clone(mm.Provenance), p.from.Provenance...)}
			if p.from.Op == "Slice" {
				n.Name = p.from.Name // one node for one: keep its name
			}
			p.out.Producer, p.out.OutIndex = n, 0
			n.Outputs = []*ir.Value{p.out}
			if err := ir.InferNode(n); err != nil {
				return false, "", err
			}
			added = append(added, n)
			drop[p.from] = true
		}
		ir.ReleaseMapped(v.Const.Data) // the column copies replace it
		drop[mm] = true
		split++
	}
	if split == 0 {
		return false, "no MatMul is read only by column Slices or a Split", nil
	}
	g.Nodes = append(slices.DeleteFunc(g.Nodes, func(n *ir.Node) bool { return drop[n] }), added...)
	if err := g.TopoSort(); err != nil { // before RemoveDead, which walks in topological order
		return false, "", err
	}
	g.RemoveDead()
	return true, fmt.Sprintf("%d MatMul split into %d by their column Slices/Splits", split, len(added)), nil
}

// lastAxisSplit returns the column range of every output of Split s when it
// splits the last axis of v.
func lastAxisSplit(s *ir.Node, v *ir.Value) ([][2]int64, bool) {
	if s.Op != "Split" || len(s.Inputs) == 0 || s.Inputs[0] != v || (len(s.Inputs) > 1 && s.Inputs[1] != nil && s.Inputs[1] == v) {
		return nil, false
	}
	r := int64(len(v.Shape))
	axis := s.Attrs.Int("axis", 0)
	if axis < 0 {
		axis += r
	}
	if axis != r-1 {
		return nil, false
	}
	var out [][2]int64
	lo := int64(0)
	for _, o := range s.Outputs {
		if o == nil || !o.ShapeKnown() || len(o.Shape) != int(r) {
			return nil, false
		}
		w := o.Shape[r-1]
		if w < 1 {
			return nil, false
		}
		out = append(out, [2]int64{lo, lo + w})
		lo += w
	}
	return out, lo == v.Shape[r-1]
}

// lastAxisSlice returns the column range [lo, hi) that Slice s takes from
// the last axis of v, when s reads only that axis with step 1 and constant
// bounds.
func lastAxisSlice(s *ir.Node, v *ir.Value) (lo, hi int64, ok bool) {
	if s.Op != "Slice" || len(s.Inputs) < 3 || s.Inputs[0] != v || len(s.Outputs) != 1 || !s.Outputs[0].ShapeKnown() {
		return 0, 0, false
	}
	ints := func(i int) ([]int64, bool) {
		x := s.Input(i)
		if x == nil {
			return nil, true
		}
		if !x.IsConst() {
			return nil, false
		}
		vals, err := x.Const.Int64s()
		return vals, err == nil
	}
	starts, ok1 := ints(1)
	ends, ok2 := ints(2)
	axes, ok3 := ints(3)
	steps, ok4 := ints(4)
	r := int64(len(v.Shape))
	if !ok1 || !ok2 || !ok3 || !ok4 || len(starts) != 1 || len(ends) != 1 {
		return 0, 0, false
	}
	axis := int64(0)
	if axes != nil {
		if len(axes) != 1 {
			return 0, 0, false
		}
		axis = axes[0]
	}
	if axis < 0 {
		axis += r
	}
	if axis != r-1 || (steps != nil && (len(steps) != 1 || steps[0] != 1)) {
		return 0, 0, false
	}
	n := v.Shape[r-1]
	clamp := func(i int64) int64 {
		if i < 0 {
			i += n
		}
		return max(0, min(i, n))
	}
	lo, hi = clamp(starts[0]), clamp(ends[0])
	out := s.Outputs[0].Shape
	if hi <= lo || out[len(out)-1] != hi-lo {
		return 0, 0, false
	}
	return lo, hi, true
}

func disjoint(rs [][2]int64) bool {
	s := slices.Clone(rs)
	slices.SortFunc(s, func(a, b [2]int64) int { return int(a[0] - b[0]) })
	for i := 1; i < len(s); i++ {
		if s[i][0] < s[i-1][1] {
			return false
		}
	}
	return true
}

// columns copies columns [lo, hi) of the 2-D constant B (stored [N, K] when
// transB) as a new tensor of the same layout.
func columns(b *ir.Tensor, transB bool, lo, hi int64) *ir.Tensor {
	rows, cols := b.Shape[0], b.Shape[1]
	es := int64(b.DType.Size())
	if transB { // rows are output columns: one contiguous block
		t := ir.NewTensor(b.DType, []int64{hi - lo, cols})
		copy(t.Data, b.Data[lo*cols*es:hi*cols*es])
		return t
	}
	t := ir.NewTensor(b.DType, []int64{rows, hi - lo})
	w := (hi - lo) * es
	for r := int64(0); r < rows; r++ {
		copy(t.Data[r*w:(r+1)*w], b.Data[(r*cols+lo)*es:(r*cols+hi)*es])
	}
	return t
}
