package runtime

import (
	"fmt"

	"gkconv/internal/ir"
)

// Sequence values (ONNX seq(tensor)) at run time: a Tensor of DType
// Sequence whose Seq holds the element tensors. The sequence ops compute
// their outputs directly (their sizes are data); elements are copied in,
// since the buffers of the tensors they came from are recycled, and never
// written afterwards, so SequenceAt may hand one out as it is.

type seqFunc func(n *ir.Node, in []*ir.Tensor) (*ir.Tensor, error)

var seqOps = map[string]seqFunc{
	"SequenceEmpty": func(n *ir.Node, in []*ir.Tensor) (*ir.Tensor, error) { return seqOf(nil), nil },
	"SequenceConstruct": func(n *ir.Node, in []*ir.Tensor) (*ir.Tensor, error) {
		var ts []*ir.Tensor
		for _, t := range in {
			ts = append(ts, t.Clone())
		}
		return seqOf(ts), nil
	},
	"SequenceInsert":     seqInsert,
	"SequenceErase":      seqErase,
	"SequenceAt":         seqAt,
	"SequenceLength":     seqLength,
	"SplitToSequence":    splitToSequence,
	"ConcatFromSequence": concatFromSequence,
}

func seqOf(ts []*ir.Tensor) *ir.Tensor { return &ir.Tensor{DType: ir.Sequence, Seq: ts} }

func seqArg(in []*ir.Tensor) ([]*ir.Tensor, error) {
	if len(in) == 0 || in[0] == nil || in[0].DType != ir.Sequence {
		return nil, fmt.Errorf("input 0 is not a sequence")
	}
	return in[0].Seq, nil
}

// position reads input i (an integer scalar) as a position in [-n, hi]
// (hi is n for an insertion, n-1 otherwise), made non-negative; def when
// the input is omitted.
func position(in []*ir.Tensor, i int, n, hi, def int) (int, error) {
	if i >= len(in) || in[i] == nil {
		return def, nil
	}
	v, err := in[i].Int64s()
	if err != nil || len(v) != 1 {
		return 0, fmt.Errorf("position must be one integer")
	}
	p := v[0]
	if p < -int64(n) || p > int64(hi) {
		return 0, fmt.Errorf("position %d is out of range for a sequence of %d", p, n)
	}
	if p < 0 {
		p += int64(n)
	}
	return int(p), nil
}

func seqInsert(n *ir.Node, in []*ir.Tensor) (*ir.Tensor, error) {
	s, err := seqArg(in)
	if err != nil {
		return nil, err
	}
	p, err := position(in, 2, len(s), len(s), len(s))
	if err != nil {
		return nil, err
	}
	out := append(append(append([]*ir.Tensor{}, s[:p]...), in[1].Clone()), s[p:]...)
	return seqOf(out), nil
}

func seqErase(n *ir.Node, in []*ir.Tensor) (*ir.Tensor, error) {
	s, err := seqArg(in)
	if err != nil {
		return nil, err
	}
	if len(s) == 0 {
		return nil, fmt.Errorf("erase from an empty sequence")
	}
	p, err := position(in, 1, len(s), len(s)-1, len(s)-1)
	if err != nil {
		return nil, err
	}
	return seqOf(append(append([]*ir.Tensor{}, s[:p]...), s[p+1:]...)), nil
}

func seqAt(n *ir.Node, in []*ir.Tensor) (*ir.Tensor, error) {
	s, err := seqArg(in)
	if err != nil {
		return nil, err
	}
	p, err := position(in, 1, len(s), len(s)-1, -1)
	if err != nil {
		return nil, err
	}
	if p < 0 || p >= len(s) {
		return nil, fmt.Errorf("position out of range for a sequence of %d", len(s))
	}
	return s[p], nil
}

func seqLength(n *ir.Node, in []*ir.Tensor) (*ir.Tensor, error) {
	s, err := seqArg(in)
	if err != nil {
		return nil, err
	}
	return ir.Int64Tensor([]int64{}, int64(len(s))), nil
}

// chunk is x[..., start:start+size, ...] along axis.
func chunk(x *ir.Tensor, axis int, start, size int64) *ir.Tensor {
	shape := append([]int64{}, x.Shape...)
	shape[axis] = size
	t := ir.NewTensor(x.DType, shape)
	outer := ir.NumElements(x.Shape[:axis])
	inner := ir.NumElements(x.Shape[axis+1:]) * int64(x.DType.Size())
	dim := x.Shape[axis]
	for o := range outer {
		copy(t.Data[o*size*inner:(o+1)*size*inner], x.Data[(o*dim+start)*inner:])
	}
	return t
}

func splitToSequence(n *ir.Node, in []*ir.Tensor) (*ir.Tensor, error) {
	x := in[0]
	if x.DType == ir.String {
		return nil, fmt.Errorf("string tensors are not supported")
	}
	r := len(x.Shape)
	axis := int(n.Attrs.Int("axis", 0))
	if axis < -r || axis >= r {
		return nil, fmt.Errorf("axis %d is out of range for rank %d", axis, r)
	}
	if axis < 0 {
		axis += r
	}
	dim := x.Shape[axis]
	var sizes []int64
	keep := n.Attrs.Int("keepdims", 1) != 0
	if len(in) > 1 && in[1] != nil {
		keep = true
		v, err := in[1].Int64s()
		if err != nil {
			return nil, err
		}
		if len(in[1].Shape) == 0 {
			if v[0] <= 0 {
				return nil, fmt.Errorf("split %d must be positive", v[0])
			}
			for s := int64(0); s < dim; s += v[0] {
				sizes = append(sizes, min(v[0], dim-s))
			}
		} else {
			var sum int64
			for _, s := range v {
				if s < 0 {
					return nil, fmt.Errorf("split sizes %v must not be negative", v)
				}
				sum += s
			}
			if sum != dim {
				return nil, fmt.Errorf("split sizes %v do not sum to %d", v, dim)
			}
			sizes = v
		}
	} else {
		for range dim {
			sizes = append(sizes, 1)
		}
	}
	var ts []*ir.Tensor
	var start int64
	for _, s := range sizes {
		t := chunk(x, axis, start, s)
		start += s
		if !keep {
			t.Shape = append(t.Shape[:axis:axis], t.Shape[axis+1:]...)
		}
		ts = append(ts, t)
	}
	return seqOf(ts), nil
}

func concatFromSequence(n *ir.Node, in []*ir.Tensor) (*ir.Tensor, error) {
	s, err := seqArg(in)
	if err != nil {
		return nil, err
	}
	if len(s) == 0 {
		return nil, fmt.Errorf("concatenation of an empty sequence")
	}
	newAxis := n.Attrs.Int("new_axis", 0) != 0
	axis := int(n.Attrs.Int("axis", 0))
	r := len(s[0].Shape)
	if newAxis {
		r++
	}
	if axis < -r || axis >= r {
		return nil, fmt.Errorf("axis %d is out of range for rank %d", axis, r)
	}
	if axis < 0 {
		axis += r
	}
	if newAxis {
		return stack(s, axis, false, nil)
	}
	// Concatenation: every element has the same shape but along axis.
	x0 := s[0]
	shape := append([]int64{}, x0.Shape...)
	shape[axis] = 0
	for i, t := range s {
		if t.DType != x0.DType || len(t.Shape) != len(x0.Shape) || t.DType == ir.String {
			return nil, fmt.Errorf("element %d is %s%v, element 0 %s%v", i, t.DType, t.Shape, x0.DType, x0.Shape)
		}
		for d := range t.Shape {
			if d != axis && t.Shape[d] != x0.Shape[d] {
				return nil, fmt.Errorf("element %d has shape %v, element 0 %v", i, t.Shape, x0.Shape)
			}
		}
		shape[axis] += t.Shape[axis]
	}
	out := ir.NewTensor(x0.DType, shape)
	outer := ir.NumElements(shape[:axis])
	inner := ir.NumElements(shape[axis+1:]) * int64(x0.DType.Size())
	var off int64
	for _, t := range s {
		w := t.Shape[axis] * inner
		for o := range outer {
			copy(out.Data[o*shape[axis]*inner+off:], t.Data[o*w:(o+1)*w])
		}
		off += w
	}
	return out, nil
}
