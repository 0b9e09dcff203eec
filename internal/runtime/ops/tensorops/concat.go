package tensorops

import (
	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

func init() {
	regMove("Concat", firstOut, concatOp[uint8], concatOp[uint16], concatOp[uint32], concatOp[uint64], concatOp[b16], concatOp[string])
	regMove("Split", firstIn, splitOp[uint8], splitOp[uint16], splitOp[uint32], splitOp[uint64], splitOp[b16], splitOp[string])
}

// concatOp: for each outer index (dims before axis) the output row is the
// inputs' rows one after another, so every input contributes one contiguous
// run per outer index.
func concatOp[T any](ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if len(in) == 0 {
		return errf(n, "no inputs")
	}
	if err := needIn(n, in, out, len(in), 1); err != nil {
		return err
	}
	o := out[0]
	rank := len(o.Shape)
	axis, err := normAxis(n, n.Attrs.Int("axis", 0), rank)
	if err != nil {
		return err
	}
	dst, err := elems[T](n, o, "output")
	if err != nil {
		return err
	}
	od := dims(o.Shape)
	outer, inner := prod(od[:axis]), prod(od[axis+1:])
	srcs := make([][]T, len(in))
	runs := make([]int, len(in))
	sum := 0
	for i, t := range in {
		if t.DType != o.DType || len(t.Shape) != rank {
			return errf(n, "input %d %s does not match output %s", i, t, o)
		}
		for d := range rank {
			if d != axis && t.Shape[d] != o.Shape[d] {
				return errf(n, "input %d shape %v does not match output %v outside axis %d", i, t.Shape, o.Shape, axis)
			}
		}
		if srcs[i], err = elems[T](n, t, "input"); err != nil {
			return err
		}
		runs[i] = int(t.Shape[axis]) * inner
		sum += int(t.Shape[axis])
	}
	if sum != od[axis] {
		return errf(n, "inputs sum to %d along axis %d, output has %d", sum, axis, od[axis])
	}
	if len(dst) == 0 {
		return nil
	}
	row := od[axis] * inner
	if outer == 1 {
		off := 0
		for i, s := range srcs {
			parCopy(ctx, dst[off:off+runs[i]], s)
			off += runs[i]
		}
		return nil
	}
	run[T](ctx, outer, row, func(start, end int) {
		for b := start; b < end; b++ {
			off := b * row
			for i, s := range srcs {
				rl := runs[i]
				copy(dst[off:off+rl], s[b*rl:(b+1)*rl])
				off += rl
			}
		}
	})
	return nil
}

// splitOp takes the chunk sizes from the output shapes (the executor computed
// them from split / num_outputs); an optional split input must agree.
func splitOp[T any](ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := needIn(n, in, out, 1, len(out)); err != nil {
		return err
	}
	if len(out) == 0 {
		return errf(n, "no outputs")
	}
	x := in[0]
	rank := len(x.Shape)
	axis, err := normAxis(n, n.Attrs.Int("axis", 0), rank)
	if err != nil {
		return err
	}
	src, err := elems[T](n, x, "input")
	if err != nil {
		return err
	}
	xd := dims(x.Shape)
	outer, inner := prod(xd[:axis]), prod(xd[axis+1:])
	var split []int64
	if s := optIn(in, 1); s != nil {
		if split, err = s.Int64s(); err != nil {
			return errf(n, "split: %v", err)
		}
		if len(split) != len(out) {
			return errf(n, "split has %d entries for %d outputs", len(split), len(out))
		}
	}
	dsts := make([][]T, len(out))
	runs := make([]int, len(out))
	sum := 0
	for i, t := range out {
		if len(t.Shape) != rank {
			return errf(n, "output %d %s has the wrong rank for input %s", i, t, x)
		}
		for d := range rank {
			if d != axis && t.Shape[d] != x.Shape[d] {
				return errf(n, "output %d shape %v does not match input %v outside axis %d", i, t.Shape, x.Shape, axis)
			}
		}
		if split != nil && split[i] != t.Shape[axis] {
			return errf(n, "output %d has %d along axis %d, split says %d", i, t.Shape[axis], axis, split[i])
		}
		if dsts[i], err = elems[T](n, t, "output"); err != nil {
			return err
		}
		runs[i] = int(t.Shape[axis]) * inner
		sum += int(t.Shape[axis])
	}
	if sum != xd[axis] {
		return errf(n, "outputs sum to %d along axis %d, input has %d", sum, axis, xd[axis])
	}
	if len(src) == 0 {
		return nil
	}
	row := xd[axis] * inner
	if outer == 1 {
		off := 0
		for i, d := range dsts {
			parCopy(ctx, d, src[off:off+runs[i]])
			off += runs[i]
		}
		return nil
	}
	run[T](ctx, outer, row, func(start, end int) {
		for b := start; b < end; b++ {
			off := b * row
			for i, d := range dsts {
				rl := runs[i]
				copy(d[b*rl:(b+1)*rl], src[off:off+rl])
				off += rl
			}
		}
	})
	return nil
}
