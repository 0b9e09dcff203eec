package runtime

import (
	"cmp"
	"slices"
)

// A slab layout places every pooled request of a run at a fixed offset of
// one arena, from the run replayed on the graph's static shapes: requests
// whose lifetimes overlap get disjoint bytes, the others may share. The
// arena is then about the most bytes alive at once (mobilenet_v2 6.0 MB
// alive against a 9.8 MB pool of separate buffers): less memory, and a
// working set that leaves more of the L3 to the weights.
type slabLayout struct {
	size  int64   // arena bytes
	sizes []int64 // request k's bytes, rounded up to slabAlign
	// offs[k] is request k's offset in the arena; -1 for a request not given
	// back within the run (a graph output aliasing it: the caller keeps the
	// bytes), which the pool's own buffers serve.
	offs []int64
	held int64 // the bytes of those requests
	// conflicts[k] are the earlier requests whose bytes overlap request k's.
	// A run serves k from the arena only when none of them is alive, so a
	// run that departs from the replay (other shapes, a lifetime the replay
	// got wrong) can never have two live tensors share bytes: it falls back
	// to the pool's own buffers.
	conflicts [][]int32
}

const (
	slabAlign = 64 // vector loads; every request gets at least one line
	// slabMaxRequests bounds the quadratic layout and slabMaxConflicts the
	// conflict lists (each run checks them all: bert_base unfused has 565
	// requests and 54562 conflicts); bigger runs use the pool.
	slabMaxRequests  = 4096
	slabMaxConflicts = 1 << 20
)

func slabSize(n int64) int64 { return max(slabAlign, (n+slabAlign-1)/slabAlign*slabAlign) }

// layoutSlab places requests of the given sizes alive over the event steps
// [born[k], died[k]) (died -1: not given back, left out): largest first
// (earliest born among equals), each at the lowest offset free of the
// requests placed before it whose lifetimes overlap its own. Deterministic.
func layoutSlab(sizes []int64, born, died []int) *slabLayout {
	n := len(sizes)
	if n == 0 || n > slabMaxRequests {
		return nil
	}
	l := &slabLayout{sizes: make([]int64, n), offs: make([]int64, n), conflicts: make([][]int32, n)}
	var order []int
	for k := range n {
		l.sizes[k] = slabSize(sizes[k])
		if died[k] < 0 {
			l.offs[k] = -1
			l.held += sizes[k]
			continue
		}
		order = append(order, k)
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if l.sizes[a] != l.sizes[b] {
			return cmp.Compare(l.sizes[b], l.sizes[a])
		}
		return cmp.Compare(born[a], born[b])
	})
	type span struct{ off, end int64 }
	var placed []int
	var busy []span
	for _, k := range order {
		busy = busy[:0]
		for _, j := range placed {
			if born[j] < died[k] && born[k] < died[j] {
				busy = append(busy, span{l.offs[j], l.offs[j] + l.sizes[j]})
			}
		}
		slices.SortFunc(busy, func(a, b span) int { return cmp.Compare(a.off, b.off) })
		var at int64
		for _, s := range busy {
			if s.off-at >= l.sizes[k] {
				break
			}
			at = max(at, s.end)
		}
		l.offs[k] = at
		l.size = max(l.size, at+l.sizes[k])
		placed = append(placed, k)
	}
	total := 0
	for k := range n {
		for j := range k {
			if l.offs[k] >= 0 && l.offs[j] >= 0 && l.offs[j] < l.offs[k]+l.sizes[k] && l.offs[k] < l.offs[j]+l.sizes[j] {
				l.conflicts[k] = append(l.conflicts[k], int32(j))
			}
		}
		if total += len(l.conflicts[k]); total > slabMaxConflicts {
			return nil
		}
	}
	return l
}
