package runtime

// pool recycles intermediate buffers. A request takes the smallest free
// buffer that holds it (the most recently freed among equals, whose lines
// are likeliest still in cache), else a new one: after the first run no
// allocation happens, and buffers of different sizes are shared, so the
// pool stays near the most bytes alive at once (mobilenet_v2's activations
// had a pool of 17.8 MB by exact size; the run's working set, weights
// included, then exceeded the 32 MB L3 it runs in).
type pool struct {
	free  [][]byte // full-capacity buffers, in the order they were freed
	total int64    // bytes held by the pool, in use or free
	peak  int64
}

func newPool() *pool { return &pool{} }

// bestFit is the pool's choice among count free buffers of capacities
// capOf(i), in freeing order, for a request of n bytes: the index of the
// smallest capacity >= n, the latest among equals; -1 if none. MemoryPlan
// replays it on sizes.
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
	return raw[off : off+n : off+n]
}

func (p *pool) put(b []byte) {
	p.free = append(p.free, b[:cap(b)])
}
