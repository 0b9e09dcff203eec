package nn

import (
	"slices"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

func init() { opkernel.Register("Col2Im", col2im) }

// col2imGeom is one Col2Im node's geometry over r spatial dims.
type col2imGeom struct {
	img, block, dil, pad, stride, blocks []int // pad: begin values
	k, l                                 int   // kernel elements, block positions
}

func col2imGeometry(n *ir.Node, x *ir.Tensor, in []*ir.Tensor) (*col2imGeom, error) {
	img64, err1 := in[1].Int64s()
	block64, err2 := in[2].Int64s()
	r := len(img64)
	if err1 != nil || err2 != nil || len(block64) != r || r == 0 || len(x.Shape) != 3 {
		return nil, errf(n, "input %s, image_shape %v, block_shape %v", x, img64, block64)
	}
	ints := func(name string, def int64, cnt int) ([]int, error) {
		v := n.Attrs.Ints(name, nil)
		if v == nil {
			v = make([]int64, cnt)
			for i := range v {
				v[i] = def
			}
		}
		if len(v) != cnt {
			return nil, errf(n, "attr %s has %d values, want %d", name, len(v), cnt)
		}
		out := make([]int, cnt)
		for i, e := range v {
			out[i] = int(e)
		}
		return out, nil
	}
	g := &col2imGeom{img: make([]int, r), block: make([]int, r), blocks: make([]int, r), k: 1, l: 1}
	var pads []int
	var err error
	if g.dil, err = ints("dilations", 1, r); err != nil {
		return nil, err
	}
	if g.stride, err = ints("strides", 1, r); err != nil {
		return nil, err
	}
	if pads, err = ints("pads", 0, 2*r); err != nil {
		return nil, err
	}
	g.pad = pads[:r]
	for i := 0; i < r; i++ {
		g.img[i], g.block[i] = int(img64[i]), int(block64[i])
		if g.block[i] <= 0 || g.dil[i] <= 0 || g.stride[i] <= 0 {
			return nil, errf(n, "block_shape, dilations and strides must be positive")
		}
		span := g.dil[i]*(g.block[i]-1) + 1
		g.blocks[i] = (g.img[i]+pads[i]+pads[r+i]-span)/g.stride[i] + 1
		if g.blocks[i] <= 0 {
			return nil, errf(n, "no block fits dim %d of the padded image", i)
		}
		g.k *= g.block[i]
		g.l *= g.blocks[i]
	}
	if x.Shape[1]%int64(g.k) != 0 || x.Shape[2] != int64(g.l) {
		return nil, errf(n, "input %v does not hold C*%d columns of %d blocks", x.Shape, g.k, g.l)
	}
	return g, nil
}

// col2im sums each column of x [N, C*prod(block), L] into the image
// positions its block covers: out [N, C, image_shape...].
func col2im(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if len(in) < 3 || in[0] == nil || in[1] == nil || in[2] == nil || len(out) < 1 || out[0] == nil {
		return errf(n, "needs inputs x, image_shape, block_shape and an output")
	}
	if hasHalf(in[0], out[0]) {
		return viaF32(ctx, n, in, out, col2im)
	}
	x, o := in[0], out[0]
	g, err := col2imGeometry(n, x, in)
	if err != nil {
		return err
	}
	c := int(x.Shape[1]) / g.k
	want := []int64{x.Shape[0], int64(c)}
	for _, d := range g.img {
		want = append(want, int64(d))
	}
	if o.DType != x.DType || !slices.Equal(o.Shape, want) {
		return errf(n, "output %s, expected %s%v", o, x.DType, want)
	}
	planes := int(x.Shape[0]) * c
	switch x.DType {
	case ir.Float32:
		col2imT(g, planes, x.F32(), o.F32())
	case ir.Float64:
		col2imT(g, planes, x.F64(), o.F64())
	default:
		return opkernel.Unsupportedf(n, "dtype %s", x.DType)
	}
	return nil
}

func col2imT[T float](g *col2imGeom, planes int, x, o []T) {
	r := len(g.img)
	imgSize := 1
	for _, d := range g.img {
		imgSize *= d
	}
	clear(o[:planes*imgSize])
	kIdx, lIdx := make([]int, r), make([]int, r)
	for p := 0; p < planes; p++ {
		img := o[p*imgSize : (p+1)*imgSize]
		clear(kIdx)
		for k := 0; k < g.k; k++ {
			col := x[(p*g.k+k)*g.l : (p*g.k+k+1)*g.l]
			clear(lIdx)
			for l := 0; l < g.l; l++ {
				pos, inside := 0, true
				for i := 0; i < r; i++ {
					q := lIdx[i]*g.stride[i] - g.pad[i] + kIdx[i]*g.dil[i]
					if q < 0 || q >= g.img[i] {
						inside = false
						break
					}
					pos = pos*g.img[i] + q
				}
				if inside {
					img[pos] += col[l]
				}
				step(lIdx, g.blocks)
			}
			step(kIdx, g.block)
		}
	}
}

// step advances a row-major multi-index over dims d.
func step(idx, d []int) {
	for i := len(idx) - 1; i >= 0; i-- {
		idx[i]++
		if idx[i] < d[i] {
			return
		}
		idx[i] = 0
	}
}
