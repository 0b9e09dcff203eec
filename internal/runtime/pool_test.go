package runtime

import (
	"slices"
	"testing"

	"gkconv/internal/ir"
)

// Within a run the pool hands a request the smallest buffer given back
// earlier in the run that holds it, the most recently freed among equals,
// and allocates only when none does: buffers of different sizes are shared.
func TestPoolBestFit(t *testing.T) {
	p := newPool()
	p.begin()
	a, b, c := p.get(400), p.get(100), p.get(100)
	if p.peak != 600 {
		t.Fatalf("peak %d after 400+100+100 bytes, want 600", p.peak)
	}
	p.put(a)
	p.put(b)
	p.put(c)
	got := p.get(60) // fits all three: a 100-byte one, the later freed (c)
	if len(got) != 60 || &got[:1][0] != &c[0] {
		t.Errorf("60 bytes: got len %d, want c's buffer (the latest freed of the smallest fit)", len(got))
	}
	big := p.get(300) // only a fits
	if len(big) != 300 || &big[0] != &a[0] {
		t.Errorf("300 bytes: want a's 400-byte buffer")
	}
	if p.get(100); p.peak != 600 {
		t.Errorf("peak %d after reusing three freed buffers, want 600", p.peak)
	}
	p.put(got) // back at its full capacity
	if again := p.get(100); cap(again) != 100 || &again[0] != &c[0] {
		t.Errorf("a buffer given back at part length came back with capacity %d, want c's 100", cap(again))
	}
	if p.get(101); p.peak != 701 {
		t.Errorf("peak %d: a request larger than every free buffer must allocate (want 701)", p.peak)
	}
}

// Later runs make the first run's choices, so the pool does not grow. The
// sequence is one where a best fit among every idle buffer would: in the
// second run the 10-byte request would take the 20-byte buffer, the 20-byte
// one the 40-byte buffer, and the 30-byte one a new buffer (peak 90).
func TestPoolRunsRepeatFirst(t *testing.T) {
	p := newPool()
	for run := 0; run < 3; run++ {
		p.begin()
		a := p.get(40)
		p.put(a)
		b := p.get(10) // a's buffer
		c := p.get(20) // new in the first run
		p.put(b)
		d := p.get(30) // a's buffer again
		p.put(c)
		p.put(d)
		if p.peak != 60 {
			t.Fatalf("run %d: pool peak %d bytes, want the first run's 60", run, p.peak)
		}
	}
}

// A graph output that is an alias (Identity) of a pooled intermediate
// shares its buffer with the caller: the next run must not write into it.
func TestPoolAliasOutputKept(t *testing.T) {
	s := negSession(t, Options{Threads: 1}, func(g *ir.Graph, x, neg *ir.Value) []*ir.Value {
		sq := g.AddNode("sq", "Mul", []*ir.Value{neg, neg}, "sq").Outputs[0]
		return []*ir.Value{g.AddNode("id", "Identity", []*ir.Value{sq}, "out").Outputs[0]}
	})
	first, err := s.Run([]*ir.Tensor{ir.Float32Tensor([]int64{3}, 1, 2, 3)})
	if err != nil {
		t.Fatal(err)
	}
	for r := 0; r < 3; r++ {
		if _, err := s.Run([]*ir.Tensor{ir.Float32Tensor([]int64{3}, 7, 8, 9)}); err != nil {
			t.Fatal(err)
		}
	}
	if got := first[0].F32(); !slices.Equal(got, []float32{1, 4, 9}) {
		t.Errorf("the first run's output became %v after later runs, want [1 4 9]", got)
	}
	if plan := s.MemoryPlan(); plan.PoolPeak != s.ArenaBytes() {
		t.Errorf("plan %d bytes, pool %d after four runs", plan.PoolPeak, s.ArenaBytes())
	}
}
