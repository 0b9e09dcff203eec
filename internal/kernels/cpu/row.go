package cpu

import (
	"fmt"
	"slices"
	"sort"

	"gkconv/internal/ir"
	"gkconv/internal/kernels"
)

// Row mode: a body that fits the row plan (kernels.PlanRows) becomes one
// loop over the rows F[:p], each row computed by passes over its inner
// elements F[p:] (row_emit.go). This file holds the choices made before
// emitting: which intermediates get a row buffer, and the lane blocking
// of long rows.

// chooseRowBufs gives a row buffer to each float intermediate that several
// passes recompute at a cost of at least rowBufMinCost (found by the
// collection run), and lets each buffer borrow the row of a float32
// per-element output where one is free.
func (g *gen) chooseRowBufs() {
	fullKey := map[string]*ir.Value{}
	pos := map[string]int{} // the value's place in the body
	for _, n := range g.body.Nodes {
		for _, o := range n.Outputs {
			if o != nil && slices.Equal(o.Shape, g.full) {
				k := mapKey(o, identityMap(g.full))
				fullKey[k] = o
				pos[k] = len(pos)
			}
		}
	}
	i := 0
	keys := make([]string, 0, len(g.passUses))
	for k := range g.passUses {
		if _, ok := fullKey[k]; ok {
			keys = append(keys, k)
		}
	}
	// Number the buffers in body order: the keys hold pointer addresses,
	// so sorting them as strings numbered buffers differently from run to
	// run, and the kernel's bytes with them.
	sort.Slice(keys, func(a, b int) bool { return pos[keys[a]] < pos[keys[b]] })
	for _, key := range keys {
		v, ok := fullKey[key]
		if !ok || len(g.passUses[key]) < 2 || g.cost(v) < rowBufMinCost {
			continue
		}
		if kernels.ComputeType(v.DType) != "float" {
			continue
		}
		g.rowBufs[key] = fmt.Sprintf("rb%d", i)
		i++
	}
	// A row buffer borrows the row of a float32 per-element output: the
	// output row is written only in the epilogue, after its last read, and
	// the buffer's stores then warm the cache lines the epilogue writes.
	names := make([]string, 0, len(g.rowBufs))
	for _, n := range g.rowBufs {
		names = append(names, n)
	}
	sort.Strings(names)
	taken := map[int]bool{}
	for _, name := range names {
		for oi, v := range g.body.Outputs {
			if taken[oi] || v.DType != ir.Float32 || ir.NumElements(v.Shape) != ir.NumElements(g.full) {
				continue
			}
			if m, ok := onesMap(v.Shape, g.full, identityMap(g.full)); !ok || !g.usesInner(m) {
				continue
			}
			taken[oi] = true
			g.rbOut[name] = oi
			break
		}
	}
}

// Row-mode blocking. A long innermost row dim runs in blocks of L elements
// (rowLanesFor) with one accumulator per lane, so a reduction is several
// independent vector chains instead of one latency-bound chain. Float lane
// sums are flushed into double lanes every rowChunkTerms*L elements, so each
// float partial sum has at most rowChunkTerms (16) terms, and the double
// lanes are summed pairwise: far more accurate than a float row sum. A row
// of at most rowChunkTerms*L elements in all needs no double lanes: its
// float lanes are summed pairwise.
const rowChunkTerms = 16

// rowLanesFor is L for rows of n elements: 64 lanes (four AVX-512 chains)
// for long rows, fewer for short ones, whose per-row cost is dominated by
// clearing and pairwise-summing the lanes (bert's softmax, rows of 128:
// 0.136 -> 0.120 ms per call with 16 lanes instead of 64).
func rowLanesFor(n int64) int64 {
	switch {
	case n <= 256:
		return 16
	case n <= 1024:
		return 32
	}
	return 64
}

// ortSumMaxRow is the longest row a kernel sums in onnxruntime's order (the
// runtime's ortOrderMaxRow): longer float32 rows drift, and no model reduces
// them before a quantizer, so they keep the double flushes.
const ortSumMaxRow = 1 << 16

// laneable reports whether a reduction accumulates in float lanes.
func laneable(rs *kernels.Reduction) bool {
	if kernels.ComputeType(rs.Node.Inputs[0].DType) != "float" {
		return false
	}
	switch rs.Node.Op {
	case "ReduceMax", "ReduceMin", "ReduceSum", "ReduceMean", "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSum":
		return true
	}
	return false
}

// laneAcc is the lane arrays of one lane-blocked reduction: lanes (float,
// indexed by jl) and, for sums, dbl (the double lanes they flush into).
type laneAcc struct {
	rs    *kernels.Reduction
	lanes string
	dbl   string
	// tail is a scalar float accumulator for the last partial block: were
	// it folded into lanes[jl] with a variable trip count, the lane array
	// would live in memory instead of registers (1152 rows of 49: 75 ->
	// 20 us per call).
	tail string
}

// combine folds x into the lane jl of a.
func (a *laneAcc) combine(x string) string {
	f := *a.rs
	f.Acc = "float"
	return f.Combine(a.lanes+"[jl]", x)
}

// cost of recomputing v from buffers and reduction results.
func (g *gen) cost(v *ir.Value) int {
	if c, ok := g.costs[v]; ok {
		return c
	}
	n := v.Producer
	if n == nil || g.bufs[v] != nil || kernels.IsReduce(n.Op) {
		return 0
	}
	c := kernels.OpCost(n.Op)
	for _, in := range n.Inputs {
		if in != nil {
			c += g.cost(in)
		}
	}
	g.costs[v] = c
	return c
}

// rowMap is the canonical map of a row-wise reduction's result.
func (g *gen) rowMap(rs *kernels.Reduction, v *ir.Value) []int {
	m := make([]int, len(v.Shape))
	keep := len(v.Shape) == len(g.full)
	for a := range v.Shape {
		switch {
		case v.Shape[a] == 1:
			m[a] = -1
		case keep && rs.Reduced[a]:
			m[a] = -1
		default:
			m[a] = a
		}
	}
	return m
}

func firstNonOne(s []int64) int {
	for i, d := range s {
		if d != 1 {
			return i
		}
	}
	return -1
}

// innerMergePlan is the merge list (newLoopCtx) that fuses the row's inner
// dims F[p:] into one loop where every recorded access walks them as one
// contiguous run (mergePlan), so a row of 7x7 or 112x112 is one loop of 49
// or 12544 elements: vectorised and lane-blocked as a whole instead of 7
// or 112 short loops. Outer dims are never merged (the row index decomposes
// them). It returns nil when nothing merges.
func innerMergePlan(F []int64, p int, rec [][]int64) []bool {
	m := mergePlan(F, rec)
	first := true
	any := false
	for d := range F {
		if d < p || F[d] == 1 {
			m[d] = false
			continue
		}
		if first {
			m[d], first = false, false
			continue
		}
		any = any || m[d]
	}
	if !any {
		return nil
	}
	return m
}
