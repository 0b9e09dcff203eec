package tensorops

import (
	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// Ops whose output size depends on the data: NonZero and
// NonMaxSuppression. The runtime sizes their outputs by running the shape
// function on the actual inputs (ir.NonZeroPositions, ir.NMSSelect); the
// kernels run the same selection and check that it fits.

func init() {
	opkernel.Register("NonZero", nonZero)
	opkernel.Register("NonMaxSuppression", nonMaxSuppression)
}

// nonZero: out[d, j] is coordinate d of the j-th non-zero element in
// row-major order.
func nonZero(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := needIn(n, in, out, 1, 1); err != nil {
		return err
	}
	x := in[0]
	pos, err := ir.NonZeroPositions(x)
	if err != nil {
		return errf(n, "%v", err)
	}
	rank, cnt := len(x.Shape), len(pos)
	y := out[0]
	if y.DType != ir.Int64 || len(y.Shape) != 2 || y.Shape[0] != int64(rank) || y.Shape[1] != int64(cnt) {
		return errf(n, "output %s, expected int64 [%d, %d]", y, rank, cnt)
	}
	dst := y.I64()
	xd := dims(x.Shape)
	for j, p := range pos {
		for d := rank - 1; d >= 0; d-- {
			dst[d*cnt+j] = int64(p % xd[d])
			p /= xd[d]
		}
	}
	return nil
}

// nonMaxSuppression: out is [selected, 3] (batch, class, box) triples.
func nonMaxSuppression(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := needIn(n, in, out, 2, 1); err != nil {
		return err
	}
	sel, err := ir.NMSSelectTensors(n, in)
	if err != nil {
		return errf(n, "%v", err)
	}
	y := out[0]
	if y.DType != ir.Int64 || len(y.Shape) != 2 || y.Shape[1] != 3 || y.Shape[0]*3 != int64(len(sel)) {
		return errf(n, "output %s, expected int64 [%d, 3]", y, len(sel)/3)
	}
	copy(y.I64(), sel)
	return nil
}
