package tensorops

import (
	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
	"slices"
)

func init() {
	regMove("Gather", firstIn, gatherOp[uint8], gatherOp[uint16], gatherOp[uint32], gatherOp[uint64], gatherOp[b16], gatherOp[string])
	regMove("GatherD", firstIn, gatherElemsOp[uint8], gatherElemsOp[uint16], gatherElemsOp[uint32], gatherElemsOp[uint64], gatherElemsOp[b16], gatherElemsOp[string])
}

// indexList reads an int32/int64 indices tensor, wrapping negative indices
// and rejecting out-of-range ones (ONNX leaves them undefined; reading past
// the tensor would be a crash).
func indexList(n *ir.Node, t *ir.Tensor, dim int) ([]int, error) {
	if t.DType != ir.Int64 && t.DType != ir.Int32 {
		return nil, errf(n, "indices must be int32 or int64, got %s", t.DType)
	}
	v, err := t.Int64s()
	if err != nil {
		return nil, errf(n, "indices: %v", err)
	}
	idx := make([]int, len(v))
	for i, x := range v {
		if x < 0 {
			x += int64(dim)
		}
		if x < 0 || x >= int64(dim) {
			return nil, errf(n, "index %d out of range [%d, %d)", v[i], -dim, dim)
		}
		idx[i] = int(x)
	}
	return idx, nil
}

// gatherOp: out[o, j..., i] = data[o, idx[j...], i]; with data viewed as
// [outer, dim, inner] every index selects one contiguous run of inner
// elements (a whole embedding row for axis 0).
func gatherOp[T any](ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := needIn(n, in, out, 2, 1); err != nil {
		return err
	}
	x, it := in[0], in[1]
	rank := len(x.Shape)
	axis, err := normAxis(n, n.Attrs.Int("axis", 0), rank)
	if err != nil {
		return err
	}
	xd := dims(x.Shape)
	dim := xd[axis]
	outer, inner := prod(xd[:axis]), prod(xd[axis+1:])
	want := append(append(append([]int64{}, x.Shape[:axis]...), it.Shape...), x.Shape[axis+1:]...)
	if !slices.Equal(want, out[0].Shape) {
		return errf(n, "output shape %v, expected %v", out[0].Shape, want)
	}
	idx, err := indexList(n, it, dim)
	if err != nil {
		return err
	}
	src, err := elems[T](n, x, "input")
	if err != nil {
		return err
	}
	dst, err := elems[T](n, out[0], "output")
	if err != nil {
		return err
	}
	if len(dst) == 0 {
		return nil
	}
	ni := len(idx)
	run[T](ctx, outer*ni, inner, func(start, end int) {
		for u := start; u < end; u++ {
			o, j := u/ni, u%ni
			s := (o*dim + idx[j]) * inner
			if inner == 1 {
				dst[u] = src[s]
			} else {
				copy(dst[u*inner:(u+1)*inner], src[s:s+inner])
			}
		}
	})
	return nil
}

// gatherElemsOp (ONNX GatherElements): out has the indices' shape and
// out[p] = data[p with p[axis] replaced by indices[p]].
func gatherElemsOp[T any](ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := needIn(n, in, out, 2, 1); err != nil {
		return err
	}
	x, it := in[0], in[1]
	rank := len(x.Shape)
	axis, err := normAxis(n, n.Attrs.Int("axis", 0), rank)
	if err != nil {
		return err
	}
	if len(it.Shape) != rank {
		return errf(n, "indices rank %d differs from data rank %d", len(it.Shape), rank)
	}
	for d := range rank {
		if d != axis && it.Shape[d] > x.Shape[d] {
			return errf(n, "indices shape %v exceeds data shape %v on dim %d", it.Shape, x.Shape, d)
		}
	}
	if !slices.Equal(it.Shape, out[0].Shape) {
		return errf(n, "output shape %v differs from indices shape %v", out[0].Shape, it.Shape)
	}
	xd, id := dims(x.Shape), dims(it.Shape)
	idx, err := indexList(n, it, xd[axis])
	if err != nil {
		return err
	}
	src, err := elems[T](n, x, "input")
	if err != nil {
		return err
	}
	dst, err := elems[T](n, out[0], "output")
	if err != nil {
		return err
	}
	if len(dst) == 0 {
		return nil
	}
	inStride := make([]int, rank)
	st := 1
	for d := rank - 1; d >= 0; d-- {
		inStride[d] = st
		st *= xd[d]
	}
	// walk the indices with an odometer over all dims but the last
	lastDim := id[rank-1]
	rows := len(dst) / lastDim
	run[T](ctx, rows, lastDim, func(start, end int) {
		coord := make([]int, rank-1)
		rem := start
		for d := rank - 2; d >= 0; d-- {
			coord[d] = rem % id[d]
			rem /= id[d]
		}
		for r := start; r < end; r++ {
			base := 0
			for d, c := range coord {
				if d != axis {
					base += c * inStride[d]
				}
			}
			row := dst[r*lastDim : (r+1)*lastDim]
			ri := idx[r*lastDim : (r+1)*lastDim]
			if axis == rank-1 {
				for j := range row {
					row[j] = src[base+ri[j]]
				}
			} else {
				as := inStride[axis]
				for j := range row {
					row[j] = src[base+ri[j]*as+j]
				}
			}
			for d := rank - 2; d >= 0; d-- {
				coord[d]++
				if coord[d] < id[d] {
					break
				}
				coord[d] = 0
			}
		}
	})
	return nil
}
