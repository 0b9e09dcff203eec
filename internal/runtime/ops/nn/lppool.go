package nn

import (
	"math"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// ONNX LpPool: y = (sum over the window of |x|^p)^(1/p); padding adds
// nothing.

func init() {
	opkernel.Register("LpPool", lpPool)
	opkernel.Register("MatrixDeterminant", det)
}

func lpPool(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := need(n, in, 1); err != nil {
		return err
	}
	x, y := in[0], out[0]
	if hasHalf(x) {
		return viaF32(ctx, n, in, out, lpPool)
	}
	g, err := poolGeom(n, x)
	if err != nil {
		return err
	}
	if err := g.checkOut(n, y, int(x.Shape[0]), int(x.Shape[1])); err != nil {
		return err
	}
	p := n.Attrs.Float("p", 2) // an int since opset 2, a float in LpPool-1
	if p <= 0 {
		return errf(n, "p must be > 0, got %g", p)
	}
	nc := int(x.Shape[0] * x.Shape[1])
	switch x.DType {
	case ir.Float32:
		lpPoolT(ctx, g, nc, p, x.F32(), y.F32())
	case ir.Float64:
		lpPoolT(ctx, g, nc, p, x.F64(), y.F64())
	default:
		return opkernel.Unsupportedf(n, "dtype %s", x.DType)
	}
	return nil
}

// lpPow is |v|^p, exact for p = 1 and 2.
func lpPow(v, p float64) float64 {
	switch p {
	case 1:
		return math.Abs(v)
	case 2:
		return v * v
	}
	return math.Pow(math.Abs(v), p)
}

// lpRoot is s^(1/p), exact for p = 1 and 2.
func lpRoot(s, p float64) float64 {
	switch p {
	case 1:
		return s
	case 2:
		return math.Sqrt(s)
	}
	return math.Pow(s, 1/p)
}

// lpPoolT runs AvgPool with count_include_pad on |x|^p: the average times
// the window's taps inside the padded input is the sum LpPool wants (the
// zero padding adds nothing).
func lpPoolT[T float](ctx *opkernel.Ctx, g *geom, nc int, p float64, x, y []T) {
	ax := make([]T, len(x))
	opkernel.ParallelFor(ctx, len(x), 1<<14, func(s, e int) {
		for i := s; i < e; i++ {
			ax[i] = T(lpPow(float64(x[i]), p))
		}
	})
	avgPoolT(ctx, g, nc, true, ax, y)
	taps := make([]float64, 0, g.outVol())
	for od := 0; od < g.out[0]; od++ {
		a0, a1 := windowRange(g, 0, od, -g.pb[0], g.in[0]+g.pe[0])
		for oh := 0; oh < g.out[1]; oh++ {
			b0, b1 := windowRange(g, 1, oh, -g.pb[1], g.in[1]+g.pe[1])
			for ow := 0; ow < g.out[2]; ow++ {
				c0, c1 := windowRange(g, 2, ow, -g.pb[2], g.in[2]+g.pe[2])
				taps = append(taps, float64((a1-a0)*(b1-b0)*(c1-c0)))
			}
		}
	}
	for i := range y {
		if t := taps[i%len(taps)]; t > 0 {
			y[i] = T(lpRoot(float64(y[i])*t, p))
		} else {
			y[i] = 0
		}
	}
}

// det is ONNX Det: the determinant of each [M, M] matrix of x [..., M, M],
// by LU decomposition with partial pivoting in float64.
func det(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := need(n, in, 1); err != nil {
		return err
	}
	x, y := in[0], out[0]
	r := len(x.Shape)
	if r < 2 || x.Shape[r-1] != x.Shape[r-2] {
		return errf(n, "input %v must be [..., M, M]", x.Shape)
	}
	if !x.DType.IsFloat() || y.DType != x.DType {
		return opkernel.Unsupportedf(n, "dtype %s", x.DType)
	}
	m := int(x.Shape[r-1])
	cnt := prod(x.Shape[:r-2])
	if y.NumElements() != int64(cnt) {
		return errf(n, "output %v must have %d elements", y.Shape, cnt)
	}
	v, err := x.Float64s()
	if err != nil {
		return errf(n, "%v", err)
	}
	res := make([]float64, cnt)
	opkernel.ParallelFor(ctx, cnt, max(1, 4096/max(m*m*m, 1)), func(s, e int) {
		a := make([]float64, m*m)
		for i := s; i < e; i++ {
			copy(a, v[i*m*m:(i+1)*m*m])
			res[i] = luDet(a, m)
		}
	})
	for i, d := range res {
		y.PutFloat(i, d)
	}
	return nil
}

// luDet returns the determinant of the m x m row-major matrix a,
// overwriting a with its LU factors.
func luDet(a []float64, m int) float64 {
	d := 1.0
	for k := 0; k < m; k++ {
		piv := k
		for i := k + 1; i < m; i++ {
			if math.Abs(a[i*m+k]) > math.Abs(a[piv*m+k]) {
				piv = i
			}
		}
		if a[piv*m+k] == 0 {
			return 0
		}
		if piv != k {
			for j := 0; j < m; j++ {
				a[k*m+j], a[piv*m+j] = a[piv*m+j], a[k*m+j]
			}
			d = -d
		}
		pk := a[k*m+k]
		d *= pk
		for i := k + 1; i < m; i++ {
			f := a[i*m+k] / pk
			if f == 0 {
				continue
			}
			for j := k + 1; j < m; j++ {
				a[i*m+j] -= f * a[k*m+j]
			}
		}
	}
	return d
}
