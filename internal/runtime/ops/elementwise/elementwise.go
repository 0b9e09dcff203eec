// Package elementwise is the CPU op library for unary and broadcasting
// binary/n-ary elementwise ops, Cast, reductions, arg-reductions, Softmax,
// LogSoftmax and CumSum. Ops follow ONNX semantics under their IR names
// (internal/ir/ops.go) and register with opkernel.Register in init.
//
// float16 and bfloat16 are computed in float32 (converted in, converted
// out); the hot float32 loops live in C (fast_cgo.go) with a pure-Go
// fallback when cgo is off.
package elementwise

import (
	"fmt"
	"sync"
	"unsafe"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

type integer interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

type float interface{ ~float32 | ~float64 }

type number interface{ integer | float }

// grain is the minimum number of elements per worker for cheap elementwise
// loops; below it a goroutine costs more than it saves.
const grain = 32 << 10

// data returns t.Data viewed as []T, without copying.
func data[T any](t *ir.Tensor) []T {
	var z T
	sz := int(unsafe.Sizeof(z))
	if len(t.Data) < sz {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&t.Data[0])), len(t.Data)/sz)
}

// widen returns t itself, or a float32 copy when t is float16/bfloat16.
func widen(t *ir.Tensor) *ir.Tensor {
	if t != nil && opkernel.IsHalf(t.DType) {
		return opkernel.HalfToF32(t)
	}
	return t
}

// halfScratch lends float32 buffers for the float16 paths, so a float16
// model's element-wise ops do not allocate (and zero) three tensors each.
var halfScratch sync.Pool

// widenPooled is widen on a lent buffer; release gives the buffers back.
func widenPooled(t *ir.Tensor, held *[]*[]float32) *ir.Tensor {
	if t == nil || !opkernel.IsHalf(t.DType) {
		return t
	}
	w := pooledF32(t.Shape, int(t.NumElements()), held)
	opkernel.HalfToF32Into(w.F32(), t)
	return w
}

func pooledF32(shape []int64, n int, held *[]*[]float32) *ir.Tensor {
	p, _ := halfScratch.Get().(*[]float32)
	if p == nil || cap(*p) < n {
		s := make([]float32, n)
		p = &s
	}
	*p = (*p)[:n]
	*held = append(*held, p)
	var raw []byte
	if n > 0 {
		raw = unsafe.Slice((*byte)(unsafe.Pointer(&(*p)[0])), 4*n)
	}
	return &ir.Tensor{DType: ir.Float32, Shape: shape, Data: raw}
}

func release(held []*[]float32) {
	for _, p := range held {
		halfScratch.Put(p)
	}
}

// halfOut returns a float32 scratch tensor standing in for a half output, and
// a function that writes the scratch back; for other outputs it returns the
// output itself and a no-op.
func halfOut(out *ir.Tensor) (*ir.Tensor, func()) {
	if !opkernel.IsHalf(out.DType) {
		return out, func() {}
	}
	tmp := ir.NewTensor(ir.Float32, out.Shape)
	return tmp, func() { opkernel.F32ToHalf(out, tmp.F32()) }
}

func checkArity(n *ir.Node, in, out []*ir.Tensor, minIn, maxIn, minOut int) error {
	if len(in) < minIn || (maxIn >= 0 && len(in) > maxIn) {
		return fmt.Errorf("node %s (%s): got %d inputs, want %d..%d", n.Name, n.Op, len(in), minIn, maxIn)
	}
	for i := 0; i < minIn; i++ {
		if in[i] == nil {
			return fmt.Errorf("node %s (%s): input %d is missing", n.Name, n.Op, i)
		}
	}
	if len(out) < minOut || out[0] == nil {
		return fmt.Errorf("node %s (%s): got %d outputs, want at least %d", n.Name, n.Op, len(out), minOut)
	}
	return nil
}

func nodeErr(n *ir.Node, format string, args ...any) error {
	return fmt.Errorf("node %s (%s): %s", n.Name, n.Op, fmt.Sprintf(format, args...))
}

// normAxis maps a possibly negative axis into [0, rank).
func normAxis(n *ir.Node, axis int64, rank int) (int, error) {
	if axis < 0 {
		axis += int64(rank)
	}
	if axis < 0 || axis >= int64(rank) {
		return 0, nodeErr(n, "axis %d out of range for rank %d", axis, rank)
	}
	return int(axis), nil
}
