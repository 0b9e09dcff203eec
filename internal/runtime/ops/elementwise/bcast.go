package elementwise

import (
	"fmt"
	"sync"

	"gkconv/internal/runtime/opkernel"
)

// plan is a numpy-broadcasting iteration over an output shape fed by several
// inputs. Output dims of size 1 are dropped and adjacent dims that every input
// either fully spans or fully broadcasts are merged, so the common cases
// (same shape, scalar, row and column broadcast) become one or two dims. The
// last merged dim is the inner loop: each input steps through it with stride
// 1 (spans it) or 0 (broadcasts it).
type plan struct {
	total     int
	inner     int
	dims      []int   // outer dims, outermost first
	strides   [][]int // strides[k][j]: input k's element stride for outer dim j
	innerStep []int   // per input: 1 or 0

	// Inline storage for the slices above when the plan is small (every
	// elementwise op of a model, nearly always): a plan is then one
	// allocation instead of a dozen, which on models of many small ops was
	// 40% of a node's run time (docs/performance.md, "Per-node overhead").
	dimsBuf   [planInlineDims]int
	stepBuf   [planInlineIns]int
	rowsBuf   [planInlineIns][]int
	strideBuf [planInlineIns * planInlineDims]int
}

const (
	planInlineIns  = 4
	planInlineDims = 8
)

// broadcastShape is the numpy broadcast of shapes.
func broadcastShape(shapes ...[]int64) ([]int64, error) {
	rank := 0
	for _, s := range shapes {
		rank = max(rank, len(s))
	}
	out := make([]int64, rank)
	for i := range out {
		out[i] = 1
	}
	for _, s := range shapes {
		off := rank - len(s)
		for i, d := range s {
			o := &out[off+i]
			switch {
			case d == *o || d == 1:
			case *o == 1:
				*o = d
			default:
				return nil, fmt.Errorf("shapes %v do not broadcast", shapes)
			}
		}
	}
	return out, nil
}

func newPlan(out []int64, ins ...[]int64) (*plan, error) {
	rank := len(out)
	for _, s := range ins {
		if len(s) > rank {
			return nil, fmt.Errorf("input shape %v has higher rank than output %v", s, out)
		}
	}
	nin := len(ins)
	p := planPool.Get().(*plan)
	*p = plan{total: 1}
	if nin <= planInlineIns {
		p.innerStep, p.strides = p.stepBuf[:nin], p.rowsBuf[:nin]
	} else {
		p.innerStep, p.strides = make([]int, nin), make([][]int, nin)
	}
	// spans(k, j): input k spans output dim j (as opposed to broadcasting it).
	spans := func(k, j int) bool {
		s := ins[k]
		off := rank - len(s)
		return j >= off && s[j-off] == out[j]
	}
	for j, d := range out {
		p.total *= int(d)
		if d == 1 {
			continue
		}
		for _, s := range ins {
			off := rank - len(s)
			if j >= off && s[j-off] != d && s[j-off] != 1 {
				return nil, fmt.Errorf("input shape %v does not broadcast to %v", s, out)
			}
		}
	}
	if p.total == 0 {
		return p, nil
	}
	// Merge adjacent kept dims (size > 1) with the same span/broadcast
	// pattern in every input; first[m] is the first output dim of merged dim m.
	var dimsLocal, firstLocal [planInlineDims]int
	dims, first := dimsLocal[:0], firstLocal[:0]
	prev := -1
	for j, d := range out {
		if d == 1 {
			continue
		}
		merge := prev >= 0
		for k := 0; merge && k < nin; k++ {
			merge = spans(k, j) == spans(k, prev)
		}
		prev = j
		if merge {
			dims[len(dims)-1] *= int(d)
			continue
		}
		dims = append(dims, int(d))
		first = append(first, j)
	}
	if len(dims) == 0 {
		p.inner = 1
		return p, nil
	}
	m := len(dims)
	p.inner = dims[m-1]
	if m-1 <= planInlineDims {
		p.dims = append(p.dimsBuf[:0], dims[:m-1]...)
	} else {
		p.dims = append([]int(nil), dims[:m-1]...)
	}
	var stride []int
	if nin*m <= len(p.strideBuf) {
		stride = p.strideBuf[:nin*m]
	} else {
		stride = make([]int, nin*m)
	}
	for k := range ins {
		st := stride[k*m : (k+1)*m : (k+1)*m]
		acc := 1
		for j := m - 1; j >= 0; j-- {
			if spans(k, first[j]) {
				st[j] = acc
				acc *= dims[j]
			}
		}
		if spans(k, first[m-1]) {
			p.innerStep[k] = 1
		}
		p.strides[k] = st[:m-1]
	}
	return p, nil
}

// planPool recycles plans: callers that are done with one give it back
// with free (a plan is about 600 bytes with pointers, and every
// elementwise op makes one per run).
var planPool = sync.Pool{New: func() any { return new(plan) }}

// free gives p back to the pool; p must not be used afterwards.
func (p *plan) free() {
	if p != nil {
		planPool.Put(p)
	}
}

// run calls body for every run of consecutive output elements that share one
// inner row: dst is the flat output index of the run's start, offs the flat
// input indices (valid until body returns), n the run length. Work is split
// across ctx.Threads by flat output ranges.
func (p *plan) run(ctx *opkernel.Ctx, body func(dst int, offs []int, n int)) {
	opkernel.ParallelFor(ctx, p.total, grain, func(s, e int) { p.runRange(s, e, body) })
}

func (p *plan) runRange(s, e int, body func(dst int, offs []int, n int)) {
	if s >= e {
		return
	}
	nin := len(p.innerStep)
	scratch := make([]int, 2*nin+len(p.dims)) // one allocation per range
	offs, base, idx := scratch[:nin:nin], scratch[nin:2*nin:2*nin], scratch[2*nin:]
	row, col := s/p.inner, s%p.inner
	for j := len(p.dims) - 1; j >= 0; j-- {
		idx[j] = row % p.dims[j]
		row /= p.dims[j]
	}
	for k := 0; k < nin; k++ {
		b := 0
		for j, i := range idx {
			b += i * p.strides[k][j]
		}
		base[k] = b
	}
	for pos := s; pos < e; {
		n := min(p.inner-col, e-pos)
		for k := 0; k < nin; k++ {
			offs[k] = base[k] + col*p.innerStep[k]
		}
		body(pos, offs, n)
		pos += n
		col = 0
		// Advance the odometer over the outer dims.
		for j := len(idx) - 1; j >= 0; j-- {
			idx[j]++
			for k := 0; k < nin; k++ {
				base[k] += p.strides[k][j]
			}
			if idx[j] < p.dims[j] {
				break
			}
			for k := 0; k < nin; k++ {
				base[k] -= idx[j] * p.strides[k][j]
			}
			idx[j] = 0
		}
	}
}
