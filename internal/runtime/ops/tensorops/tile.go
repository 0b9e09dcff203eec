package tensorops

import (
	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
	"slices"
)

func init() {
	regMove("Tile", firstIn, tileOp[uint8], tileOp[uint16], tileOp[uint32], tileOp[uint64], tileOp[b16], tileOp[string])
	regMove("DepthToSpace", firstIn, depthToSpaceOp[uint8], depthToSpaceOp[uint16], depthToSpaceOp[uint32], depthToSpaceOp[uint64], depthToSpaceOp[b16], depthToSpaceOp[string])
	regMove("SpaceToDepth", firstIn, spaceToDepthOp[uint8], spaceToDepthOp[uint16], spaceToDepthOp[uint32], spaceToDepthOp[uint64], spaceToDepthOp[b16], spaceToDepthOp[string])
}

// tileOp: out[p] = x[p mod shape]. Each output row (last dim) is the source
// row repeated, so a row is copied once and then doubled in place.
func tileOp[T any](ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := needIn(n, in, out, 2, 1); err != nil {
		return err
	}
	x := in[0]
	reps, err := in[1].Int64s()
	if err != nil {
		return errf(n, "repeats: %v", err)
	}
	rank := len(x.Shape)
	if len(reps) != rank {
		return errf(n, "repeats has %d entries for rank %d", len(reps), rank)
	}
	o := out[0]
	if len(o.Shape) != rank {
		return errf(n, "output %s has the wrong rank", o)
	}
	for i, r := range reps {
		if r < 0 || o.Shape[i] != x.Shape[i]*r {
			return errf(n, "output shape %v does not match input %v tiled by %v", o.Shape, x.Shape, reps)
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
	if rank == 0 {
		dst[0] = src[0]
		return nil
	}
	xd, od := dims(x.Shape), dims(o.Shape)
	inRow, outRow := xd[rank-1], od[rank-1]
	inStride := make([]int, rank)
	st := 1
	for i := rank - 1; i >= 0; i-- {
		inStride[i] = st
		st *= xd[i]
	}
	rows := len(dst) / outRow
	run[T](ctx, rows, outRow, func(start, end int) {
		for r := start; r < end; r++ {
			rem, base := r, 0
			for i := rank - 2; i >= 0; i-- {
				c := rem % od[i]
				rem /= od[i]
				base += (c % xd[i]) * inStride[i]
			}
			row := dst[r*outRow : (r+1)*outRow]
			copy(row, src[base:base+inRow])
			for k := inRow; k < outRow; k *= 2 {
				copy(row[k:], row[:k])
			}
		}
	})
	return nil
}

// blockInts reads the blocksize attribute and checks x is 4-D.
func blockArgs(n *ir.Node, in, out []*ir.Tensor) (b int, err error) {
	if err := needIn(n, in, out, 1, 1); err != nil {
		return 0, err
	}
	if len(in[0].Shape) != 4 {
		return 0, errf(n, "input must be 4-D, got %v", in[0].Shape)
	}
	bs := n.Attrs.Int("blocksize", 0)
	if bs < 1 {
		return 0, errf(n, "blocksize must be >= 1, got %d", bs)
	}
	return int(bs), nil
}

// depthToSpaceOp is a reshape + transpose: DCR views x as [N,b,b,C',H,W] and
// permutes (0,3,4,1,5,2); CRD views it as [N,C',b,b,H,W] and permutes
// (0,1,4,2,5,3).
func depthToSpaceOp[T any](ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	b, err := blockArgs(n, in, out)
	if err != nil {
		return err
	}
	d := dims(in[0].Shape)
	N, C, H, W := d[0], d[1], d[2], d[3]
	if C%(b*b) != 0 {
		return errf(n, "channels %d not divisible by blocksize^2 %d", C, b*b)
	}
	c := C / (b * b)
	if !slices.Equal(out[0].Shape, []int64{int64(N), int64(c), int64(H * b), int64(W * b)}) {
		return errf(n, "output shape %v does not match input %v with blocksize %d", out[0].Shape, in[0].Shape, b)
	}
	var shape, perm []int
	switch mode := n.Attrs.String("mode", "DCR"); mode {
	case "DCR":
		shape, perm = []int{N, b, b, c, H, W}, []int{0, 3, 4, 1, 5, 2}
	case "CRD":
		shape, perm = []int{N, c, b, b, H, W}, []int{0, 1, 4, 2, 5, 3}
	default:
		return opkernel.Unsupportedf(n, "mode %q", mode)
	}
	return permuteAs[T](ctx, n, in[0], out[0], shape, perm)
}

// spaceToDepthOp views x as [N,C,H/b,b,W/b,b] and permutes (0,3,5,1,2,4).
func spaceToDepthOp[T any](ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	b, err := blockArgs(n, in, out)
	if err != nil {
		return err
	}
	d := dims(in[0].Shape)
	N, C, H, W := d[0], d[1], d[2], d[3]
	if H%b != 0 || W%b != 0 {
		return errf(n, "spatial dims %dx%d not divisible by blocksize %d", H, W, b)
	}
	if !slices.Equal(out[0].Shape, []int64{int64(N), int64(C * b * b), int64(H / b), int64(W / b)}) {
		return errf(n, "output shape %v does not match input %v with blocksize %d", out[0].Shape, in[0].Shape, b)
	}
	return permuteAs[T](ctx, n, in[0], out[0], []int{N, C, H / b, b, W / b, b}, []int{0, 3, 5, 1, 2, 4})
}

func permuteAs[T any](ctx *opkernel.Ctx, n *ir.Node, x, o *ir.Tensor, shape, perm []int) error {
	src, err := elems[T](n, x, "input")
	if err != nil {
		return err
	}
	dst, err := elems[T](n, o, "output")
	if err != nil {
		return err
	}
	transposeT(ctx, dst, src, shape, perm)
	return nil
}
