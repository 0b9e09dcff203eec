package tensorops

import (
	"slices"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// Compress, CenterCropPad, ReverseSequence and OneHot: element moves
// written over the bytes of one element (any numeric dtype; not strings).

func init() {
	opkernel.Register("Compress", compressOp)
	opkernel.Register("CenterCropPad", centerCropPadOp)
	opkernel.Register("ReverseSequence", reverseSequenceOp)
	opkernel.Register("OneHot", oneHotOp)
}

// moveArgs checks a kernel's first k inputs and its output, and that
// in[data] is numeric with all its bytes; it returns that element size.
func moveArgs(n *ir.Node, in, out []*ir.Tensor, k, data int) (int, error) {
	if err := needIn(n, in, out, k, 1); err != nil {
		return 0, err
	}
	return byteElems(n, in[data], "input")
}

// byteElems checks that t is numeric with all its bytes and returns its
// element size.
func byteElems(n *ir.Node, t *ir.Tensor, what string) (int, error) {
	if t.DType == ir.String {
		return 0, opkernel.Unsupportedf(n, "%s: string tensors", what)
	}
	sz := t.DType.Size()
	cnt := t.NumElements()
	if sz == 0 || cnt < 0 || int64(len(t.Data)) < cnt*int64(sz) {
		return 0, errf(n, "%s %s holds %d bytes", what, t, len(t.Data))
	}
	return sz, nil
}

// outerDimInner splits shape at axis.
func outerDimInner(shape []int64, axis int) (outer, dim, inner int) {
	d := dims(shape)
	return prod(d[:axis]), d[axis], prod(d[axis+1:])
}

func compressOp(_ *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	sz, err := moveArgs(n, in, out, 2, 0)
	if err != nil {
		return err
	}
	x, c, o := in[0], in[1], out[0]
	if o.DType != x.DType {
		return errf(n, "output %s, input %s", o, x)
	}
	cond, err := c.Int64s()
	if err != nil {
		return errf(n, "condition: %v", err)
	}
	outer, dim, inner := 1, int(x.NumElements()), 1
	want := []int64{0}
	axis := -1
	if n.Attrs.Has("axis") {
		if axis, err = normAxis(n, n.Attrs.Int("axis", 0), len(x.Shape)); err != nil {
			return err
		}
		outer, dim, inner = outerDimInner(x.Shape, axis)
		want = slices.Clone(x.Shape)
	}
	cond = cond[:min(len(cond), dim)]
	var keep []int
	for i, v := range cond {
		if v != 0 {
			keep = append(keep, i)
		}
	}
	want[max(axis, 0)] = int64(len(keep))
	if !slices.Equal(o.Shape, want) {
		return errf(n, "output shape %v, expected %v", o.Shape, want)
	}
	row := inner * sz
	d := o.Data
	for b := 0; b < outer; b++ {
		base := b * dim * row
		for _, i := range keep {
			d = d[copy(d, x.Data[base+i*row:base+(i+1)*row]):]
		}
	}
	return nil
}

// copyBox copies the box of extent ext starting at src index s0 of a tensor
// with dims sd into dst index d0 of one with dims dd (element size sz).
func copyBox(dst, src []byte, dd, sd, d0, s0, ext []int, sz int) {
	r := len(ext)
	for _, e := range ext {
		if e <= 0 {
			return
		}
	}
	if r == 0 {
		copy(dst[:sz], src[:sz])
		return
	}
	dstr, sstr := make([]int, r), make([]int, r)
	dstr[r-1], sstr[r-1] = sz, sz
	for i := r - 2; i >= 0; i-- {
		dstr[i], sstr[i] = dstr[i+1]*dd[i+1], sstr[i+1]*sd[i+1]
	}
	var walk func(k, do, so int)
	walk = func(k, do, so int) {
		if k == r-1 {
			copy(dst[do+d0[k]*sz:do+(d0[k]+ext[k])*sz], src[so+s0[k]*sz:])
			return
		}
		for i := 0; i < ext[k]; i++ {
			walk(k+1, do+(d0[k]+i)*dstr[k], so+(s0[k]+i)*sstr[k])
		}
	}
	walk(0, 0, 0)
}

// centerCropPadOp crops (centred, the extra element at the end) or pads
// with zeros (centred, the extra one at the end) each axis to its size.
func centerCropPadOp(_ *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	sz, err := moveArgs(n, in, out, 2, 0)
	if err != nil {
		return err
	}
	x, o := in[0], out[0]
	if o.DType != x.DType || len(o.Shape) != len(x.Shape) {
		return errf(n, "output %s, input %s", o, x)
	}
	axes, err := ir.CenterCropAxes(n.Attrs, len(x.Shape))
	if err != nil {
		return errf(n, "%v", err)
	}
	shape, err := in[1].Int64s()
	if err != nil || len(shape) != len(axes) {
		return errf(n, "shape %v for axes %v", shape, axes)
	}
	want := slices.Clone(x.Shape)
	for i, ax := range axes {
		want[ax] = shape[i]
	}
	if !slices.Equal(o.Shape, want) {
		return errf(n, "output shape %v, expected %v", o.Shape, want)
	}
	sd, dd := dims(x.Shape), dims(o.Shape)
	r := len(sd)
	s0, d0, ext := make([]int, r), make([]int, r), make([]int, r)
	for i := range sd {
		ext[i] = min(sd[i], dd[i])
		if sd[i] > dd[i] {
			s0[i] = (sd[i] - dd[i]) / 2
		} else {
			d0[i] = (dd[i] - sd[i]) / 2
		}
	}
	clear(o.Data[:int(o.NumElements())*sz])
	copyBox(o.Data, x.Data, dd, sd, d0, s0, ext, sz)
	return nil
}

// reverseSequenceOp reverses the first sequence_lens[b] steps along
// time_axis of each batch entry b; the other steps are copied.
func reverseSequenceOp(_ *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	sz, err := moveArgs(n, in, out, 2, 0)
	if err != nil {
		return err
	}
	x, o := in[0], out[0]
	if o.DType != x.DType || !slices.Equal(o.Shape, x.Shape) || len(x.Shape) < 2 {
		return errf(n, "output %s, input %s", o, x)
	}
	ba, err := normAxis(n, n.Attrs.Int("batch_axis", 1), len(x.Shape))
	if err != nil {
		return err
	}
	ta, err := normAxis(n, n.Attrs.Int("time_axis", 0), len(x.Shape))
	if err != nil {
		return err
	}
	if ba+ta != 1 {
		return errf(n, "batch_axis %d and time_axis %d must be 0 and 1", ba, ta)
	}
	lens, err := in[1].Int64s()
	d := dims(x.Shape)
	batch, steps := d[ba], d[ta]
	if err != nil || len(lens) != batch {
		return errf(n, "sequence_lens %v for a batch of %d", lens, batch)
	}
	row := prod(d[2:]) * sz
	for b := 0; b < batch; b++ {
		l := int(lens[b])
		if l < 0 || l > steps {
			return errf(n, "sequence_lens[%d] = %d out of [0, %d]", b, l, steps)
		}
		for t := 0; t < steps; t++ {
			st := t
			if t < l {
				st = l - 1 - t
			}
			di, si := b*steps+t, b*steps+st
			if ba == 1 {
				di, si = t*batch+b, st*batch+b
			}
			copy(o.Data[di*row:(di+1)*row], x.Data[si*row:(si+1)*row])
		}
	}
	return nil
}

// oneHotOp writes values[1] where the (depth-wrapped) index equals the
// position along axis and values[0] elsewhere; indices out of [-depth,
// depth) give a row of values[0].
func oneHotOp(_ *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	sz, err := moveArgs(n, in, out, 3, 2)
	if err != nil {
		return err
	}
	ind, vals, o := in[0], in[2], out[0]
	if vals.NumElements() != 2 || o.DType != vals.DType || len(o.Shape) != len(ind.Shape)+1 {
		return errf(n, "values %s, indices %s, output %s", vals, ind, o)
	}
	idx, err := ind.Float64s()
	if err != nil {
		return errf(n, "indices: %v", err)
	}
	if ind.DType == ir.Int64 || ind.DType == ir.Uint64 {
		iv, _ := ind.Int64s() // exact past 2^53
		for i, v := range iv {
			idx[i] = float64(v)
		}
	}
	axis, err := normAxis(n, n.Attrs.Int("axis", -1), len(o.Shape))
	if err != nil {
		return err
	}
	outer, depth, inner := outerDimInner(o.Shape, axis)
	off, on := vals.Data[:sz], vals.Data[sz:2*sz]
	total := outer * depth * inner
	for i := 0; i < total; i++ {
		copy(o.Data[i*sz:], off)
	}
	for b := 0; b < outer; b++ {
		for i := 0; i < inner; i++ {
			k := int64(idx[b*inner+i]) // float indices truncate, as a cast
			if k < 0 {
				k += int64(depth)
			}
			if k < 0 || k >= int64(depth) {
				continue
			}
			p := (b*depth+int(k))*inner + i
			copy(o.Data[p*sz:], on)
		}
	}
	return nil
}
