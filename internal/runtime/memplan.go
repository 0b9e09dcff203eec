package runtime

import (
	"gkconv/internal/ir"
)

// MemoryPlan is what one run will allocate, computed from the shapes the
// graph carries before anything runs, by replaying Run's allocation
// decisions (alias ops share their input's buffer, intermediates live in the
// arena laid out from this replay, or in buffers recycled by the pool's
// bestFit when a size is unknown, graph outputs get their own tensors).
type MemoryPlan struct {
	PoolPeak      int64 // the most pooled intermediate bytes alive at once
	OutputBytes   int64 // graph outputs, allocated outside the pool
	PreparedBytes int64 // load-time weight copies (packed MatMul B)
	// Unknown counts node outputs whose size is not known before the run
	// (data-dependent shapes); they are not in the totals.
	Unknown int
}

// Total is the plan's bytes, excluding the inputs the caller holds.
func (p MemoryPlan) Total() int64 { return sat(sat(p.PoolPeak, p.OutputBytes), p.PreparedBytes) }

// sat adds without wrapping: a plan past int64 is simply "too much".
func sat(a, b int64) int64 {
	if a > (1<<63-1)-b {
		return 1<<63 - 1
	}
	return a + b
}

// byteSize of a value's static shape; ok is false when unknown.
func byteSize(v *ir.Value) (int64, bool) {
	if v == nil || v.Shape == nil {
		return 0, false
	}
	n, fits := ir.CheckedNumElements(v.Shape)
	if !fits {
		return 1<<63 - 1, true
	}
	if n < 0 {
		return 0, false
	}
	size := int64(max(v.DType.Size(), 1))
	if n > (1<<63-1)/size {
		return 1<<63 - 1, true
	}
	return n * size, true
}

// MemoryPlan replays one run's allocations on the static shapes. With a
// slab layout (every size known) the pool is its arena.
func (s *Session) MemoryPlan() MemoryPlan {
	plan, _ := s.replay()
	if s.pool.slab != nil {
		plan.PoolPeak = s.pool.slab.size + s.pool.slab.held
	}
	return plan
}

// allocTrace is a replayed run's pooled requests in order: bytes, and the
// event steps (gets and releases counted together) at which each was taken
// and given back (-1: not within the run).
type allocTrace struct {
	sizes      []int64
	born, died []int
}

// replay is MemoryPlan without the slab: PoolPeak is what the pool's own
// buffers (bestFit) would reach.
func (s *Session) replay() (MemoryPlan, allocTrace) {
	plan := MemoryPlan{PreparedBytes: s.prepBytes}
	var tr allocTrace
	type buf struct {
		size int64
		refs int
		req  int
	}
	var free []int64 // capacities of the recycled buffers, in freeing order
	var total int64
	step := 0
	bufs := make([]*buf, len(s.lastUse))
	get := func(n int64) *buf {
		b := &buf{size: n, refs: 1, req: len(tr.sizes)}
		tr.sizes = append(tr.sizes, n)
		tr.born = append(tr.born, step)
		tr.died = append(tr.died, -1)
		step++
		if i := bestFit(n, len(free), func(i int) int64 { return free[i] }); i >= 0 {
			b.size = free[i]
			free = append(free[:i], free[i+1:]...)
			return b
		}
		total = sat(total, n)
		if total > plan.PoolPeak {
			plan.PoolPeak = total
		}
		return b
	}
	release := func(b *buf) {
		b.refs--
		if b.refs == 0 {
			free = append(free, b.size)
			tr.died[b.req] = step
			step++
		}
	}
	for ni, n := range s.g.Nodes {
		alias := ir.LookupOp(n.Op).IsAlias()
		if s.subs[ni] != nil {
			// Control flow: what the bodies allocate depends on the data
			// (branch taken, trip count); its outputs are not pooled.
			plan.Unknown += len(n.Outputs)
		}
		for k, o := range n.Outputs {
			if s.subs[ni] != nil {
				break
			}
			if o == nil || (o.Name == "" && o.Shape == nil) {
				continue
			}
			oi := s.index[o]
			if alias && k == 0 && len(n.Inputs) > 0 && n.Inputs[0] != nil && n.Inputs[0].DType != ir.String {
				if b := bufs[s.index[n.Inputs[0]]]; b != nil {
					b.refs++
					bufs[oi] = b
				} else if s.pinned[oi] {
					if size, ok := byteSize(n.Inputs[0]); ok {
						plan.OutputBytes = sat(plan.OutputBytes, size)
					}
				}
				continue
			}
			size, ok := byteSize(o)
			if !ok {
				plan.Unknown++
				continue
			}
			if s.pinned[oi] {
				plan.OutputBytes = sat(plan.OutputBytes, size)
				continue
			}
			bufs[oi] = get(size)
		}
		for _, v := range n.Inputs {
			if v == nil {
				continue
			}
			i := s.index[v]
			if s.lastUse[i] == ni && !s.pinned[i] && bufs[i] != nil {
				release(bufs[i])
				bufs[i] = nil
			}
		}
		for _, o := range n.Outputs {
			if o == nil {
				continue
			}
			i := s.index[o]
			if s.lastUse[i] < 0 && !s.pinned[i] && bufs[i] != nil {
				release(bufs[i])
				bufs[i] = nil
			}
		}
	}
	return plan, tr
}
