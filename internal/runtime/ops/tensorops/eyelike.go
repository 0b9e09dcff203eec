package tensorops

import (
	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

func init() { opkernel.Register("EyeLike", eyeLike) }

// eyeLike is ONNX EyeLike: a 2-D tensor of the input's shape (dtype attr or
// the input's) with ones on the diagonal shifted by k (k > 0 above the main
// diagonal) and zeros elsewhere.
func eyeLike(_ *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if len(in) < 1 || in[0] == nil || len(out) < 1 || out[0] == nil {
		return errf(n, "needs one input and one output")
	}
	y := out[0]
	if len(y.Shape) != 2 || len(in[0].Shape) != 2 || y.Shape[0] != in[0].Shape[0] || y.Shape[1] != in[0].Shape[1] {
		return errf(n, "input %v and output %v must be the same 2-D shape", in[0].Shape, y.Shape)
	}
	sz := y.DType.Size()
	if sz == 0 || y.DType == ir.String {
		return opkernel.Unsupportedf(n, "dtype %s", y.DType)
	}
	one := ir.NewTensor(y.DType, []int64{1})
	if y.DType.IsFloat() {
		one.PutFloat(0, 1)
	} else {
		one.Data[0] = 1 // little-endian integers and bool
	}
	clear(y.Data)
	rows, cols, k := int(y.Shape[0]), int(y.Shape[1]), int(n.Attrs.Int("k", 0))
	for i := 0; i < rows; i++ {
		if j := i + k; j >= 0 && j < cols {
			copy(y.Data[(i*cols+j)*sz:], one.Data[:sz])
		}
	}
	return nil
}
