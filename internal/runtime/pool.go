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
//
// A buffer a run does not give back (a graph output that aliases an
// intermediate: the caller holds it) leaves the pool when the next run
// begins; that run allocates a new one in its place.
//
// With a slab layout (slab.go) the requests of a run that follows the
// replayed one are served from one arena instead, at their planned offsets;
// the buffers above serve only what departs from it and the requests the
// layout leaves out (those not given back within the run).
type pool struct {
	all   [][]byte      // every buffer at full capacity, in the order runs first take them; nil: left the pool
	caps  []int         // their capacities
	next  int           // all[next:] not yet taken in this run
	free  []int         // indices in all given back in this run, in freeing order
	out   map[*byte]int // indices in all taken and not given back, by first byte
	total int64         // bytes held by the pool (arena included), in use or free
	peak  int64

	slab    *slabLayout // nil: no layout (unknown sizes, too many requests)
	arena   []byte      // the slab's bytes, allocated at its first use
	req     int         // this run's next request
	onSlab  bool        // this run's requests so far matched the layout
	live    []bool      // slab requests taken and not given back, this run
	liveOff map[*byte]int32
}

func newPool() *pool { return &pool{out: map[*byte]int{}} }

// begin starts a run: every buffer given back is idle again, the others
// leave the pool (their bytes are the caller's).
func (p *pool) begin() {
	for _, i := range p.out {
		p.total -= int64(p.caps[i])
		p.all[i] = nil
	}
	clear(p.out)
	p.free = p.free[:0]
	p.next = 0
	p.req = 0
	for _, v := range p.live {
		if v { // the last run kept slab bytes: the arena is no longer ours
			p.total -= int64(len(p.arena))
			p.arena = nil
			break
		}
	}
	clear(p.live)
	clear(p.liveOff)
	p.onSlab = p.slab != nil
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
	if p.slab != nil {
		if b, ok := p.fromSlab(n); ok {
			return b
		}
	}
	if f := bestFit(int64(n), len(p.free), func(i int) int64 { return int64(p.caps[p.free[i]]) }); f >= 0 {
		i := p.free[f]
		p.free = append(p.free[:f], p.free[f+1:]...)
		return p.take(i, n)
	}
	if p.next < len(p.all) && p.caps[p.next] >= n {
		p.next++
		return p.take(p.next-1, n)
	}
	// Where this run differs from the earlier ones (other shapes), the new
	// buffer is taken here in later runs; the idle ones stay after it.
	p.all = append(p.all, nil)
	p.caps = append(p.caps, 0)
	copy(p.all[p.next+1:], p.all[p.next:])
	copy(p.caps[p.next+1:], p.caps[p.next:])
	p.all[p.next], p.caps[p.next] = nil, n
	p.next++
	return p.take(p.next-1, n)
}

// take hands out buffer i (allocating it if it left the pool) as n bytes.
func (p *pool) take(i, n int) []byte {
	if p.all[i] == nil {
		p.all[i] = alignedBytes(p.caps[i])
		p.total += int64(p.caps[i])
		p.peak = max(p.peak, p.total)
	}
	b := p.all[i]
	if len(b) > 0 {
		p.out[&b[0]] = i
	}
	return b[:n]
}

func (p *pool) put(b []byte) {
	b = b[:cap(b)]
	if len(b) == 0 {
		return
	}
	if k, ok := p.liveOff[&b[0]]; ok {
		p.live[k] = false
		delete(p.liveOff, &b[0])
		return
	}
	if i, ok := p.out[&b[0]]; ok {
		delete(p.out, &b[0])
		p.free = append(p.free, i)
	}
}

// fromSlab serves this run's next request of n bytes from the arena if the
// run still follows the layout, the layout places the request, and no
// request sharing its bytes is alive.
func (p *pool) fromSlab(n int) ([]byte, bool) {
	k := p.req
	p.req++
	if !p.onSlab || k >= len(p.slab.sizes) || p.slab.sizes[k] != slabSize(int64(n)) {
		p.onSlab = false
		return nil, false
	}
	off := p.slab.offs[k]
	if off < 0 {
		return nil, false // left out of the layout
	}
	for _, j := range p.slab.conflicts[k] {
		if p.live[j] {
			p.onSlab = false
			return nil, false
		}
	}
	if p.arena == nil {
		p.arena = alignedBytes(int(p.slab.size))
		p.total += p.slab.size
		p.peak = max(p.peak, p.total)
	}
	if p.live == nil {
		p.live = make([]bool, len(p.slab.sizes))
		p.liveOff = map[*byte]int32{}
	}
	b := p.arena[off : off+int64(n) : off+p.slab.sizes[k]]
	p.live[k] = true
	p.liveOff[&b[:1][0]] = int32(k)
	return b, true
}

// alignedBytes is n bytes at a 64-byte boundary (vector loads; Go's
// allocator gives 8 or the size class's alignment), with capacity n.
func alignedBytes(n int) []byte {
	raw := make([]byte, n+64)
	off := 0
	if a := int(uintptrOf(raw)) & 63; a != 0 {
		off = 64 - a
	}
	return raw[off : off+n : off+n]
}
