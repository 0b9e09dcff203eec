package runtime

import (
	"math/rand"
	"testing"
)

// Requests alive at the same time get disjoint bytes; the arena is no larger
// than needed for a chain where each request outlives only its predecessor's
// last use (a, b alive together, then b, c: c takes a's bytes).
func TestSlabLayoutChain(t *testing.T) {
	// events: a born 0, b born 1, a dies 2, c born 3, b dies 4, c dies 5
	l := layoutSlab([]int64{4096, 1024, 4000}, []int{0, 1, 3}, []int{2, 4, 5})
	if l.size != 4096+1024 {
		t.Errorf("arena %d bytes, want 5120 (c reuses a's bytes)", l.size)
	}
	if l.offs[2] != l.offs[0] || len(l.conflicts[2]) != 1 || l.conflicts[2][0] != 0 {
		t.Errorf("c at %d (a at %d), conflicts %v: want a's offset and a as its only conflict", l.offs[2], l.offs[0], l.conflicts[2])
	}
}

// On random lifetimes no two requests alive together share a byte, every
// offset is aligned, and requests not given back are left out.
func TestSlabLayoutRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for trial := 0; trial < 300; trial++ {
		n := 1 + rng.Intn(40)
		sizes, born, died := make([]int64, n), make([]int, n), make([]int, n)
		step := 0
		var alive []int
		for k := 0; k < n; k++ {
			for len(alive) > 0 && rng.Intn(2) == 0 {
				i := rng.Intn(len(alive))
				died[alive[i]] = step
				step++
				alive = append(alive[:i], alive[i+1:]...)
			}
			sizes[k] = int64(rng.Intn(5000))
			born[k], died[k] = step, -1
			step++
			alive = append(alive, k)
		}
		for _, k := range alive {
			if rng.Intn(4) > 0 {
				died[k] = step
				step++
			}
		}
		l := layoutSlab(sizes, born, died)
		for k := range n {
			if died[k] < 0 {
				if l.offs[k] != -1 {
					t.Fatalf("trial %d: request %d is never given back but placed at %d", trial, k, l.offs[k])
				}
				continue
			}
			if l.offs[k]%slabAlign != 0 || l.offs[k]+l.sizes[k] > l.size || l.sizes[k] < sizes[k] {
				t.Fatalf("trial %d: request %d at %d+%d in an arena of %d", trial, k, l.offs[k], l.sizes[k], l.size)
			}
			for j := range k {
				if died[j] < 0 || !(born[j] < died[k] && born[k] < died[j]) {
					continue
				}
				if l.offs[j] < l.offs[k]+l.sizes[k] && l.offs[k] < l.offs[j]+l.sizes[j] {
					t.Fatalf("trial %d: requests %d and %d are alive together and share bytes", trial, j, k)
				}
			}
		}
	}
}

// A run that keeps a buffer past its planned last use (here: the first
// request is never given back) does not get the bytes it shares handed to
// a later request: that request and the rest of the run take the pool's own
// buffers.
func TestSlabFallsBackOnConflict(t *testing.T) {
	p := newPool()
	p.slab = layoutSlab([]int64{4096, 1024, 4000}, []int{0, 1, 3}, []int{2, 4, 5})
	p.begin()
	a, b := p.get(4096), p.get(1024)
	a[0] = 42
	c := p.get(4000) // planned at a's offset; a is still alive
	if &c[0] == &a[0] {
		t.Fatal("the third request got the bytes of a request still alive")
	}
	if a[0] != 42 {
		t.Fatal("a live buffer was written")
	}
	p.put(b)
	p.put(c)
	// The arena held a live buffer at the end of the run: the next run does
	// not reuse it.
	p.begin()
	if a2 := p.get(4096); &a2[0] == &a[0] {
		t.Error("the next run reused an arena a buffer of the last run still points into")
	}
}
