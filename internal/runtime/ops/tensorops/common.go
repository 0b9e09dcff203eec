// Package tensorops implements the data-movement and shape ops of the CPU
// runtime (Reshape, Transpose, Concat, Slice, Gather, Pad, TopK, ...) with
// ONNX semantics.
//
// Ops that only move elements are written once as generic functions over an
// element type chosen by element size (uint8, uint16, uint32, uint64, [16]byte)
// or string for String tensors, so every dtype shares one implementation and
// contiguous runs move with copy().
package tensorops

import (
	"fmt"
	"unsafe"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// b16 stands for 16-byte elements (complex128).
type b16 = [16]byte

// parBytes is the size below which a copy is not worth splitting across
// threads: below a few MiB the data sits in cache, one core already moves it
// at 20-40 GB/s and goroutine start-up plus cross-core cache traffic made
// 2 threads slower in BenchmarkSplitQKV / BenchmarkTranspose0213.
// It is a variable so tests can lower it to exercise the parallel paths.
var parBytes = 2 << 20

// errf builds an error that names the node.
func errf(n *ir.Node, format string, args ...any) error {
	return fmt.Errorf("node %s (%s): %s", n.Name, n.Op, fmt.Sprintf(format, args...))
}

// sizeOf is the in-memory size of one T.
func sizeOf[T any]() int {
	var z T
	return int(unsafe.Sizeof(z))
}

// elems returns the elements of t as []T without copying, checking that the
// buffer holds as many elements as the shape says. T must match the dtype's
// element size (byElemSize guarantees it), or be string for String tensors.
func elems[T any](n *ir.Node, t *ir.Tensor, what string) ([]T, error) {
	cnt := t.NumElements()
	if cnt < 0 {
		return nil, errf(n, "%s has unknown dims %v", what, t.Shape)
	}
	var z T
	if _, isStr := any(z).(string); isStr != (t.DType == ir.String) {
		return nil, errf(n, "%s: dtype %s does not match the kernel's element type", what, t.DType)
	}
	var s []T
	if t.DType == ir.String {
		s = any(t.Strings).([]T)
	} else if sz := int(unsafe.Sizeof(z)); len(t.Data) >= sz {
		s = unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(t.Data))), len(t.Data)/sz)
	}
	if int64(len(s)) < cnt {
		return nil, errf(n, "%s %s holds %d elements, shape needs %d", what, t, len(s), cnt)
	}
	return s[:cnt], nil
}

// byElemSize dispatches to the instance of a generic kernel that matches the
// element size of the dtype pick returns; every output must have that dtype
// when sameOut is set.
func byElemSize(pick func(in, out []*ir.Tensor) *ir.Tensor, sameOut bool, f1, f2, f4, f8, f16, fs opkernel.Func) opkernel.Func {
	return func(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
		t := pick(in, out)
		if t == nil {
			return errf(n, "missing input or output")
		}
		dt := t.DType
		if sameOut {
			for i, o := range out {
				if o != nil && o.DType != dt {
					return errf(n, "output %d has dtype %s, expected %s", i, o.DType, dt)
				}
			}
		}
		var f opkernel.Func
		if dt == ir.String {
			f = fs
		} else {
			switch dt.Size() {
			case 1:
				f = f1
			case 2:
				f = f2
			case 4:
				f = f4
			case 8:
				f = f8
			case 16:
				f = f16
			}
		}
		if f == nil {
			return opkernel.Unsupportedf(n, "dtype %s", dt)
		}
		return f(ctx, n, in, out)
	}
}

func firstIn(in, out []*ir.Tensor) *ir.Tensor {
	if len(in) == 0 {
		return nil
	}
	return in[0]
}

func firstOut(in, out []*ir.Tensor) *ir.Tensor {
	if len(out) == 0 {
		return nil
	}
	return out[0]
}

// regMove registers a generic element-moving kernel for every element size.
// Go cannot pass a generic function uninstantiated, hence the explicit list.
func regMove(op string, pick func(in, out []*ir.Tensor) *ir.Tensor, f1, f2, f4, f8, f16, fs opkernel.Func) {
	opkernel.Register(op, byElemSize(pick, true, f1, f2, f4, f8, f16, fs))
}

// needIn checks that inputs 0..k-1 are present and that there are nOut outputs.
func needIn(n *ir.Node, in, out []*ir.Tensor, k, nOut int) error {
	if len(in) < k {
		return errf(n, "expected at least %d inputs, got %d", k, len(in))
	}
	for i := 0; i < k; i++ {
		if in[i] == nil {
			return errf(n, "input %d is missing", i)
		}
	}
	if len(out) < nOut {
		return errf(n, "expected %d outputs, got %d", nOut, len(out))
	}
	for i := 0; i < nOut; i++ {
		if out[i] == nil {
			return errf(n, "output %d is missing", i)
		}
	}
	return nil
}

// optIn returns input i or nil.
func optIn(in []*ir.Tensor, i int) *ir.Tensor {
	if i < len(in) {
		return in[i]
	}
	return nil
}

// dims converts a shape to ints.
func dims(shape []int64) []int {
	d := make([]int, len(shape))
	for i, v := range shape {
		d[i] = int(v)
	}
	return d
}

func prod(d []int) int {
	p := 1
	for _, v := range d {
		p *= v
	}
	return p
}

// normAxis maps a possibly negative axis into [0, rank).
func normAxis(n *ir.Node, axis int64, rank int) (int, error) {
	if axis < -int64(rank) || axis >= int64(rank) {
		return 0, errf(n, "axis %d out of range for rank %d", axis, rank)
	}
	if axis < 0 {
		axis += int64(rank)
	}
	return int(axis), nil
}

// parCopy copies src into dst, split across threads when large.
func parCopy[T any](ctx *opkernel.Ctx, dst, src []T) {
	n := len(src)
	sz := sizeOf[T]()
	if n*sz < parBytes || ctx == nil || ctx.Threads <= 1 {
		copy(dst, src)
		return
	}
	opkernel.ParallelFor(ctx, n, parBytes/2/sz, func(s, e int) { copy(dst[s:e], src[s:e]) })
}

// fill sets every element of dst to v, doubling copies for speed.
func fill[T any](dst []T, v T) {
	if len(dst) == 0 {
		return
	}
	dst[0] = v
	for k := 1; k < len(dst); k *= 2 {
		copy(dst[k:], dst[:k])
	}
}

// grainFor returns how many units of unitElems elements make a chunk worth a
// goroutine, and whether the whole job is worth parallelising at all.
func grainFor[T any](ctx *opkernel.Ctx, units, unitElems int) (grain int, par bool) {
	sz := sizeOf[T]()
	if unitElems < 1 {
		unitElems = 1
	}
	total := units * unitElems * sz
	if ctx == nil || ctx.Threads <= 1 || total < parBytes {
		return units, false
	}
	g := (parBytes / 4) / (unitElems * sz)
	if g < 1 {
		g = 1
	}
	return g, true
}

// run executes body over [0,units) either inline or with opkernel.ParallelFor.
func run[T any](ctx *opkernel.Ctx, units, unitElems int, body func(s, e int)) {
	g, par := grainFor[T](ctx, units, unitElems)
	if !par {
		body(0, units)
		return
	}
	opkernel.ParallelFor(ctx, units, g, body)
}
