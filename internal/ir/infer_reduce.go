package ir

import "fmt"

// Shape functions of the reductions (inputs data, axes?; attrs keepdims,
// noop_with_empty_axes) and ArgMax/ArgMin.

func inferReduce(n *Node) error {
	x := n.Inputs[0]
	keep := n.Attrs.Int("keepdims", 1) != 0
	noop := n.Attrs.Int("noop_with_empty_axes", 0) != 0

	axes, known, err := constInts(n, 1)
	if err != nil {
		return err
	}
	if !known && n.Input(1) != nil {
		// Axes exist but their values are not known yet.
		l := vecLen(n.Inputs[1])
		switch {
		case l == 0:
			known, axes = true, nil
		case x.Shape == nil:
			setOutput(n, 0, x.DType, nil)
			return nil
		case keep:
			// Each dim is either kept or 1.
			out := cloneShape(x.Shape)
			for i, d := range out {
				if d != 1 {
					out[i] = unknownDim
				}
			}
			setOutput(n, 0, x.DType, out)
			return nil
		case l > 0 && l <= int64(len(x.Shape)):
			setOutput(n, 0, x.DType, unknownShape(len(x.Shape)-int(l)))
			return nil
		case l > int64(len(x.Shape)):
			return fmt.Errorf("%s: %d axes for a rank-%d input", inputDesc(n, 1), l, len(x.Shape))
		default:
			setOutput(n, 0, x.DType, nil)
			return nil
		}
	}
	if len(axes) == 0 && noop {
		setOutputLike(n, 0, x.DType, x)
		return nil
	}
	if x.Shape == nil {
		if len(axes) == 0 && !keep {
			// Reducing every axis without keepdims gives a scalar at any rank.
			setOutput(n, 0, x.DType, []int64{})
		} else {
			setOutput(n, 0, x.DType, nil)
		}
		return nil
	}
	r := len(x.Shape)
	reduced := make([]bool, r)
	if len(axes) == 0 {
		for i := range reduced {
			reduced[i] = true
		}
	} else {
		ax, err := normAxes(axes, r)
		if err != nil {
			return fmt.Errorf("%s: %w", inputDesc(n, 1), err)
		}
		for _, a := range ax {
			reduced[a] = true
		}
	}
	out := make([]int64, 0, r)
	for i, d := range x.Shape {
		switch {
		case !reduced[i]:
			out = append(out, d)
		case keep:
			out = append(out, 1)
		}
	}
	setOutput(n, 0, x.DType, out)
	return nil
}

// inferArgReduce: ArgMax/ArgMin along attr axis; int64 indices.
func inferArgReduce(n *Node) error {
	x := n.Inputs[0]
	keep := n.Attrs.Int("keepdims", 1) != 0
	if x.Shape == nil {
		setOutput(n, 0, Int64, nil)
		return nil
	}
	ax, err := normAxis(n.Attrs.Int("axis", 0), len(x.Shape))
	if err != nil {
		return fmt.Errorf("attribute axis: %w", err)
	}
	out := make([]int64, 0, len(x.Shape))
	for i, d := range x.Shape {
		switch {
		case i != ax:
			out = append(out, d)
		case keep:
			out = append(out, 1)
		}
	}
	setOutput(n, 0, Int64, out)
	return nil
}
