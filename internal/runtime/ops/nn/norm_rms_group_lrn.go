package nn

import (
	"math"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// The ONNX normalisations beyond BatchNorm/InstanceNorm/LayerNorm:
// RMSNormalization, GroupNormalization, MeanVarianceNormalization, LRN and
// LpNormalization. Statistics are accumulated in float64; float16 and
// bfloat16 run through float32.

func init() {
	opkernel.Register("RMSNormalization", rmsNorm)
	opkernel.Register("GroupNormalization", groupNorm)
	opkernel.Register("MeanVarianceNormalization", meanVarianceNorm)
	opkernel.Register("LRN", lrn)
	opkernel.Register("LpNormalization", lpNormalization)
}

// floatKernel runs f on x's float32 or float64 data after the half
// conversion; other dtypes are unsupported.
func floatKernel(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor, self opkernel.Func,
	f32 func(x, y []float32), f64 func(x, y []float64)) error {
	if err := need(n, in, 1); err != nil {
		return err
	}
	if len(out) < 1 || out[0] == nil {
		return errf(n, "output 0 is missing")
	}
	x, y := in[0], out[0]
	if hasHalf(x) {
		return viaF32(ctx, n, in, out, self)
	}
	if x.DType != y.DType || x.NumElements() != y.NumElements() {
		return errf(n, "input %s does not match output %s", x, y)
	}
	switch x.DType {
	case ir.Float32:
		f32(x.F32(), y.F32())
	case ir.Float64:
		f64(x.F64(), y.F64())
	default:
		return opkernel.Unsupportedf(n, "dtype %s", x.DType)
	}
	return nil
}

// rmsNorm: y = x / sqrt(mean(x^2 over the dims from axis on) + epsilon) * scale.
func rmsNorm(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := need(n, in, 2); err != nil {
		return err
	}
	x := in[0]
	axis, err := normAxisOf(n, n.Attrs.Int("axis", -1), len(x.Shape))
	if err != nil {
		return err
	}
	normShape := x.Shape[axis:]
	inner, outer := prod(normShape), prod(x.Shape[:axis])
	scale, err := broadcastParam(in[1], normShape)
	if err != nil {
		return errf(n, "scale: %v", err)
	}
	eps := n.Attrs.Float("epsilon", 1e-5)
	return floatKernel(ctx, n, in, out, rmsNorm,
		func(x, y []float32) { rmsNormT(ctx, outer, inner, x, y, scale, eps) },
		func(x, y []float64) { rmsNormT(ctx, outer, inner, x, y, scale, eps) })
}

func rmsNormT[T float](ctx *opkernel.Ctx, outer, inner int, x, y []T, scale []float64, eps float64) {
	opkernel.ParallelFor(ctx, outer, max(1, 8192/max(inner, 1)), func(s, e int) {
		for r := s; r < e; r++ {
			xs, ys := x[r*inner:(r+1)*inner], y[r*inner:(r+1)*inner]
			var sq float64
			for _, v := range xs {
				sq += float64(v) * float64(v)
			}
			inv := 1 / math.Sqrt(sq/float64(max(inner, 1))+eps)
			for i, v := range xs {
				ys[i] = T(float64(v) * inv * scale[i])
			}
		}
	})
}

// normAxisOf maps axis from [-rank, rank) to [0, rank).
func normAxisOf(n *ir.Node, axis int64, rank int) (int, error) {
	if axis < 0 {
		axis += int64(rank)
	}
	if axis < 0 || axis >= int64(rank) {
		return 0, errf(n, "axis %d out of range for rank %d", axis, rank)
	}
	return int(axis), nil
}

// groupNorm: per sample and group of C/num_groups channels, y = (x - mean)
// * inv_std * scale[c] + bias[c]; scale and bias are per channel ([C],
// opset 21) or per group ([num_groups], opset 18).
func groupNorm(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := need(n, in, 3); err != nil {
		return err
	}
	x := in[0]
	if len(x.Shape) < 2 {
		return errf(n, "input %v must have rank >= 2", x.Shape)
	}
	groups := int(n.Attrs.Int("num_groups", 0))
	batch, c, spatial := int(x.Shape[0]), int(x.Shape[1]), prod(x.Shape[2:])
	if groups <= 0 || c%groups != 0 {
		return errf(n, "num_groups %d does not divide %d channels", groups, c)
	}
	params := make([][]float64, 2)
	for i := range params {
		v, err := in[i+1].Float64s()
		if err != nil {
			return errf(n, "input %d: %v", i+1, err)
		}
		switch len(v) {
		case c:
		case groups: // opset 18: one value per group
			w := make([]float64, c)
			for ch := range w {
				w[ch] = v[ch/(c/groups)]
			}
			v = w
		default:
			return errf(n, "input %d has %d elements, want %d or %d", i+1, len(v), c, groups)
		}
		params[i] = v
	}
	eps := n.Attrs.Float("epsilon", 1e-5)
	cg := c / groups
	return floatKernel(ctx, n, in, out, groupNorm,
		func(x, y []float32) { groupNormT(ctx, batch*groups, cg, spatial, c, x, y, params[0], params[1], eps) },
		func(x, y []float64) { groupNormT(ctx, batch*groups, cg, spatial, c, x, y, params[0], params[1], eps) })
}

func groupNormT[T float](ctx *opkernel.Ctx, planes, cg, spatial, c int, x, y []T, scale, bias []float64, eps float64) {
	size := cg * spatial
	opkernel.ParallelFor(ctx, planes, max(1, 8192/max(size, 1)), func(s, e int) {
		for p := s; p < e; p++ {
			xs, ys := x[p*size:(p+1)*size], y[p*size:(p+1)*size]
			mean, inv := meanInvStd(xs, eps)
			for i, v := range xs {
				ch := (p*cg + i/max(spatial, 1)) % c
				ys[i] = T((float64(v)-mean)*inv*scale[ch] + bias[ch])
			}
		}
	})
}

// meanVarianceNorm: y = (x - mean) / (sqrt(variance) + 1e-9) with the
// statistics over attr axes (default [0, 2, 3]).
func meanVarianceNorm(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := need(n, in, 1); err != nil {
		return err
	}
	x := in[0]
	r := len(x.Shape)
	reduced := make([]bool, r)
	for _, a := range n.Attrs.Ints("axes", []int64{0, 2, 3}) {
		ax, err := normAxisOf(n, a, r)
		if err != nil {
			return err
		}
		reduced[ax] = true
	}
	// group[i]: the index of element i's statistics (its kept coordinates).
	total := prod(x.Shape)
	group := make([]int, total)
	groups := 1
	for d := r - 1; d >= 0; d-- {
		if reduced[d] {
			continue
		}
		inner := prod(x.Shape[d+1:])
		dim := int(x.Shape[d])
		for i := range group {
			group[i] += (i / inner) % dim * groups
		}
		groups *= dim
	}
	return floatKernel(ctx, n, in, out, meanVarianceNorm,
		func(x, y []float32) { mvnT(x, y, group, groups) },
		func(x, y []float64) { mvnT(x, y, group, groups) })
}

func mvnT[T float](x, y []T, group []int, groups int) {
	sum, cnt, sq := make([]float64, groups), make([]float64, groups), make([]float64, groups)
	for i, v := range x {
		sum[group[i]] += float64(v)
		cnt[group[i]]++
	}
	for g := range sum {
		sum[g] /= max(cnt[g], 1)
	}
	for i, v := range x {
		d := float64(v) - sum[group[i]]
		sq[group[i]] += d * d
	}
	for g := range sq {
		sq[g] = math.Sqrt(sq[g]/max(cnt[g], 1)) + 1e-9
	}
	for i, v := range x {
		g := group[i]
		y[i] = T((float64(v) - sum[g]) / sq[g])
	}
}

// lrn: y = x / (bias + alpha/size * sum of x^2 over the channels
// [c - floor((size-1)/2), c + ceil((size-1)/2)])^beta.
func lrn(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := need(n, in, 1); err != nil {
		return err
	}
	x := in[0]
	if len(x.Shape) < 3 {
		return errf(n, "input %v must have rank >= 3", x.Shape)
	}
	size := int(n.Attrs.Int("size", 0))
	if size <= 0 {
		return errf(n, "size must be > 0, got %d", size)
	}
	p := lrnParams{
		alpha: n.Attrs.Float("alpha", 1e-4) / float64(size), beta: n.Attrs.Float("beta", 0.75),
		bias: n.Attrs.Float("bias", 1), lo: (size - 1) / 2, hi: size / 2,
		batch: int(x.Shape[0]), c: int(x.Shape[1]), spatial: prod(x.Shape[2:]),
	}
	return floatKernel(ctx, n, in, out, lrn,
		func(x, y []float32) { lrnT(ctx, &p, x, y) },
		func(x, y []float64) { lrnT(ctx, &p, x, y) })
}

type lrnParams struct {
	alpha, beta, bias float64
	lo, hi            int // channels before and after
	batch, c, spatial int
}

func lrnT[T float](ctx *opkernel.Ctx, p *lrnParams, x, y []T) {
	opkernel.ParallelFor(ctx, p.batch*p.c, 1, func(s, e int) {
		for bc := s; bc < e; bc++ {
			b, ch := bc/p.c, bc%p.c
			c0, c1 := max(0, ch-p.lo), min(p.c-1, ch+p.hi)
			for i := 0; i < p.spatial; i++ {
				var sq float64
				for k := c0; k <= c1; k++ {
					v := float64(x[(b*p.c+k)*p.spatial+i])
					sq += v * v
				}
				j := bc*p.spatial + i
				y[j] = T(float64(x[j]) / math.Pow(p.bias+p.alpha*sq, p.beta))
			}
		}
	})
}

// lpNormalization: y = x / ||x||_p along axis (p 1 or 2); 0 where the
// norm is 0.
func lpNormalization(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := need(n, in, 1); err != nil {
		return err
	}
	x := in[0]
	axis, err := normAxisOf(n, n.Attrs.Int("axis", -1), len(x.Shape))
	if err != nil {
		return err
	}
	p := n.Attrs.Int("p", 2)
	if p != 1 && p != 2 {
		return opkernel.Unsupportedf(n, "p = %d (ONNX allows 1 and 2)", p)
	}
	outer, k, inner := prod(x.Shape[:axis]), int(x.Shape[axis]), prod(x.Shape[axis+1:])
	return floatKernel(ctx, n, in, out, lpNormalization,
		func(x, y []float32) { lpNormT(x, y, outer, k, inner, p) },
		func(x, y []float64) { lpNormT(x, y, outer, k, inner, p) })
}

func lpNormT[T float](x, y []T, outer, k, inner int, p int64) {
	for o := 0; o < outer; o++ {
		for d := 0; d < inner; d++ {
			base := o*k*inner + d
			var norm float64
			for j := 0; j < k; j++ {
				v := float64(x[base+j*inner])
				if p == 1 {
					norm += math.Abs(v)
				} else {
					norm += v * v
				}
			}
			if p == 2 {
				norm = math.Sqrt(norm)
			}
			for j := 0; j < k; j++ {
				if norm == 0 {
					y[base+j*inner] = 0 // as onnxruntime and the backend tests
				} else {
					y[base+j*inner] = T(float64(x[base+j*inner]) / norm)
				}
			}
		}
	}
}
