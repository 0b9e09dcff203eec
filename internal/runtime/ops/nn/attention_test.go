package nn

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// attnCase is one random Attention problem in the 4-D layout; rank3 runs
// it through the 3-D [B, S, H*D] form.
type attnCase struct {
	b, hq, hkv, sq, skv, sp, d, dv int
	rank3, causal                  bool
	mask                           string // "", "bool", "float"
	maskShape                      []int64
	softcap                        float64
	scale                          float64 // 0: default
	nonpad                         bool
}

// attnNaive computes Y [B, HQ, SQ, DV] straight from the definition in
// float64: K/V = past ++ new, scores*scale, softcap, mask, causal and
// padding limits, softmax (a row with no key: zeros), times V.
func attnNaive(c attnCase, q, k, v, pk, pv []float32, mask *ir.Tensor, nonpad []int64) []float64 {
	st := c.sp + c.skv
	keyAt := func(src, past []float32, dd, b, h, j, e int) float64 {
		if j < c.sp {
			return float64(past[((b*c.hkv+h)*c.sp+j)*dd+e])
		}
		return float64(src[((b*c.hkv+h)*c.skv+j-c.sp)*dd+e])
	}
	scale := 1 / math.Sqrt(float64(c.d))
	if c.scale != 0 {
		scale = c.scale
	}
	y := make([]float64, c.b*c.hq*c.sq*c.dv)
	row := make([]float64, st)
	for b := 0; b < c.b; b++ {
		for h := 0; h < c.hq; h++ {
			kh := h / (c.hq / c.hkv)
			for i := 0; i < c.sq; i++ {
				for j := 0; j < st; j++ {
					s := 0.0
					for e := 0; e < c.d; e++ {
						s += float64(q[((b*c.hq+h)*c.sq+i)*c.d+e]) * keyAt(k, pk, c.d, b, kh, j, e)
					}
					s *= scale
					if c.softcap > 0 {
						s = c.softcap * math.Tanh(s/c.softcap)
					}
					if mask != nil {
						ms := mask.Shape
						idx := []int{b, h, i, j}
						off, stride := 0, 1
						for a := len(ms) - 1; a >= 0; a-- {
							x := idx[4-len(ms)+a]
							if ms[a] == 1 {
								x = 0
							}
							off += x * stride
							stride *= int(ms[a])
						}
						switch {
						case j >= int(ms[len(ms)-1]):
							s = math.Inf(-1)
						case mask.DType == ir.Bool && mask.Data[off] == 0:
							s = math.Inf(-1)
						case mask.DType == ir.Float32:
							s += float64(mask.F32()[off])
						}
					}
					if c.causal {
						off := c.sp
						if c.sp == 0 && nonpad != nil {
							off = int(nonpad[b]) - c.sq
						}
						if j > i+off {
							s = math.Inf(-1)
						}
					}
					if nonpad != nil && j >= int(nonpad[b]) {
						s = math.Inf(-1)
					}
					row[j] = s
				}
				mx := math.Inf(-1)
				for _, s := range row {
					mx = math.Max(mx, s)
				}
				if math.IsInf(mx, -1) {
					continue // y row stays 0
				}
				sum := 0.0
				for j, s := range row {
					row[j] = math.Exp(s - mx)
					sum += row[j]
				}
				for e := 0; e < c.dv; e++ {
					acc := 0.0
					for j := range row {
						acc += row[j] / sum * keyAt(v, pv, c.dv, b, kh, j, e)
					}
					y[((b*c.hq+h)*c.sq+i)*c.dv+e] = acc
				}
			}
		}
	}
	return y
}

func randF32(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.NormFloat64())
	}
	return s
}

// to3D turns [B, H, S, D] data into [B, S, H*D].
func to3D(x []float32, b, h, s, d int) []float32 {
	out := make([]float32, len(x))
	for bi := 0; bi < b; bi++ {
		for hi := 0; hi < h; hi++ {
			for si := 0; si < s; si++ {
				copy(out[(bi*s+si)*h*d+hi*d:][:d], x[((bi*h+hi)*s+si)*d:][:d])
			}
		}
	}
	return out
}

func TestAttentionVsNaive(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	cases := []attnCase{
		{b: 2, hq: 3, hkv: 3, sq: 4, skv: 6, d: 8, dv: 8},
		{b: 1, hq: 4, hkv: 4, sq: 17, skv: 17, d: 16, dv: 8, causal: true},
		{b: 2, hq: 6, hkv: 2, sq: 5, skv: 9, d: 8, dv: 12, mask: "bool", maskShape: []int64{5, 9}},
		{b: 2, hq: 4, hkv: 1, sq: 3, skv: 7, d: 4, dv: 4, mask: "float", maskShape: []int64{2, 1, 3, 7}, causal: true},
		{b: 2, hq: 2, hkv: 2, sq: 4, skv: 4, sp: 5, d: 8, dv: 6, mask: "float", maskShape: []int64{4, 9}, causal: true},
		{b: 3, hq: 2, hkv: 2, sq: 2, skv: 6, d: 8, dv: 8, causal: true, nonpad: true},
		{b: 2, hq: 3, hkv: 3, sq: 6, skv: 5, d: 8, dv: 8, rank3: true, softcap: 2, scale: 0.3},
		{b: 1, hq: 4, hkv: 2, sq: 33, skv: 40, d: 32, dv: 16, rank3: true, mask: "bool", maskShape: []int64{1, 4, 33, 30}},
		{b: 2, hq: 2, hkv: 2, sq: 3, skv: 3, d: 4, dv: 4, mask: "bool", maskShape: []int64{3, 3}},      // some rows fully masked
		{b: 1, hq: 2, hkv: 2, sq: 8, skv: 70, d: 16, dv: 16, mask: "float", maskShape: []int64{8, 70}}, // vector softmax, -inf lanes, tail of 6
		// longer sequences, causal with masks, past keys and padding, at 1-3 threads
		{b: 2, hq: 3, hkv: 3, sq: 50, skv: 50, d: 8, dv: 8, causal: true, mask: "float", maskShape: []int64{2, 1, 50, 50}},
		{b: 2, hq: 2, hkv: 1, sq: 36, skv: 20, sp: 16, d: 8, dv: 8, causal: true, mask: "bool", maskShape: []int64{36, 36}},
		{b: 3, hq: 2, hkv: 2, sq: 34, skv: 34, d: 8, dv: 8, causal: true, nonpad: true},
	}
	for ci, c := range cases {
		for _, threads := range []int{1, 2, 3} {
			t.Run(fmt.Sprintf("%d/threads%d", ci, threads), func(t *testing.T) {
				st := c.sp + c.skv
				q := randF32(r, c.b*c.hq*c.sq*c.d)
				k := randF32(r, c.b*c.hkv*c.skv*c.d)
				v := randF32(r, c.b*c.hkv*c.skv*c.dv)
				var pk, pv []float32
				in := make([]*ir.Tensor, 7)
				if c.sp > 0 {
					pk, pv = randF32(r, c.b*c.hkv*c.sp*c.d), randF32(r, c.b*c.hkv*c.sp*c.dv)
					in[4] = f32([]int64{int64(c.b), int64(c.hkv), int64(c.sp), int64(c.d)}, pk...)
					in[5] = f32([]int64{int64(c.b), int64(c.hkv), int64(c.sp), int64(c.dv)}, pv...)
				}
				var mask *ir.Tensor
				switch c.mask {
				case "bool":
					mask = ir.NewTensor(ir.Bool, c.maskShape)
					for i := range mask.Data {
						if r.Intn(3) > 0 {
							mask.Data[i] = 1
						}
					}
				case "float":
					vals := randF32(r, int(ir.NumElements(c.maskShape)))
					for i := range vals {
						if r.Intn(5) == 0 {
							vals[i] = float32(math.Inf(-1))
						}
					}
					mask = f32(c.maskShape, vals...)
				}
				in[3] = mask
				var nonpad []int64
				if c.nonpad {
					for b := 0; b < c.b; b++ {
						nonpad = append(nonpad, int64(1+r.Intn(st)))
					}
					in[6] = ir.Int64Tensor([]int64{int64(c.b)}, nonpad...)
				}
				attrs := ir.Attrs{}
				if c.causal {
					attrs["is_causal"] = ir.IntAttr(1)
				}
				if c.softcap > 0 {
					attrs["softcap"] = ir.FloatAttr(c.softcap)
				}
				if c.scale != 0 {
					attrs["scale"] = ir.FloatAttr(c.scale)
				}
				B, HQ, HKV, SQ, SKV := int64(c.b), int64(c.hq), int64(c.hkv), int64(c.sq), int64(c.skv)
				yShape := []int64{B, HQ, SQ, int64(c.dv)}
				if c.rank3 {
					attrs["q_num_heads"], attrs["kv_num_heads"] = ir.IntAttr(HQ), ir.IntAttr(HKV)
					in[0] = f32([]int64{B, SQ, HQ * int64(c.d)}, to3D(q, c.b, c.hq, c.sq, c.d)...)
					in[1] = f32([]int64{B, SKV, HKV * int64(c.d)}, to3D(k, c.b, c.hkv, c.skv, c.d)...)
					in[2] = f32([]int64{B, SKV, HKV * int64(c.dv)}, to3D(v, c.b, c.hkv, c.skv, c.dv)...)
					yShape = []int64{B, SQ, HQ * int64(c.dv)}
				} else {
					in[0] = f32([]int64{B, HQ, SQ, int64(c.d)}, q...)
					in[1] = f32([]int64{B, HKV, SKV, int64(c.d)}, k...)
					in[2] = f32([]int64{B, HKV, SKV, int64(c.dv)}, v...)
				}
				y := ir.NewTensor(ir.Float32, yShape)
				for i := range y.F32() {
					y.F32()[i] = float32(math.NaN()) // every element must be written
				}
				f, _ := opkernel.Lookup("Attention")
				if err := f(&opkernel.Ctx{Threads: threads}, &ir.Node{Name: "t", Op: "Attention", Attrs: attrs}, in, []*ir.Tensor{y}); err != nil {
					t.Fatal(err)
				}
				want := attnNaive(c, q, k, v, pk, pv, mask, nonpad)
				got := y.F32()
				if c.rank3 {
					w32 := make([]float32, len(want))
					for i, x := range want {
						w32[i] = float32(x)
					}
					w3 := to3D(w32, c.b, c.hq, c.sq, c.dv)
					for i := range want {
						want[i] = float64(w3[i])
					}
				}
				for i := range want {
					if d := math.Abs(float64(got[i]) - want[i]); !(d <= 1e-5+1e-4*math.Abs(want[i])) {
						t.Fatalf("element %d: got %v, want %v", i, got[i], want[i])
					}
				}
			})
		}
	}
}

// BenchmarkAttentionBert: one bert_base layer's attention (batch 1, 128
// tokens, 12 heads of 64, [B, S, H*D] inputs, an additive key mask).
func BenchmarkAttentionBert(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	const S, H, D = 128, 12, 64
	q, k, v := randTensor(rng, 1, S, H*D), randTensor(rng, 1, S, H*D), randTensor(rng, 1, S, H*D)
	mask := ir.NewTensor(ir.Float32, []int64{1, 1, 1, S})
	y := ir.NewTensor(ir.Float32, []int64{1, S, H * D})
	n := &ir.Node{Name: "bench", Op: "Attention", Attrs: ir.Attrs{"q_num_heads": ir.IntAttr(H), "kv_num_heads": ir.IntAttr(H)}}
	benchOp(b, attention, n, []*ir.Tensor{q, k, v, mask}, y, float64(2*2*H*S*S*D))
}

// TestAttentionThreadsQK: split over threads, the attention writes
// qk_matmul_output (every mode) as on one thread.
func TestAttentionThreadsQK(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	const B, H, S, D = 2, 2, 40, 8
	q, k, v := randF32(r, B*H*S*D), randF32(r, B*H*S*D), randF32(r, B*H*S*D)
	shape := []int64{B, H, S, D}
	in := []*ir.Tensor{f32(shape, q...), f32(shape, k...), f32(shape, v...)}
	f, _ := opkernel.Lookup("Attention")
	for mode := int64(0); mode < 4; mode++ {
		attrs := ir.Attrs{"is_causal": ir.IntAttr(1), "qk_matmul_output_mode": ir.IntAttr(mode)}
		var got [2][]float32
		for i, threads := range []int{1, 2} {
			y := ir.NewTensor(ir.Float32, shape)
			qk := ir.NewTensor(ir.Float32, []int64{B, H, S, S})
			for j := range qk.F32() {
				qk.F32()[j] = float32(math.NaN())
			}
			if err := f(&opkernel.Ctx{Threads: threads}, &ir.Node{Name: "t", Op: "Attention", Attrs: attrs}, in,
				[]*ir.Tensor{y, nil, nil, qk}); err != nil {
				t.Fatal(err)
			}
			got[i] = qk.F32()
		}
		for j := range got[0] {
			a, b := float64(got[0][j]), float64(got[1][j])
			if !(math.Abs(a-b) <= 1e-5+1e-5*math.Abs(a)) && !(math.IsInf(a, -1) && math.IsInf(b, -1)) {
				t.Fatalf("mode %d: qk element %d: %v on 1 thread, %v on 2", mode, j, a, b)
			}
		}
	}
}
