package tensorops

import (
	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

func init() {
	regMove("Slice", firstIn, sliceOp[uint8], sliceOp[uint16], sliceOp[uint32], sliceOp[uint64], sliceOp[b16], sliceOp[string])
}

// sliceRange is the effective (start, step, count) of one dim after ONNX's
// clamping rules.
type sliceRange struct{ start, step, count int }

// sliceRanges resolves starts/ends/axes/steps for a tensor of shape d.
func sliceRanges(n *ir.Node, d []int, in []*ir.Tensor) ([]sliceRange, error) {
	rank := len(d)
	ints := func(i int, what string) ([]int64, error) {
		t := optIn(in, i)
		if t == nil {
			return nil, nil
		}
		v, err := t.Int64s()
		if err != nil {
			return nil, errf(n, "%s: %v", what, err)
		}
		return v, nil
	}
	starts, err := ints(1, "starts")
	if err != nil {
		return nil, err
	}
	ends, err := ints(2, "ends")
	if err != nil {
		return nil, err
	}
	axes, err := ints(3, "axes")
	if err != nil {
		return nil, err
	}
	steps, err := ints(4, "steps")
	if err != nil {
		return nil, err
	}
	if len(starts) != len(ends) {
		return nil, errf(n, "starts has %d entries, ends %d", len(starts), len(ends))
	}
	if axes == nil {
		if len(starts) > rank {
			return nil, errf(n, "%d starts for rank %d", len(starts), rank)
		}
		axes = make([]int64, len(starts))
		for i := range axes {
			axes[i] = int64(i)
		}
	}
	if len(axes) != len(starts) || (steps != nil && len(steps) != len(starts)) {
		return nil, errf(n, "starts, ends, axes and steps must have equal lengths")
	}
	r := make([]sliceRange, rank)
	for i, v := range d {
		r[i] = sliceRange{0, 1, v}
	}
	seen := make([]bool, rank)
	for i, a64 := range axes {
		a, err := normAxis(n, a64, rank)
		if err != nil {
			return nil, err
		}
		if seen[a] {
			return nil, errf(n, "axis %d repeated in axes", a)
		}
		seen[a] = true
		step := int64(1)
		if steps != nil {
			step = steps[i]
		}
		if step == 0 {
			return nil, errf(n, "step 0 on axis %d", a)
		}
		dim := int64(d[a])
		s, e := starts[i], ends[i]
		if s < 0 {
			s += dim
		}
		if e < 0 {
			e += dim
		}
		var cnt int64
		if step > 0 {
			s = clamp(s, 0, dim)
			e = clamp(e, 0, dim)
			if e > s {
				cnt = (e - s + step - 1) / step
			}
		} else {
			s = clamp(s, 0, dim-1)
			e = clamp(e, -1, dim-1)
			if s > e {
				cnt = (s - e - step - 1) / -step
			}
		}
		r[a] = sliceRange{int(s), int(step), int(cnt)}
	}
	return r, nil
}

func clamp(v, lo, hi int64) int64 {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}

func sliceOp[T any](ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := needIn(n, in, out, 3, 1); err != nil {
		return err
	}
	x := in[0]
	d := dims(x.Shape)
	rs, err := sliceRanges(n, d, in)
	if err != nil {
		return err
	}
	o := out[0]
	if len(o.Shape) != len(d) {
		return errf(n, "output %s has the wrong rank for input %s", o, x)
	}
	for i, r := range rs {
		if int(o.Shape[i]) != r.count {
			return errf(n, "output shape %v does not match the slice (dim %d has %d elements)", o.Shape, i, r.count)
		}
	}
	src, err := elems[T](n, x, "input")
	if err != nil {
		return err
	}
	dst, err := elems[T](n, o, "output")
	if err != nil {
		return err
	}
	if len(dst) == 0 {
		return nil
	}
	sliceT(ctx, dst, src, d, rs)
	return nil
}

// sliceT copies the selected elements. Trailing dims taken whole form one
// contiguous block; if the dim before them has step 1 its selection extends
// the run, so most slices are a loop of copy() calls.
func sliceT[T any](ctx *opkernel.Ctx, dst, src []T, d []int, rs []sliceRange) {
	rank := len(d)
	if rank == 0 {
		dst[0] = src[0]
		return
	}
	inStride := make([]int, rank)
	st := 1
	for i := rank - 1; i >= 0; i-- {
		inStride[i] = st
		st *= d[i]
	}
	// k: first dim of the whole trailing block
	k := rank
	for k > 0 && rs[k-1].start == 0 && rs[k-1].step == 1 && rs[k-1].count == d[k-1] {
		k--
	}
	block := prod(d[k:])
	if k == 0 {
		parCopy(ctx, dst, src)
		return
	}
	// the last partial dim, k-1, in units of blocks
	last := rs[k-1]
	runLen, elemStep := block, 0
	if last.step == 1 {
		runLen = last.count * block
	} else {
		elemStep = last.step * inStride[k-1]
	}
	odims := make([]int, k-1)
	base := last.start * inStride[k-1]
	ostr := make([]int, k-1)
	for i := 0; i < k-1; i++ {
		odims[i] = rs[i].count
		ostr[i] = rs[i].step * inStride[i]
		base += rs[i].start * inStride[i]
	}
	rowLen := last.count * block // output elements per outer index
	outer := len(dst) / rowLen
	run[T](ctx, outer, rowLen, func(start, end int) {
		idx := make([]int, len(odims))
		off := base
		rem := start
		for i := len(odims) - 1; i >= 0; i-- {
			idx[i] = rem % odims[i]
			rem /= odims[i]
			off += idx[i] * ostr[i]
		}
		for o := start; o < end; o++ {
			row := dst[o*rowLen : (o+1)*rowLen]
			if elemStep == 0 {
				copy(row, src[off:off+runLen])
			} else if block == 1 {
				p := off
				for j := range row {
					row[j] = src[p]
					p += elemStep
				}
			} else {
				p := off
				for j := 0; j < len(row); j += block {
					copy(row[j:j+block], src[p:p+block])
					p += elemStep
				}
			}
			for i := len(odims) - 1; i >= 0; i-- {
				idx[i]++
				off += ostr[i]
				if idx[i] < odims[i] {
					break
				}
				off -= idx[i] * ostr[i]
				idx[i] = 0
			}
		}
	})
}
