package tensorops

import (
	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

func init() {
	regMove("Pad", firstIn, padOp[uint8], padOp[uint16], padOp[uint32], padOp[uint64], padOp[b16], padOp[string])
}

// padPlan is one dim of a pad: negative pads crop the input first (as the
// ONNX reference does), then pre/post elements are added in the given mode
// around the n remaining elements that start at lo.
type padPlan struct{ lo, n, pre, post int }

// srcIndex maps an output coordinate to an input one, or -1 for the
// constant value.
func (p padPlan) srcIndex(mode string, o int) int {
	t := o - p.pre
	if t >= 0 && t < p.n {
		return p.lo + t
	}
	switch mode {
	case "edge":
		if t < 0 {
			t = 0
		} else {
			t = p.n - 1
		}
	case "reflect":
		if p.n == 1 {
			t = 0
			break
		}
		period := 2 * (p.n - 1)
		t %= period
		if t < 0 {
			t += period
		}
		if t >= p.n {
			t = period - t
		}
	case "wrap":
		t %= p.n
		if t < 0 {
			t += p.n
		}
	default:
		return -1
	}
	return p.lo + t
}

func padOp[T any](ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := needIn(n, in, out, 2, 1); err != nil {
		return err
	}
	x := in[0]
	rank := len(x.Shape)
	mode := n.Attrs.String("mode", "constant")
	switch mode {
	case "constant", "reflect", "edge", "wrap":
	default:
		return opkernel.Unsupportedf(n, "pad mode %q", mode)
	}
	pads, err := in[1].Int64s()
	if err != nil {
		return errf(n, "pads: %v", err)
	}
	axes := make([]int, 0, rank)
	if a := optIn(in, 3); a != nil {
		av, err := a.Int64s()
		if err != nil {
			return errf(n, "axes: %v", err)
		}
		for _, v := range av {
			ax, err := normAxis(n, v, rank)
			if err != nil {
				return err
			}
			axes = append(axes, ax)
		}
	} else {
		for i := range rank {
			axes = append(axes, i)
		}
	}
	if len(pads) != 2*len(axes) {
		return errf(n, "pads has %d entries for %d axes", len(pads), len(axes))
	}
	xd := dims(x.Shape)
	plans := make([]padPlan, rank)
	for i, d := range xd {
		plans[i] = padPlan{0, d, 0, 0}
	}
	for i, a := range axes {
		b, e := int(pads[i]), int(pads[i+len(axes)])
		p := padPlan{lo: 0, n: xd[a]}
		if b < 0 {
			p.lo = -b
			p.n += b
		} else {
			p.pre = b
		}
		if e < 0 {
			p.n += e
		} else {
			p.post = e
		}
		if p.n < 0 {
			return errf(n, "pads %v crop more than dim %d holds", pads, a)
		}
		if p.n == 0 && mode != "constant" && p.pre+p.post > 0 {
			return errf(n, "cannot %s-pad an empty dim %d", mode, a)
		}
		plans[a] = p
	}
	o := out[0]
	for i, p := range plans {
		if i >= len(o.Shape) || int(o.Shape[i]) != p.pre+p.n+p.post || len(o.Shape) != rank {
			return errf(n, "output shape %v does not match input %v padded by %v", o.Shape, x.Shape, pads)
		}
	}
	src, err := elems[T](n, x, "input")
	if err != nil {
		return err
	}
	dst, err := elems[T](n, o, "output")
	if err != nil {
		return err
	}
	var cv T
	if c := optIn(in, 2); c != nil && c.NumElements() > 0 {
		if c.DType != x.DType {
			return errf(n, "constant_value dtype %s differs from data %s", c.DType, x.DType)
		}
		v, err := elems[T](n, c, "constant_value")
		if err != nil {
			return err
		}
		cv = v[0]
	}
	if len(dst) == 0 {
		return nil
	}
	if rank == 0 {
		dst[0] = src[0]
		return nil
	}
	padT(ctx, dst, src, xd, plans, mode, cv)
	return nil
}

// padT fills dst. Trailing dims that are neither padded nor cropped form a
// block that moves with one copy; the last padded dim k is handled a row at
// a time, with its middle segment copied in one run.
func padT[T any](ctx *opkernel.Ctx, dst, src []T, xd []int, plans []padPlan, mode string, cv T) {
	rank := len(xd)
	k := rank - 1
	for k > 0 && plans[k].pre == 0 && plans[k].post == 0 && plans[k].n == xd[k] {
		k--
	}
	block := prod(xd[k+1:])
	inStride := make([]int, rank)
	st := 1
	for i := rank - 1; i >= 0; i-- {
		inStride[i] = st
		st *= xd[i]
	}
	odims := make([]int, k)
	for i := range k {
		odims[i] = plans[i].pre + plans[i].n + plans[i].post
	}
	pk := plans[k]
	rowLen := (pk.pre + pk.n + pk.post) * block
	rows := len(dst) / rowLen
	// per-dim source maps for the outer dims and dim k
	maps := make([][]int, k+1)
	for i := 0; i <= k; i++ {
		p := plans[i]
		m := make([]int, p.pre+p.n+p.post)
		for o := range m {
			m[o] = p.srcIndex(mode, o)
		}
		maps[i] = m
	}
	mk := maps[k]
	run[T](ctx, rows, rowLen, func(start, end int) {
		coord := make([]int, k)
		for r := start; r < end; r++ {
			rem := r
			base, outside := 0, false
			for i := k - 1; i >= 0; i-- {
				coord[i] = rem % odims[i]
				rem /= odims[i]
				si := maps[i][coord[i]]
				if si < 0 {
					outside = true
				}
				base += si * inStride[i]
			}
			row := dst[r*rowLen : (r+1)*rowLen]
			if outside {
				fill(row, cv)
				continue
			}
			// middle segment: one contiguous run
			mid := row[pk.pre*block : (pk.pre+pk.n)*block]
			s0 := base + pk.lo*inStride[k]
			copy(mid, src[s0:s0+len(mid)])
			for o := 0; o < pk.pre; o++ {
				padBlock(row[o*block:(o+1)*block], src, base, mk[o], inStride[k], cv)
			}
			for o := pk.pre + pk.n; o < len(mk); o++ {
				padBlock(row[o*block:(o+1)*block], src, base, mk[o], inStride[k], cv)
			}
		}
	})
}

func padBlock[T any](dst, src []T, base, si, stride int, cv T) {
	if si < 0 {
		fill(dst, cv)
		return
	}
	s := base + si*stride
	copy(dst, src[s:s+len(dst)])
}
