// Package nn implements the CPU kernels of the neural-network IR ops, with
// ONNX semantics (the ops and their attributes: ir.OpInfo in internal/ir):
// matrix products (plain, batched, quantized and integer), attention, every
// convolution form (direct, packed GEMM, Winograd, depthwise, transposed,
// deformable, integer and quantized), pooling, normalisations, losses,
// resampling and sampling (Resize, GridSample, RoiAlign), recurrent cells
// and a few signal and text ops. Each file's init registers its ops with
// opkernel; the registry, not this comment, is the list.
// float32 is the fast path (OpenBLAS GEMM, our packed GEMMs, C kernels with
// AVX-512 / AVX2 / portable levels chosen by cpuisa); float16 and bfloat16
// are computed in float32; float64 and integer types take generic paths.
package nn

import (
	"slices"
	"unsafe"

	"fmt"
	"sync"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

func init() {
	opkernel.Register("MatMul", matMul)
	opkernel.Register("Conv2D", conv)
	opkernel.RegisterPreparer("Conv2D", prepareConv)
	opkernel.Register("Conv2DTranspose", convTranspose)
	opkernel.Register("AvgPool", avgPool)
	opkernel.Register("MaxPool", maxPool)
	opkernel.Register("BatchNorm", batchNorm)
	opkernel.Register("InstanceNorm", instanceNorm)
	opkernel.Register("LayerNorm", layerNorm)
	opkernel.Register("Einsum", einsum)
	opkernel.Register("Resize", resize)
}

// float is the element type of the generic float paths.
type float interface{ ~float32 | ~float64 }

// number is every real element type.
type number interface {
	~float32 | ~float64 | ~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// viaF32 runs f with every float16/bfloat16 input and output replaced by a
// float32 tensor, converting the outputs back afterwards. Other tensors
// (int64 indices, sizes) pass through untouched.
func viaF32(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor, f opkernel.Func) error {
	in2 := make([]*ir.Tensor, len(in))
	for i, t := range in {
		if t != nil && opkernel.IsHalf(t.DType) {
			t = opkernel.HalfToF32(t)
		}
		in2[i] = t
	}
	out2 := make([]*ir.Tensor, len(out))
	for i, t := range out {
		if t != nil && opkernel.IsHalf(t.DType) {
			t = ir.NewTensor(ir.Float32, t.Shape)
		}
		out2[i] = t
	}
	if err := f(ctx, n, in2, out2); err != nil {
		return err
	}
	for i, t := range out {
		if t != nil && opkernel.IsHalf(t.DType) {
			opkernel.F32ToHalf(t, out2[i].F32())
		}
	}
	return nil
}

// halfConsts keeps the float32 copies of a node's constant float16/bfloat16
// inputs (weights, bias) between runs, so a float16 model's convolution
// widens them once and its float32 plan (packed weights) stays valid.
type halfConsts struct {
	src     []*ir.Tensor
	wide    []*ir.Tensor
	node    *ir.Node     // n with the widened constants as its constant inputs
	scratch []*[]float32 // pooled buffers of the current run
}

// viaF32 is the package viaF32 with constant inputs widened once; f gets a
// copy of n whose constant inputs are the widened tensors, so the float32
// paths that pack constant weights take them.
func (h *halfConsts) viaF32(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor, f func(n *ir.Node, in, out []*ir.Tensor) error) error {
	if len(h.src) < len(in) {
		h.src, h.wide = make([]*ir.Tensor, len(in)), make([]*ir.Tensor, len(in))
	}
	in2 := make([]*ir.Tensor, len(in))
	for i, t := range in {
		in2[i] = t
		if t == nil || !opkernel.IsHalf(t.DType) {
			continue
		}
		if i < len(n.Inputs) && n.Inputs[i] != nil && n.Inputs[i].Const != nil {
			// the runtime may hand the constant over as its own tensor
			// value: the same data is the same constant
			if h.src[i] == nil || firstByte(h.src[i]) != firstByte(t) || len(h.src[i].Data) != len(t.Data) {
				h.src[i], h.wide[i], h.node = t, opkernel.HalfToF32(t), nil
			}
			in2[i] = h.wide[i]
			continue
		}
		in2[i] = pooledF32(t, &h.scratch)
		opkernel.HalfToF32Into(in2[i].F32(), t)
	}
	out2 := make([]*ir.Tensor, len(out))
	for i, t := range out {
		out2[i] = t
		if t != nil && opkernel.IsHalf(t.DType) {
			out2[i] = pooledF32(t, &h.scratch)
		}
	}
	if h.node == nil {
		c := *n
		c.Inputs = slices.Clone(n.Inputs)
		for i, w := range h.wide {
			if w != nil && i < len(c.Inputs) {
				v := *c.Inputs[i]
				v.Const, v.DType = w, ir.Float32
				c.Inputs[i] = &v
			}
		}
		h.node = &c
	}
	defer func() {
		for _, sp := range h.scratch {
			putF32(sp)
		}
		h.scratch = h.scratch[:0]
	}()
	if err := f(h.node, in2, out2); err != nil {
		return err
	}
	for i, t := range out {
		if t != nil && opkernel.IsHalf(t.DType) {
			opkernel.F32ToHalf(t, out2[i].F32())
		}
	}
	return nil
}

// pooledF32 is a float32 tensor of t's shape on a scratch-pool buffer
// (recorded in held), contents undefined.
func pooledF32(t *ir.Tensor, held *[]*[]float32) *ir.Tensor {
	n := int(t.NumElements())
	sp := getF32(n)
	*held = append(*held, sp)
	d := *sp
	var raw []byte
	if n > 0 {
		raw = unsafe.Slice((*byte)(unsafe.Pointer(&d[0])), 4*n)
	}
	return &ir.Tensor{DType: ir.Float32, Shape: t.Shape, Data: raw}
}

// hasHalf reports whether any tensor is float16/bfloat16.
func hasHalf(ts ...*ir.Tensor) bool {
	for _, t := range ts {
		if t != nil && opkernel.IsHalf(t.DType) {
			return true
		}
	}
	return false
}

// slice returns the typed view of a tensor's data.
func slice[T any](t *ir.Tensor) []T {
	if t == nil || len(t.Data) == 0 {
		return nil
	}
	return viewAs[T](t.Data)
}

// input returns in[i] or nil when absent or empty-named.
func input(in []*ir.Tensor, i int) *ir.Tensor {
	if i < len(in) {
		return in[i]
	}
	return nil
}

// output returns out[i] or nil when the node does not request it.
func output(out []*ir.Tensor, i int) *ir.Tensor {
	if i < len(out) {
		return out[i]
	}
	return nil
}

// need checks that the first k inputs are present.
func need(n *ir.Node, in []*ir.Tensor, k int) error {
	if len(in) < k {
		return fmt.Errorf("node %s (%s): expected at least %d inputs, got %d", n.Name, n.Op, k, len(in))
	}
	for i := 0; i < k; i++ {
		if in[i] == nil {
			return fmt.Errorf("node %s (%s): input %d is missing", n.Name, n.Op, i)
		}
	}
	return nil
}

// errf formats an error naming the node.
func errf(n *ir.Node, format string, args ...any) error {
	return fmt.Errorf("node %s (%s): %s", n.Name, n.Op, fmt.Sprintf(format, args...))
}

func prod(s []int64) int {
	p := 1
	for _, d := range s {
		p *= int(d)
	}
	return p
}

type stringError string

func (e stringError) Error() string { return string(e) }

// errString builds an error without node context (callers add it).
func errString(format string, args ...any) error {
	return stringError(fmt.Sprintf(format, args...))
}

// scratch buffers (im2col columns, padded planes) are reused across calls:
// a fresh multi-megabyte slice per conv costs zeroing and page faults.
var f32Pool sync.Pool

// getF32 returns a scratch slice of n float32 with undefined contents.
func getF32(n int) *[]float32 {
	if p, ok := f32Pool.Get().(*[]float32); ok && cap(*p) >= n {
		*p = (*p)[:n]
		return p
	}
	s := make([]float32, n)
	return &s
}

func putF32(p *[]float32) { f32Pool.Put(p) }
