package elementwise

import (
	"math"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

type redOp int

const (
	rSum redOp = iota
	rMean
	rMax
	rMin
	rProd
	rL1
	rL2
	rLogSum
	rLogSumExp
	rSumSquare
)

// reduceFloat reduces the middle dim of [outer, k, inner] into d[outer*inner],
// accumulating in float64.
func reduceFloat[T float](ctx *opkernel.Ctx, op redOp, d, s []T, outer, k, inner int) {
	nOut := outer * inner
	opkernel.ParallelFor(ctx, nOut, max(1, grain/max(k, 1)), func(lo, hi int) {
		for oi := lo; oi < hi; oi++ {
			o, j := oi/inner, oi%inner
			base := o*k*inner + j
			d[oi] = T(reduceOneFloat(op, s, base, k, inner))
		}
	})
}

func reduceOneFloat[T float](op redOp, s []T, base, k, stride int) float64 {
	switch op {
	case rMax, rMin:
		if k == 0 {
			if op == rMax {
				return math.Inf(-1)
			}
			return math.Inf(1)
		}
		m := float64(s[base])
		for i := 1; i < k; i++ {
			v := float64(s[base+i*stride])
			if op == rMax {
				m = nanMax(m, v)
			} else {
				m = nanMin(m, v)
			}
		}
		return m
	case rProd:
		p := 1.0
		for i := 0; i < k; i++ {
			p *= float64(s[base+i*stride])
		}
		return p
	case rLogSumExp:
		m := math.Inf(-1)
		for i := 0; i < k; i++ {
			m = math.Max(m, float64(s[base+i*stride]))
		}
		if math.IsInf(m, 0) {
			if k == 0 || m < 0 {
				return math.Inf(-1)
			}
			return m
		}
		var acc float64
		for i := 0; i < k; i++ {
			acc += math.Exp(float64(s[base+i*stride]) - m)
		}
		return m + math.Log(acc)
	}
	var acc float64
	switch op {
	case rL1:
		for i := 0; i < k; i++ {
			acc += math.Abs(float64(s[base+i*stride]))
		}
	case rL2, rSumSquare:
		for i := 0; i < k; i++ {
			v := float64(s[base+i*stride])
			acc += v * v
		}
	default:
		for i := 0; i < k; i++ {
			acc += float64(s[base+i*stride])
		}
	}
	switch op {
	case rMean:
		return acc / float64(k)
	case rL2:
		return math.Sqrt(acc)
	case rLogSum:
		return math.Log(acc)
	}
	return acc
}

// reduceInt accumulates in the element type (wrapping like numpy) except for
// the ops whose result is not an integer, which go through float64.
func reduceInt[T integer](ctx *opkernel.Ctx, op redOp, d, s []T, outer, k, inner int) {
	var z T
	nOut := outer * inner
	opkernel.ParallelFor(ctx, nOut, max(1, grain/max(k, 1)), func(lo, hi int) {
		for oi := lo; oi < hi; oi++ {
			o, j := oi/inner, oi%inner
			base := o*k*inner + j
			var acc T
			switch op {
			case rMax:
				acc = minOf(z)
				for i := 0; i < k; i++ {
					acc = max(acc, s[base+i*inner])
				}
			case rMin:
				acc = maxOf(z)
				for i := 0; i < k; i++ {
					acc = min(acc, s[base+i*inner])
				}
			case rProd:
				acc = 1
				for i := 0; i < k; i++ {
					acc *= s[base+i*inner]
				}
			case rSum:
				for i := 0; i < k; i++ {
					acc += s[base+i*inner]
				}
			case rL1:
				for i := 0; i < k; i++ {
					v := s[base+i*inner]
					if v < 0 {
						v = -v
					}
					acc += v
				}
			case rSumSquare:
				for i := 0; i < k; i++ {
					v := s[base+i*inner]
					acc += v * v
				}
			default:
				f := make([]float64, k)
				for i := range f {
					f[i] = float64(s[base+i*inner])
				}
				acc = T(reduceOneFloat(op, f, 0, k, 1))
			}
			d[oi] = acc
		}
	})
}

// reduceAxes returns the sorted, deduplicated reduced axes, or nil with
// noop=true when the node is an identity (empty axes, noop_with_empty_axes).
func reduceAxes(n *ir.Node, in []*ir.Tensor, rank int) (reduced []bool, noop bool, err error) {
	var axes []int64
	if len(in) > 1 && in[1] != nil {
		if axes, err = in[1].Int64s(); err != nil {
			return nil, false, nodeErr(n, "axes: %v", err)
		}
	} else {
		axes = n.Attrs.Ints("axes", nil) // opset < 18 attribute form
	}
	reduced = make([]bool, rank)
	if len(axes) == 0 {
		if n.Attrs.Int("noop_with_empty_axes", 0) != 0 {
			return nil, true, nil
		}
		for i := range reduced {
			reduced[i] = true
		}
		return reduced, false, nil
	}
	for _, a := range axes {
		ax, err := normAxis(n, a, rank)
		if err != nil {
			return nil, false, err
		}
		reduced[ax] = true
	}
	return reduced, false, nil
}

func reduceOp(op redOp) opkernel.Func {
	return func(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
		if err := checkArity(n, in, out, 1, 2, 1); err != nil {
			return err
		}
		x, y := in[0], out[0]
		if x.DType != y.DType {
			return nodeErr(n, "input dtype %s differs from output %s", x.DType, y.DType)
		}
		reduced, noop, err := reduceAxes(n, in, len(x.Shape))
		if err != nil {
			return err
		}
		if noop {
			if y.NumElements() != x.NumElements() {
				return nodeErr(n, "no-op reduction but output %v differs from input %v", y.Shape, x.Shape)
			}
			copy(y.Data, x.Data)
			return nil
		}
		if opkernel.IsHalf(x.DType) {
			w, flush := halfOut(y)
			if err := reduceRun(ctx, n, op, opkernel.HalfToF32(x), w, reduced); err != nil {
				return err
			}
			flush()
			return nil
		}
		return reduceRun(ctx, n, op, x, y, reduced)
	}
}

// reduceRun brings the reduction to [outer, k, inner] form, transposing the
// input first when the reduced axes are not one contiguous block.
func reduceRun(ctx *opkernel.Ctx, n *ir.Node, op redOp, x, y *ir.Tensor, reduced []bool) error {
	nOut := 1
	for i, d := range x.Shape {
		if !reduced[i] {
			nOut *= int(d)
		}
	}
	if int64(nOut) != y.NumElements() {
		return nodeErr(n, "output %v has %d elements, want %d", y.Shape, y.NumElements(), nOut)
	}
	// Group dims (ignoring size 1) into runs of reduced / kept.
	type run struct {
		red  bool
		size int
	}
	var runs []run
	for i, d := range x.Shape {
		if d == 1 {
			continue
		}
		if len(runs) > 0 && runs[len(runs)-1].red == reduced[i] {
			runs[len(runs)-1].size *= int(d)
			continue
		}
		runs = append(runs, run{reduced[i], int(d)})
	}
	outer, k, inner := 1, 1, 1
	src := x
	switch {
	case len(runs) == 0:
	case len(runs) == 1 && runs[0].red:
		k = runs[0].size
	case len(runs) == 1:
		inner = runs[0].size
	case len(runs) == 2 && runs[1].red:
		outer, k = runs[0].size, runs[1].size
	case len(runs) == 2:
		k, inner = runs[0].size, runs[1].size
	case len(runs) == 3 && !runs[0].red:
		outer, k, inner = runs[0].size, runs[1].size, runs[2].size
	default:
		// Move reduced axes last, then reduce rows.
		var perm []int
		for i := range x.Shape {
			if !reduced[i] {
				perm = append(perm, i)
			}
		}
		for i := range x.Shape {
			if reduced[i] {
				perm = append(perm, i)
			}
		}
		var err error
		if src, err = transpose(x, perm); err != nil {
			return nodeErr(n, "%v", err)
		}
		outer = nOut
		k = int(x.NumElements()) / max(nOut, 1)
		if nOut == 0 {
			k = 0
		}
	}
	if nOut == 0 {
		return nil
	}
	if x.NumElements() == 0 {
		k = 0
		outer, inner = nOut, 1
	}
	switch x.DType {
	case ir.Float32:
		if (op == rSum || op == rMean) && k > 0 {
			// onnxruntime's order (ort_sum.go)
			mean := op == rMean
			d, s := y.F32(), src.F32()
			if inner == 1 && k <= ortOrderMaxRow {
				opkernel.ParallelFor(ctx, outer, max(1, grain/k), func(lo, hi int) {
					f32SumRows(d[lo:hi], s[lo*k:hi*k], hi-lo, k, lo*k, mean)
				})
			} else if inner == 1 {
				// a row so long that float32 accumulation drifts (0.4% over
				// 4M elements): float64, as the middle-dim sums
				opkernel.ParallelFor(ctx, outer, 1, func(lo, hi int) {
					f32SumMid(d[lo:hi], s[lo*k:hi*k], hi-lo, k, 1, mean)
				})
			} else {
				opkernel.ParallelFor(ctx, outer, 1, func(lo, hi int) {
					f32SumMid(d[lo*inner:hi*inner], s[lo*k*inner:hi*k*inner], hi-lo, k, inner, mean)
				})
			}
			return nil
		}
		reduceFloat(ctx, op, y.F32(), src.F32(), outer, k, inner)
	case ir.Float64:
		reduceFloat(ctx, op, y.F64(), src.F64(), outer, k, inner)
	case ir.Int8:
		reduceInt(ctx, op, y.I8(), src.I8(), outer, k, inner)
	case ir.Int16:
		reduceInt(ctx, op, y.I16(), src.I16(), outer, k, inner)
	case ir.Int32:
		reduceInt(ctx, op, y.I32(), src.I32(), outer, k, inner)
	case ir.Int64:
		reduceInt(ctx, op, y.I64(), src.I64(), outer, k, inner)
	case ir.Uint8:
		reduceInt(ctx, op, y.U8(), src.U8(), outer, k, inner)
	case ir.Bool:
		if op != rMax && op != rMin {
			return opkernel.Unsupportedf(n, "dtype bool")
		}
		// Max is any, Min is all: the uint8 forms with 0/1 values.
		reduceInt(ctx, op, y.U8(), src.U8(), outer, k, inner)
		if k == 0 && op == rMin {
			for i := range y.Data {
				y.Data[i] = 1
			}
		}
	case ir.Uint16:
		reduceInt(ctx, op, y.U16(), src.U16(), outer, k, inner)
	case ir.Uint32:
		reduceInt(ctx, op, y.U32(), src.U32(), outer, k, inner)
	case ir.Uint64:
		reduceInt(ctx, op, y.U64(), src.U64(), outer, k, inner)
	default:
		return opkernel.Unsupportedf(n, "dtype %s", x.DType)
	}
	return nil
}

// transpose returns x with its axes permuted (new dim i = old dim perm[i]).
func transpose(x *ir.Tensor, perm []int) (*ir.Tensor, error) {
	shape := make([]int64, len(perm))
	for i, p := range perm {
		shape[i] = x.Shape[p]
	}
	o := ir.NewTensor(x.DType, shape)
	switch x.DType.Size() {
	case 1:
		permute(o.Data, x.Data, x.Shape, perm)
	case 2:
		permute(o.U16(), x.U16(), x.Shape, perm)
	case 4:
		permute(o.U32(), x.U32(), x.Shape, perm)
	case 8:
		permute(o.U64(), x.U64(), x.Shape, perm)
	default:
		return nil, errorf("cannot transpose %s", x.DType)
	}
	return o, nil
}

func permute[T any](d, s []T, shape []int64, perm []int) {
	rank := len(shape)
	if len(d) == 0 {
		return
	}
	inStride := make([]int, rank)
	st := 1
	for i := rank - 1; i >= 0; i-- {
		inStride[i] = st
		st *= int(shape[i])
	}
	dims := make([]int, rank)
	strides := make([]int, rank)
	for i, p := range perm {
		dims[i] = int(shape[p])
		strides[i] = inStride[p]
	}
	idx := make([]int, rank)
	off := 0
	last := rank - 1
	for pos := 0; pos < len(d); {
		// Inner loop over the last output dim.
		n, ls := dims[last], strides[last]
		row := d[pos : pos+n]
		for i := range row {
			row[i] = s[off+i*ls]
		}
		pos += n
		for j := last - 1; j >= 0; j-- {
			idx[j]++
			off += strides[j]
			if idx[j] < dims[j] {
				break
			}
			off -= idx[j] * strides[j]
			idx[j] = 0
		}
	}
}

func argReduce(isMax bool) opkernel.Func {
	return func(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
		if err := checkArity(n, in, out, 1, 1, 1); err != nil {
			return err
		}
		x, y := widen(in[0]), out[0]
		if y.DType != ir.Int64 {
			return nodeErr(n, "output dtype %s, want int64", y.DType)
		}
		rank := len(x.Shape)
		if rank == 0 {
			y.I64()[0] = 0
			return nil
		}
		axis, err := normAxis(n, n.Attrs.Int("axis", 0), rank)
		if err != nil {
			return err
		}
		outer, k, inner := split3(x.Shape, axis)
		if int64(outer*inner) != y.NumElements() {
			return nodeErr(n, "output %v does not match input %v reduced on axis %d", y.Shape, x.Shape, axis)
		}
		last := n.Attrs.Int("select_last_index", 0) != 0
		d := y.I64()
		switch x.DType {
		case ir.Float32:
			argT(ctx, d, x.F32(), outer, k, inner, isMax, last)
		case ir.Float64:
			argT(ctx, d, x.F64(), outer, k, inner, isMax, last)
		case ir.Int8:
			argT(ctx, d, x.I8(), outer, k, inner, isMax, last)
		case ir.Int16:
			argT(ctx, d, x.I16(), outer, k, inner, isMax, last)
		case ir.Int32:
			argT(ctx, d, x.I32(), outer, k, inner, isMax, last)
		case ir.Int64:
			argT(ctx, d, x.I64(), outer, k, inner, isMax, last)
		case ir.Uint8:
			argT(ctx, d, x.U8(), outer, k, inner, isMax, last)
		case ir.Uint16:
			argT(ctx, d, x.U16(), outer, k, inner, isMax, last)
		case ir.Uint32:
			argT(ctx, d, x.U32(), outer, k, inner, isMax, last)
		case ir.Uint64:
			argT(ctx, d, x.U64(), outer, k, inner, isMax, last)
		default:
			return opkernel.Unsupportedf(n, "dtype %s", in[0].DType)
		}
		return nil
	}
}

// split3 views shape as [outer, shape[axis], inner].
func split3(shape []int64, axis int) (outer, k, inner int) {
	outer, inner = 1, 1
	for i, d := range shape {
		switch {
		case i < axis:
			outer *= int(d)
		case i > axis:
			inner *= int(d)
		}
	}
	return outer, int(shape[axis]), inner
}

func argT[T number](ctx *opkernel.Ctx, d []int64, s []T, outer, k, inner int, isMax, last bool) {
	if inner >= argBlock && k > 1 {
		argRows(ctx, d, s, outer, k, inner, isMax, last)
		return
	}
	opkernel.ParallelFor(ctx, outer*inner, max(1, grain/max(k, 1)), func(lo, hi int) {
		for oi := lo; oi < hi; oi++ {
			o, j := oi/inner, oi%inner
			base := o*k*inner + j
			best := 0
			if k == 0 {
				d[oi] = 0
				continue
			}
			bv := s[base]
			for i := 1; i < k; i++ {
				v := s[base+i*inner]
				var better bool
				if isMax {
					better = v > bv || last && v == bv
				} else {
					better = v < bv || last && v == bv
				}
				if better {
					best, bv = i, v
				}
			}
			d[oi] = int64(best)
		}
	})
}

// argBlock is how many positions of the inner dims argRows keeps best
// values for at once (a few KiB: they stay in L1 while the k rows stream).
const argBlock = 256

// argRows is argT for an axis with inner dims (ArgMax over channels): it
// walks the k rows of a block of inner positions in memory order, keeping
// the best value and index of each position, instead of striding through
// the k values of one position at a time; the same comparisons, so the same
// indices.
func argRows[T number](ctx *opkernel.Ctx, d []int64, s []T, outer, k, inner int, isMax, last bool) {
	blocks := (inner + argBlock - 1) / argBlock
	opkernel.ParallelFor(ctx, outer*blocks, max(1, grain/(k*argBlock)), func(lo, hi int) {
		var bv [argBlock]T
		var bi [argBlock]int64
		for ob := lo; ob < hi; ob++ {
			o, b := ob/blocks, ob%blocks
			j0 := b * argBlock
			j1 := min(j0+argBlock, inner)
			w := j1 - j0
			base := o*k*inner + j0
			if f, ok := any(s).([]float32); ok && f32ArgBlock(d[o*inner+j0:o*inner+j1], f[base:], k, inner, w, isMax, last) {
				continue
			}
			vals, idx := bv[:w], bi[:w]
			copy(vals, s[base:base+w])
			clear(idx)
			for i := 1; i < k; i++ {
				row := s[base+i*inner : base+i*inner+w]
				row, vals, idx := row[:w], vals[:w], idx[:w]
				ii := int64(i)
				switch {
				case isMax && !last:
					for j, v := range row {
						if v > vals[j] {
							vals[j], idx[j] = v, ii
						}
					}
				case isMax:
					for j, v := range row {
						if v >= vals[j] {
							vals[j], idx[j] = v, ii
						}
					}
				case !last:
					for j, v := range row {
						if v < vals[j] {
							vals[j], idx[j] = v, ii
						}
					}
				default:
					for j, v := range row {
						if v <= vals[j] {
							vals[j], idx[j] = v, ii
						}
					}
				}
			}
			copy(d[o*inner+j0:o*inner+j1], idx)
		}
	})
}

func init() {
	for name, op := range map[string]redOp{
		"ReduceSum": rSum, "ReduceMean": rMean, "ReduceMax": rMax, "ReduceMin": rMin, "ReduceProd": rProd,
		"ReduceL1": rL1, "ReduceL2": rL2, "ReduceLogSum": rLogSum, "ReduceLogSumExp": rLogSumExp,
		"ReduceSumSquare": rSumSquare,
	} {
		opkernel.Register(name, reduceOp(op))
	}
	opkernel.Register("Argmax", argReduce(true))
	opkernel.Register("Argmin", argReduce(false))
}
