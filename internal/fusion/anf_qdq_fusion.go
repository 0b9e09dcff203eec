package fusion

import (
	"fmt"

	"gkconv/internal/ir"
)

// QDQFusion (not a converter_lite pass; onnxruntime's QDQ selectors do the
// same): the QDQ form of a quantized convolution or matrix product,
//
//	DequantizeLinear(x_q) and DequantizeLinear(w_q const) [and, for Conv,
//	DequantizeLinear(b_q const int32, scale x_scale*w_scale, zero point 0)]
//	-> Conv2D or MatMul -> QuantizeLinear(y_scale, y_zero_point)
//
// becomes one integer op on the quantized tensors: QLinearConv(x_q, x_scale,
// x_zero_point, w_q, w_scale, w_zero_point, y_scale, y_zero_point, b_q) or
// QLinearMatMul, exact int32 accumulation and one requantization. x and y
// are quantized per tensor; w per tensor or per output channel (Conv axis
// 0, MatMul axis 1). Constant folding keeps these weight DequantizeLinear
// nodes for it (ir.QDQWeightKept).
func runQDQFusion(st *state) (bool, string, error) {
	g := st.g
	readers := g.Consumers()
	outs := map[*ir.Value]bool{}
	for _, o := range g.Outputs {
		outs[o] = true
	}
	dead := map[*ir.Node]bool{}
	convs, mms := 0, 0
	for _, n := range g.Nodes {
		if (n.Op != "Conv2D" && n.Op != "MatMul") || n.Body != nil || len(n.Outputs) != 1 || outs[n.Outputs[0]] {
			continue
		}
		if n.Op == "MatMul" && n.Attrs.Has(ir.AttrActivation) { // QLinearMatMul has none
			continue
		}
		rs := readers[n.Outputs[0]]
		if len(rs) != 1 || rs[0].Op != "QuantizeLinear" || rs[0].Inputs[0] != n.Outputs[0] {
			continue
		}
		q := rs[0]
		ys, yzp, ok := perTensorQ(q, 1, 2)
		if !ok || !is8bit(q.Outputs[0].DType) {
			continue
		}
		x, okx := dqOf(n.Inputs[0])
		w, okw := dqOf(n.Inputs[1])
		if !okx || !okw || !w.Inputs[0].IsConst() {
			continue
		}
		xs, xzp, ok := perTensorQ(x, 1, 2)
		if !ok || !is8bit(x.Inputs[0].DType) || !is8bit(w.Inputs[0].DType) {
			continue
		}
		wq := w.Inputs[0]
		wAxis := 0
		if n.Op == "MatMul" {
			wAxis = 1
		}
		ws, wzp, ok := channelQ(w, wq, wAxis)
		if !ok {
			continue
		}
		var inputs []*ir.Value
		if n.Op == "Conv2D" {
			if len(n.Inputs) > 3 || n.Attrs.Int(ir.AttrActivation, 0) != 0 {
				continue
			}
			inputs = []*ir.Value{x.Inputs[0], xs, xzp, wq, ws, wzp, ys, yzp}
			if b := n.Input(2); b != nil {
				bq, ok := biasQ(b, xs, ws)
				if !ok {
					continue
				}
				inputs = append(inputs, bq)
			}
		} else {
			if len(wq.Shape) != 2 || len(n.Inputs) > 2 || n.Attrs.Int("transpose_a", 0) != 0 || n.Attrs.Int("transpose_b", 0) != 0 {
				continue
			}
			inputs = []*ir.Value{x.Inputs[0], xs, xzp, wq, ws, wzp, ys, yzp}
		}
		op := map[string]string{"Conv2D": "QLinearConv", "MatMul": "QLinearMatMul"}[n.Op]
		f := &ir.Node{Name: st.edit.Unique(n.Name + "_qlinear"), Op: op, Inputs: inputs, Attrs: n.Attrs.Clone(),
			Provenance: append(append([]string(nil), n.Provenance...), q.Provenance...)}
		if op == "QLinearMatMul" {
			f.Attrs = ir.Attrs{}
		}
		delete(f.Attrs, ir.AttrActivation)
		out := q.Outputs[0]
		out.Producer, out.OutIndex = f, 0 // typed by f, then n
		f.Outputs = []*ir.Value{out}
		if err := ir.InferNode(f); err != nil {
			return false, "", fmt.Errorf("%s: %w", f.Name, err)
		}
		*n = *f // in n's place: its inputs come before it, its readers after
		out.Producer = n
		dead[q] = true
		if op == "QLinearConv" {
			convs++
		} else {
			mms++
		}
	}
	if len(dead) == 0 {
		return false, "", nil
	}
	dropNodes(g, dead)
	g.RemoveDead()
	return true, fmt.Sprintf("%d QLinearConv, %d QLinearMatMul", convs, mms), nil
}

// dqOf returns the DequantizeLinear node producing v.
func dqOf(v *ir.Value) (*ir.Node, bool) {
	if v == nil || v.Producer == nil || v.Producer.Op != "DequantizeLinear" || v.Producer.Attrs.Int("block_size", 0) != 0 {
		return nil, false
	}
	n := v.Producer
	if len(n.Inputs) < 2 || n.Inputs[1] == nil || !n.Inputs[1].IsConst() || n.Outputs[0].DType != ir.Float32 {
		return nil, false
	}
	return n, true
}

func is8bit(dt ir.DType) bool { return dt == ir.Uint8 || dt == ir.Int8 }

// perTensorQ returns the constant one-value float32 scale (input si) and
// zero point (input zi, made a zero of the quantized dtype when absent) of
// a QuantizeLinear or DequantizeLinear node.
func perTensorQ(n *ir.Node, si, zi int) (scale, zp *ir.Value, ok bool) {
	s := n.Input(si)
	if s == nil || !s.IsConst() || s.Const.DType != ir.Float32 || s.Const.NumElements() != 1 {
		return nil, nil, false
	}
	z := n.Input(zi)
	if z == nil || !z.IsConst() || z.Const.NumElements() != 1 || !is8bit(z.Const.DType) {
		return nil, nil, false
	}
	return s, z, true
}

// channelQ returns the weight DequantizeLinear's scale and zero point when
// per tensor or per channel along axis of the weight wq.
func channelQ(dq *ir.Node, wq *ir.Value, axis int) (scale, zp *ir.Value, ok bool) {
	s, z := dq.Input(1), dq.Input(2)
	if !s.IsConst() || s.Const.DType != ir.Float32 || z == nil || !z.IsConst() || z.Const.DType != wq.DType {
		return nil, nil, false
	}
	if s.Const.NumElements() == 1 && z.Const.NumElements() == 1 {
		return s, z, true
	}
	a := int(dq.Attrs.Int("axis", 1))
	if a < 0 {
		a += len(wq.Shape)
	}
	if a != axis || len(s.Shape) != 1 || s.Const.NumElements() != wq.Shape[axis] || z.Const.NumElements() != wq.Shape[axis] {
		return nil, nil, false
	}
	return s, z, true
}

// biasQ returns the int32 bias b_q of b = DequantizeLinear(b_q, scale, 0)
// when scale is exactly x_scale*w_scale (in float32) per channel.
func biasQ(b, xs, ws *ir.Value) (*ir.Value, bool) {
	if b.Producer == nil || b.Producer.Op != "DequantizeLinear" {
		return nil, false
	}
	dq := b.Producer
	bq, bs, bz := dq.Inputs[0], dq.Input(1), dq.Input(2)
	if !bq.IsConst() || bq.Const.DType != ir.Int32 || len(bq.Shape) != 1 || bs == nil || !bs.IsConst() || bs.Const.DType != ir.Float32 {
		return nil, false
	}
	if bz != nil {
		if !bz.IsConst() {
			return nil, false
		}
		for _, v := range bz.Const.I32() {
			if v != 0 {
				return nil, false
			}
		}
	}
	m := int(bq.Shape[0])
	x, w, s := xs.Const.F32()[0], ws.Const.F32(), bs.Const.F32()
	for c := 0; c < m; c++ {
		wc, sc := w[0], s[0]
		if len(w) > 1 {
			wc = w[c]
		}
		if len(s) > 1 {
			sc = s[c]
		}
		if sc != x*wc {
			return nil, false
		}
	}
	return bq, true
}
