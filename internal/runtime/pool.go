package runtime

// pool recycles intermediate buffers by exact size: a model's tensor sizes
// repeat within a run and across runs, so after the first run no allocation
// happens.
type pool struct {
	free  map[int][][]byte
	total int64 // bytes held by the pool, in use or free
	peak  int64
}

func newPool() *pool { return &pool{free: map[int][][]byte{}} }

func (p *pool) get(n int) []byte {
	if l := p.free[n]; len(l) > 0 {
		b := l[len(l)-1]
		p.free[n] = l[:len(l)-1]
		return b
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
	p.free[cap(b)] = append(p.free[cap(b)], b[:cap(b)])
}
