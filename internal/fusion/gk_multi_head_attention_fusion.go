package fusion

import (
	"fmt"
	"math"
	"slices"

	"gkconv/internal/ir"
)

// MultiHeadAttentionFusion (preprocess, level 2, CPU; converter_lite's
// tools/optimizer/fusion/multi_head_attention_fusion.cc names the pass, the
// pattern here is what PyTorch's ONNX exporter writes for scaled dot-product
// attention):
//
//	S = MatMul(Q', K^T)   Q' = Q, Q*c or Q/c; K^T a last-two-axes Transpose or transpose_b
//	S' = S, S*c or S/c
//	S'' = S', Add(S', M) or Select(C, -inf, S')   M, C constant
//	Y = MatMul(Softmax(S'', axis=-1), V)
//
// becomes one Attention node (ONNX Attention semantics, runtime kernel in
// internal/runtime/ops/nn/attention.go) on Q, K, V. Only forms with the
// same values are taken: scalar float32 scale constants, Softmax over the
// last axis, Q/K/V with equal batch dims (no broadcasting), a mask that
// broadcasts into the scores without enlarging them and leaves every query
// at least one key (Attention gives a fully masked row zeros, Softmax NaN),
// every intermediate read by the next op only. Rank-3 operands [N, S, D]
// are one head per batch entry (q_num_heads = kv_num_heads = 1).
//
// Head split and merge: when Q, K and V are each Transpose(R, swap of the
// S and H axes) of R = [B, S, H, D] (or [S, H, D]) and Y is read only by
// the inverse Transpose, the node reads [B, S, H*D] directly (ONNX
// Attention's 3-D form, through a Reshape, an alias) and that Transpose
// becomes a Reshape: the same elements, four copies fewer.
func runMultiHeadAttentionFusion(st *state) (bool, string, error) {
	g := st.g
	m := &mhaMatcher{users: g.Consumers(), outs: graphOutputs(g)}
	before := map[*ir.Node][]*ir.Node{}
	removed := map[*ir.Node]bool{}
	fused, folded := 0, 0
	for _, pv := range g.Nodes {
		if removed[pv] {
			continue
		}
		p, ok := m.match(pv)
		if !ok {
			continue
		}
		nodes, err := st.buildAttention(p, m)
		if err != nil {
			return false, "", err
		}
		before[pv] = nodes
		for _, n := range p.absorbed {
			removed[n] = true
		}
		fused++
		if p.fold != nil {
			folded++
		}
	}
	if fused == 0 {
		return false, "no MatMul-Softmax-MatMul attention pattern", nil
	}
	var out []*ir.Node
	for _, n := range g.Nodes {
		out = append(out, before[n]...)
		if !removed[n] {
			out = append(out, n)
		}
	}
	g.Nodes = out
	g.RemoveDead()
	return true, fmt.Sprintf("%d attention patterns -> Attention (%d with head split/merge folded)", fused, folded), nil
}

type mhaMatcher struct {
	users map[*ir.Value][]*ir.Node
	outs  map[*ir.Value]bool
}

// sole: v is read by exactly one node and is no graph output.
func (m *mhaMatcher) sole(v *ir.Value) bool { return v != nil && !m.outs[v] && len(m.users[v]) == 1 }

// mhaPattern is one matched attention.
type mhaPattern struct {
	q, k, v  *ir.Value
	y        *ir.Value // the PV MatMul's output, kept as the Attention output
	scale    float64
	mask     *ir.Tensor // bool (true = attend) or float32 additive; nil: none
	absorbed []*ir.Node
	fold     *mhaFold
}

// mhaFold is the head split/merge of Q, K, V and Y (see the pass comment).
type mhaFold struct {
	src   [3]*ir.Value // Q, K, V head-split sources R
	merge *ir.Node     // the Transpose after Y
	b     int64
	hq    int64
	hkv   int64
}

func (m *mhaMatcher) match(pv *ir.Node) (*mhaPattern, bool) {
	if !plainMatMul(pv) || pv.Attrs.Int("transpose_b", 0) != 0 {
		return nil, false
	}
	p := &mhaPattern{y: pv.Outputs[0], v: pv.Inputs[1], scale: 1, absorbed: []*ir.Node{pv}}
	sm := pv.Inputs[0].Producer
	if sm == nil || sm.Op != "Softmax" || !m.sole(pv.Inputs[0]) || len(sm.Inputs) != 1 {
		return nil, false
	}
	s := sm.Inputs[0]
	if r := int64(len(s.Shape)); !s.ShapeKnown() || (r != 3 && r != 4) || s.DType != ir.Float32 {
		return nil, false
	}
	if ax := sm.Attrs.Int("axis", -1); ax != -1 && ax != int64(len(s.Shape)-1) {
		return nil, false
	}
	p.absorbed = append(p.absorbed, sm)
	scores := s.Shape
	// Mask: Add(S', M) or Select(C, -inf, S').
	if n := s.Producer; n != nil && m.sole(s) && (n.Op == "Add" || n.Op == "Select") {
		if mask, x, ok := maskOf(n, scores); ok {
			p.mask, s = mask, x
			p.absorbed = append(p.absorbed, n)
		}
	}
	if n := s.Producer; n != nil && m.sole(s) {
		if c, x, ok := scaleOf(n); ok {
			p.scale *= c
			s = x
			p.absorbed = append(p.absorbed, n)
		}
	}
	qk := s.Producer
	if qk == nil || !m.sole(s) || !plainMatMul(qk) {
		return nil, false
	}
	p.absorbed = append(p.absorbed, qk)
	p.q, p.k = qk.Inputs[0], qk.Inputs[1]
	if qk.Attrs.Int("transpose_b", 0) == 0 {
		t := p.k.Producer
		r := len(p.k.Shape)
		if t == nil || t.Op != "Transpose" || !m.sole(p.k) || r < 2 ||
			!slices.Equal(t.Attrs.Ints("perm", nil), swapLast(r)) {
			return nil, false
		}
		p.k = t.Inputs[0]
		p.absorbed = append(p.absorbed, t)
	}
	if n := p.q.Producer; n != nil && m.sole(p.q) {
		if c, x, ok := scaleOf(n); ok {
			p.scale *= c
			p.q = x
			p.absorbed = append(p.absorbed, n)
		}
	}
	if !sameBatch(p.q, p.k, p.v, p.y) || p.q.Shape[len(scores)-1] != p.k.Shape[len(scores)-1] {
		return nil, false
	}
	if p.mask != nil && len(scores) == 3 && len(p.mask.Shape) == 3 && p.mask.Shape[0] != 1 {
		return nil, false // the mask's batch axis would be Attention's head axis
	}
	p.fold = m.headFold(p)
	return p, true
}

// plainMatMul: a two-input float32 MatMul without transpose_a or a fused
// activation.
func plainMatMul(n *ir.Node) bool {
	return n.Op == "MatMul" && len(n.Inputs) == 2 && len(n.Outputs) == 1 && n.Body == nil &&
		n.Attrs.Int("transpose_a", 0) == 0 && !n.Attrs.Has(ir.AttrActivation) && n.Outputs[0].DType == ir.Float32
}

// swapLast is the perm of rank r that swaps the last two axes.
func swapLast(r int) []int64 {
	p := make([]int64, r)
	for i := range p {
		p[i] = int64(i)
	}
	p[r-2], p[r-1] = p[r-1], p[r-2]
	return p
}

// sameBatch: Q, K, V and Y have known shapes of one rank (3 or 4) with
// equal batch dims and consistent sequence and head sizes.
func sameBatch(q, k, v, y *ir.Value) bool {
	for _, x := range []*ir.Value{q, k, v, y} {
		if !x.ShapeKnown() || len(x.Shape) != len(q.Shape) || x.DType != ir.Float32 {
			return false
		}
	}
	r := len(q.Shape)
	if r != 3 && r != 4 {
		return false
	}
	for _, x := range []*ir.Value{k, v, y} {
		if !slices.Equal(x.Shape[:r-2], q.Shape[:r-2]) {
			return false
		}
	}
	return k.Shape[r-2] == v.Shape[r-2] && y.Shape[r-2] == q.Shape[r-2] && y.Shape[r-1] == v.Shape[r-1]
}

// scaleOf matches x*c, c*x or x/c with c a float32 scalar constant.
func scaleOf(n *ir.Node) (c float64, x *ir.Value, ok bool) {
	if len(n.Inputs) != 2 || len(n.Outputs) != 1 || (n.Op != "Mul" && n.Op != "RealDiv") {
		return 0, nil, false
	}
	for i := 0; i < 2; i++ {
		if n.Op == "RealDiv" && i == 0 {
			continue
		}
		k := n.Inputs[i]
		if !k.IsConst() || k.DType != ir.Float32 || k.Const.NumElements() != 1 || len(k.Shape) > 0 && !allOnes(k.Shape) {
			continue
		}
		f := float64(k.Const.F32()[0])
		x = n.Inputs[1-i]
		if !slices.Equal(n.Outputs[0].Shape, x.Shape) || f == 0 || math.IsInf(f, 0) || math.IsNaN(f) {
			return 0, nil, false
		}
		if n.Op == "RealDiv" {
			return 1 / f, x, true
		}
		return f, x, true
	}
	return 0, nil, false
}

func allOnes(s []int64) bool {
	for _, d := range s {
		if d != 1 {
			return false
		}
	}
	return true
}

// maskOf matches Add(S, M) with M a float32 constant, or Select(C, -inf, S)
// with C a bool constant, where the mask broadcasts into scores (its dims
// right-aligned are 1 or the scores' dim) and leaves every row a key. It
// returns the Attention mask (bool: true = attend) and S.
func maskOf(n *ir.Node, scores []int64) (*ir.Tensor, *ir.Value, bool) {
	if len(n.Outputs) != 1 || !slices.Equal(n.Outputs[0].Shape, scores) {
		return nil, nil, false
	}
	var c *ir.Value
	var s *ir.Value
	switch {
	case n.Op == "Add" && len(n.Inputs) == 2:
		for i := 0; i < 2; i++ {
			if n.Inputs[1-i].IsConst() && slices.Equal(n.Inputs[i].Shape, scores) {
				s, c = n.Inputs[i], n.Inputs[1-i]
			}
		}
		if c == nil || c.DType != ir.Float32 {
			return nil, nil, false
		}
	case n.Op == "Select" && len(n.Inputs) == 3:
		fill := n.Inputs[1]
		if !fill.IsConst() || fill.DType != ir.Float32 || fill.Const.NumElements() != 1 ||
			!math.IsInf(float64(fill.Const.F32()[0]), -1) || !n.Inputs[0].IsConst() || n.Inputs[0].DType != ir.Bool ||
			!slices.Equal(n.Inputs[2].Shape, scores) {
			return nil, nil, false
		}
		s, c = n.Inputs[2], n.Inputs[0]
	default:
		return nil, nil, false
	}
	ms := c.Const.Shape
	if len(ms) > len(scores) || len(ms) == 0 {
		return nil, nil, false
	}
	for i, d := range ms {
		if sd := scores[len(scores)-len(ms)+i]; d != 1 && d != sd {
			return nil, nil, false
		}
	}
	keys := ms[len(ms)-1]
	if keys != scores[len(scores)-1] {
		return nil, nil, false // Attention pads a shorter mask; Add would broadcast it
	}
	var t *ir.Tensor
	if n.Op == "Select" { // C true = masked out: Attention's mask is its negation
		t = ir.NewTensor(ir.Bool, ms)
		for i, b := range c.Const.Data {
			if b == 0 {
				t.Data[i] = 1
			}
		}
	} else {
		t = c.Const
	}
	for r := int64(0); r*keys < int64(len(t.Data))/int64(t.DType.Size()); r++ {
		if !rowAttends(t, r*keys, keys) {
			return nil, nil, false
		}
	}
	return t, s, true
}

// rowAttends: the mask row [off, off+n) lets at least one key through.
func rowAttends(t *ir.Tensor, off, n int64) bool {
	for j := off; j < off+n; j++ {
		if t.DType == ir.Bool && t.Data[j] != 0 || t.DType == ir.Float32 && !math.IsInf(float64(t.F32()[j]), -1) {
			return true
		}
	}
	return false
}

// headFold finds the head split of Q, K, V and the merge of Y.
func (m *mhaMatcher) headFold(p *mhaPattern) *mhaFold {
	r := len(p.q.Shape)
	f := &mhaFold{}
	for i, x := range []*ir.Value{p.q, p.k, p.v} {
		t := x.Producer
		if t == nil || t.Op != "Transpose" || !m.sole(x) || !slices.Equal(t.Attrs.Ints("perm", nil), swapHeads(r)) {
			return nil
		}
		f.src[i] = t.Inputs[0]
	}
	ys := m.users[p.y]
	if !m.sole(p.y) || ys[0].Op != "Transpose" || !slices.Equal(ys[0].Attrs.Ints("perm", nil), swapHeads(r)) {
		return nil
	}
	f.merge = ys[0]
	f.b, f.hq, f.hkv = 1, p.q.Shape[r-3], p.k.Shape[r-3]
	if r == 4 {
		f.b = p.q.Shape[0]
	}
	if p.mask != nil && r == 3 && len(p.mask.Shape) == 3 {
		return nil
	}
	return f
}

// swapHeads is the perm of rank r that swaps the sequence and head axes
// ([B, S, H, D] <-> [B, H, S, D]; rank 3: [S, H, D] <-> [H, S, D]).
func swapHeads(r int) []int64 {
	if r == 4 {
		return []int64{0, 2, 1, 3}
	}
	return []int64{1, 0, 2}
}

// buildAttention makes the Attention node of p (and, with a head fold, the
// Reshapes around it); it returns the nodes to insert before p's PV MatMul.
func (st *state) buildAttention(p *mhaPattern, m *mhaMatcher) ([]*ir.Node, error) {
	pv := p.absorbed[0]
	attrs := ir.Attrs{"scale": ir.FloatAttr(p.scale)}
	ins := []*ir.Value{p.q, p.k, p.v}
	var nodes []*ir.Node
	if f := p.fold; f != nil {
		for i, src := range f.src {
			d := src.Shape[len(src.Shape)-1] * src.Shape[len(src.Shape)-2]
			want := []int64{f.b, src.Shape[len(src.Shape)-3], d}
			if r := src.Producer; r != nil && r.Op == "Reshape" && slices.Equal(r.Inputs[0].Shape, want) {
				ins[i] = r.Inputs[0]
				continue
			}
			n, err := st.reshape(pv.Name+"/heads", src, want)
			if err != nil {
				return nil, err
			}
			ins[i] = n.Outputs[0]
			nodes = append(nodes, n)
		}
		attrs["q_num_heads"], attrs["kv_num_heads"] = ir.IntAttr(f.hq), ir.IntAttr(f.hkv)
	} else if len(p.q.Shape) == 3 {
		attrs["q_num_heads"], attrs["kv_num_heads"] = ir.IntAttr(1), ir.IntAttr(1)
	}
	if p.mask != nil {
		ins = append(ins, st.edit.Const(pv.Name+"/attn_mask", p.mask))
	}
	var prov []string
	for _, n := range p.absorbed {
		prov = append(prov, n.Provenance...)
	}
	an := ir.NewNode(st.edit.Unique(pv.Name+"/attention"), "Attention", ins, attrs)
	an.Provenance = prov
	y := p.y
	if f := p.fold; f != nil {
		y = &ir.Value{Name: st.edit.Unique(pv.Name + "/attention_out")}
		// The merge Transpose becomes a Reshape of the 3-D output.
		mg := f.merge
		shape := st.edit.Const(mg.Name+"_shape", ir.Int64Tensor([]int64{int64(len(mg.Outputs[0].Shape))}, mg.Outputs[0].Shape...))
		mg.Op, mg.Inputs, mg.Attrs = "Reshape", []*ir.Value{y, shape}, ir.Attrs{}
	}
	y.Producer, y.OutIndex = an, 0
	an.Outputs = []*ir.Value{y}
	if err := ir.InferNode(an); err != nil {
		return nil, fmt.Errorf("%s: %w", an.Name, err)
	}
	if p.fold != nil {
		if err := ir.InferNode(p.fold.merge); err != nil {
			return nil, err
		}
	}
	return append(nodes, an), nil
}

// reshape makes a Reshape of x to shape (not yet in the graph).
func (st *state) reshape(base string, x *ir.Value, shape []int64) (*ir.Node, error) {
	s := st.edit.Const(base+"_shape", ir.Int64Tensor([]int64{int64(len(shape))}, shape...))
	n := ir.NewNode(st.edit.Unique(base), "Reshape", []*ir.Value{x, s}, nil, st.edit.Unique(base))
	if x.Producer != nil {
		n.Provenance = x.Producer.Provenance
	}
	return n, ir.InferNode(n)
}
