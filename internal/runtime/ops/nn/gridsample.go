package nn

import (
	"math"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// GridSample (ONNX GridSample-20, any spatial rank) and AffineGrid, as the
// ONNX reference defines them (PyTorch's grid_sample and affine_grid).
// Coordinates are computed in the element type, as onnxruntime does.

func init() {
	opkernel.Register("GridSample", gridSample)
	opkernel.Register("AffineGrid", affineGrid)
}

func gridSample(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := need(n, in, 2); err != nil {
		return err
	}
	if hasHalf(in[0], in[1]) {
		return viaF32(ctx, n, in, out, gridSample)
	}
	x, g := in[0], in[1]
	if x.DType != g.DType {
		return opkernel.Unsupportedf(n, "X %s with grid %s", x.DType, g.DType)
	}
	switch x.DType {
	case ir.Float32:
		return gridSampleT[float32](ctx, n, x, g, out[0])
	case ir.Float64:
		return gridSampleT[float64](ctx, n, x, g, out[0])
	}
	return opkernel.Unsupportedf(n, "dtype %s", x.DType)
}

// gsAxis is one spatial axis of GridSample's input: its size, the borders
// coordinates are padded or reflected at, and the padding mode.
type gsAxis[T float] struct {
	size    int
	lo, hi  T // reflection borders
	padding string
	align   bool
}

func (a *gsAxis[T]) denorm(v T) T {
	if a.align {
		return (v + 1) / 2 * T(a.size-1)
	}
	return ((v+1)*T(a.size) - 1) / 2
}

// reflect folds x into [lo, hi] by reflecting at the borders.
func (a *gsAxis[T]) reflect(x T) T {
	rng := a.hi - a.lo
	if rng <= 0 {
		return a.lo
	}
	if x < a.lo {
		dx := a.lo - x
		k := int(dx / rng)
		r := dx - T(k)*rng
		if k%2 == 0 {
			return a.lo + r
		}
		return a.hi - r
	}
	if x > a.hi {
		dx := x - a.hi
		k := int(dx / rng)
		r := dx - T(k)*rng
		if k%2 == 0 {
			return a.hi - r
		}
		return a.lo + r
	}
	return x
}

// coord pads a denormalised coordinate that lies outside the borders.
func (a *gsAxis[T]) coord(x T) T {
	if x >= a.lo && x <= a.hi {
		return x
	}
	switch a.padding {
	case "border":
		return min(max(x, 0), T(a.size-1))
	case "reflection":
		return a.reflect(x)
	}
	return x
}

// tap returns the element index read for integer position i.
func (a *gsAxis[T]) tap(i int) (int, bool) {
	switch a.padding {
	case "border":
		return min(max(i, 0), a.size-1), true
	case "reflection":
		return int(a.reflect(T(i))), true
	}
	return i, i >= 0 && i < a.size
}

// cubicCoeffs are the cubic convolution weights (A = -0.75) of the taps at
// offsets -1, 0, 1, 2 from floor(x), for t = x - floor(x).
func cubicCoeffs[T float](t T) [4]T {
	const A = -0.75
	x := t
	return [4]T{
		((A*(x+1)-5*A)*(x+1)+8*A)*(x+1) - 4*A,
		((A+2)*x-(A+3))*x*x + 1,
		((A+2)*(1-x)-(A+3))*(1-x)*(1-x) + 1,
		((A*(2-x)-5*A)*(2-x)+8*A)*(2-x) - 4*A,
	}
}

func gridSampleT[T float](ctx *opkernel.Ctx, n *ir.Node, x, g, y *ir.Tensor) error {
	mode, err := ir.GridSampleMode(n)
	if err != nil {
		return errf(n, "%v", err)
	}
	r := len(x.Shape) - 2
	if r < 1 || len(g.Shape) != r+2 || int(g.Shape[r+1]) != r || g.Shape[0] != x.Shape[0] {
		return errf(n, "grid %v does not fit X %v", g.Shape, x.Shape)
	}
	if mode == "cubic" && r != 2 {
		return opkernel.Unsupportedf(n, "cubic mode with %d spatial dims", r)
	}
	nb, c := int(x.Shape[0]), int(x.Shape[1])
	if y.DType != x.DType || len(y.Shape) != r+2 || int(y.Shape[0]) != nb || int(y.Shape[1]) != c {
		return errf(n, "output %s does not fit X %s", y, x)
	}
	for i := 0; i < r; i++ {
		if y.Shape[2+i] != g.Shape[1+i] {
			return errf(n, "output %v does not fit grid %v", y.Shape, g.Shape)
		}
	}
	padding := n.Attrs.String("padding_mode", "zeros")
	align := n.Attrs.Int("align_corners", 0) != 0
	axes := make([]gsAxis[T], r)
	inVol := 1
	for i := range axes {
		a := &axes[i]
		a.size, a.padding, a.align = int(x.Shape[2+i]), padding, align
		if align {
			a.lo, a.hi = 0, T(a.size-1)
		} else {
			a.lo, a.hi = -0.5, T(a.size)-0.5
		}
		inVol *= a.size
	}
	outVol := prod(y.Shape[2:])
	xs, gs, ys := slice[T](x), slice[T](g), slice[T](y)
	ntap := map[string]int{"nearest": 1, "linear": 2, "cubic": 4}[mode]
	strides := make([]int, r)
	st := 1
	for i := r - 1; i >= 0; i-- {
		strides[i] = st
		st *= axes[i].size
	}
	opkernel.ParallelFor(ctx, nb*outVol, 64, func(s, e int) {
		idx := make([][]int, r)
		wt := make([][]T, r)
		ok := make([][]bool, r)
		for i := range idx {
			idx[i], wt[i], ok[i] = make([]int, ntap), make([]T, ntap), make([]bool, ntap)
		}
		combos := 1
		for i := 0; i < r; i++ {
			combos *= ntap
		}
		for u := s; u < e; u++ {
			b, o := u/outVol, u%outVol
			gp := gs[(b*outVol+o)*r : (b*outVol+o+1)*r]
			for i := 0; i < r; i++ {
				a := &axes[i]
				v := a.denorm(gp[r-1-i]) // grid holds (x, y, z): the last axis first
				if mode == "nearest" {
					v = T(math.RoundToEven(float64(v)))
				}
				v = a.coord(v)
				switch mode {
				case "nearest":
					idx[i][0], ok[i][0] = a.tap(int(v))
					wt[i][0] = 1
				case "linear":
					f := T(math.Floor(float64(v)))
					t := v - f
					idx[i][0], ok[i][0] = a.tap(int(f))
					idx[i][1], ok[i][1] = a.tap(int(f) + 1)
					wt[i][0], wt[i][1] = 1-t, t
				case "cubic":
					f := T(math.Floor(float64(v)))
					cw := cubicCoeffs(v - f)
					for k := 0; k < 4; k++ {
						idx[i][k], ok[i][k] = a.tap(int(f) + k - 1)
						wt[i][k] = cw[k]
					}
				}
			}
			for ch := 0; ch < c; ch++ {
				src := xs[(b*c+ch)*inVol : (b*c+ch+1)*inVol]
				var acc T
				for m := 0; m < combos; m++ {
					w, off, valid := T(1), 0, true
					rem := m
					for i := r - 1; i >= 0; i-- {
						k := rem % ntap
						rem /= ntap
						if !ok[i][k] {
							valid = false
							break
						}
						w *= wt[i][k]
						off += idx[i][k] * strides[i]
					}
					if valid {
						acc += w * src[off]
					}
				}
				ys[(b*c+ch)*outVol+o] = acc
			}
		}
	})
	return nil
}

func affineGrid(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := need(n, in, 2); err != nil {
		return err
	}
	if hasHalf(in[0]) {
		return viaF32(ctx, n, in, out, affineGrid)
	}
	switch in[0].DType {
	case ir.Float32:
		return affineGridT[float32](n, in[0], in[1], out[0])
	case ir.Float64:
		return affineGridT[float64](n, in[0], in[1], out[0])
	}
	return opkernel.Unsupportedf(n, "dtype %s", in[0].DType)
}

// linspace is AffineGrid's base coordinates of one axis: pixel centres
// (or corners with align_corners) in [-1, 1].
func linspace[T float](steps int, align bool) []T {
	v := make([]T, steps)
	for i := range v {
		switch {
		case align && steps > 1:
			v[i] = -1 + T(2*i)/T(steps-1)
		case align:
			v[i] = 0
		default:
			v[i] = (T(2*i)+1)/T(steps) - 1
		}
	}
	return v
}

// affineGridT: out[n, (d,) h, w, :] = theta[n] @ (x_w, y_h, (z_d,) 1).
func affineGridT[T float](n *ir.Node, th, sz, y *ir.Tensor) error {
	size, err := sz.Int64s()
	if err != nil || (len(size) != 4 && len(size) != 5) {
		return errf(n, "size must be 4 or 5 integers")
	}
	r := len(size) - 2
	nb := int(size[0])
	if len(th.Shape) != 3 || int(th.Shape[0]) != nb || int(th.Shape[1]) != r || int(th.Shape[2]) != r+1 {
		return errf(n, "theta %v does not fit size %v", th.Shape, size)
	}
	want := append([]int64{size[0]}, size[2:]...)
	want = append(want, int64(r))
	if y.DType != th.DType || len(y.Shape) != len(want) {
		return errf(n, "output %s, expected shape %v", y, want)
	}
	for i := range want {
		if y.Shape[i] != want[i] {
			return errf(n, "output %s, expected shape %v", y, want)
		}
	}
	align := n.Attrs.Int("align_corners", 0) != 0
	// base[i] holds the coordinates of spatial axis i (D, H, W order).
	base := make([][]T, r)
	for i := range base {
		base[i] = linspace[T](int(size[2+i]), align)
	}
	ts, ys := slice[T](th), slice[T](y)
	vol := prod(size[2:])
	p := make([]T, r+1) // (x, y, z, 1): the last spatial axis first
	p[r] = 1
	for b := 0; b < nb; b++ {
		t := ts[b*r*(r+1) : (b+1)*r*(r+1)]
		for o := 0; o < vol; o++ {
			rem := o
			for i := r - 1; i >= 0; i-- {
				d := int(size[2+i])
				p[r-1-i] = base[i][rem%d]
				rem /= d
			}
			dst := ys[(b*vol+o)*r : (b*vol+o+1)*r]
			for j := 0; j < r; j++ {
				var acc T
				for k := 0; k <= r; k++ {
					acc += t[j*(r+1)+k] * p[k]
				}
				dst[j] = acc
			}
		}
	}
	return nil
}
