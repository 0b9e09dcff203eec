package runtime

import (
	"gkconv/internal/ir"
)

// MemoryPlan is what one run will allocate, computed from the shapes the
// graph carries before anything runs, by replaying Run's allocation
// decisions (alias ops share their input's buffer, pooled buffers are
// recycled by the pool's bestFit when their last reader is done, graph outputs get
// their own tensors).
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

// MemoryPlan replays one run's allocations on the static shapes.
func (s *Session) MemoryPlan() MemoryPlan {
	plan := MemoryPlan{PreparedBytes: s.prepBytes}
	type buf struct {
		size int64
		refs int
	}
	var free []int64 // capacities of the recycled buffers, in freeing order
	var total int64
	bufs := make([]*buf, len(s.lastUse))
	get := func(n int64) int64 {
		if i := bestFit(n, len(free), func(i int) int64 { return free[i] }); i >= 0 {
			c := free[i]
			free = append(free[:i], free[i+1:]...)
			return c
		}
		total = sat(total, n)
		if total > plan.PoolPeak {
			plan.PoolPeak = total
		}
		return n
	}
	release := func(b *buf) {
		b.refs--
		if b.refs == 0 {
			free = append(free, b.size)
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
			bufs[oi] = &buf{size: get(size), refs: 1}
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
	return plan
}
