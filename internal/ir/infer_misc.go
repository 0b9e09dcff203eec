package ir

import (
	"fmt"
	"math"
)

// Shape functions of Trilu, Range, Shape, Size, ConstantOfShape, TopK,
// CumSum and Resize.

// checkScalarInput rejects an input whose known shape holds more than one element.
func checkScalarInput(n *Node, i int) error {
	if v := n.Input(i); v != nil && v.ShapeKnown() && NumElements(v.Shape) != 1 {
		return fmt.Errorf("%s must be a scalar, got shape %v", inputDesc(n, i), v.Shape)
	}
	return nil
}

// inferTrilu: inputs x (rank >= 2), k?; same shape.
func inferTrilu(n *Node) error {
	if err := checkScalarInput(n, 1); err != nil {
		return err
	}
	x := n.Inputs[0]
	if x.Shape != nil && len(x.Shape) < 2 {
		return fmt.Errorf("%s must have rank >= 2, got %v", inputDesc(n, 0), x.Shape)
	}
	setOutputLike(n, 0, x.DType, x)
	return nil
}

// inferRange: scalars start, limit, delta; length max(ceil((limit-start)/delta), 0).
func inferRange(n *Node) error {
	for i := 0; i < 3; i++ {
		if err := checkScalarInput(n, i); err != nil {
			return err
		}
	}
	dt := firstDType(n.Inputs...)
	if !n.Inputs[0].IsConst() || !n.Inputs[1].IsConst() || !n.Inputs[2].IsConst() {
		setOutput(n, 0, dt, []int64{unknownDim})
		return nil
	}
	var length int64
	if dt.IsInt() {
		var v [3]int64
		for i := range v {
			x, _, err := constScalarInt(n, i)
			if err != nil {
				return err
			}
			v[i] = x
		}
		start, limit, delta := v[0], v[1], v[2]
		switch {
		case delta == 0:
			return fmt.Errorf("%s: delta is 0", inputDesc(n, 2))
		case delta > 0:
			length = ceilDiv(limit-start, delta)
		default:
			length = ceilDiv(start-limit, -delta)
		}
		length = max(length, 0)
	} else {
		var v [3]float64
		for i := range v {
			f, _, err := constFloats(n, i)
			if err != nil {
				return err
			}
			if len(f) != 1 {
				return fmt.Errorf("%s must be a scalar, got %d elements", inputDesc(n, i), len(f))
			}
			v[i] = f[0]
		}
		if v[2] == 0 {
			return fmt.Errorf("%s: delta is 0", inputDesc(n, 2))
		}
		var err error
		if length, err = float64ToDim(math.Max(math.Ceil((v[1]-v[0])/v[2]), 0)); err != nil {
			return fmt.Errorf("range(%g, %g, %g): %w", v[0], v[1], v[2], err)
		}
	}
	setOutput(n, 0, dt, []int64{length})
	return nil
}

// inferShapeOp (ONNX Shape): int64 [end-start] with attrs start, end clamped to [0, r].
func inferShapeOp(n *Node) error {
	x := n.Inputs[0]
	if x.Shape == nil {
		setOutput(n, 0, Int64, []int64{unknownDim})
		return nil
	}
	r := int64(len(x.Shape))
	norm := func(v int64) int64 {
		if v < 0 {
			v += r
		}
		return clampInt64(v, 0, r)
	}
	start := norm(n.Attrs.Int("start", 0))
	end := norm(n.Attrs.Int("end", r))
	setOutput(n, 0, Int64, []int64{max(end-start, 0)})
	return nil
}

// inferSize: int64 scalar.
func inferSize(n *Node) error {
	setOutput(n, 0, Int64, []int64{})
	return nil
}

// inferConstantOfShape: input shape (1-D int64); dtype from the one-element
// value attr, float32 by default.
func inferConstantOfShape(n *Node) error {
	dt := Float32
	if n.Attrs.Has("value") {
		t := n.Attrs.Tensor("value")
		if t == nil {
			return fmt.Errorf("attribute value must be a tensor")
		}
		if t.NumElements() != 1 {
			return fmt.Errorf("attribute value must hold one element, got shape %v", t.Shape)
		}
		dt = t.DType
	}
	shape, ok, err := constInts(n, 0)
	if err != nil {
		return err
	}
	if !ok {
		if l := vecLen(n.Inputs[0]); l >= 0 {
			setOutput(n, 0, dt, unknownShape(int(l)))
		} else {
			setOutput(n, 0, dt, nil)
		}
		return nil
	}
	for _, d := range shape {
		if d < 0 {
			return fmt.Errorf("%s: shape %v has a negative dim", inputDesc(n, 0), shape)
		}
	}
	setOutput(n, 0, dt, shape)
	return nil
}

// inferTopK: inputs x, k; outputs values (x's dtype) and int64 indices with
// axis resized to k.
func inferTopK(n *Node) error {
	if err := checkScalarInput(n, 1); err != nil {
		return err
	}
	x := n.Inputs[0]
	k, kok, err := constScalarInt(n, 1)
	if err != nil {
		return err
	}
	if kok && k < 0 {
		return fmt.Errorf("%s: k is negative (%d)", inputDesc(n, 1), k)
	}
	var out []int64
	if x.Shape != nil {
		ax, err := normAxis(n.Attrs.Int("axis", -1), len(x.Shape))
		if err != nil {
			return fmt.Errorf("attribute axis: %w", err)
		}
		out = cloneShape(x.Shape)
		switch d := x.Shape[ax]; {
		case !kok:
			out[ax] = unknownDim
		case d >= 0 && k > d:
			return fmt.Errorf("%s: k = %d exceeds axis %d of x %v", inputDesc(n, 1), k, ax, x.Shape)
		default:
			out[ax] = k
		}
	}
	setOutput(n, 0, x.DType, out)
	setOutput(n, 1, Int64, out)
	return nil
}

// inferCumSum: inputs x, axis (scalar); same shape.
func inferCumSum(n *Node) error {
	if err := checkScalarInput(n, 1); err != nil {
		return err
	}
	x := n.Inputs[0]
	axis, ok, err := constScalarInt(n, 1)
	if err != nil {
		return err
	}
	if ok && x.Shape != nil {
		if _, err := normAxis(axis, len(x.Shape)); err != nil {
			return fmt.Errorf("%s: %w", inputDesc(n, 1), err)
		}
	}
	setOutputLike(n, 0, x.DType, x)
	return nil
}

// inferResize: inputs x, roi?, scales?, sizes?; attrs axes,
// keep_aspect_ratio_policy, coordinate_transformation_mode. The output is
// sizes when given, else floor(in · scale), times the roi extent for
// tf_crop_and_resize. Empty scales/roi tensors count as absent (opset 11-12
// exporters pass them so).
func inferResize(n *Node) error {
	x := n.Inputs[0]
	hasScales := n.Input(2) != nil && !isEmptyInput(n, 2)
	hasSizes := n.Input(3) != nil && !isEmptyInput(n, 3)
	if hasScales && hasSizes {
		return fmt.Errorf("only one of scales (input 2) and sizes (input 3) may be given")
	}
	if !hasScales && !hasSizes {
		return fmt.Errorf("one of scales (input 2) and sizes (input 3) must be given")
	}
	if x.Shape == nil {
		setOutput(n, 0, x.DType, nil)
		return nil
	}
	r := len(x.Shape)
	var ax []int
	if n.Attrs.Has("axes") {
		var err error
		if ax, err = normAxes(n.Attrs.Ints("axes", nil), r); err != nil {
			return fmt.Errorf("attribute axes: %w", err)
		}
	} else {
		ax = make([]int, r)
		for i := range ax {
			ax[i] = i
		}
	}
	out := cloneShape(x.Shape)
	unknownAxes := func() {
		for _, a := range ax {
			out[a] = unknownDim
		}
	}
	if hasSizes {
		sizes, ok, err := constInts(n, 3)
		if err != nil {
			return err
		}
		if !ok {
			unknownAxes()
			setOutput(n, 0, x.DType, out)
			return nil
		}
		if len(sizes) != len(ax) {
			return fmt.Errorf("%s: %d sizes for %d axes", inputDesc(n, 3), len(sizes), len(ax))
		}
		for _, s := range sizes {
			if s < 0 {
				return fmt.Errorf("%s: negative size in %v", inputDesc(n, 3), sizes)
			}
		}
		switch policy := n.Attrs.String("keep_aspect_ratio_policy", "stretch"); policy {
		case "stretch":
			for i, a := range ax {
				out[a] = sizes[i]
			}
		case "not_larger", "not_smaller":
			// One scale for all axes keeps the aspect ratio; it needs every input dim.
			scale := math.Inf(1)
			if policy == "not_smaller" {
				scale = math.Inf(-1)
			}
			for i, a := range ax {
				if x.Shape[a] <= 0 {
					unknownAxes()
					setOutput(n, 0, x.DType, out)
					return nil
				}
				s := float64(sizes[i]) / float64(x.Shape[a])
				if policy == "not_larger" {
					scale = math.Min(scale, s)
				} else {
					scale = math.Max(scale, s)
				}
			}
			for _, a := range ax {
				// round_int in the ONNX spec: halfway cases round up.
				d, err := float64ToDim(math.Floor(scale*float64(x.Shape[a]) + 0.5))
				if err != nil {
					return fmt.Errorf("%s: %w", inputDesc(n, 3), err)
				}
				out[a] = d
			}
		default:
			return fmt.Errorf("attribute keep_aspect_ratio_policy %q is not stretch, not_larger or not_smaller", policy)
		}
		setOutput(n, 0, x.DType, out)
		return nil
	}
	scales, ok, err := constFloats(n, 2)
	if err != nil {
		return err
	}
	if !ok {
		unknownAxes()
		setOutput(n, 0, x.DType, out)
		return nil
	}
	if len(scales) != len(ax) {
		return fmt.Errorf("%s: %d scales for %d axes", inputDesc(n, 2), len(scales), len(ax))
	}
	// tf_crop_and_resize scales the roi extent, not the whole axis.
	var roi []float64
	if n.Attrs.String("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize" &&
		n.Input(1) != nil && !isEmptyInput(n, 1) {
		var rok bool
		if roi, rok, err = constFloats(n, 1); err != nil {
			return err
		}
		if !rok {
			unknownAxes()
			setOutput(n, 0, x.DType, out)
			return nil
		}
		if len(roi) != 2*len(ax) {
			return fmt.Errorf("%s: %d roi values for %d axes (want %d)", inputDesc(n, 1), len(roi), len(ax), 2*len(ax))
		}
	}
	for i, a := range ax {
		s := scales[i]
		if !(s > 0) {
			return fmt.Errorf("%s: scale %g must be positive", inputDesc(n, 2), s)
		}
		d := x.Shape[a]
		if d < 0 {
			continue
		}
		extent := 1.0
		if roi != nil {
			extent = roi[i+len(ax)] - roi[i]
		}
		v, err := float64ToDim(math.Floor(float64(d) * extent * s))
		if err != nil {
			return fmt.Errorf("%s: %w", inputDesc(n, 2), err)
		}
		out[a] = v
	}
	setOutput(n, 0, x.DType, out)
	return nil
}
