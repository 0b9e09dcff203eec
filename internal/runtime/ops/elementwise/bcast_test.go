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

// TestCopyBroadcastMatchesNaive: BroadcastTo's copies (the whole-source
// repetition path and the plan path) against numpy's rule computed
// directly, over random shapes, the output first filled with garbage.
func TestCopyBroadcastMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewSource(8))
	repeats := 0
	for trial := 0; trial < 2000; trial++ {
		rank := rng.Intn(6)
		out := make([]int64, rank)
		total := 1
		for j := range out {
			out[j] = int64(1 + rng.Intn(4))
			total *= int(out[j])
		}
		r := rng.Intn(rank + 1)
		src := make([]int64, r)
		n := 1
		for j := range src {
			if rng.Intn(3) == 0 {
				src[j] = 1
			} else {
				src[j] = out[rank-r+j]
			}
			n *= int(src[j])
		}
		s := make([]uint32, n)
		for i := range s {
			s[i] = uint32(rng.Int31())
		}
		d := make([]uint32, total)
		for i := range d {
			d[i] = 0xdeadbeef
		}
		if repeatsWhole(out, src) {
			repeats++
		}
		if err := copyBroadcast(nil, out, d, s, src); err != nil {
			t.Fatalf("out %v src %v: %v", out, src, err)
		}
		for i := range d {
			// numpy's rule: the source index of output element i
			rem, off, stride := i, 0, 1
			for j := rank - 1; j >= 0; j-- {
				c := rem % int(out[j])
				rem /= int(out[j])
				if k := j - (rank - r); k >= 0 {
					if src[k] != 1 {
						off += c * stride
					}
					stride *= int(src[k])
				}
			}
			if d[i] != s[off] {
				t.Fatalf("out %v src %v: element %d = %x, want %x", out, src, i, d[i], s[off])
			}
		}
	}
	if repeats == 0 {
		t.Fatal("no shape took the whole-source repetition path")
	}
}
