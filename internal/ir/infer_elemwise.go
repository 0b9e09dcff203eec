package ir

import "fmt"

// Shape functions of the elementwise and broadcasting ops.

// inferUnary: output of the input's shape and dtype.
func inferUnary(n *Node) error {
	x := n.Inputs[0]
	setOutputLike(n, 0, x.DType, x)
	return nil
}

// inferPredicate: output of the input's shape, dtype Bool (IsInf, IsNan, LogicalNot).
func inferPredicate(n *Node) error {
	setOutputLike(n, 0, Bool, n.Inputs[0])
	return nil
}

func inferCast(n *Node) error {
	if !n.Attrs.Has("to") {
		return fmt.Errorf("attribute to is missing")
	}
	to := DType(n.Attrs.Int("to", 0))
	if !validDType(to) {
		return fmt.Errorf("attribute to = %d is not a known dtype", int32(to))
	}
	setOutputLike(n, 0, to, n.Inputs[0])
	return nil
}

// inferDropout: inputs data, ratio?, training_mode?; outputs output, mask? (bool).
func inferDropout(n *Node) error {
	x := n.Inputs[0]
	setOutputLike(n, 0, x.DType, x)
	setOutputLike(n, 1, Bool, x)
	return nil
}

// inferClip: inputs x, min?, max?; the bounds are scalars.
func inferClip(n *Node) error {
	for i := 1; i <= 2; i++ {
		if v := n.Input(i); v != nil && v.ShapeKnown() && NumElements(v.Shape) > 1 {
			return fmt.Errorf("%s: bound must be a scalar, got shape %v", inputDesc(n, i), v.Shape)
		}
	}
	x := n.Inputs[0]
	setOutputLike(n, 0, x.DType, x)
	return nil
}

// inferBinary: two broadcast inputs of one dtype; dtype of the first.
func inferBinary(n *Node) error { return inferBroadcast2(n, false, true) }

// inferBinaryMixed: as inferBinary but the inputs may differ in dtype (ONNX
// Pow: base and exponent have separate type constraints).
func inferBinaryMixed(n *Node) error { return inferBroadcast2(n, false, false) }

// inferCompare: two broadcast inputs of one dtype; dtype Bool (comparisons,
// logical ops).
func inferCompare(n *Node) error { return inferBroadcast2(n, true, true) }

func inferBroadcast2(n *Node, boolOut, same bool) error {
	if same {
		if err := sameDType(n, 0, 1); err != nil {
			return err
		}
	}
	shape, err := broadcastInputs(n, 0, 1)
	if err != nil {
		return err
	}
	dt := firstDType(n.Inputs[0], n.Inputs[1])
	if boolOut {
		dt = Bool
	}
	setOutput(n, 0, dt, shape)
	return nil
}

// inferVariadic: Max/Min/Sum/Mean of one or more broadcast inputs.
func inferVariadic(n *Node) error {
	idx := make([]int, len(n.Inputs))
	for i, v := range n.Inputs {
		if v == nil {
			return fmt.Errorf("input %d is missing", i)
		}
		idx[i] = i
	}
	if err := sameDType(n, idx...); err != nil {
		return err
	}
	shape, err := broadcastInputs(n, idx...)
	if err != nil {
		return err
	}
	setOutput(n, 0, firstDType(n.Inputs...), shape)
	return nil
}

// inferPReLU: slope broadcasts unidirectionally to x; the output is x's shape.
func inferPReLU(n *Node) error {
	x, slope := n.Inputs[0], n.Inputs[1]
	if x.Shape != nil && slope.Shape != nil {
		if len(slope.Shape) > len(x.Shape) {
			return fmt.Errorf("%s: slope shape %v has higher rank than x %v", inputDesc(n, 1), slope.Shape, x.Shape)
		}
		off := len(x.Shape) - len(slope.Shape)
		for i, d := range slope.Shape {
			xd := x.Shape[off+i]
			if d >= 0 && xd >= 0 && d != 1 && d != xd {
				return fmt.Errorf("%s: slope shape %v does not broadcast to x %v", inputDesc(n, 1), slope.Shape, x.Shape)
			}
		}
	}
	setOutputLike(n, 0, firstDType(x, slope), x)
	return nil
}

// inferSelect (ONNX Where): inputs cond, x, y broadcast together.
func inferSelect(n *Node) error {
	if c := n.Inputs[0]; c.DType != Undefined && c.DType != Bool {
		return fmt.Errorf("%s: condition must be bool, got %s", inputDesc(n, 0), c.DType)
	}
	if err := sameDType(n, 1, 2); err != nil {
		return err
	}
	shape, err := broadcastInputs(n, 0, 1, 2)
	if err != nil {
		return err
	}
	setOutput(n, 0, firstDType(n.Inputs[1], n.Inputs[2]), shape)
	return nil
}

// inferBiasAdd: x plus a 1-D bias along the channel axis (1 for NCHW-like
// formats, the last axis for NHWC). MindIR files name the attr data_format.
func inferBiasAdd(n *Node) error {
	format := n.Attrs.String("format", n.Attrs.String("data_format", "NCHW"))
	x, bias := n.Inputs[0], n.Inputs[1]
	if bias.Shape != nil && len(bias.Shape) != 1 {
		return fmt.Errorf("%s: bias must be 1-D, got shape %v", inputDesc(n, 1), bias.Shape)
	}
	if x.Shape != nil {
		r := len(x.Shape)
		if r < 2 {
			return fmt.Errorf("%s: x must have rank >= 2, got %v", inputDesc(n, 0), x.Shape)
		}
		var c int
		switch format {
		case "NCHW", "NCDHW", "NCW", "NC":
			c = 1
		case "NHWC", "NDHWC", "NWC":
			c = r - 1
		default:
			return fmt.Errorf("attribute format %q is not NCHW or NHWC", format)
		}
		if bias.Shape != nil && bias.Shape[0] >= 0 && x.Shape[c] >= 0 && bias.Shape[0] != x.Shape[c] {
			return fmt.Errorf("%s: bias length %d does not match channel dim %d of x %v",
				inputDesc(n, 1), bias.Shape[0], x.Shape[c], x.Shape)
		}
	}
	setOutputLike(n, 0, firstDType(x, bias), x)
	return nil
}

// inferBroadcastTo (ONNX Expand): output = broadcast(x.shape, shape) in both
// directions. Without the shape data its length still fixes the rank, and x's
// dims > 1 are known to survive.
func inferBroadcastTo(n *Node) error {
	x := n.Inputs[0]
	target, ok, err := constInts(n, 1)
	if err != nil {
		return err
	}
	if !ok {
		l := vecLen(n.Inputs[1])
		if l < 0 {
			setOutput(n, 0, x.DType, nil)
			return nil
		}
		target = unknownShape(int(l))
	} else {
		for i, d := range target {
			if d < 0 {
				return fmt.Errorf("%s: shape %v has negative dim %d", inputDesc(n, 1), target, i)
			}
		}
	}
	shape, err := broadcastShapes(x.Shape, target)
	if err != nil {
		return fmt.Errorf("%s: %w", inputDesc(n, 1), err)
	}
	setOutput(n, 0, x.DType, shape)
	return nil
}
