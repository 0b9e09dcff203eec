package elementwise

import (
	"fmt"

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
}

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
	// full[k][j]: input k spans kept output dim j (as opposed to broadcasting it).
	var keptDims []int
	full := make([][]bool, len(ins))
	for j, d := range out {
		if d == 1 {
			continue
		}
		for k, s := range ins {
			off := rank - len(s)
			id := int64(1)
			if j >= off {
				id = s[j-off]
			}
			if id != d && id != 1 {
				return nil, fmt.Errorf("input shape %v does not broadcast to %v", s, out)
			}
			full[k] = append(full[k], id == d)
		}
		keptDims = append(keptDims, int(d))
	}
	p := &plan{total: 1, innerStep: make([]int, len(ins)), strides: make([][]int, len(ins))}
	for _, d := range out {
		p.total *= int(d)
	}
	if p.total == 0 {
		return p, nil
	}
	// Merge adjacent dims with the same span/broadcast pattern in every input.
	var dims []int
	var pat [][]bool // pat[k] per merged dim
	pat = make([][]bool, len(ins))
	for j, d := range keptDims {
		merge := j > 0
		if merge {
			for k := range ins {
				if full[k][j] != full[k][j-1] {
					merge = false
					break
				}
			}
		}
		if merge {
			dims[len(dims)-1] *= d
			continue
		}
		dims = append(dims, d)
		for k := range ins {
			pat[k] = append(pat[k], full[k][j])
		}
	}
	if len(dims) == 0 {
		p.inner = 1
		return p, nil
	}
	m := len(dims)
	p.inner = dims[m-1]
	p.dims = dims[:m-1]
	for k := range ins {
		st := make([]int, m)
		acc := 1
		for j := m - 1; j >= 0; j-- {
			if pat[k][j] {
				st[j] = acc
				acc *= dims[j]
			}
		}
		if pat[k][m-1] {
			p.innerStep[k] = 1
		}
		p.strides[k] = st[:m-1]
	}
	return p, nil
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
	offs := make([]int, nin)
	base := make([]int, nin)
	idx := make([]int, len(p.dims))
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
