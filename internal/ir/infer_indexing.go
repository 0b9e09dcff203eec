package ir

import "fmt"

// Shape functions of the indexing and scatter/gather family (ops_indexing.go):
// GatherNd, ScatterElements, ScatterNdUpdate, TensorScatter and NonZero.

// checkIndices rejects non-integer index inputs.
func checkIndices(n *Node, i int) error {
	if d := dtypeOf(n.Input(i)); d != Undefined && !d.IsInt() {
		return fmt.Errorf("%s: indices must be integers, got %s", inputDesc(n, i), d)
	}
	return nil
}

// checkScatter checks what ScatterElements and ScatterND share: integer
// indices (input 1), updates of data's dtype and the reduction attribute.
func checkScatter(n *Node) error {
	if err := checkIndices(n, 1); err != nil {
		return err
	}
	if err := sameDType(n, 0, 2); err != nil {
		return err
	}
	switch r := n.Attrs.String("reduction", "none"); r {
	case "none", "add", "mul", "max", "min":
		return nil
	default:
		return fmt.Errorf("attribute reduction %q is not none, add, mul, max or min", r)
	}
}

// inferGatherNd (ONNX GatherND): with b = batch_dims and k =
// indices.shape[-1], the output is indices.shape[:-1] + data.shape[b+k:].
func inferGatherNd(n *Node) error {
	if err := checkIndices(n, 1); err != nil {
		return err
	}
	data, idx := n.Inputs[0], n.Inputs[1]
	b := n.Attrs.Int("batch_dims", 0)
	if b < 0 {
		return fmt.Errorf("attribute batch_dims is negative (%d)", b)
	}
	if data.Shape == nil || idx.Shape == nil {
		setOutput(n, 0, data.DType, nil)
		return nil
	}
	r, q := int64(len(data.Shape)), int64(len(idx.Shape))
	if q < 1 || r < 1 {
		return fmt.Errorf("data %v and indices %v must have rank >= 1", data.Shape, idx.Shape)
	}
	if b >= min(r, q) {
		return fmt.Errorf("attribute batch_dims %d must be below the ranks of data (%d) and indices (%d)", b, r, q)
	}
	for i := int64(0); i < b; i++ {
		if d, e := data.Shape[i], idx.Shape[i]; d >= 0 && e >= 0 && d != e {
			return fmt.Errorf("batch dim %d differs: data %v, indices %v", i, data.Shape, idx.Shape)
		}
	}
	k := idx.Shape[q-1]
	if k < 0 {
		setOutput(n, 0, data.DType, nil)
		return nil
	}
	if k < 1 || b+k > r {
		return fmt.Errorf("indices %v: last dim %d must be in [1, %d]", idx.Shape, k, r-b)
	}
	out := append(cloneShape(idx.Shape[:q-1]), data.Shape[b+k:]...)
	setOutput(n, 0, data.DType, out)
	return nil
}

// inferScatterElements: the output is data; indices and updates have one
// shape, of data's rank.
func inferScatterElements(n *Node) error {
	if err := checkScatter(n); err != nil {
		return err
	}
	data, idx, upd := n.Inputs[0], n.Inputs[1], n.Inputs[2]
	if idx.Shape != nil && upd.Shape != nil && !shapesMayMatch(idx.Shape, upd.Shape) {
		return fmt.Errorf("indices %v and updates %v must have the same shape", idx.Shape, upd.Shape)
	}
	if data.Shape != nil {
		r := len(data.Shape)
		if _, err := normAxis(n.Attrs.Int("axis", 0), r); err != nil {
			return fmt.Errorf("attribute axis: %w", err)
		}
		if idx.Shape != nil && len(idx.Shape) != r {
			return fmt.Errorf("indices rank %d differs from data rank %d", len(idx.Shape), r)
		}
	}
	setOutputLike(n, 0, data.DType, data)
	return nil
}

// inferScatterNd (ONNX ScatterND): the output is data; with k =
// indices.shape[-1], updates has shape indices.shape[:-1] + data.shape[k:].
func inferScatterNd(n *Node) error {
	if err := checkScatter(n); err != nil {
		return err
	}
	data, idx, upd := n.Inputs[0], n.Inputs[1], n.Inputs[2]
	if data.Shape != nil && idx.Shape != nil && len(idx.Shape) > 0 {
		q := len(idx.Shape)
		if k := idx.Shape[q-1]; k >= 0 {
			if k > int64(len(data.Shape)) {
				return fmt.Errorf("indices %v: last dim %d exceeds data rank %d", idx.Shape, k, len(data.Shape))
			}
			want := append(cloneShape(idx.Shape[:q-1]), data.Shape[k:]...)
			if upd.Shape != nil && !shapesMayMatch(upd.Shape, want) {
				return fmt.Errorf("updates %v: expected shape %v", upd.Shape, want)
			}
		}
	}
	setOutputLike(n, 0, data.DType, data)
	return nil
}

// TensorScatterAxis is TensorScatter's sequence axis in [1, rank).
func TensorScatterAxis(n *Node, rank int) (int, error) {
	ax, err := normAxis(n.Attrs.Int("axis", -2), rank)
	if err != nil {
		return 0, fmt.Errorf("attribute axis: %w", err)
	}
	if ax == 0 {
		return 0, fmt.Errorf("attribute axis must not be the batch axis 0")
	}
	return ax, nil
}

// inferTensorScatter: the output is past_cache; update differs from it only
// on the sequence axis, which it may not exceed.
func inferTensorScatter(n *Node) error {
	switch m := n.Attrs.String("mode", "linear"); m {
	case "linear", "circular":
	default:
		return fmt.Errorf("attribute mode %q is not linear or circular", m)
	}
	if err := sameDType(n, 0, 1); err != nil {
		return err
	}
	if err := checkIndices(n, 2); err != nil {
		return err
	}
	past, upd := n.Inputs[0], n.Inputs[1]
	if past.Shape != nil {
		ax, err := TensorScatterAxis(n, len(past.Shape))
		if err != nil {
			return err
		}
		if upd.Shape != nil {
			if len(upd.Shape) != len(past.Shape) {
				return fmt.Errorf("update %v and past_cache %v differ in rank", upd.Shape, past.Shape)
			}
			for i, d := range upd.Shape {
				p := past.Shape[i]
				if d < 0 || p < 0 {
					continue
				}
				if (i == ax && d > p) || (i != ax && d != p) {
					return fmt.Errorf("update %v does not fit past_cache %v on axis %d", upd.Shape, past.Shape, i)
				}
			}
		}
	}
	setOutputLike(n, 0, past.DType, past)
	return nil
}

// NonZeroPositions returns the flat positions of t's non-zero elements in
// order (NaN is non-zero, -0 is zero).
func NonZeroPositions(t *Tensor) ([]int, error) {
	if err := tensorDataOK(t); err != nil {
		return nil, err
	}
	cnt := int(t.NumElements())
	var pos []int
	add := func(i int, nz bool) {
		if nz {
			pos = append(pos, i)
		}
	}
	switch t.DType {
	case Float32:
		for i, v := range t.U32()[:cnt] {
			add(i, v&^(1<<31) != 0)
		}
	case Float64:
		for i, v := range t.U64()[:cnt] {
			add(i, v&^(1<<63) != 0)
		}
	case Float16, BFloat16:
		for i, v := range t.U16()[:cnt] {
			add(i, v&0x7fff != 0)
		}
	case Complex64, Complex128:
		return nil, fmt.Errorf("complex tensors are not supported")
	default:
		sz := t.DType.Size()
		for i := 0; i < cnt; i++ {
			nz := false
			for _, b := range t.Data[i*sz : (i+1)*sz] {
				if b != 0 {
					nz = true
					break
				}
			}
			add(i, nz)
		}
	}
	return pos, nil
}

// inferNonZero: int64 [rank, count], count read from the data when known.
func inferNonZero(n *Node) error {
	x := n.Inputs[0]
	if x.Shape == nil {
		setOutput(n, 0, Int64, nil)
		return nil
	}
	cnt := int64(unknownDim)
	if x.Const != nil {
		pos, err := NonZeroPositions(x.Const)
		if err != nil {
			return fmt.Errorf("%s: %w", inputDesc(n, 0), err)
		}
		cnt = int64(len(pos))
	} else if NumElements(x.Shape) == 0 {
		cnt = 0
	}
	setOutput(n, 0, Int64, []int64{int64(len(x.Shape)), cnt})
	return nil
}
