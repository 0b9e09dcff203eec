package nn

import (
	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// ONNX RotaryEmbedding (opset 23). x is [B, H, S, D] or [B, S, H*D] (attr
// num_heads); the first rotary_embedding_dim (R, default D) channels of
// each head are rotated by the angle whose cos/sin the caches hold: with
// position_ids [B, S] the caches are [max_pos, R/2] and indexed by the
// position, without them they are [B, S, R/2]. The pairs rotated are
// (i, i + R/2) or, interleaved, (2i, 2i+1): x1' = cos x1 - sin x2,
// x2' = sin x1 + cos x2. The other channels pass through.

func init() { opkernel.Register("RotaryEmbedding", rotaryEmbedding) }

type ropeGeom struct {
	batch, heads, seq, dim, half int
	// element (b, h, s, d) of x is at b*sb + h*sh + s*ss + d
	sb, sh, ss  int
	interleaved bool
	pos         []int64 // nil: caches are [B, S, half]
	maxPos      int
}

func rotaryEmbedding(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := need(n, in, 3); err != nil {
		return err
	}
	if hasHalf(in[0]) {
		return viaF32(ctx, n, in, out, rotaryEmbedding)
	}
	x, cosT, sinT, y := in[0], in[1], in[2], out[0]
	g := &ropeGeom{interleaved: n.Attrs.Int("interleaved", 0) != 0}
	switch len(x.Shape) {
	case 4:
		g.batch, g.heads, g.seq, g.dim = int(x.Shape[0]), int(x.Shape[1]), int(x.Shape[2]), int(x.Shape[3])
		g.ss, g.sh, g.sb = g.dim, g.seq*g.dim, g.heads*g.seq*g.dim
	case 3:
		g.heads = int(n.Attrs.Int("num_heads", 0))
		if g.heads <= 0 || x.Shape[2]%int64(g.heads) != 0 {
			return errf(n, "3-D input %v needs num_heads dividing its last dim", x.Shape)
		}
		g.batch, g.seq, g.dim = int(x.Shape[0]), int(x.Shape[1]), int(x.Shape[2])/g.heads
		g.sh, g.ss, g.sb = g.dim, g.heads*g.dim, g.seq*g.heads*g.dim
	default:
		return errf(n, "input %v must be 3-D or 4-D", x.Shape)
	}
	rdim := int(n.Attrs.Int("rotary_embedding_dim", 0))
	if rdim == 0 {
		rdim = g.dim
	}
	if rdim < 0 || rdim > g.dim || rdim%2 != 0 {
		return errf(n, "rotary_embedding_dim %d must be even and at most the head size %d", rdim, g.dim)
	}
	g.half = rdim / 2
	if p := input(in, 3); p != nil {
		var err error
		if g.pos, err = p.Int64s(); err != nil {
			return errf(n, "position_ids: %v", err)
		}
		if len(g.pos) != g.batch*g.seq {
			return errf(n, "position_ids %v must be [%d, %d]", p.Shape, g.batch, g.seq)
		}
		if len(cosT.Shape) != 2 || int(cosT.Shape[1]) != g.half {
			return errf(n, "cos_cache %v must be [max_position, %d] with position_ids", cosT.Shape, g.half)
		}
		g.maxPos = int(cosT.Shape[0])
	} else if cosT.NumElements() != int64(g.batch*g.seq*g.half) {
		return errf(n, "cos_cache %v must be [%d, %d, %d] without position_ids", cosT.Shape, g.batch, g.seq, g.half)
	}
	if sinT.NumElements() != cosT.NumElements() {
		return errf(n, "sin_cache %v does not match cos_cache %v", sinT.Shape, cosT.Shape)
	}
	if x.DType != y.DType || x.NumElements() != y.NumElements() || cosT.DType != x.DType || sinT.DType != x.DType {
		return errf(n, "dtypes or sizes disagree: x %s, caches %s %s, y %s", x, cosT, sinT, y)
	}
	switch x.DType {
	case ir.Float32:
		return ropeT(ctx, n, g, x.F32(), cosT.F32(), sinT.F32(), y.F32())
	case ir.Float64:
		return ropeT(ctx, n, g, x.F64(), cosT.F64(), sinT.F64(), y.F64())
	}
	return opkernel.Unsupportedf(n, "dtype %s", x.DType)
}

func ropeT[T float](ctx *opkernel.Ctx, n *ir.Node, g *ropeGeom, x, cosC, sinC, y []T) error {
	for _, p := range g.pos {
		if p < 0 || p >= int64(g.maxPos) {
			return errf(n, "position id %d is outside the caches' %d rows", p, g.maxPos)
		}
	}
	opkernel.ParallelFor(ctx, g.batch*g.seq, max(1, 4096/max(g.heads*g.dim, 1)), func(s, e int) {
		for bs := s; bs < e; bs++ {
			b, si := bs/g.seq, bs%g.seq
			row := bs
			if g.pos != nil {
				row = int(g.pos[bs])
			}
			cs, sn := cosC[row*g.half:(row+1)*g.half], sinC[row*g.half:(row+1)*g.half]
			for h := 0; h < g.heads; h++ {
				off := b*g.sb + h*g.sh + si*g.ss
				xs, ys := x[off:off+g.dim], y[off:off+g.dim]
				copy(ys[2*g.half:], xs[2*g.half:])
				for i := 0; i < g.half; i++ {
					i1, i2 := i, i+g.half
					if g.interleaved {
						i1, i2 = 2*i, 2*i+1
					}
					x1, x2 := xs[i1], xs[i2]
					ys[i1] = cs[i]*x1 - sn[i]*x2
					ys[i2] = sn[i]*x1 + cs[i]*x2
				}
			}
		}
	})
	return nil
}
