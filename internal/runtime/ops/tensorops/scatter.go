package tensorops

import (
	"slices"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// Scatter and gather by index tuples: ScatterElements (ONNX ScatterElements
// and Scatter), ScatterNdUpdate (ONNX ScatterND), TensorScatter and GatherNd
// (ONNX GatherND). Every scatter first resolves its indices to element
// offsets (dtype independent), copies data to the output and then writes the
// updates: whole byte runs for reduction "none", typed arithmetic for the
// reductions.

func init() {
	opkernel.Register("ScatterElements", scatterElements)
	opkernel.Register("ScatterNdUpdate", scatterND)
	opkernel.Register("TensorScatter", tensorScatter)
	opkernel.Register("GatherNd", gatherND)
}

// scatterPlan: update element i*slab+j goes to output element offs[i]+j.
type scatterPlan struct {
	offs []int
	slab int
}

// wrapIndex maps an index in [-dim, dim) into [0, dim).
func wrapIndex(n *ir.Node, v int64, dim int) (int, error) {
	if v < 0 {
		v += int64(dim)
	}
	if v < 0 || v >= int64(dim) {
		return 0, errf(n, "index %d out of range [%d, %d)", v, -dim, dim)
	}
	return int(v), nil
}

func scatterElements(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := needIn(n, in, out, 3, 1); err != nil {
		return err
	}
	data, it, upd := in[0], in[1], in[2]
	rank := len(data.Shape)
	axis, err := normAxis(n, n.Attrs.Int("axis", 0), rank)
	if err != nil {
		return err
	}
	if len(it.Shape) != rank || !slices.Equal(it.Shape, upd.Shape) {
		return errf(n, "indices %v and updates %v must have data's rank %d and one shape", it.Shape, upd.Shape, rank)
	}
	for d := range rank {
		if d != axis && it.Shape[d] > data.Shape[d] {
			return errf(n, "indices shape %v exceeds data shape %v on dim %d", it.Shape, data.Shape, d)
		}
	}
	idx, err := indexValues(n, it)
	if err != nil {
		return err
	}
	xd, id := dims(data.Shape), dims(it.Shape)
	stride := make([]int, rank)
	st := 1
	for d := rank - 1; d >= 0; d-- {
		stride[d] = st
		st *= xd[d]
	}
	p := scatterPlan{offs: make([]int, len(idx)), slab: 1}
	coord := make([]int, rank)
	for u := range idx {
		a, err := wrapIndex(n, idx[u], xd[axis])
		if err != nil {
			return err
		}
		off := 0
		for d, c := range coord {
			if d == axis {
				c = a
			}
			off += c * stride[d]
		}
		p.offs[u] = off
		for d := rank - 1; d >= 0; d-- {
			coord[d]++
			if coord[d] < id[d] {
				break
			}
			coord[d] = 0
		}
	}
	return applyScatter(n, data, upd, out[0], p, n.Attrs.String("reduction", "none"))
}

func scatterND(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := needIn(n, in, out, 3, 1); err != nil {
		return err
	}
	data, it, upd := in[0], in[1], in[2]
	q := len(it.Shape)
	if q < 1 {
		return errf(n, "indices must have rank >= 1")
	}
	k := int(it.Shape[q-1])
	if k > len(data.Shape) {
		return errf(n, "indices %v: last dim exceeds data rank %d", it.Shape, len(data.Shape))
	}
	want := append(slices.Clone(it.Shape[:q-1]), data.Shape[k:]...)
	if !slices.Equal(want, upd.Shape) {
		return errf(n, "updates %v, expected %v", upd.Shape, want)
	}
	idx, err := indexValues(n, it)
	if err != nil {
		return err
	}
	xd := dims(data.Shape)
	slab := prod(xd[k:])
	p := scatterPlan{slab: slab}
	if k == 0 {
		p.offs = make([]int, prod(dims(it.Shape[:q-1])))
	} else {
		p.offs = make([]int, len(idx)/k)
	}
	for i := range p.offs {
		off := 0
		for t := 0; t < k; t++ {
			a, err := wrapIndex(n, idx[i*k+t], xd[t])
			if err != nil {
				return err
			}
			off = off*xd[t] + a
		}
		p.offs[i] = off * slab
	}
	return applyScatter(n, data, upd, out[0], p, n.Attrs.String("reduction", "none"))
}

// indexValues reads an int32/int64 indices tensor.
func indexValues(n *ir.Node, t *ir.Tensor) ([]int64, error) {
	if t.DType != ir.Int64 && t.DType != ir.Int32 {
		return nil, errf(n, "indices must be int32 or int64, got %s", t.DType)
	}
	v, err := t.Int64s()
	if err != nil {
		return nil, errf(n, "indices: %v", err)
	}
	return v, nil
}

// applyScatter writes data then the updates into out.
func applyScatter(n *ir.Node, data, upd, out *ir.Tensor, p scatterPlan, red string) error {
	if data.DType != upd.DType || out.DType != data.DType || !slices.Equal(out.Shape, data.Shape) {
		return errf(n, "data %s, updates %s and output %s must agree", data, upd, out)
	}
	if data.DType == ir.String {
		return opkernel.Unsupportedf(n, "string tensors")
	}
	sz := data.DType.Size()
	total := int(data.NumElements())
	if len(data.Data) < total*sz || len(out.Data) < total*sz || len(upd.Data) < len(p.offs)*p.slab*sz {
		return errf(n, "tensor buffers are shorter than their shapes")
	}
	copy(out.Data[:total*sz], data.Data)
	for _, o := range p.offs {
		if o < 0 || o+p.slab > total {
			return errf(n, "scatter offset %d out of range", o)
		}
	}
	if red == "none" {
		w := p.slab * sz
		for i, o := range p.offs {
			copy(out.Data[o*sz:o*sz+w], upd.Data[i*w:(i+1)*w])
		}
		return nil
	}
	switch data.DType {
	case ir.Float32:
		return reduceInto(n, out.F32(), upd.F32(), p, red)
	case ir.Float64:
		return reduceInto(n, out.F64(), upd.F64(), p, red)
	case ir.Int8:
		return reduceInto(n, out.I8(), upd.I8(), p, red)
	case ir.Int16:
		return reduceInto(n, out.I16(), upd.I16(), p, red)
	case ir.Int32:
		return reduceInto(n, out.I32(), upd.I32(), p, red)
	case ir.Int64:
		return reduceInto(n, out.I64(), upd.I64(), p, red)
	case ir.Uint8:
		return reduceInto(n, out.U8(), upd.U8(), p, red)
	case ir.Uint16:
		return reduceInto(n, out.U16(), upd.U16(), p, red)
	case ir.Uint32:
		return reduceInto(n, out.U32(), upd.U32(), p, red)
	case ir.Uint64:
		return reduceInto(n, out.U64(), upd.U64(), p, red)
	case ir.Float16, ir.BFloat16:
		o32, u32 := opkernel.HalfToF32(out), opkernel.HalfToF32(upd)
		if err := reduceInto(n, o32.F32(), u32.F32(), p, red); err != nil {
			return err
		}
		opkernel.F32ToHalf(out, o32.F32())
		return nil
	}
	return opkernel.Unsupportedf(n, "reduction %s on %s", red, data.DType)
}

type scalar interface {
	~float32 | ~float64 | ~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// reduceInto combines the updates into dst in index order.
func reduceInto[T scalar](n *ir.Node, dst, src []T, p scatterPlan, red string) error {
	var f func(a, b T) T
	switch red {
	case "add":
		f = func(a, b T) T { return a + b }
	case "mul":
		f = func(a, b T) T { return a * b }
	case "max":
		f = func(a, b T) T { return max(a, b) }
	case "min":
		f = func(a, b T) T { return min(a, b) }
	default:
		return errf(n, "unknown reduction %q", red)
	}
	for i, o := range p.offs {
		s := src[i*p.slab : (i+1)*p.slab]
		d := dst[o : o+p.slab]
		for j := range s {
			d[j] = f(d[j], s[j])
		}
	}
	return nil
}

// tensorScatter (ONNX TensorScatter): out = past_cache with update written
// along the sequence axis at write_indices[batch] (modulo the axis length in
// circular mode).
func tensorScatter(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := needIn(n, in, out, 2, 1); err != nil {
		return err
	}
	past, upd := in[0], in[1]
	rank := len(past.Shape)
	axis, err := ir.TensorScatterAxis(n, rank)
	if err != nil {
		return errf(n, "%v", err)
	}
	if len(upd.Shape) != rank || past.DType != upd.DType || past.DType == ir.String {
		return errf(n, "update %s does not fit past_cache %s", upd, past)
	}
	for d := range rank {
		if (d == axis && upd.Shape[d] > past.Shape[d]) || (d != axis && upd.Shape[d] != past.Shape[d]) {
			return errf(n, "update %v does not fit past_cache %v", upd.Shape, past.Shape)
		}
	}
	pd := dims(past.Shape)
	batch, maxSeq, seq := pd[0], pd[axis], int(upd.Shape[axis])
	var w []int64
	if wi := optIn(in, 2); wi != nil && wi.NumElements() > 0 {
		if w, err = indexValues(n, wi); err != nil {
			return err
		}
		if len(w) != batch {
			return errf(n, "write_indices has %d entries for batch %d", len(w), batch)
		}
	} else {
		w = make([]int64, batch)
	}
	circular := n.Attrs.String("mode", "linear") == "circular"
	sz := past.DType.Size()
	inner := prod(pd[axis+1:]) * sz // bytes of one sequence step
	perBatch := prod(pd[1:axis])    // prefix rows per batch sample
	copy(out[0].Data, past.Data[:len(out[0].Data)])
	for b := 0; b < batch; b++ {
		for r := 0; r < perBatch; r++ {
			row := b*perBatch + r
			for s := 0; s < seq; s++ {
				pos := w[b] + int64(s)
				if circular {
					pos %= int64(maxSeq)
				}
				if pos < 0 || pos >= int64(maxSeq) {
					return errf(n, "write index %d + %d out of range [0, %d)", w[b], s, maxSeq)
				}
				dst := (row*maxSeq + int(pos)) * inner
				src := (row*seq + s) * inner
				copy(out[0].Data[dst:dst+inner], upd.Data[src:src+inner])
			}
		}
	}
	return nil
}

// gatherND (ONNX GatherND): with b batch dims and k = indices.shape[-1],
// each index tuple selects a slab data[batch, i1..ik, ...].
func gatherND(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := needIn(n, in, out, 2, 1); err != nil {
		return err
	}
	data, it := in[0], in[1]
	if data.DType == ir.String {
		return opkernel.Unsupportedf(n, "string tensors")
	}
	bd := int(n.Attrs.Int("batch_dims", 0))
	r, q := len(data.Shape), len(it.Shape)
	if q < 1 || bd < 0 || bd >= min(r, q) {
		return errf(n, "bad ranks: data %v, indices %v, batch_dims %d", data.Shape, it.Shape, bd)
	}
	k := int(it.Shape[q-1])
	if k < 1 || bd+k > r {
		return errf(n, "indices %v: last dim must be in [1, %d]", it.Shape, r-bd)
	}
	want := append(slices.Clone(it.Shape[:q-1]), data.Shape[bd+k:]...)
	if !slices.Equal(want, out[0].Shape) {
		return errf(n, "output shape %v, expected %v", out[0].Shape, want)
	}
	idx, err := indexValues(n, it)
	if err != nil {
		return err
	}
	xd := dims(data.Shape)
	batches := prod(xd[:bd])
	sz := data.DType.Size()
	slab := prod(xd[bd+k:]) * sz
	batchBytes := prod(xd[bd:]) * sz
	tuples := len(idx) / k
	perBatch := 1
	if batches > 0 {
		perBatch = tuples / batches
	}
	for t := 0; t < tuples; t++ {
		off := 0
		for j := 0; j < k; j++ {
			a, err := wrapIndex(n, idx[t*k+j], xd[bd+j])
			if err != nil {
				return err
			}
			off = off*xd[bd+j] + a
		}
		src := (t/perBatch)*batchBytes + off*slab
		copy(out[0].Data[t*slab:(t+1)*slab], data.Data[src:src+slab])
	}
	return nil
}
