package elementwise

import (
	"fmt"
	"math"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear (ONNX
// semantics, see internal/ir/ops_quant.go). The division x/scale runs in
// float32 and rounds half to even, as onnxruntime's CPU kernels do.

func init() {
	opkernel.Register("QuantizeLinear", quantizeLinear)
	opkernel.Register("DequantizeLinear", dequantizeLinear)
	opkernel.Register("DynamicQuantizeLinear", dynamicQuantizeLinear)
}

// qparams maps an element of x to its scale and zero point: per tensor,
// per axis or blocked. x is viewed as [pre, d, post] around the axis.
type qparams struct {
	scale          []float32
	zp             []int64 // nil: zero
	pre, d, post   int
	blocked        bool
	perAxis        bool
	blockSize, nbk int // blocked: block size and blocks along the axis
}

func readQParams(n *ir.Node, x, scale, zp *ir.Tensor) (*qparams, error) {
	p := &qparams{pre: 1, d: 1, post: 1}
	s := scale
	if opkernel.IsHalf(s.DType) {
		s = opkernel.HalfToF32(s)
	}
	switch s.DType {
	case ir.Float32:
		p.scale = s.F32()
	case ir.Float64:
		for _, v := range s.F64() {
			p.scale = append(p.scale, float32(v))
		}
	default:
		return nil, fmt.Errorf("node %s (%s): scale dtype %s", n.Name, n.Op, s.DType)
	}
	if zp != nil && zp.NumElements() > 0 {
		vals, err := zp.Int64s()
		if err != nil {
			return nil, fmt.Errorf("node %s (%s): zero point: %w", n.Name, n.Op, err)
		}
		if len(vals) != len(p.scale) {
			return nil, fmt.Errorf("node %s (%s): zero point has %d elements, scale %d", n.Name, n.Op, len(vals), len(p.scale))
		}
		p.zp = vals
	}
	bs := int(n.Attrs.Int("block_size", 0))
	if bs == 0 && len(p.scale) == 1 && len(scale.Shape) <= 1 {
		return p, nil
	}
	r := len(x.Shape)
	ax := int(n.Attrs.Int("axis", 1))
	if ax < 0 {
		ax += r
	}
	if ax < 0 || ax >= r {
		return nil, fmt.Errorf("node %s (%s): axis %d out of range for x %v", n.Name, n.Op, n.Attrs.Int("axis", 1), x.Shape)
	}
	for i, d := range x.Shape {
		switch {
		case i < ax:
			p.pre *= int(d)
		case i == ax:
			p.d = int(d)
		default:
			p.post *= int(d)
		}
	}
	if bs == 0 {
		if len(scale.Shape) != 1 || len(p.scale) != p.d {
			return nil, fmt.Errorf("node %s (%s): per-axis scale %v does not fit x %v at axis %d", n.Name, n.Op, scale.Shape, x.Shape, ax)
		}
		p.perAxis = true
		return p, nil
	}
	p.blocked, p.blockSize = true, bs
	p.nbk = (p.d + bs - 1) / bs
	if len(p.scale) != p.pre*p.nbk*p.post {
		return nil, fmt.Errorf("node %s (%s): blocked scale %v does not fit x %v (axis %d, block_size %d)", n.Name, n.Op, scale.Shape, x.Shape, ax, bs)
	}
	return p, nil
}

// forRuns calls f(lo, hi, si) for consecutive element runs [lo, hi) of x
// that share scale index si, in parallel.
func (p *qparams) forRuns(ctx *opkernel.Ctx, total int, f func(lo, hi, si int)) {
	if !p.perAxis && !p.blocked {
		opkernel.ParallelFor(ctx, total, grain, func(s, e int) { f(s, e, 0) })
		return
	}
	rows := p.pre * p.d // a row: the post elements of one (pre, d) pair
	opkernel.ParallelFor(ctx, rows, max(1, grain/max(p.post, 1)), func(s, e int) {
		for r := s; r < e; r++ {
			pi, di := r/p.d, r%p.d
			lo := r * p.post
			if p.perAxis {
				f(lo, lo+p.post, di)
				continue
			}
			base := (pi*p.nbk + di/p.blockSize) * p.post
			for q := 0; q < p.post; q++ {
				f(lo+q, lo+q+1, base+q)
			}
		}
	})
}

func (p *qparams) zero(si int) int64 {
	if p.zp == nil {
		return 0
	}
	return p.zp[si]
}

// QuantizeF32 is y = saturate(round_half_even(x / scale) + zp) for one value.
func QuantizeF32(x, scale float32, zp, lo, hi int64) int64 {
	q := x / scale
	if q != q { // NaN: the zero point (saturated)
		return min(max(zp, lo), hi)
	}
	v := math.RoundToEven(float64(q)) + float64(zp)
	if v < float64(lo) {
		return lo
	}
	if v > float64(hi) {
		return hi
	}
	return int64(v)
}

func floatInput(t *ir.Tensor) ([]float32, error) {
	switch {
	case opkernel.IsHalf(t.DType):
		return opkernel.HalfToF32(t).F32(), nil
	case t.DType == ir.Float32:
		return data[float32](t), nil
	case t.DType == ir.Float64:
		out := make([]float32, t.NumElements())
		for i, v := range data[float64](t) {
			out[i] = float32(v)
		}
		return out, nil
	case t.DType == ir.Int32:
		out := make([]float32, t.NumElements())
		for i, v := range data[int32](t) {
			out[i] = float32(v)
		}
		return out, nil
	}
	return nil, fmt.Errorf("x dtype %s", t.DType)
}

func quantizeLinear(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	x, y := in[0], out[0]
	var zp *ir.Tensor
	if len(in) > 2 {
		zp = in[2]
	}
	lo, hi, ok := ir.QuantIntRange(y.DType)
	if !ok || y.DType == ir.Int32 {
		return opkernel.Unsupportedf(n, "output dtype %s", y.DType)
	}
	xs, err := floatInput(x)
	if err != nil {
		return opkernel.Unsupportedf(n, "%v", err)
	}
	p, err := readQParams(n, x, in[1], zp)
	if err != nil {
		return err
	}
	if !p.perAxis && !p.blocked && (y.DType == ir.Uint8 || y.DType == ir.Int8) {
		quantize8(ctx, xs, p.scale[0], p.zero(0), lo, hi, y.Data)
		return nil
	}
	store := storeInt(y)
	p.forRuns(ctx, len(xs), func(s, e, si int) {
		sc, z := p.scale[si], p.zero(si)
		for i := s; i < e; i++ {
			store(i, QuantizeF32(xs[i], sc, z, lo, hi))
		}
	})
	return nil
}

// quantize8 is the per-tensor 8-bit QuantizeLinear: y holds the bytes of
// uint8 or int8 values in [lo, hi].
func quantize8(ctx *opkernel.Ctx, xs []float32, scale float32, zp, lo, hi int64, y []byte) {
	flo, fhi := float32(lo-zp), float32(hi-zp)
	fnan := min(max(0, flo), fhi) // NaN: the zero point (saturated), as QuantizeF32
	opkernel.ParallelFor(ctx, len(xs), grain, func(s, e int) {
		quantize8Run(y[s:e], xs[s:e], scale, flo, fhi, fnan, int(zp))
	})
}

// goQuantize8 is quantize8Run in Go (the reference the C loop is tested
// against, and the build without cgo).
func goQuantize8(y []byte, xs []float32, scale, flo, fhi, fnan float32, zp int) {
	for i, x := range xs {
		v := float32(math.RoundToEven(float64(x / scale)))
		c := v
		switch {
		case v < flo:
			c = flo
		case v > fhi:
			c = fhi
		case v != v:
			c = fnan
		}
		y[i] = byte(int(c) + zp)
	}
}

// goDequantize8 is dequantize8Run in Go (its reference, and the build
// without cgo).
func goDequantize8(y []float32, x []byte, signed bool, zp int, scale float32) {
	for i, v := range x {
		q := int(v)
		if signed {
			q = int(int8(v))
		}
		y[i] = float32(q-zp) * scale
	}
}

// storeInt returns a setter of element i of an integer tensor.
func storeInt(t *ir.Tensor) func(i int, v int64) {
	switch t.DType {
	case ir.Uint8:
		d := t.Data
		return func(i int, v int64) { d[i] = uint8(v) }
	case ir.Int8:
		d := data[int8](t)
		return func(i int, v int64) { d[i] = int8(v) }
	case ir.Uint16:
		d := data[uint16](t)
		return func(i int, v int64) { d[i] = uint16(v) }
	case ir.Int16:
		d := data[int16](t)
		return func(i int, v int64) { d[i] = int16(v) }
	}
	d := data[int32](t)
	return func(i int, v int64) { d[i] = int32(v) }
}

// loadInt returns a getter of element i of an integer tensor.
func loadInt(t *ir.Tensor) (func(i int) int64, bool) {
	switch t.DType {
	case ir.Uint8:
		d := t.Data
		return func(i int) int64 { return int64(d[i]) }, true
	case ir.Int8:
		d := data[int8](t)
		return func(i int) int64 { return int64(d[i]) }, true
	case ir.Uint16:
		d := data[uint16](t)
		return func(i int) int64 { return int64(d[i]) }, true
	case ir.Int16:
		d := data[int16](t)
		return func(i int) int64 { return int64(d[i]) }, true
	case ir.Int32:
		d := data[int32](t)
		return func(i int) int64 { return int64(d[i]) }, true
	}
	return nil, false
}

func dequantizeLinear(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	x, y := in[0], out[0]
	var zp *ir.Tensor
	if len(in) > 2 {
		zp = in[2]
	}
	get, ok := loadInt(x)
	if !ok {
		return opkernel.Unsupportedf(n, "x dtype %s", x.DType)
	}
	p, err := readQParams(n, x, in[1], zp)
	if err != nil {
		return err
	}
	total := int(x.NumElements())
	var ys []float32
	switch {
	case y.DType == ir.Float32:
		ys = data[float32](y)
	case opkernel.IsHalf(y.DType):
		ys = make([]float32, total)
	default:
		return opkernel.Unsupportedf(n, "output dtype %s", y.DType)
	}
	if (x.DType == ir.Uint8 || x.DType == ir.Int8) && !p.perAxis && !p.blocked {
		// the common activation case
		sg, z, sc, xd := x.DType == ir.Int8, int(p.zero(0)), p.scale[0], x.Data
		opkernel.ParallelFor(ctx, total, grain, func(s, e int) {
			dequantize8Run(ys[s:e], xd[s:e], sg, z, sc)
		})
	} else {
		p.forRuns(ctx, total, func(s, e, si int) {
			sc, z := p.scale[si], p.zero(si)
			for i := s; i < e; i++ {
				ys[i] = float32(get(i)-z) * sc
			}
		})
	}
	if opkernel.IsHalf(y.DType) {
		opkernel.F32ToHalf(y, ys)
	}
	return nil
}

// DynamicQuantizeLinear: uint8, scale = (max(0, max x) - min(0, min x)) /
// 255 (1 when that range is empty, as onnxruntime), zero point =
// saturate(round_half_even(-min/scale)).
func dynamicQuantizeLinear(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	x := in[0]
	if x.DType != ir.Float32 {
		return opkernel.Unsupportedf(n, "x dtype %s", x.DType)
	}
	xs := data[float32](x)
	// the range of the chunks, combined (min and max are exact in any order)
	const chunk = 1 << 16
	nc := (len(xs) + chunk - 1) / chunk
	los, his := make([]float32, nc), make([]float32, nc)
	opkernel.ParallelFor(ctx, nc, 1, func(s, e int) {
		for c := s; c < e; c++ {
			los[c], his[c] = minMaxRun(xs[c*chunk : min(len(xs), (c+1)*chunk)])
		}
	})
	lo, hi := float32(0), float32(0)
	for c := range los {
		lo, hi = min(lo, los[c]), max(hi, his[c])
	}
	scale := float32(1)
	if hi != lo {
		scale = (hi - lo) / 255
	}
	zpf := min(max(0-lo/scale, 0), 255)
	zp := int64(math.RoundToEven(float64(zpf)))
	if t := opkernelOut(out, 1); t != nil {
		data[float32](t)[0] = scale
	}
	if t := opkernelOut(out, 2); t != nil {
		t.Data[0] = uint8(zp)
	}
	if y := opkernelOut(out, 0); y != nil {
		quantize8(ctx, xs, scale, zp, 0, 255, y.Data)
	}
	return nil
}

// goMinMax is gk_minmax_f32 in Go.
func goMinMax(xs []float32) (lo, hi float32) {
	for _, v := range xs {
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi
}

func opkernelOut(out []*ir.Tensor, i int) *ir.Tensor {
	if i < len(out) {
		return out[i]
	}
	return nil
}
