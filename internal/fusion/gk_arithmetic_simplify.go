package fusion

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"gkconv/internal/akgcfg"
	"gkconv/internal/ir"
)

func isScalarConst(v *ir.Value) bool {
	return v != nil && v.Const != nil && v.Const.NumElements() == 1 && v.DType.IsFloat()
}

func constIs(v *ir.Value, x float64) bool {
	if !isScalarConst(v) {
		return false
	}
	f, ok := constScalar(v)
	return ok && f == x
}

// simplifyRule is one arithmetic_simplify expression; ids are MindSpore's
// (arithmetic_simplify.cc) where it has the rule, 67+ for this converter's.
type simplifyRule struct {
	id    int
	expr  string
	exact bool // result is bitwise identical, so exact_precision_mode keeps it
	op    string
	apply func(e *ir.Editor, n *ir.Node) *ir.Value
}

// operands of a commutative binary op: (x, c) with c matching pred.
func commOperand(n *ir.Node, pred func(*ir.Value) bool) (*ir.Value, *ir.Value) {
	if len(n.Inputs) != 2 {
		return nil, nil
	}
	if pred(n.Inputs[1]) {
		return n.Inputs[0], n.Inputs[1]
	}
	if pred(n.Inputs[0]) {
		return n.Inputs[1], n.Inputs[0]
	}
	return nil, nil
}

var simplifyRules = []simplifyRule{
	{1, "Add(A,0)=A", true, "Add", func(e *ir.Editor, n *ir.Node) *ir.Value {
		x, _ := commOperand(n, func(v *ir.Value) bool { return constIs(v, 0) })
		return keepsShape(x, n)
	}},
	{3, "Add(Add(A,const1),const2)=Add(A,Add(const1,const2))", false, "Add", func(e *ir.Editor, n *ir.Node) *ir.Value {
		inner, c2 := commOperand(n, isScalarConst)
		if in := prod(inner, "Add"); in != nil && e.SoleUse(inner, n) {
			if a, c1 := commOperand(in, isScalarConst); a != nil {
				return emitLike(e, n, "Add", nil, a, emitLike(e, n, "Add", nil, c1, c2))
			}
		}
		return nil
	}},
	{7, "Sub(A,0)=A", true, "Sub", func(e *ir.Editor, n *ir.Node) *ir.Value {
		if constIs(n.Input(1), 0) {
			return keepsShape(n.Inputs[0], n)
		}
		return nil
	}},
	{8, "Sub(A,const1)=Add(A,Neg(const1))", true, "Sub", func(e *ir.Editor, n *ir.Node) *ir.Value {
		if isScalarConst(n.Input(1)) && !isScalarConst(n.Input(0)) {
			return emitLike(e, n, "Add", nil, n.Inputs[0], emitLike(e, n, "Neg", nil, n.Inputs[1]))
		}
		return nil
	}},
	{11, "Log(Exp(A))=A", false, "Log", func(e *ir.Editor, n *ir.Node) *ir.Value {
		if e := prod(n.Input(0), "Exp"); e != nil {
			return keepsShape(e.Inputs[0], n)
		}
		return nil
	}},
	{15, "Pow(A,1)=A", true, "Pow", func(e *ir.Editor, n *ir.Node) *ir.Value {
		if constIs(n.Input(1), 1) {
			return keepsShape(n.Inputs[0], n)
		}
		return nil
	}},
	{17, "Pow(A,2)=Mul(A,A)", true, "Pow", func(e *ir.Editor, n *ir.Node) *ir.Value {
		if constIs(n.Input(1), 2) {
			return emitLike(e, n, "Mul", nil, n.Inputs[0], n.Inputs[0])
		}
		return nil
	}},
	{18, "Pow(A,-1)=Reciprocal(A)", true, "Pow", func(e *ir.Editor, n *ir.Node) *ir.Value {
		if constIs(n.Input(1), -1) {
			return emitLike(e, n, "Reciprocal", nil, n.Inputs[0])
		}
		return nil
	}},
	{23, "Select(A,B,B)=B", true, "Select", func(e *ir.Editor, n *ir.Node) *ir.Value {
		if len(n.Inputs) == 3 && n.Inputs[1] == n.Inputs[2] {
			return keepsShape(n.Inputs[1], n)
		}
		return nil
	}},
	{24, "Neg(Neg(A))=A", true, "Neg", func(e *ir.Editor, n *ir.Node) *ir.Value {
		if in := prod(n.Input(0), "Neg"); in != nil {
			return keepsShape(in.Inputs[0], n)
		}
		return nil
	}},
	{26, "Mul(Mul(A,const1),const2)=Mul(A,Mul(const1,const2))", false, "Mul", func(e *ir.Editor, n *ir.Node) *ir.Value {
		inner, c2 := commOperand(n, isScalarConst)
		if in := prod(inner, "Mul"); in != nil && e.SoleUse(inner, n) {
			if a, c1 := commOperand(in, isScalarConst); a != nil {
				return emitLike(e, n, "Mul", nil, a, emitLike(e, n, "Mul", nil, c1, c2))
			}
		}
		return nil
	}},
	{27, "Mul(Exp(A),Exp(B))=Exp(Add(A,B))", false, "Mul", func(e *ir.Editor, n *ir.Node) *ir.Value {
		a, b := prod(n.Input(0), "Exp"), prod(n.Input(1), "Exp")
		if a != nil && b != nil && e.SoleUse(n.Inputs[0], n) && e.SoleUse(n.Inputs[1], n) {
			return emitLike(e, n, "Exp", nil, emitLike(e, n, "Add", nil, a.Inputs[0], b.Inputs[0]))
		}
		return nil
	}},
	{30, "Mul(Sqrt(A),Sqrt(A))=A", false, "Mul", func(e *ir.Editor, n *ir.Node) *ir.Value {
		if s := prod(n.Input(0), "Sqrt"); s != nil && n.Inputs[0] == n.Inputs[1] {
			return keepsShape(s.Inputs[0], n)
		}
		return nil
	}},
	{34, "Mul(Rsqrt(A),Rsqrt(A))=Reciprocal(A)", false, "Mul", func(e *ir.Editor, n *ir.Node) *ir.Value {
		if s := prod(n.Input(0), "Rsqrt"); s != nil && n.Inputs[0] == n.Inputs[1] && e.SoleUse(n.Inputs[0], n) {
			return emitLike(e, n, "Reciprocal", nil, s.Inputs[0])
		}
		return nil
	}},
	{43, "RealDiv(A,1)=A", true, "RealDiv", func(e *ir.Editor, n *ir.Node) *ir.Value {
		if constIs(n.Input(1), 1) {
			return keepsShape(n.Inputs[0], n)
		}
		return nil
	}},
	{48, "RealDiv(A,Sqrt(B))=Mul(A,Rsqrt(B))", false, "RealDiv", func(e *ir.Editor, n *ir.Node) *ir.Value {
		if s := prod(n.Input(1), "Sqrt"); s != nil && e.SoleUse(n.Inputs[1], n) {
			return emitLike(e, n, "Mul", nil, n.Inputs[0], emitLike(e, n, "Rsqrt", nil, s.Inputs[0]))
		}
		return nil
	}},
	{50, "RealDiv(A,const1)=Mul(A,Reciprocal(const1))", false, "RealDiv", func(e *ir.Editor, n *ir.Node) *ir.Value {
		if isScalarConst(n.Input(1)) && !isScalarConst(n.Input(0)) {
			return emitLike(e, n, "Mul", nil, n.Inputs[0], emitLike(e, n, "Reciprocal", nil, n.Inputs[1]))
		}
		return nil
	}},
	{60, "ReduceSum(Mul(A,const1),B)=Mul(ReduceSum(A,B),const1)", false, "ReduceSum", func(e *ir.Editor, n *ir.Node) *ir.Value {
		if m := prod(n.Input(0), "Mul"); m != nil && e.SoleUse(n.Inputs[0], n) {
			if a, c := commOperand(m, isScalarConst); a != nil {
				return emitLike(e, n, "Mul", nil, emitLike(e, n, "ReduceSum", n.Attrs, a, n.Input(1)), c)
			}
		}
		return nil
	}},
	{66, "Reshape(Reshape(A,B),C)=Reshape(A,C)", true, "Reshape", func(e *ir.Editor, n *ir.Node) *ir.Value {
		if in := prod(n.Input(0), "Reshape"); in != nil && e.SoleUse(n.Inputs[0], n) {
			return emitLike(e, n, "Reshape", n.Attrs, in.Inputs[0], n.Inputs[1])
		}
		return nil
	}},
	{67, "Mul(A,1)=A", true, "Mul", func(e *ir.Editor, n *ir.Node) *ir.Value {
		x, _ := commOperand(n, func(v *ir.Value) bool { return constIs(v, 1) })
		return keepsShape(x, n)
	}},
	{68, "Transpose(Transpose(A,B),C)=Transpose(A,D)", true, "Transpose", func(e *ir.Editor, n *ir.Node) *ir.Value {
		in := prod(n.Input(0), "Transpose")
		if in == nil || !e.SoleUse(n.Inputs[0], n) {
			return nil
		}
		p1, p2 := in.Attrs.Ints("perm", nil), n.Attrs.Ints("perm", nil)
		if len(p1) == 0 || len(p1) != len(p2) {
			return nil
		}
		comp := make([]int64, len(p2))
		identity := true
		for i, p := range p2 {
			if p < 0 || int(p) >= len(p1) {
				return nil
			}
			comp[i] = p1[p]
			identity = identity && comp[i] == int64(i)
		}
		if identity {
			return keepsShape(in.Inputs[0], n)
		}
		return emitLike(e, n, "Transpose", ir.Attrs{"perm": ir.IntsAttr(comp...)}, in.Inputs[0])
	}},
}

// activeRules applies enable_simplify_exprs_only / disable_simplify_exprs
// and exact_precision_mode.
func activeRules(f *akgcfg.Flags) map[string][]simplifyRule {
	out := map[string][]simplifyRule{}
	for _, r := range simplifyRules {
		id := strconv.Itoa(r.id)
		if len(f.EnableSimplifyExprsOnly) > 0 {
			if !slices.Contains(f.EnableSimplifyExprsOnly, id) {
				continue
			}
		} else if slices.Contains(f.DisableSimplifyExprs, id) {
			continue
		}
		if f.ExactPrecisionMode && !r.exact {
			continue
		}
		out[r.op] = append(out[r.op], r)
	}
	return out
}

// foldable ops give the same result folded in float64 and rounded as
// computed in float32/float16 (double rounding is innocuous for these).
var foldable = map[string]bool{"Neg": true, "Add": true, "Sub": true, "Mul": true, "RealDiv": true, "Reciprocal": true, "Sqrt": true}

// fold evaluates n when all its inputs are scalar float constants.
func fold(n *ir.Node) (*ir.Tensor, bool) {
	if !foldable[n.Op] || len(n.Outputs) != 1 || !n.Outputs[0].DType.IsFloat() || ir.NumElements(n.Outputs[0].Shape) != 1 {
		return nil, false
	}
	var xs []float64
	for _, in := range n.Inputs {
		f, ok := constScalar(in)
		if !ok || !isScalarConst(in) {
			return nil, false
		}
		xs = append(xs, f)
	}
	var y float64
	switch {
	case n.Op == "Neg" && len(xs) == 1:
		y = -xs[0]
	case n.Op == "Reciprocal" && len(xs) == 1:
		y = 1 / xs[0]
	case n.Op == "Sqrt" && len(xs) == 1:
		y = math.Sqrt(xs[0])
	case len(xs) != 2:
		return nil, false
	case n.Op == "Add":
		y = xs[0] + xs[1]
	case n.Op == "Sub":
		y = xs[0] - xs[1]
	case n.Op == "Mul":
		y = xs[0] * xs[1]
	case n.Op == "RealDiv":
		y = xs[0] / xs[1]
	}
	t := ir.NewTensor(n.Outputs[0].DType, n.Outputs[0].Shape)
	t.PutFloat(0, y)
	return t, true
}

// simplifyBody runs constant folding and the rules to a fixpoint; it
// returns the number of rewrites.
func simplifyBody(b *ir.Graph, rules map[string][]simplifyRule) int {
	e := bodyEditor(b)
	total := 0
	for iter := 0; iter < 1000; iter++ {
		changed := false
		for _, n := range b.Nodes {
			if t, ok := fold(n); ok {
				b.ReplaceUses(n.Outputs[0], e.Const(n.Outputs[0].Name+"_folded", t))
				changed = true
				break
			}
		}
		if !changed {
			for i := len(b.Nodes) - 1; i >= 0 && !changed; i-- {
				n := b.Nodes[i]
				for _, rule := range rules[n.Op] {
					if v := rule.apply(e, n); v != nil && keepsShape(v, n) != nil {
						b.ReplaceUses(n.Outputs[0], v)
						changed = true
						break
					}
				}
			}
		}
		if !changed {
			break
		}
		total++
		_ = b.TopoSort()
		b.RemoveDead()
		e.RefreshUses()
	}
	if total > 0 {
		materializeOutputs(e)
	}
	return total
}

// materializeOutputs: a body output that became an input or constant is
// recomputed by a node (Reshape/BroadcastTo), as ReorganizeEmptyGraph.
func materializeOutputs(e *ir.Editor) {
	for i, o := range e.G.Outputs {
		if o.Producer != nil {
			continue
		}
		like := &ir.Node{Name: e.G.Name + "/out" + strconv.Itoa(i)}
		shape := e.Const("shape", ir.Int64Tensor([]int64{int64(len(o.Shape))}, o.Shape...))
		op := "Reshape"
		if o.Const != nil {
			op = "BroadcastTo"
		}
		if v := emitLike(e, like, op, nil, o, shape); v != nil {
			e.G.Outputs[i] = v
		}
	}
}

// runArithmeticSimplify is arithmetic_simplify over every kernel body.
func runArithmeticSimplify(st *state) (bool, string, error) {
	rules := activeRules(st.flags)
	total := 0
	for _, k := range kernels(st.g) {
		if c := simplifyBody(k.Body, rules); c > 0 {
			total += c
			pruneKernelInputs(k)
		}
	}
	if total == 0 {
		return false, "", nil
	}
	return true, fmt.Sprintf("%d rewrites", total), nil
}
