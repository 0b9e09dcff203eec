package elementwise

import (
	"math/rand"
	"testing"
)

// TestPlanMatchesNaiveBroadcast walks every plan over random shapes (ranks
// 0-9, up to 6 inputs: past the inline storage of both) and checks each
// output element's input offsets against numpy's rule computed directly.
func TestPlanMatchesNaiveBroadcast(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for trial := 0; trial < 3000; trial++ {
		rank := rng.Intn(10)
		out := make([]int64, rank)
		for j := range out {
			out[j] = int64(1 + rng.Intn(3))
		}
		nin := 1 + rng.Intn(6)
		ins := make([][]int64, nin)
		for k := range ins {
			r := rng.Intn(rank + 1)
			s := make([]int64, r)
			for j := range s {
				if rng.Intn(3) == 0 {
					s[j] = 1
				} else {
					s[j] = out[rank-r+j]
				}
			}
			ins[k] = s
		}
		p, err := newPlan(out, ins...)
		if err != nil {
			t.Fatalf("out %v ins %v: %v", out, ins, err)
		}
		got := make([][]int, nin)
		for k := range got {
			got[k] = make([]int, p.total)
		}
		for _, chunk := range [][2]int{{0, p.total / 3}, {p.total / 3, p.total}} {
			p.runRange(chunk[0], chunk[1], func(dst int, offs []int, n int) {
				for k := range offs {
					for i := 0; i < n; i++ {
						got[k][dst+i] = offs[k] + i*p.innerStep[k]
					}
				}
			})
		}
		idx := make([]int64, rank)
		for e := 0; e < p.total; e++ {
			rem := int64(e)
			for j := rank - 1; j >= 0; j-- {
				idx[j] = rem % out[j]
				rem /= out[j]
			}
			for k, s := range ins {
				want, stride := 0, 1
				for j := len(s) - 1; j >= 0; j-- {
					if s[j] != 1 {
						want += int(idx[rank-len(s)+j]) * stride
					}
					stride *= int(s[j])
				}
				if got[k][e] != want {
					t.Fatalf("out %v ins %v: element %d input %d offset %d, want %d", out, ins, e, k, got[k][e], want)
				}
			}
		}
		p.free()
	}
	if _, err := newPlan([]int64{2, 3}, []int64{4}); err == nil {
		t.Fatal("shape [4] broadcast to [2 3] without an error")
	}
	if _, err := newPlan([]int64{3}, []int64{1, 3}); err == nil {
		t.Fatal("rank 2 input into rank 1 output without an error")
	}
}
