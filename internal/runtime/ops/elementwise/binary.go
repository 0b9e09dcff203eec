package elementwise

import (
	"math"
	"slices"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

type binOp int

const (
	opAdd binOp = iota
	opSub
	opMul
	opDiv
	opPow
	opMod
	opMax
	opMin
	opSqDiff
	opPReLU
	opEq
	opGt
	opGe
	opLt
	opLe
	opAnd
	opOr
	opXor
)

// f32Fast maps ops with a C float32 kernel to its code.
var f32Fast = map[binOp]int{opAdd: bAdd, opSub: bSub, opMul: bMul, opDiv: bDiv, opMax: bMax, opMin: bMin, opSqDiff: bSqDiff, opPReLU: bPReLU}

// applyRow is the inner loop of every Go binary op: sa/sb are 1 when the
// operand advances with the output and 0 when it is a broadcast scalar.
func applyRow[T, O any](f func(x, y T) O, d []O, a []T, sa int, b []T, sb int) {
	switch {
	case sa == 1 && sb == 1:
		a, b = a[:len(d)], b[:len(d)]
		for i := range d {
			d[i] = f(a[i], b[i])
		}
	case sb == 1:
		x := a[0]
		b = b[:len(d)]
		for i := range d {
			d[i] = f(x, b[i])
		}
	case sa == 1:
		y := b[0]
		a = a[:len(d)]
		for i := range d {
			d[i] = f(a[i], y)
		}
	default:
		v := f(a[0], b[0])
		for i := range d {
			d[i] = v
		}
	}
}

// broadcast2 runs row over the numpy broadcast of a and b into d.
func broadcast2[T, O any](ctx *opkernel.Ctx, outShape []int64, d []O, a []T, aShape []int64, b []T, bShape []int64,
	row func(d []O, a []T, sa int, b []T, sb int)) error {
	p, err := newPlan(outShape, aShape, bShape)
	if err != nil {
		return err
	}
	defer p.free()
	broadcast2Plan(ctx, p, d, a, b, row)
	return nil
}

// broadcast2Plan is broadcast2 with the plan already made.
func broadcast2Plan[T, O any](ctx *opkernel.Ctx, p *plan, d []O, a []T, b []T, row func(d []O, a []T, sa int, b []T, sb int)) {
	p.run(ctx, func(dst int, offs []int, n int) {
		row(d[dst:dst+n], a[offs[0]:], p.innerStep[0], b[offs[1]:], p.innerStep[1])
	})
}

func binaryFunc[T, O any](ctx *opkernel.Ctx, out, a, b *ir.Tensor, f func(x, y T) O) error {
	return broadcast2(ctx, out.Shape, data[O](out), data[T](a), a.Shape, data[T](b), b.Shape,
		func(d []O, a []T, sa int, b []T, sb int) { applyRow(f, d, a, sa, b, sb) })
}

func floatArith[T float](op binOp, fmod bool) func(x, y T) T {
	switch op {
	case opAdd:
		return func(x, y T) T { return x + y }
	case opSub:
		return func(x, y T) T { return x - y }
	case opMul:
		return func(x, y T) T { return x * y }
	case opDiv:
		return func(x, y T) T { return x / y }
	case opPow:
		return func(x, y T) T { return T(math.Pow(float64(x), float64(y))) }
	case opMod:
		if fmod {
			return func(x, y T) T { return T(math.Mod(float64(x), float64(y))) }
		}
		return func(x, y T) T {
			r := math.Mod(float64(x), float64(y))
			if r != 0 && (r < 0) != (y < 0) {
				r += float64(y)
			}
			return T(r)
		}
	case opMax:
		return nanMax[T]
	case opMin:
		return nanMin[T]
	case opSqDiff:
		return func(x, y T) T { return (x - y) * (x - y) }
	case opPReLU:
		return func(x, s T) T {
			if x < 0 {
				return x * s
			}
			return x
		}
	}
	return nil
}

func intArith[T integer](op binOp, fmod bool) func(x, y T) T {
	switch op {
	case opAdd:
		return func(x, y T) T { return x + y }
	case opSub:
		return func(x, y T) T { return x - y }
	case opMul:
		return func(x, y T) T { return x * y }
	case opDiv:
		// Division by zero is undefined in ONNX; return 0 rather than panic.
		return func(x, y T) T {
			if y == 0 {
				return 0
			}
			return x / y
		}
	case opPow:
		return intPow[T]
	case opMod:
		if fmod {
			return func(x, y T) T {
				if y == 0 {
					return 0
				}
				return x % y
			}
		}
		return func(x, y T) T {
			if y == 0 {
				return 0
			}
			r := x % y
			if r != 0 && (r < 0) != (y < 0) {
				r += y
			}
			return r
		}
	case opMax:
		return func(x, y T) T { return max(x, y) }
	case opMin:
		return func(x, y T) T { return min(x, y) }
	case opSqDiff:
		return func(x, y T) T { return (x - y) * (x - y) }
	case opPReLU:
		return func(x, s T) T {
			if x < 0 {
				return x * s
			}
			return x
		}
	}
	return nil
}

// intPow is exact integer power; negative exponents give the truncated
// real result (0 except for bases 1 and -1).
func intPow[T integer](x, y T) T {
	if y < 0 {
		switch {
		case x == 1:
			return 1
		case x == 0:
			return 0
		case T(0)-1 < 0 && x == T(0)-1: // signed -1
			if y%2 == 0 {
				return 1
			}
			return x
		}
		return 0
	}
	r := T(1)
	for y > 0 {
		if y&1 == 1 {
			r *= x
		}
		x *= x
		y >>= 1
	}
	return r
}

func cmpFunc[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | float32 | float64 | string](op binOp) func(x, y T) uint8 {
	switch op {
	case opEq:
		return func(x, y T) uint8 { return b2u(x == y) }
	case opGt:
		return func(x, y T) uint8 { return b2u(x > y) }
	case opGe:
		return func(x, y T) uint8 { return b2u(x >= y) }
	case opLt:
		return func(x, y T) uint8 { return b2u(x < y) }
	case opLe:
		return func(x, y T) uint8 { return b2u(x <= y) }
	}
	return nil
}

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

func arithTyped[T number](ctx *opkernel.Ctx, out, a, b *ir.Tensor, f func(x, y T) T) bool {
	if f == nil {
		return false
	}
	return binaryFunc(ctx, out, a, b, f) == nil
}

// arith computes out = a (op) b with broadcasting; a, b and out share a dtype
// (PReLU slope included).
func arith(ctx *opkernel.Ctx, n *ir.Node, op binOp, out, a, b *ir.Tensor) error {
	if a.DType != b.DType {
		return nodeErr(n, "input dtypes differ: %s and %s", a.DType, b.DType)
	}
	p, err := newPlan(out.Shape, a.Shape, b.Shape)
	if err != nil {
		return nodeErr(n, "%v", err)
	}
	defer p.free()
	fmod := n.Attrs.Int("fmod", 0) != 0
	ok := false
	switch a.DType {
	case ir.Float32:
		if code, fast := f32Fast[op]; fast {
			if len(p.dims) == 0 && p.total > 0 && (p.total <= grain || ctx.NumThreads() <= 1) {
				// One contiguous row (same shapes, or a scalar operand) in
				// one call: no closures, no allocation.
				f32Binary(code, out.F32(), a.F32(), p.innerStep[0], b.F32(), p.innerStep[1])
				return nil
			}
			if rowsBroadcastF32(ctx, code, p, out, a, b) {
				return nil
			}
			broadcast2Plan(ctx, p, out.F32(), a.F32(), b.F32(),
				func(d []float32, a []float32, sa int, b []float32, sb int) { f32Binary(code, d, a, sa, b, sb) })
			return nil
		}
		ok = arithTyped(ctx, out, a, b, floatArith[float32](op, fmod))
	case ir.Float64:
		ok = arithTyped(ctx, out, a, b, floatArith[float64](op, fmod))
	case ir.Float16, ir.BFloat16:
		var held []*[]float32
		defer func() { release(held) }()
		w := pooledF32(out.Shape, int(out.NumElements()), &held)
		if err := arith(ctx, n, op, w, widenPooled(a, &held), widenPooled(b, &held)); err != nil {
			return err
		}
		opkernel.F32ToHalf(out, w.F32())
		return nil
	case ir.Int8:
		ok = arithTyped(ctx, out, a, b, intArith[int8](op, fmod))
	case ir.Int16:
		ok = arithTyped(ctx, out, a, b, intArith[int16](op, fmod))
	case ir.Int32:
		ok = arithTyped(ctx, out, a, b, intArith[int32](op, fmod))
	case ir.Int64:
		ok = arithTyped(ctx, out, a, b, intArith[int64](op, fmod))
	case ir.Uint8:
		ok = arithTyped(ctx, out, a, b, intArith[uint8](op, fmod))
	case ir.Uint16:
		ok = arithTyped(ctx, out, a, b, intArith[uint16](op, fmod))
	case ir.Uint32:
		ok = arithTyped(ctx, out, a, b, intArith[uint32](op, fmod))
	case ir.Uint64:
		ok = arithTyped(ctx, out, a, b, intArith[uint64](op, fmod))
	}
	if !ok {
		return opkernel.Unsupportedf(n, "dtype %s", a.DType)
	}
	return nil
}

// rowsBroadcastF32 runs out = a (op) b in one C call per worker when the
// broadcast is [rows, n] against [rows, 1] after merging dims (either order),
// e.g. [N,C,H,W] * [N,C,1,1]; it reports false, doing nothing, for any other
// pattern.
func rowsBroadcastF32(ctx *opkernel.Ctx, code int, p *plan, out, a, b *ir.Tensor) bool {
	if len(p.dims) != 1 || p.total == 0 {
		return false
	}
	rows, n := p.dims[0], p.inner
	var aFull bool
	switch {
	case p.innerStep[0] == 1 && p.strides[0][0] == n && p.innerStep[1] == 0 && p.strides[1][0] == 1:
		aFull = true
	case p.innerStep[1] == 1 && p.strides[1][0] == n && p.innerStep[0] == 0 && p.strides[0][0] == 1:
	default:
		return false
	}
	d, x, y := out.F32(), a.F32(), b.F32()
	// Shared chunks, like the convs around it: squeeze-excite's channel scale
	// runs between a depthwise conv and a 1x1 conv, both split that way, so
	// each core mostly reads what it wrote.
	opkernel.ParallelForShared(ctx, rows, max(1, grain/n), func(s, e int) {
		if aFull {
			f32BinaryRows(code, d[s*n:e*n], x[s*n:e*n], y[s:e], true, e-s, n)
		} else {
			f32BinaryRows(code, d[s*n:e*n], x[s:e], y[s*n:e*n], false, e-s, n)
		}
	})
	return true
}

func nodeErrIf(n *ir.Node, err error) error {
	if err != nil {
		return nodeErr(n, "%v", err)
	}
	return nil
}

func compare(ctx *opkernel.Ctx, n *ir.Node, op binOp, out, a, b *ir.Tensor) error {
	if a.DType != b.DType {
		return nodeErr(n, "input dtypes differ: %s and %s", a.DType, b.DType)
	}
	if out.DType != ir.Bool {
		return nodeErr(n, "output dtype %s, want bool", out.DType)
	}
	var err error
	switch a.DType {
	case ir.Float32:
		err = binaryFunc(ctx, out, a, b, cmpFunc[float32](op))
	case ir.Float64:
		err = binaryFunc(ctx, out, a, b, cmpFunc[float64](op))
	case ir.Float16, ir.BFloat16:
		return compare(ctx, n, op, out, opkernel.HalfToF32(a), opkernel.HalfToF32(b))
	case ir.Int8:
		err = binaryFunc(ctx, out, a, b, cmpFunc[int8](op))
	case ir.Int16:
		err = binaryFunc(ctx, out, a, b, cmpFunc[int16](op))
	case ir.Int32:
		err = binaryFunc(ctx, out, a, b, cmpFunc[int32](op))
	case ir.Int64:
		err = binaryFunc(ctx, out, a, b, cmpFunc[int64](op))
	case ir.Uint8, ir.Bool:
		err = binaryFunc(ctx, out, a, b, cmpFunc[uint8](op))
	case ir.Uint16:
		err = binaryFunc(ctx, out, a, b, cmpFunc[uint16](op))
	case ir.Uint32:
		err = binaryFunc(ctx, out, a, b, cmpFunc[uint32](op))
	case ir.Uint64:
		err = binaryFunc(ctx, out, a, b, cmpFunc[uint64](op))
	case ir.String:
		err = broadcast2(ctx, out.Shape, out.U8(), a.Strings, a.Shape, b.Strings, b.Shape,
			func(d []uint8, x []string, sa int, y []string, sb int) {
				applyRow(cmpFunc[string](op), d, x, sa, y, sb)
			})
	default:
		return opkernel.Unsupportedf(n, "dtype %s", a.DType)
	}
	return nodeErrIf(n, err)
}

func logical(ctx *opkernel.Ctx, n *ir.Node, op binOp, out, a, b *ir.Tensor) error {
	if a.DType != ir.Bool || b.DType != ir.Bool || out.DType != ir.Bool {
		return opkernel.Unsupportedf(n, "logical op on %s, %s", a.DType, b.DType)
	}
	var f func(x, y uint8) uint8
	switch op {
	case opAnd:
		f = func(x, y uint8) uint8 { return b2u(x != 0 && y != 0) }
	case opOr:
		f = func(x, y uint8) uint8 { return b2u(x != 0 || y != 0) }
	default:
		f = func(x, y uint8) uint8 { return b2u((x != 0) != (y != 0)) }
	}
	return nodeErrIf(n, binaryFunc(ctx, out, a, b, f))
}

// pow handles ONNX Pow's mixed dtypes: the result has the base's dtype.
func pow(ctx *opkernel.Ctx, n *ir.Node, out, a, b *ir.Tensor) error {
	if a.DType == ir.Float32 && b.NumElements() == 1 && len(b.Shape) <= len(a.Shape) {
		// x^2 (LayerNorm variance as exported by PyTorch) is x*x exactly:
		// both are the correctly rounded square.
		e, err := b.Float64s()
		if err == nil && e[0] == 2 {
			return arith(ctx, n, opMul, out, a, a)
		}
		// x^3 (tanh-GeLU as exported) in C with math.Pow's bits.
		if err == nil && e[0] == 3 && out.DType == ir.Float32 && out.NumElements() == a.NumElements() &&
			cubeF32(ctx, out.F32(), a.F32()) {
			return nil
		}
	}
	if a.DType == b.DType {
		return arith(ctx, n, opPow, out, a, b)
	}
	if a.DType.IsFloat() && b.DType.IsInt() || a.DType.IsInt() && b.DType.IsInt() {
		// Exponent converted to the base's type: exact for float bases and
		// keeps integer powers exact.
		e, err := castTensor(b, a.DType)
		if err != nil {
			return nodeErr(n, "%v", err)
		}
		return arith(ctx, n, opPow, out, a, e)
	}
	// Integer base with float exponent, or two float types: compute in float64.
	a64, err := castTensor(a, ir.Float64)
	if err != nil {
		return nodeErr(n, "%v", err)
	}
	b64, err := castTensor(b, ir.Float64)
	if err != nil {
		return nodeErr(n, "%v", err)
	}
	tmp := ir.NewTensor(ir.Float64, out.Shape)
	if err := arith(ctx, n, opPow, tmp, a64, b64); err != nil {
		return err
	}
	return nodeErrIf(n, castInto(out, tmp))
}

func registerBinary(name string, op binOp) {
	opkernel.Register(name, func(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
		if err := checkArity(n, in, out, 2, 2, 1); err != nil {
			return err
		}
		switch op {
		case opEq, opGt, opGe, opLt, opLe:
			return compare(ctx, n, op, out[0], in[0], in[1])
		case opAnd, opOr, opXor:
			return logical(ctx, n, op, out[0], in[0], in[1])
		case opPow:
			return pow(ctx, n, out[0], in[0], in[1])
		}
		return arith(ctx, n, op, out[0], in[0], in[1])
	})
}

// variadic implements Max, Min, Sum and Mean: out starts as the broadcast of
// the first input and folds the others in place.
func variadic(ctx *opkernel.Ctx, n *ir.Node, op binOp, mean bool, in, out []*ir.Tensor) error {
	var ins []*ir.Tensor
	for _, t := range in {
		if t != nil {
			ins = append(ins, t)
		}
	}
	if len(ins) == 0 || len(out) == 0 {
		return nodeErr(n, "needs at least one input and one output")
	}
	o := out[0]
	for _, t := range ins {
		if t.DType != o.DType {
			return nodeErr(n, "input dtype %s differs from output %s", t.DType, o.DType)
		}
	}
	if opkernel.IsHalf(o.DType) {
		w, flush := halfOut(o)
		wide := make([]*ir.Tensor, len(ins))
		for i, t := range ins {
			wide[i] = opkernel.HalfToF32(t)
		}
		if err := variadic(ctx, n, op, mean, wide, []*ir.Tensor{w}); err != nil {
			return err
		}
		flush()
		return nil
	}
	if err := broadcastInto(ctx, o, ins[0]); err != nil {
		return nodeErr(n, "%v", err)
	}
	for _, t := range ins[1:] {
		if err := arith(ctx, n, op, o, o, t); err != nil {
			return err
		}
	}
	if mean && len(ins) > 1 {
		if !o.DType.IsFloat() {
			return opkernel.Unsupportedf(n, "Mean of %s", o.DType)
		}
		div := ir.NewTensor(o.DType, nil)
		div.PutFloat(0, float64(len(ins)))
		return arith(ctx, n, opDiv, o, o, div)
	}
	return nil
}

func registerVariadic(name string, op binOp, mean bool) {
	opkernel.Register(name, func(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
		return variadic(ctx, n, op, mean, in, out)
	})
}

// broadcastInto copies src, broadcast, into dst (same dtype).
func broadcastInto(ctx *opkernel.Ctx, dst, src *ir.Tensor) error {
	if dst.DType != src.DType {
		return errorf("dtype %s does not match output %s", src.DType, dst.DType)
	}
	if slices.Equal(dst.Shape, src.Shape) {
		if dst.DType == ir.String {
			copy(dst.Strings, src.Strings)
		} else {
			copy(dst.Data, src.Data)
		}
		return nil
	}
	switch {
	case dst.DType == ir.String:
		return copyBroadcast(ctx, dst.Shape, dst.Strings, src.Strings, src.Shape)
	case dst.DType.Size() == 1:
		return copyBroadcast(ctx, dst.Shape, dst.Data, src.Data, src.Shape)
	case dst.DType.Size() == 2:
		return copyBroadcast(ctx, dst.Shape, dst.U16(), src.U16(), src.Shape)
	case dst.DType.Size() == 4:
		return copyBroadcast(ctx, dst.Shape, dst.U32(), src.U32(), src.Shape)
	case dst.DType.Size() == 8:
		return copyBroadcast(ctx, dst.Shape, dst.U64(), src.U64(), src.Shape)
	}
	return errorf("cannot broadcast dtype %s", dst.DType)
}

func copyBroadcast[T any](ctx *opkernel.Ctx, shape []int64, d, s []T, sShape []int64) error {
	if len(s) > 0 && len(d)%len(s) == 0 && repeatsWhole(shape, sShape) {
		// The output is the source repeated (Expand of a row to a matrix):
		// one copy of it, then copies doubling the filled part, a few
		// large memmoves instead of one per row.
		filled := copy(d, s)
		for filled < len(d) {
			filled += copy(d[filled:], d[:filled])
		}
		return nil
	}
	p, err := newPlan(shape, sShape)
	if err != nil {
		return err
	}
	defer p.free()
	p.run(ctx, func(dst int, offs []int, n int) {
		if p.innerStep[0] == 1 {
			copy(d[dst:dst+n], s[offs[0]:offs[0]+n])
			return
		}
		v := s[offs[0]]
		row := d[dst : dst+n]
		for i := range row {
			row[i] = v
		}
	})
	return nil
}

// repeatsWhole reports whether broadcasting src to dst only repeats src
// whole: src's shape, right-aligned, is 1 (or absent) on a run of leading
// dims and equal to dst's on the rest.
func repeatsWhole(dst, src []int64) bool {
	off := len(dst) - len(src)
	if off < 0 {
		return false
	}
	leading := true
	for i, d := range dst {
		sd := int64(1)
		if i >= off {
			sd = src[i-off]
		}
		switch {
		case leading && sd == 1:
		case sd == d:
			leading = false
		default:
			return false
		}
	}
	return true
}

// selectT is Where: d = c ? x : y with three-way broadcasting.
func selectT[T any](ctx *opkernel.Ctx, shape []int64, d []T, c []uint8, cShape []int64, x []T, xShape []int64, y []T, yShape []int64) error {
	p, err := newPlan(shape, cShape, xShape, yShape)
	if err != nil {
		return err
	}
	defer p.free()
	sc, sx, sy := p.innerStep[0], p.innerStep[1], p.innerStep[2]
	p.run(ctx, func(dst int, offs []int, n int) {
		oc, ox, oy := offs[0], offs[1], offs[2]
		row := d[dst : dst+n]
		for i := range row {
			if c[oc+i*sc] != 0 {
				row[i] = x[ox+i*sx]
			} else {
				row[i] = y[oy+i*sy]
			}
		}
	})
	return nil
}

func selectOp(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := checkArity(n, in, out, 3, 3, 1); err != nil {
		return err
	}
	c, x, y, o := in[0], in[1], in[2], out[0]
	if c.DType != ir.Bool {
		return nodeErr(n, "condition dtype %s, want bool", c.DType)
	}
	if x.DType != y.DType || x.DType != o.DType {
		return nodeErr(n, "dtypes %s, %s, output %s differ", x.DType, y.DType, o.DType)
	}
	var err error
	switch {
	case o.DType == ir.String:
		err = selectT(ctx, o.Shape, o.Strings, c.Data, c.Shape, x.Strings, x.Shape, y.Strings, y.Shape)
	case o.DType.Size() == 1:
		err = selectT(ctx, o.Shape, o.Data, c.Data, c.Shape, x.Data, x.Shape, y.Data, y.Shape)
	case o.DType.Size() == 2:
		err = selectT(ctx, o.Shape, o.U16(), c.Data, c.Shape, x.U16(), x.Shape, y.U16(), y.Shape)
	case o.DType.Size() == 4:
		err = selectT(ctx, o.Shape, o.U32(), c.Data, c.Shape, x.U32(), x.Shape, y.U32(), y.Shape)
	case o.DType.Size() == 8:
		err = selectT(ctx, o.Shape, o.U64(), c.Data, c.Shape, x.U64(), x.Shape, y.U64(), y.Shape)
	default:
		return opkernel.Unsupportedf(n, "dtype %s", o.DType)
	}
	return nodeErrIf(n, err)
}

func biasAdd(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := checkArity(n, in, out, 2, 2, 1); err != nil {
		return err
	}
	x, b := in[0], in[1]
	rank := len(x.Shape)
	if len(b.Shape) != 1 || rank < 1 {
		return nodeErr(n, "bias shape %v, want [C] for input %v", b.Shape, x.Shape)
	}
	axis := rank - 1
	if f := n.Attrs.String("format", "NCHW"); f != "NHWC" && rank >= 2 {
		axis = 1
	}
	if x.Shape[axis] != b.Shape[0] {
		return nodeErr(n, "bias length %d does not match input dim %d of %v", b.Shape[0], axis, x.Shape)
	}
	shape := make([]int64, rank-axis)
	for i := range shape {
		shape[i] = 1
	}
	shape[0] = b.Shape[0]
	view := &ir.Tensor{DType: b.DType, Shape: shape, Data: b.Data}
	return arith(ctx, n, opAdd, out[0], x, view)
}

func broadcastTo(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := checkArity(n, in, out, 1, 2, 1); err != nil {
		return err
	}
	return nodeErrIf(n, broadcastInto(ctx, out[0], in[0]))
}

func init() {
	registerBinary("Add", opAdd)
	registerBinary("Sub", opSub)
	registerBinary("Mul", opMul)
	registerBinary("RealDiv", opDiv)
	registerBinary("Pow", opPow)
	registerBinary("Mod", opMod)
	registerBinary("SquaredDifference", opSqDiff)
	registerBinary("PReLU", opPReLU)
	registerBinary("Equal", opEq)
	registerBinary("Greater", opGt)
	registerBinary("GreaterEqual", opGe)
	registerBinary("Less", opLt)
	registerBinary("LessEqual", opLe)
	registerBinary("LogicalAnd", opAnd)
	registerBinary("LogicalOr", opOr)
	registerBinary("LogicalXor", opXor)
	registerVariadic("Maximum", opMax, false)
	registerVariadic("Minimum", opMin, false)
	registerVariadic("AddN", opAdd, false)
	registerVariadic("Mean", opAdd, true)
	opkernel.Register("Select", selectOp)
	opkernel.Register("BiasAdd", biasAdd)
	opkernel.Register("BroadcastTo", broadcastTo)
}
