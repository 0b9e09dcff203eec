package nn

/*
#cgo CFLAGS: -O3 -std=gnu11
#cgo LDFLAGS: -lm
#include "attention.h"
*/
import "C"

import (
	"math"
	"runtime"
	"unsafe"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// Attention (ONNX Attention, opset 23/24): per (batch, query head), on one
// worker of opkernel.ParallelFor, gk_attention_head (attention.c) computes
// the score block Q*K^T*scale on OpenBLAS, softcap, mask, causal and
// padding limits and a softmax in one pass over each row, then P*V into Y.
// Only that one sq x skv score block per worker is materialised. 3-D
// inputs ([B, S, H*D]) are read in place through row strides. float16 and
// bfloat16 run in float32.

func init() { opkernel.Register("Attention", attention) }

// attnLayout locates one head's rows in a 3-D [B, S, H*d] or 4-D
// [B, H, S, d] tensor.
type attnLayout struct {
	rank3   bool
	heads   int
	seq, hd int
}

// at returns the offset of head h of batch b's first row and the row stride.
func (l attnLayout) at(b, h int) (off, ld int) {
	if l.rank3 {
		return b*l.seq*l.heads*l.hd + h*l.hd, l.heads * l.hd
	}
	return ((b*l.heads + h) * l.seq) * l.hd, l.hd
}

func attention(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := need(n, in, 3); err != nil {
		return err
	}
	if hasHalf(in[0], in[1], in[2]) {
		return viaF32(ctx, n, in, out, attention)
	}
	q, k, v := in[0], in[1], in[2]
	if q.DType != ir.Float32 || k.DType != ir.Float32 || v.DType != ir.Float32 {
		return opkernel.Unsupportedf(n, "Q/K/V dtypes %s, %s, %s (float32, float16 and bfloat16 only)", q.DType, k.DType, v.DType)
	}
	if mode := n.Attrs.Int("softmax_precision", 1); mode != 1 && mode != 10 && mode != 16 {
		return opkernel.Unsupportedf(n, "softmax_precision %d (the softmax runs in float32)", mode)
	}
	g, err := ir.AttentionGeometry(shapeView(n, in))
	if err != nil {
		return errf(n, "%v", err)
	}
	B, HQ, HKV := int(g.B), int(g.HQ), int(g.HKV)
	SQ, SKV, SP, D, DV := int(g.SQ), int(g.SKV), int(g.SPast), int(g.D), int(g.DV)
	ST := SKV + SP
	ql := attnLayout{g.Rank3, HQ, SQ, D}
	yl := attnLayout{g.Rank3, HQ, SQ, DV}
	kl := attnLayout{g.Rank3, HKV, SKV, D}
	vl := attnLayout{g.Rank3, HKV, SKV, DV}
	kd, vd := k.F32(), v.F32()

	// present_key/present_value: past rows then the new ones, [B, HKV, ST, d].
	// With a past they are also what the heads attend over.
	pk, pv := output(out, 1), output(out, 2)
	if SP > 0 || input(in, 4) != nil {
		if pk == nil {
			pk = ir.NewTensor(ir.Float32, []int64{int64(B), int64(HKV), int64(ST), int64(D)})
		}
		if pv == nil {
			pv = ir.NewTensor(ir.Float32, []int64{int64(B), int64(HKV), int64(ST), int64(DV)})
		}
	}
	if pk != nil {
		catHeads(pk.F32(), input(in, 4), kd, kl, B, SP, ST)
	}
	if pv != nil {
		catHeads(pv.F32(), input(in, 5), vd, vl, B, SP, ST)
	}
	if SP > 0 || input(in, 4) != nil {
		kd, vd = pk.F32(), pv.F32()
		kl = attnLayout{false, HKV, ST, D}
		vl = attnLayout{false, HKV, ST, DV}
	}

	scale := float32(1 / math.Sqrt(float64(D)))
	if n.Attrs.Has("scale") {
		scale = float32(n.Attrs.Float("scale", 1))
	}
	softcap := float32(n.Attrs.Float("softcap", 0))
	causal := n.Attrs.Int("is_causal", 0) != 0
	var nonpad []int64
	if t := input(in, 6); t != nil {
		if t.DType != ir.Int64 || int(t.NumElements()) != B {
			return errf(n, "nonpad_kv_seqlen %s %v must be int64 [%d]", t.DType, t.Shape, B)
		}
		nonpad = t.I64()
	}
	mask, err := attnMaskOf(input(in, 3), B, HQ, SQ, ST)
	if err != nil {
		return errf(n, "%v", err)
	}
	var qk []float32
	if t := output(out, 3); t != nil {
		qk = t.F32()
	}
	qkMode := C.int(n.Attrs.Int("qk_matmul_output_mode", 0))

	var pin runtime.Pinner
	defer pin.Unpin()
	pinF32 := func(s []float32) *C.float {
		if len(s) == 0 {
			return nil
		}
		pin.Pin(&s[0])
		return (*C.float)(unsafe.Pointer(&s[0]))
	}
	qp, kp, vp, yp, qkp := pinF32(q.F32()), pinF32(kd), pinF32(vd), pinF32(out[0].F32()), pinF32(qk)
	var mfp *C.float
	var mbp *C.uchar
	if mask.f != nil {
		mfp = pinF32(mask.f)
	} else if len(mask.b) > 0 {
		pin.Pin(&mask.b[0])
		mbp = (*C.uchar)(unsafe.Pointer(&mask.b[0]))
	}

	tasks := B * HQ // the parallel loop: OpenBLAS is single-threaded (blas.go)
	group := HQ / max(HKV, 1)
	opkernel.ParallelFor(ctx, tasks, 1, func(t0, t1 int) {
		sp := getF32(max(SQ*ST, 1))
		defer putF32(sp)
		scores := *sp
		var wp runtime.Pinner
		wp.Pin(&scores[0])
		defer wp.Unpin()
		for t := t0; t < t1; t++ {
			b, h := t/HQ, t%HQ
			qo, ldq := ql.at(b, h)
			yo, ldy := yl.at(b, h)
			ko, ldk := kl.at(b, h/group)
			vo, ldv := vl.at(b, h/group)
			a := C.gk_attn_head{
				sq: C.int(SQ), skv: C.int(ST), d: C.int(D), dv: C.int(DV),
				q: ptrAt(qp, qo), ldq: C.long(ldq), k: ptrAt(kp, ko), ldk: C.long(ldk),
				v: ptrAt(vp, vo), ldv: C.long(ldv), y: ptrAt(yp, yo), ldy: C.long(ldy),
				scale: C.float(scale), softcap: C.float(softcap), kv_valid: C.int(ST),
				qk_mode: qkMode, scores: (*C.float)(unsafe.Pointer(&scores[0])),
			}
			if causal {
				a.causal = 1
				switch {
				case SP > 0 || input(in, 4) != nil:
					a.causal_off = C.long(SP)
				case nonpad != nil:
					a.causal_off = C.long(nonpad[b] - int64(SQ))
				}
			}
			if nonpad != nil {
				a.kv_valid = C.int(min(max(nonpad[b], 0), int64(ST)))
			}
			if mfp != nil || mbp != nil {
				mo := mask.off(b, h)
				a.mask_ld, a.mask_cols = C.long(mask.ld), C.int(mask.cols)
				if mfp != nil {
					a.mask_f = ptrAt(mfp, mo)
				} else {
					a.mask_b = (*C.uchar)(unsafe.Add(unsafe.Pointer(mbp), mo))
				}
			}
			if qkp != nil {
				a.qk = ptrAt(qkp, t*SQ*ST)
			}
			C.gk_attention_head(&a)
		}
	})
	return nil
}

// ptrAt is p + off floats (nil stays nil).
func ptrAt(p *C.float, off int) *C.float {
	if p == nil {
		return nil
	}
	return (*C.float)(unsafe.Add(unsafe.Pointer(p), off*4))
}

// catHeads writes dst [B, H, st, d] = past [B, H, sp, d] (nil: none)
// followed by the new rows of src (layout l, l.seq rows per head).
func catHeads(dst []float32, past *ir.Tensor, src []float32, l attnLayout, B, sp, st int) {
	var pd []float32
	if past != nil {
		pd = past.F32()
	}
	d := l.hd
	for b := 0; b < B; b++ {
		for h := 0; h < l.heads; h++ {
			o := ((b*l.heads + h) * st) * d
			if sp > 0 {
				copy(dst[o:o+sp*d], pd[((b*l.heads+h)*sp)*d:])
			}
			so, ld := l.at(b, h)
			for r := 0; r < l.seq; r++ {
				copy(dst[o+(sp+r)*d:o+(sp+r+1)*d], src[so+r*ld:])
			}
		}
	}
}

// attnMask is attn_mask broadcast to [B, HQ, SQ, cols] through strides.
type attnMask struct {
	f                []float32
	b                []byte
	sb, sh, ld, cols int // element strides of batch, head, query row; columns present
}

func (m *attnMask) off(b, h int) int { return b*m.sb + h*m.sh }

// attnMaskOf reads attn_mask (nil: none): bool (true = attend) or float32
// (added to the scores); its dims right-align with [B, HQ, SQ, keys].
func attnMaskOf(t *ir.Tensor, B, HQ, SQ, ST int) (*attnMask, error) {
	m := &attnMask{}
	if t == nil {
		return m, nil
	}
	r := len(t.Shape)
	if r < 1 || r > 4 {
		return nil, errString("attn_mask %v must have rank 1 to 4", t.Shape)
	}
	full := []int{1, 1, 1, 1}
	for i, d := range t.Shape {
		full[4-r+i] = int(d)
	}
	if full[3] > ST {
		return nil, errString("attn_mask %v has more columns than the %d keys", t.Shape, ST)
	}
	want := []int{B, HQ, SQ}
	strides := make([]int, 4)
	s := 1
	for i := 3; i >= 0; i-- {
		if i < 3 && full[i] != 1 {
			if full[i] != want[i] {
				return nil, errString("attn_mask %v does not broadcast to [%d, %d, %d, %d]", t.Shape, B, HQ, SQ, ST)
			}
			strides[i] = s
		}
		s *= full[i]
	}
	m.sb, m.sh, m.ld, m.cols = strides[0], strides[1], strides[2], full[3]
	switch t.DType {
	case ir.Bool:
		m.b = t.Data
	case ir.Float32:
		m.f = t.F32()
	default:
		return nil, errString("attn_mask dtype %s (bool or the dtype of Q)", t.DType)
	}
	return m, nil
}
