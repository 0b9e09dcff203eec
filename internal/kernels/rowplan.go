package kernels

import (
	"slices"

	"gkconv/internal/ir"
)

// The row planner. A body is row-wise when every reduction reduces the same
// trailing axes F[p:] of tensors of one shape F and every output is per
// element of F or per row (F[:p]), ignoring 1s (LayerNorm, Softmax, their
// prologues and epilogues). Each generator then gives a row to one loop
// iteration, thread block or core and computes the reductions in passes
// over the row's elements.

// Rows is the row plan of a body.
type Rows struct {
	// Full is F; Full[:P] are the rows, Full[P:] the reduced inner dims.
	Full []int64
	P    int
	// Passes groups the reductions: a reduction runs in the first pass
	// after every reduction its input depends on.
	Passes [][]*Reduction
}

// PlanRows returns the row plan of body, or nil when body does not fit it
// (no reduction, or not row-wise).
func PlanRows(body *ir.Graph) (*Rows, error) {
	full, p, ok, err := planRow(body)
	if err != nil || !ok {
		return nil, err
	}
	passes, err := rowPasses(body)
	if err != nil {
		return nil, err
	}
	return &Rows{Full: full, P: p, Passes: passes}, nil
}

// RowPlan reports whether body fits the row-wise strategy (see PlanRows)
// and returns F, p and the reduce nodes of each pass.
func RowPlan(body *ir.Graph) (F []int64, p int, passes [][]*ir.Node, ok bool, err error) {
	rows, err := PlanRows(body)
	if err != nil || rows == nil {
		return nil, 0, nil, false, err
	}
	for _, pass := range rows.Passes {
		var nodes []*ir.Node
		for _, rs := range pass {
			nodes = append(nodes, rs.Node)
		}
		passes = append(passes, nodes)
	}
	return rows.Full, rows.P, passes, true, nil
}

// planRow checks that every reduction reduces the same trailing axes of
// tensors of one shape F and that every output is per element of F or per
// row; it returns F and p.
func planRow(body *ir.Graph) ([]int64, int, bool, error) {
	var reds []*Reduction
	for _, n := range body.Nodes {
		if IsReduce(n.Op) && !IsNoopReduce(n) {
			rs, err := newReduction(n)
			if err != nil {
				return nil, 0, false, err
			}
			reds = append(reds, rs)
		}
	}
	if len(reds) == 0 {
		return nil, 0, false, nil
	}
	F := reds[0].Node.Inputs[0].Shape
	p := -1
	for _, rs := range reds {
		if !slices.Equal(rs.Node.Inputs[0].Shape, F) {
			return nil, 0, false, nil
		}
		q := len(F)
		for q > 0 && rs.Reduced[q-1] {
			q--
		}
		for a := 0; a < q; a++ {
			if rs.Reduced[a] {
				return nil, 0, false, nil
			}
		}
		if p >= 0 && q != p {
			return nil, 0, false, nil
		}
		p = q
	}
	for _, v := range body.Outputs {
		if _, ok := AlignOnes(v.Shape, F); ok {
			continue
		}
		if _, ok := AlignOnes(v.Shape, F[:p]); ok {
			continue
		}
		return nil, 0, false, nil
	}
	return F, p, true, nil
}

// rowPasses groups reductions into passes: a reduction runs in the first
// pass after every reduction its input depends on.
func rowPasses(body *ir.Graph) ([][]*Reduction, error) {
	passOf := map[*ir.Value]int{} // value -> 1 + last pass it depends on (0: none)
	var dep func(v *ir.Value) int
	dep = func(v *ir.Value) int {
		if v == nil || v.Producer == nil {
			return 0
		}
		if d, ok := passOf[v]; ok {
			return d
		}
		n := v.Producer
		d := 0
		for _, in := range n.Inputs {
			if x := dep(in); x > d {
				d = x
			}
		}
		if IsReduce(n.Op) && !IsNoopReduce(n) {
			d++ // the result exists after pass d-1 ... so users run at pass >= d
		}
		passOf[v] = d
		return d
	}
	var passes [][]*Reduction
	for _, n := range body.Nodes {
		if !IsReduce(n.Op) || IsNoopReduce(n) {
			continue
		}
		rs, err := newReduction(n)
		if err != nil {
			return nil, err
		}
		rs.NanAnyway = softmaxRowMax(body, n)
		k := dep(n.Inputs[0])
		for len(passes) <= k {
			passes = append(passes, nil)
		}
		passes[k] = append(passes[k], rs)
	}
	return passes, nil
}

// softmaxRowMax reports whether ReduceMax m is a softmax's row max: m is
// read only by Sub(x, m) of its own input x, each Sub only by Exp, each Exp
// e only by one ReduceSum s of e over m's axes and by the normalisation,
// RealDiv(e, s) or (the CPU expander's form) Mul(e, RealDiv(1, s)), s only
// by those, and none of m, the Subs, Exps or s is a body output.
// A NaN in a row of x then makes e, s and so every output of the row NaN
// whether or not m itself is NaN, so m may skip the per-element NaN test
// (about 10% of a long-row softmax kernel).
func softmaxRowMax(body *ir.Graph, m *ir.Node) bool {
	if m.Op != "ReduceMax" || len(m.Outputs) != 1 {
		return false
	}
	users := body.Consumers()
	out := map[*ir.Value]bool{}
	for _, o := range body.Outputs {
		out[o] = true
	}
	internal := func(v *ir.Value) bool { return !out[v] && len(users[v]) > 0 }
	x, mv := m.Inputs[0], m.Outputs[0]
	sameAxes := func(s *ir.Node) bool {
		if len(s.Inputs) < 2 || len(m.Inputs) < 2 || s.Inputs[1] == nil || m.Inputs[1] == nil ||
			s.Inputs[1].Const == nil || m.Inputs[1].Const == nil {
			return false
		}
		a, err1 := s.Inputs[1].Const.Int64s()
		b, err2 := m.Inputs[1].Const.Int64s()
		return err1 == nil && err2 == nil && slices.Equal(a, b) && len(s.Inputs[0].Shape) == len(x.Shape)
	}
	if !internal(mv) {
		return false
	}
	for _, d := range users[mv] {
		if d.Op != "Sub" || d.Inputs[0] != x || d.Inputs[1] != mv || !internal(d.Outputs[0]) {
			return false
		}
		for _, e := range users[d.Outputs[0]] {
			if e.Op != "Exp" || !internal(e.Outputs[0]) {
				return false
			}
			ev := e.Outputs[0]
			var sum *ir.Node
			for _, u := range users[ev] {
				if u.Op == "ReduceSum" && u.Inputs[0] == ev && sameAxes(u) && sum == nil {
					sum = u
				}
			}
			if sum == nil || !internal(sum.Outputs[0]) {
				return false
			}
			sv := sum.Outputs[0]
			// the reciprocals 1/s of the scaled form
			recip := map[*ir.Value]bool{}
			for _, u := range users[sv] {
				if u.Op == "RealDiv" && u.Inputs[1] == sv && u.Inputs[0] != ev && isOne(u.Inputs[0]) && internal(u.Outputs[0]) {
					recip[u.Outputs[0]] = true
				} else if u.Op != "RealDiv" || u.Inputs[0] != ev || u.Inputs[1] != sv {
					return false
				}
			}
			for _, u := range users[ev] {
				switch {
				case u == sum:
				case u.Op == "RealDiv" && u.Inputs[0] == ev && u.Inputs[1] == sv:
				case u.Op == "Mul" && u.Inputs[0] == ev && recip[u.Inputs[1]]:
				default:
					return false
				}
			}
			for r := range recip {
				for _, u := range users[r] {
					if u.Op != "Mul" || u.Inputs[0] != ev || u.Inputs[1] != r {
						return false
					}
				}
			}
		}
	}
	return true
}

// isOne reports a one-element constant equal to 1.
func isOne(v *ir.Value) bool {
	if v == nil || v.Const == nil || v.Const.NumElements() != 1 {
		return false
	}
	f, err := v.Const.Float64s()
	return err == nil && f[0] == 1
}
