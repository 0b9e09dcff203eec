package ir

import "fmt"

// Attention is ONNX Attention (opset 23/24): scaled dot-product attention
// with multi-head, grouped-query and multi-query variants.
//
// Inputs: Q, K, V, attn_mask?, past_key?, past_value?, nonpad_kv_seqlen?.
// Outputs: Y, present_key?, present_value?, qk_matmul_output?.
// Attributes (ONNX's): is_causal, kv_num_heads, q_num_heads,
// qk_matmul_output_mode, scale, softcap, softmax_precision.

// AttentionGeom is the geometry of one Attention node: Q, K and V either
// 4-D [B, H, S, D] or 3-D [B, S, H*D] (heads from q_num_heads and
// kv_num_heads). Dims may be unknown (< 0) when shapes are not known yet.
type AttentionGeom struct {
	Rank3      bool
	B, HQ, HKV int64
	SQ, SKV    int64 // query and new key/value sequence lengths
	SPast      int64 // past_key/past_value sequence length (0 without them)
	D, DV      int64 // head sizes of Q/K and of V
}

// STotal is the key/value sequence length after past and new keys are
// concatenated.
func (g *AttentionGeom) STotal() int64 {
	if g.SKV < 0 || g.SPast < 0 {
		return unknownDim
	}
	return g.SKV + g.SPast
}

// AttentionGeometry reads the geometry of Attention node n from its input
// shapes and attributes, checking that they agree.
func AttentionGeometry(n *Node) (*AttentionGeom, error) {
	q, k, v := shapeOf(n.Input(0)), shapeOf(n.Input(1)), shapeOf(n.Input(2))
	if q == nil || k == nil || v == nil {
		return nil, nil
	}
	if len(q) != len(k) || len(q) != len(v) || (len(q) != 3 && len(q) != 4) {
		return nil, fmt.Errorf("Q %v, K %v and V %v must all be 3-D or all 4-D", q, k, v)
	}
	g := &AttentionGeom{Rank3: len(q) == 3}
	hq, hkv := n.Attrs.Int("q_num_heads", 0), n.Attrs.Int("kv_num_heads", 0)
	if g.Rank3 {
		if hq <= 0 || hkv <= 0 {
			return nil, fmt.Errorf("3-D Q/K/V need positive q_num_heads and kv_num_heads, got %d and %d", hq, hkv)
		}
		g.B, g.SQ, g.SKV, g.HQ, g.HKV = q[0], q[1], k[1], hq, hkv
		var err error
		if g.D, err = headSize(q[2], hq, "Q"); err != nil {
			return nil, err
		}
		var dk int64
		if dk, err = headSize(k[2], hkv, "K"); err != nil {
			return nil, err
		}
		if g.D >= 0 && dk >= 0 && g.D != dk {
			return nil, fmt.Errorf("Q head size %d differs from K head size %d", g.D, dk)
		}
		if g.D < 0 {
			g.D = dk
		}
		if g.DV, err = headSize(v[2], hkv, "V"); err != nil {
			return nil, err
		}
		if err := sameDims("batch", q[0], k[0], v[0]); err != nil {
			return nil, err
		}
		if err := sameDims("K/V sequence", k[1], v[1]); err != nil {
			return nil, err
		}
	} else {
		g.B, g.HQ, g.SQ, g.D = q[0], q[1], q[2], q[3]
		g.HKV, g.SKV, g.DV = k[1], k[2], v[3]
		for _, c := range []struct {
			what string
			ds   []int64
		}{{"batch", []int64{q[0], k[0], v[0]}}, {"K/V heads", []int64{k[1], v[1]}}, {"K/V sequence", []int64{k[2], v[2]}}, {"Q/K head size", []int64{q[3], k[3]}}} {
			if err := sameDims(c.what, c.ds...); err != nil {
				return nil, err
			}
		}
		if hq > 0 && g.HQ >= 0 && hq != g.HQ {
			return nil, fmt.Errorf("q_num_heads %d differs from Q's %d heads", hq, g.HQ)
		}
		if hkv > 0 && g.HKV >= 0 && hkv != g.HKV {
			return nil, fmt.Errorf("kv_num_heads %d differs from K's %d heads", hkv, g.HKV)
		}
	}
	if g.HQ > 0 && g.HKV > 0 && g.HQ%g.HKV != 0 {
		return nil, fmt.Errorf("q_num_heads %d is not a multiple of kv_num_heads %d", g.HQ, g.HKV)
	}
	pk, pv := n.Input(4), n.Input(5)
	if (pk == nil) != (pv == nil) {
		return nil, fmt.Errorf("past_key and past_value must be given together")
	}
	if pk != nil {
		ks, vs := shapeOf(pk), shapeOf(pv)
		if ks == nil || vs == nil {
			g.SPast = unknownDim
		} else {
			if len(ks) != 4 || len(vs) != 4 {
				return nil, fmt.Errorf("past_key %v and past_value %v must be 4-D", ks, vs)
			}
			for _, c := range []struct {
				what string
				ds   []int64
			}{{"past batch", []int64{g.B, ks[0], vs[0]}}, {"past heads", []int64{g.HKV, ks[1], vs[1]}},
				{"past sequence", []int64{ks[2], vs[2]}}, {"past_key head size", []int64{g.D, ks[3]}}, {"past_value head size", []int64{g.DV, vs[3]}}} {
				if err := sameDims(c.what, c.ds...); err != nil {
					return nil, err
				}
			}
			g.SPast = ks[2]
		}
	}
	return g, nil
}

// headSize is hidden/heads, checking divisibility.
func headSize(hidden, heads int64, what string) (int64, error) {
	if hidden < 0 {
		return unknownDim, nil
	}
	if hidden%heads != 0 {
		return 0, fmt.Errorf("%s hidden size %d is not a multiple of %d heads", what, hidden, heads)
	}
	return hidden / heads, nil
}

// sameDims checks that the known dims among ds are equal.
func sameDims(what string, ds ...int64) error {
	known := int64(unknownDim)
	for _, d := range ds {
		if d < 0 {
			continue
		}
		if known >= 0 && d != known {
			return fmt.Errorf("%s dims differ: %v", what, ds)
		}
		known = d
	}
	return nil
}

// inferAttention types Y, present_key, present_value and qk_matmul_output
// (omitted ones too: the MindIR tuple abstract needs every element typed).
func inferAttention(n *Node) error {
	if err := sameDType(n, 0, 1, 2); err != nil {
		return err
	}
	dt := firstDType(n.Inputs[0], n.Inputs[1], n.Inputs[2])
	if dt != Undefined && dt != Float32 && dt != Float16 && dt != BFloat16 {
		return fmt.Errorf("Q/K/V dtype %s: Attention takes float32, float16 or bfloat16", dt)
	}
	if m := n.Input(3); m != nil && m.DType != Undefined && m.DType != Bool && dt != Undefined && m.DType != dt {
		return fmt.Errorf("%s has dtype %s; attn_mask must be bool or %s", inputDesc(n, 3), m.DType, dt)
	}
	for _, i := range []int{4, 5} {
		if p := n.Input(i); p != nil && p.DType != Undefined && dt != Undefined && p.DType != dt {
			return fmt.Errorf("%s has dtype %s, want %s", inputDesc(n, i), p.DType, dt)
		}
	}
	if s := n.Input(6); s != nil && s.DType != Undefined && s.DType != Int64 {
		return fmt.Errorf("%s (nonpad_kv_seqlen) has dtype %s, want int64", inputDesc(n, 6), s.DType)
	}
	if m := n.Attrs.Int("qk_matmul_output_mode", 0); m < 0 || m > 3 {
		return fmt.Errorf("qk_matmul_output_mode %d is not 0..3", m)
	}
	g, err := AttentionGeometry(n)
	if err != nil {
		return err
	}
	set := func(i int, shape []int64) { setOutput(n, i, dt, shape) }
	if g == nil {
		set(0, nil)
		for i := 1; i < 4; i++ {
			set(i, unknownShape(4))
		}
		return nil
	}
	st := g.STotal()
	if err := checkAttnMask(n, g, st); err != nil {
		return err
	}
	if s := n.Input(6); s != nil && s.Shape != nil {
		if len(s.Shape) != 1 || (s.Shape[0] >= 0 && g.B >= 0 && s.Shape[0] != g.B) {
			return fmt.Errorf("%s (nonpad_kv_seqlen) %v must be [%d]", inputDesc(n, 6), s.Shape, g.B)
		}
	}
	if g.Rank3 {
		set(0, []int64{g.B, g.SQ, mulDims(g.HQ, g.DV)})
	} else {
		set(0, []int64{g.B, g.HQ, g.SQ, g.DV})
	}
	set(1, []int64{g.B, g.HKV, st, g.D})
	set(2, []int64{g.B, g.HKV, st, g.DV})
	set(3, []int64{g.B, g.HQ, g.SQ, st})
	return nil
}

// checkAttnMask checks that attn_mask broadcasts to [B, HQ, SQ, n] with
// n <= the total key length (a shorter mask is padded as masked out).
func checkAttnMask(n *Node, g *AttentionGeom, st int64) error {
	m := n.Input(3)
	if m == nil || m.Shape == nil {
		return nil
	}
	s := m.Shape
	if len(s) < 1 || len(s) > 4 {
		return fmt.Errorf("%s %v: attn_mask must have rank 1 to 4", inputDesc(n, 3), s)
	}
	if last := s[len(s)-1]; last >= 0 && st >= 0 && last > st {
		return fmt.Errorf("%s %v: last dim %d exceeds the %d keys", inputDesc(n, 3), s, last, st)
	}
	want := []int64{g.B, g.HQ, g.SQ}
	for i := len(s) - 2; i >= 0; i-- {
		w := want[len(want)-(len(s)-1-i)]
		if d := s[i]; d >= 0 && d != 1 && w >= 0 && d != w {
			return fmt.Errorf("%s %v does not broadcast to [%d, %d, %d, %d]", inputDesc(n, 3), s, g.B, g.HQ, g.SQ, st)
		}
	}
	return nil
}
