package nn

import (
	"gkconv/internal/ir"
	"slices"
)

// geom is the geometry of a convolution or pooling window, with the spatial
// dims normalised to three (D, H, W): a 1-D op is D=H=1, a 2-D op D=1, and
// the missing dims have kernel, stride and dilation 1 and no padding.
type geom struct {
	rank         int // spatial rank of the op (1..3)
	in, out, k   [3]int
	s, d, pb, pe [3]int // strides, dilations, pads at begin and end
}

func (g *geom) inVol() int  { return g.in[0] * g.in[1] * g.in[2] }
func (g *geom) outVol() int { return g.out[0] * g.out[1] * g.out[2] }
func (g *geom) kVol() int   { return g.k[0] * g.k[1] * g.k[2] }

// pointwise: a 1x1 window, stride 1, no padding, so the conv reads its
// input in place (no im2col).
func (g *geom) pointwise() bool {
	return g.kVol() == 1 && g.s == [3]int{1, 1, 1} && g.pb == [3]int{} && g.pe == [3]int{}
}

// windowAttrs reads kernel_shape/strides/dilations/pads/auto_pad for a
// sliding-window op over the spatial dims inSp with the given kernel
// (kernel_shape wins when present) and computes pads and output sizes;
// ceil selects pooling's ceil_mode.
func windowAttrs(n *ir.Node, inSp []int64, kernel []int64, ceil bool) (*geom, error) {
	r := len(inSp)
	if r < 1 || r > 3 {
		return nil, errf(n, "spatial rank %d not supported (1-3)", r)
	}
	ks := n.Attrs.Ints("kernel_shape", kernel)
	if len(ks) != r {
		return nil, errf(n, "kernel_shape %v does not match spatial rank %d", ks, r)
	}
	strides := n.Attrs.Ints("strides", nil)
	dil := n.Attrs.Ints("dilations", nil)
	pads := n.Attrs.Ints("pads", nil)
	if (strides != nil && len(strides) != r) || (dil != nil && len(dil) != r) || (pads != nil && len(pads) != 2*r) {
		return nil, errf(n, "strides %v / dilations %v / pads %v do not match spatial rank %d", strides, dil, pads, r)
	}
	autoPad := n.Attrs.String("auto_pad", "NOTSET")
	g := &geom{rank: r}
	off := 3 - r
	for i := 0; i < 3; i++ {
		g.in[i], g.out[i], g.k[i], g.s[i], g.d[i] = 1, 1, 1, 1, 1
	}
	for i := 0; i < r; i++ {
		j := i + off
		g.in[j], g.k[j] = int(inSp[i]), int(ks[i])
		if strides != nil {
			g.s[j] = int(strides[i])
		}
		if dil != nil {
			g.d[j] = int(dil[i])
		}
		if g.k[j] < 1 || g.s[j] < 1 || g.d[j] < 1 {
			return nil, errf(n, "kernel %v, strides %v, dilations %v must be positive", ks, strides, dil)
		}
		dk := (g.k[j]-1)*g.d[j] + 1
		switch autoPad {
		case "SAME_UPPER", "SAME_LOWER":
			o := (g.in[j] + g.s[j] - 1) / g.s[j]
			total := max(0, (o-1)*g.s[j]+dk-g.in[j])
			if autoPad == "SAME_UPPER" {
				g.pb[j] = total / 2
			} else {
				g.pb[j] = total - total/2
			}
			g.pe[j] = total - g.pb[j]
			g.out[j] = o
		case "VALID", "NOTSET", "":
			if autoPad == "NOTSET" || autoPad == "" {
				if pads != nil {
					g.pb[j], g.pe[j] = int(pads[i]), int(pads[i+r])
				}
			}
			span := g.in[j] + g.pb[j] + g.pe[j] - dk
			if span < 0 {
				return nil, errf(n, "kernel %v larger than padded input %v", ks, inSp)
			}
			if ceil {
				o := (span+g.s[j]-1)/g.s[j] + 1
				// the last window must start inside the input or the begin padding
				if (o-1)*g.s[j] >= g.in[j]+g.pb[j] {
					o--
				}
				g.out[j] = o
			} else {
				g.out[j] = span/g.s[j] + 1
			}
		default:
			return nil, errf(n, "unknown auto_pad %q", autoPad)
		}
	}
	return g, nil
}

// checkOut verifies that the allocated output has shape [N, C, out...].
func (g *geom) checkOut(n *ir.Node, y *ir.Tensor, nb, c int) error {
	want := []int64{int64(nb), int64(c)}
	for i := 3 - g.rank; i < 3; i++ {
		want = append(want, int64(g.out[i]))
	}
	if !slices.Equal(want, y.Shape) {
		return errf(n, "output shape %v, expected %v", y.Shape, want)
	}
	return nil
}
