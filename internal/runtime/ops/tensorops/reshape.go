package tensorops

import (
	"unsafe"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// The RESHAPE ops (Reshape, Flatten, Squeeze, Unsqueeze) keep the
// row-major element order: the executor computed the output shape, so the
// kernel only copies the elements (and skips the copy when the executor made
// the output alias the input).
func init() {
	for _, o := range ir.Ops() {
		if o.IsReshape() {
			regMove(o.Name, firstIn, copyAll[uint8], copyAll[uint16], copyAll[uint32], copyAll[uint64], copyAll[b16], copyAll[string])
		}
	}
}

func copyAll[T any](ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := needIn(n, in, out, 1, 1); err != nil {
		return err
	}
	src, err := elems[T](n, in[0], "input")
	if err != nil {
		return err
	}
	dst, err := elems[T](n, out[0], "output")
	if err != nil {
		return err
	}
	if len(src) != len(dst) {
		return errf(n, "input %s and output %s differ in element count", in[0], out[0])
	}
	if len(src) == 0 || sameStart(dst, src) {
		return nil
	}
	parCopy(ctx, dst, src)
	return nil
}

// sameStart reports whether two non-empty slices start at the same address.
func sameStart[T any](a, b []T) bool {
	return unsafe.Pointer(unsafe.SliceData(a)) == unsafe.Pointer(unsafe.SliceData(b))
}
