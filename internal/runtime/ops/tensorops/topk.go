package tensorops

import (
	"cmp"
	"slices"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

func init() { opkernel.Register("TopK", topKOp) }

// topKOp returns the k largest (or smallest) elements along axis and their
// int64 indices. Equal values keep the lower index first, as ONNX requires;
// NaN counts as larger than every number. Output is always sorted, which
// also satisfies sorted=0.
func topKOp(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := needIn(n, in, out, 2, 2); err != nil {
		return err
	}
	x := in[0]
	kv, err := in[1].Int64s()
	if err != nil || len(kv) != 1 {
		return errf(n, "k must be a single integer")
	}
	rank := len(x.Shape)
	axis, err := normAxis(n, n.Attrs.Int("axis", -1), rank)
	if err != nil {
		return err
	}
	k := kv[0]
	if k < 0 || k > x.Shape[axis] {
		return errf(n, "k=%d out of range for dim %d of %v", k, axis, x.Shape)
	}
	want := append([]int64{}, x.Shape...)
	want[axis] = k
	if !slices.Equal(out[0].Shape, want) || !slices.Equal(out[1].Shape, want) {
		return errf(n, "output shapes %v, %v; expected %v", out[0].Shape, out[1].Shape, want)
	}
	if out[0].DType != x.DType || out[1].DType != ir.Int64 {
		return errf(n, "outputs %s, %s; expected %s values and int64 indices", out[0], out[1], x.DType)
	}
	for i, t := range []*ir.Tensor{x, out[0], out[1]} {
		if int64(len(t.Data)) < t.NumElements()*int64(t.DType.Size()) {
			return errf(n, "tensor %d (%s) holds only %d bytes", i, t, len(t.Data))
		}
	}
	xd := dims(x.Shape)
	g := topkGeom{outer: prod(xd[:axis]), dim: xd[axis], inner: prod(xd[axis+1:]), k: int(k),
		largest: n.Attrs.Int("largest", 1) != 0}
	idx := out[1].I64()
	switch x.DType {
	case ir.Float32:
		topK(ctx, g, x.F32(), out[0].F32(), idx)
	case ir.Float64:
		topK(ctx, g, x.F64(), out[0].F64(), idx)
	case ir.Int8:
		topK(ctx, g, x.I8(), out[0].I8(), idx)
	case ir.Int16:
		topK(ctx, g, x.I16(), out[0].I16(), idx)
	case ir.Int32:
		topK(ctx, g, x.I32(), out[0].I32(), idx)
	case ir.Int64:
		topK(ctx, g, x.I64(), out[0].I64(), idx)
	case ir.Uint8:
		topK(ctx, g, x.U8(), out[0].U8(), idx)
	case ir.Uint16:
		topK(ctx, g, x.U16(), out[0].U16(), idx)
	case ir.Uint32:
		topK(ctx, g, x.U32(), out[0].U32(), idx)
	case ir.Uint64:
		topK(ctx, g, x.U64(), out[0].U64(), idx)
	case ir.Float16, ir.BFloat16:
		// widen to float32 (exact), select, narrow back (exact again)
		to32, to16 := ir.F16ToF32, ir.F32ToF16
		if x.DType == ir.BFloat16 {
			to32, to16 = ir.BF16ToF32, ir.F32ToBF16
		}
		h := x.U16()
		wide := make([]float32, len(h))
		for i, v := range h {
			wide[i] = to32(v)
		}
		vals := make([]float32, len(idx))
		topK(ctx, g, wide, vals, idx)
		o := out[0].U16()
		for i, v := range vals {
			o[i] = to16(v)
		}
	default:
		return opkernel.Unsupportedf(n, "dtype %s", x.DType)
	}
	return nil
}

type topkGeom struct {
	outer, dim, inner, k int
	largest              bool
}

// ahead reports whether value a (index ia) ranks before b (index ib).
func ahead[T cmp.Ordered](a, b T, ia, ib int32, largest bool) bool {
	if a == b {
		return ia < ib
	}
	aNaN, bNaN := a != a, b != b
	if aNaN || bNaN {
		if aNaN && bNaN {
			return ia < ib
		}
		return aNaN == largest // NaN is the largest value
	}
	if largest {
		return a > b
	}
	return a < b
}

func topK[T cmp.Ordered](ctx *opkernel.Ctx, g topkGeom, src, vals []T, idx []int64) {
	if g.k == 0 || len(src) == 0 {
		return
	}
	lanes := g.outer * g.inner
	run[T](ctx, lanes, g.dim, func(start, end int) {
		lane := make([]T, g.dim)
		order := make([]int32, g.dim)
		for l := start; l < end; l++ {
			o, i := l/g.inner, l%g.inner
			base := o*g.dim*g.inner + i
			lane := lane
			if g.inner == 1 {
				lane = src[base : base+g.dim] // contiguous: no copy
			} else {
				for j := range lane {
					lane[j] = src[base+j*g.inner]
				}
			}
			sel := selectTop(lane, order, g.k, g.largest)
			ob := o*g.k*g.inner + i
			for j, p := range sel {
				vals[ob+j*g.inner] = lane[p]
				idx[ob+j*g.inner] = int64(p)
			}
		}
	})
}

// selectTop returns the positions of the k best values of lane, best first.
// For small k a bounded heap (O(n log k)) beats sorting the whole lane.
func selectTop[T cmp.Ordered](lane []T, order []int32, k int, largest bool) []int32 {
	before := func(a, b int32) int {
		if a == b {
			return 0
		}
		if ahead(lane[a], lane[b], a, b, largest) {
			return -1
		}
		return 1
	}
	n := len(lane)
	if k*8 >= n {
		for j := range order {
			order[j] = int32(j)
		}
		slices.SortFunc(order, before)
		return order[:k]
	}
	// heap[0] is the worst of the k best so far
	heap := order[:k]
	worse := func(a, b int32) bool { return ahead(lane[b], lane[a], b, a, largest) }
	down := func(i int) {
		for {
			w, l, r := i, 2*i+1, 2*i+2
			if l < k && worse(heap[l], heap[w]) {
				w = l
			}
			if r < k && worse(heap[r], heap[w]) {
				w = r
			}
			if w == i {
				return
			}
			heap[i], heap[w] = heap[w], heap[i]
			i = w
		}
	}
	for j := range heap {
		heap[j] = int32(j)
	}
	for i := k/2 - 1; i >= 0; i-- {
		down(i)
	}
	worst := lane[heap[0]]
	// Most values lose to the worst kept one outright (a NaN compares false
	// and takes the full test, which ranks it). One loop per direction, so
	// the scan is a load, a compare and a branch per value.
	offer := func(j int) {
		if ahead(lane[j], worst, int32(j), heap[0], largest) {
			heap[0] = int32(j)
			down(0)
			worst = lane[heap[0]]
		}
	}
	if largest {
		for j := k; j < n; j++ {
			if !(lane[j] < worst) {
				offer(j)
			}
		}
	} else {
		for j := k; j < n; j++ {
			if !(lane[j] > worst) {
				offer(j)
			}
		}
	}
	slices.SortFunc(heap, before)
	return heap
}
