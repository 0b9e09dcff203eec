package runtime

// pool recycles intermediate buffers. Within a run, a request takes the
// smallest buffer given back earlier in the run that holds it (the most
// recently freed among equals, whose lines are likeliest still in cache);
// failing that, the buffer the first run allocated at this point, else a new
// one. So buffers of different sizes are shared and the pool stays near the
// most bytes alive at once (mobilenet_v2's activations had a pool of 17.8
// MB when buffers were reused by exact size; the run's working set, weights
// included, then exceeded the 32 MB L3 it runs in), and every run with the
// same shapes makes the first run's choices: the pool does not grow after
// it, and MemoryPlan, which replays the first run, is its size. (Choosing
// among all idle buffers at each request grew resnet50's pool from 8.0 MB
// in the first run to 11.2 MB in the second.)
type pool struct {
	all   [][]byte // every buffer at full capacity, in the order runs first take them
	next  int      // all[next:] not yet taken in this run
	free  [][]byte // given back in this run, in freeing order
	total int64    // bytes held by the pool, in use or free
	peak  int64
}

func newPool() *pool { return &pool{} }

// begin starts a run: every buffer is idle again.
func (p *pool) begin() {
	clear(p.free)
	p.free = p.free[:0]
	p.next = 0
}

// bestFit is the choice among count buffers given back in this run, of
// capacities capOf(i) in freeing order, for a request of n bytes: the index
// of the smallest capacity >= n, the latest among equals; -1 if none.
// MemoryPlan replays it on sizes.
func bestFit(n int64, count int, capOf func(int) int64) int {
	best := -1
	for i := 0; i < count; i++ {
		if c := capOf(i); c >= n && (best < 0 || c <= capOf(best)) {
			best = i
		}
	}
	return best
}

func (p *pool) get(n int) []byte {
	if i := bestFit(int64(n), len(p.free), func(i int) int64 { return int64(cap(p.free[i])) }); i >= 0 {
		b := p.free[i]
		p.free = append(p.free[:i], p.free[i+1:]...)
		return b[:n]
	}
	if p.next < len(p.all) && cap(p.all[p.next]) >= n {
		p.next++
		return p.all[p.next-1][:n]
	}
	p.total += int64(n)
	if p.total > p.peak {
		p.peak = p.total
	}
	// 64-byte alignment helps vector loads; Go's allocator gives 8 (or size
	// class) alignment, so over-allocate and slice.
	raw := make([]byte, n+64)
	off := 0
	if a := int(uintptrOf(raw)) & 63; a != 0 {
		off = 64 - a
	}
	b := raw[off : off+n : off+n]
	// Where this run differs from the earlier ones (other shapes), the new
	// buffer is taken here in later runs; the idle ones stay after it.
	p.all = append(p.all, nil)
	copy(p.all[p.next+1:], p.all[p.next:])
	p.all[p.next] = b
	p.next++
	return b
}

func (p *pool) put(b []byte) {
	p.free = append(p.free, b[:cap(b)])
}
