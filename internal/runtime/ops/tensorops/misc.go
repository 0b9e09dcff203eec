package tensorops

import (
	"math"
	"slices"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

func init() {
	regMove("Trilu", firstIn, triluOp[uint8], triluOp[uint16], triluOp[uint32], triluOp[uint64], triluOp[b16], triluOp[string])
	regMove("ConstantOfShape", firstOut, constOfShapeOp[uint8], constOfShapeOp[uint16], constOfShapeOp[uint32], constOfShapeOp[uint64], constOfShapeOp[b16], constOfShapeOp[string])
	opkernel.Register("Shape", shapeOp)
	opkernel.Register("Size", sizeOp)
	opkernel.Register("Range", rangeOp)
}

// triluOp keeps the upper (j-i >= k) or lower (j-i <= k) triangle of the
// last two dims and zeroes the rest, a row segment at a time.
func triluOp[T any](ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := needIn(n, in, out, 1, 1); err != nil {
		return err
	}
	x := in[0]
	rank := len(x.Shape)
	if rank < 2 {
		return errf(n, "input must have rank >= 2, got %v", x.Shape)
	}
	if !slices.Equal(x.Shape, out[0].Shape) {
		return errf(n, "output shape %v differs from input %v", out[0].Shape, x.Shape)
	}
	k := int64(0)
	if kt := optIn(in, 1); kt != nil {
		kv, err := kt.Int64s()
		if err != nil || len(kv) != 1 {
			return errf(n, "k must be one integer")
		}
		k = kv[0]
	}
	upper := n.Attrs.Int("upper", 1) != 0
	src, err := elems[T](n, x, "input")
	if err != nil {
		return err
	}
	dst, err := elems[T](n, out[0], "output")
	if err != nil {
		return err
	}
	R, M := int(x.Shape[rank-2]), int(x.Shape[rank-1])
	if len(dst) == 0 {
		return nil
	}
	var zero T
	rows := len(dst) / M
	run[T](ctx, rows, M, func(start, end int) {
		for r := start; r < end; r++ {
			i := int64(r % R)
			d, s := dst[r*M:(r+1)*M], src[r*M:(r+1)*M]
			if upper { // keep j >= i+k
				c := int(clamp(i+k, 0, int64(M)))
				fill(d[:c], zero)
				copy(d[c:], s[c:])
			} else { // keep j <= i+k
				c := int(clamp(i+k+1, 0, int64(M)))
				copy(d[:c], s[:c])
				fill(d[c:], zero)
			}
		}
	})
	return nil
}

// constOfShapeOp fills the output with the 1-element value attribute
// (float32 0 when absent).
func constOfShapeOp[T any](ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := needIn(n, in, out, 1, 1); err != nil {
		return err
	}
	want, err := in[0].Int64s()
	if err != nil {
		return errf(n, "shape: %v", err)
	}
	o := out[0]
	if !slices.Equal(want, o.Shape) {
		return errf(n, "output shape %v differs from requested %v", o.Shape, want)
	}
	dst, err := elems[T](n, o, "output")
	if err != nil {
		return err
	}
	var v T
	if vt := n.Attrs.Tensor("value"); vt != nil {
		if vt.DType != o.DType {
			return errf(n, "value dtype %s differs from output %s", vt.DType, o.DType)
		}
		if vt.NumElements() != 1 {
			return errf(n, "value must have one element, has %d", vt.NumElements())
		}
		vs, err := elems[T](n, vt, "value")
		if err != nil {
			return err
		}
		v = vs[0]
	} else if o.DType != ir.Float32 {
		return errf(n, "output dtype %s, but no value attribute (default float32)", o.DType)
	}
	run[T](ctx, 1, len(dst), func(_, _ int) { fill(dst, v) })
	return nil
}

// shapeOp writes the input's dims [start, end) (ONNX clamping) as int64.
func shapeOp(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := needIn(n, in, out, 1, 1); err != nil {
		return err
	}
	rank := int64(len(in[0].Shape))
	norm := func(v int64) int64 {
		if v < 0 {
			v += rank
		}
		return clamp(v, 0, rank)
	}
	s := norm(n.Attrs.Int("start", 0))
	e := norm(n.Attrs.Int("end", rank))
	if e < s {
		e = s
	}
	o := out[0]
	if o.DType != ir.Int64 || len(o.Shape) != 1 || o.Shape[0] != e-s || int64(len(o.Data)) < 8*(e-s) {
		return errf(n, "output %s, expected int64[%d]", o, e-s)
	}
	copy(o.I64(), in[0].Shape[s:e])
	return nil
}

func sizeOp(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := needIn(n, in, out, 1, 1); err != nil {
		return err
	}
	o := out[0]
	if o.DType != ir.Int64 || len(o.Shape) != 0 || len(o.Data) < 8 {
		return errf(n, "output %s, expected an int64 scalar", o)
	}
	o.I64()[0] = in[0].NumElements()
	return nil
}

type integer interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

type float interface{ ~float32 | ~float64 }

// rangeOp: out[i] = start + i*delta for i < max(ceil((limit-start)/delta), 0).
func rangeOp(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := needIn(n, in, out, 3, 1); err != nil {
		return err
	}
	o := out[0]
	dt := o.DType
	for i := range 3 {
		if in[i].DType != dt || in[i].NumElements() != 1 {
			return errf(n, "input %d must be a %s scalar, got %s", i, dt, in[i])
		}
	}
	if len(o.Shape) != 1 {
		return errf(n, "output %s must be 1-D", o)
	}
	cnt := int(o.Shape[0])
	if cnt < 0 || len(o.Data) < cnt*dt.Size() {
		return errf(n, "output %s holds %d bytes", o, len(o.Data))
	}
	var got int64
	var err error
	switch dt {
	case ir.Float32:
		got, err = rangeF(n, in, o.F32()[:cnt])
	case ir.Float64:
		got, err = rangeF(n, in, o.F64()[:cnt])
	case ir.Float16, ir.BFloat16:
		f, err2 := floatScalars(n, in)
		if err2 != nil {
			return err2
		}
		got = floatCount(f[0], f[1], f[2])
		if got == int64(cnt) {
			to := ir.F32ToF16
			if dt == ir.BFloat16 {
				to = ir.F32ToBF16
			}
			d := o.U16()[:cnt]
			start, delta := float32(f[0]), float32(f[2])
			for i := range cnt {
				d[i] = to(start + float32(i)*delta)
			}
		}
	case ir.Int8:
		got, err = rangeI(n, in, o.I8()[:cnt])
	case ir.Int16:
		got, err = rangeI(n, in, o.I16()[:cnt])
	case ir.Int32:
		got, err = rangeI(n, in, o.I32()[:cnt])
	case ir.Int64:
		got, err = rangeI(n, in, o.I64()[:cnt])
	case ir.Uint8:
		got, err = rangeI(n, in, o.U8()[:cnt])
	case ir.Uint16:
		got, err = rangeI(n, in, o.U16()[:cnt])
	case ir.Uint32:
		got, err = rangeI(n, in, o.U32()[:cnt])
	case ir.Uint64:
		got, err = rangeI(n, in, o.U64()[:cnt])
	default:
		return opkernel.Unsupportedf(n, "dtype %s", dt)
	}
	if err != nil {
		return err
	}
	if got != int64(cnt) {
		return errf(n, "output has %d elements, the range has %d", cnt, got)
	}
	return nil
}

func floatScalars(n *ir.Node, in []*ir.Tensor) ([3]float64, error) {
	var f [3]float64
	for i := range 3 {
		v, err := in[i].Float64s()
		if err != nil {
			return f, errf(n, "input %d: %v", i, err)
		}
		f[i] = v[0]
	}
	if f[2] == 0 {
		return f, errf(n, "delta is 0")
	}
	return f, nil
}

func floatCount(start, limit, delta float64) int64 {
	c := math.Ceil((limit - start) / delta)
	if !(c > 0) { // also catches NaN
		return 0
	}
	if c > math.MaxInt32*16 {
		return -1 // absurd: the output could not have been allocated
	}
	return int64(c)
}

// rangeF fills d when the count matches its length; returns the count.
func rangeF[T float](n *ir.Node, in []*ir.Tensor, d []T) (int64, error) {
	f, err := floatScalars(n, in)
	if err != nil {
		return 0, err
	}
	cnt := floatCount(f[0], f[1], f[2])
	if cnt == int64(len(d)) {
		start, delta := T(f[0]), T(f[2])
		for i := range d {
			d[i] = start + T(i)*delta
		}
	}
	return cnt, nil
}

func rangeI[T integer](n *ir.Node, in []*ir.Tensor, d []T) (int64, error) {
	var v [3]T
	for i := range 3 {
		x, err := elems[T](n, in[i], "range input")
		if err != nil {
			return 0, err
		}
		v[i] = x[0]
	}
	start, limit, delta := v[0], v[1], v[2]
	if delta == 0 {
		return 0, errf(n, "delta is 0")
	}
	// count in a wide type: ceil((limit-start)/delta) with exact integer math
	var cnt int64
	if isSigned[T]() {
		s, l, dl := int64(start), int64(limit), int64(delta)
		if (dl > 0 && l > s) || (dl < 0 && l < s) {
			diff, step := l-s, dl
			if step < 0 {
				diff, step = -diff, -step
			}
			cnt = (diff + step - 1) / step
		}
	} else if limit > start {
		diff, step := uint64(limit-start), uint64(delta)
		cnt = int64((diff + step - 1) / step)
	}
	if cnt == int64(len(d)) {
		for i := range d {
			d[i] = start + T(i)*delta
		}
	}
	return cnt, nil
}

func isSigned[T integer]() bool {
	var z T
	return z-1 < 0
}
