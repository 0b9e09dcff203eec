package ir

import "fmt"

// lossNormOps: losses, normalisations and other math ops of ONNX (issue 13).
// Every row is OPAQUE: the kernel generator emits none of them.
var lossNormOps = []OpInfo{
	{Name: "NegativeLogLikelihoodLoss", Onnx: "NegativeLogLikelihoodLoss", In: Arity{2, 3}, Out: Arity{1, 1}, Infer: inferNLLLoss, Pattern: PatternOpaque, Note: "inputs input [N,C,d...], target [N,d...], weight? [C]; attrs reduction (none|sum|mean), ignore_index; MindSpore's NLLLoss is 2-D only with a required weight and a second output"},
	{Name: "SoftmaxCrossEntropyLoss", Onnx: "SoftmaxCrossEntropyLoss", In: Arity{2, 3}, Out: Arity{1, 2}, Infer: inferNLLLoss, Pattern: PatternOpaque, Note: "inputs scores [N,C,d...], labels [N,d...], weights? [C]; outputs loss, log_prob? (scores' shape); attrs reduction, ignore_index"},
	{Name: "RMSNormalization", Onnx: "RMSNormalization", In: Arity{2, 2}, Out: Arity{1, 1}, Infer: inferRMSNorm, Pattern: PatternOpaque, Note: "inputs x, scale (broadcast to x's dims from axis on); attrs axis, epsilon, stash_type"},
	{Name: "RotaryEmbedding", Onnx: "RotaryEmbedding", In: Arity{3, 4}, Out: Arity{1, 1}, Infer: inferRotaryEmbedding, Pattern: PatternOpaque, Note: "inputs x [B,H,S,D] or [B,S,H*D], cos_cache, sin_cache, position_ids?; attrs interleaved, num_heads, rotary_embedding_dim"},
	{Name: "CumProd", Onnx: "CumProd", In: Arity{2, 2}, Out: Arity{1, 1}, Infer: inferCumSum, Pattern: PatternOpaque, Note: "inputs x, axis; attrs exclusive, reverse"},
	{Name: "LpPool", Onnx: "LpPool", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferPool, Pattern: PatternOpaque, Note: "ONNX attrs (p, kernel_shape, strides, pads, dilations, auto_pad, ceil_mode)"},
	{Name: "Hardmax", Onnx: "Hardmax", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferSoftmax, Pattern: PatternOpaque, Note: "attr axis (opset>=13 meaning)"},
	{Name: "LpNormalization", Onnx: "LpNormalization", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferSoftmax, Pattern: PatternOpaque, Note: "attrs axis, p (1 or 2)"},
	{Name: "EyeLike", Onnx: "EyeLike", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferEyeLike, Pattern: PatternOpaque, Note: "attrs dtype (ONNX dtype number; default the input's), k"},
	{Name: "GroupNormalization", Onnx: "GroupNormalization", In: Arity{3, 3}, Out: Arity{1, 1}, Infer: inferGroupNorm, Pattern: PatternOpaque, Note: "inputs x [N,C,...], scale [C], bias [C] (opset 21; the opset-18 per-group [num_groups] form is accepted as is); attrs num_groups, epsilon, stash_type"},
	{Name: "LRN", Onnx: "LRN", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferRank3Plus, Pattern: PatternOpaque, Note: "ONNX attrs size, alpha (not divided by size), beta, bias; window floor((size-1)/2) before, ceil((size-1)/2) after"},
	{Name: "MatrixDeterminant", Onnx: "Det", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferDet, Pattern: PatternOpaque, Note: "x [..., M, M] -> [...]"},
	{Name: "Shrink", Onnx: "Shrink", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternOpaque, Note: "attrs bias, lambd"},
	{Name: "MeanVarianceNormalization", Onnx: "MeanVarianceNormalization", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternOpaque, Note: "attr axes (default [0,2,3]); (x-mean)/(std+1e-9)"},
	{Name: "Swish", Onnx: "Swish", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferUnary, Pattern: PatternOpaque, Note: "x*sigmoid(alpha*x); attr alpha"},
}

// inferNLLLoss (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss): input
// [N,C,d1..dk], target [N,d1..dk] of an integer type, weight? [C]. The loss
// has the target's shape for reduction "none", else it is a scalar; the
// optional second output (log_prob) has the input's shape.
func inferNLLLoss(n *Node) error {
	x, t := n.Inputs[0], n.Inputs[1]
	red := n.Attrs.String("reduction", "mean")
	if red != "none" && red != "sum" && red != "mean" {
		return fmt.Errorf("attribute reduction %q: want none, sum or mean", red)
	}
	if dt := t.DType; dt != Undefined && !dt.IsInt() {
		return fmt.Errorf("%s must be an integer tensor, got %s", inputDesc(n, 1), dt)
	}
	var c int64 = unknownDim
	if x.Shape != nil {
		if len(x.Shape) < 2 {
			return fmt.Errorf("%s must have rank >= 2, got %v", inputDesc(n, 0), x.Shape)
		}
		c = x.Shape[1]
		if t.Shape != nil {
			want := append([]int64{x.Shape[0]}, x.Shape[2:]...)
			if len(t.Shape) != len(want) || !shapesMayMatch(t.Shape, want) {
				return fmt.Errorf("%s has shape %v, want %v", inputDesc(n, 1), t.Shape, want)
			}
		}
	}
	if err := checkChannelVec(n, 2, c); err != nil {
		return err
	}
	if red == "none" {
		shape := shapeOf(t)
		if shape == nil && x.Shape != nil {
			shape = append([]int64{x.Shape[0]}, x.Shape[2:]...)
		}
		setOutput(n, 0, x.DType, shape)
	} else {
		setOutput(n, 0, x.DType, []int64{})
	}
	setOutputLike(n, 1, x.DType, x)
	return nil
}

// inferRMSNorm: y has x's shape; scale must broadcast to x's dims from axis on.
func inferRMSNorm(n *Node) error {
	x := n.Inputs[0]
	stash := DType(n.Attrs.Int("stash_type", int64(Float32)))
	if !validDType(stash) {
		return fmt.Errorf("attribute stash_type %d is not a known dtype", int32(stash))
	}
	if x.Shape != nil {
		ax, err := normAxis(n.Attrs.Int("axis", -1), len(x.Shape))
		if err != nil {
			return fmt.Errorf("attribute axis: %w", err)
		}
		if s := shapeOf(n.Inputs[1]); s != nil {
			norm := x.Shape[ax:]
			if b, err := broadcastShapes(norm, s); err != nil || len(s) > len(norm) || !shapesMayMatch(b, norm) {
				return fmt.Errorf("%s has shape %v, which does not fit normalized dims %v", inputDesc(n, 1), s, norm)
			}
		}
	}
	setOutputLike(n, 0, x.DType, x)
	return nil
}

// inferRotaryEmbedding: the output has x's shape. x is [B,H,S,D] (4-D) or
// [B,S,H*D] (3-D, attr num_heads required).
func inferRotaryEmbedding(n *Node) error {
	x := n.Inputs[0]
	if x.Shape != nil {
		switch len(x.Shape) {
		case 4:
		case 3:
			nh := n.Attrs.Int("num_heads", 0)
			if nh <= 0 {
				return fmt.Errorf("3-D %s needs attribute num_heads > 0", inputDesc(n, 0))
			}
			if h := x.Shape[2]; h >= 0 && h%nh != 0 {
				return fmt.Errorf("%s hidden size %d is not a multiple of num_heads %d", inputDesc(n, 0), h, nh)
			}
		default:
			return fmt.Errorf("%s must be 3-D or 4-D, got %v", inputDesc(n, 0), x.Shape)
		}
	}
	if err := sameDType(n, 0, 1, 2); err != nil {
		return err
	}
	if p := n.Input(3); p != nil && p.DType != Undefined && !p.DType.IsInt() {
		return fmt.Errorf("%s must be an integer tensor, got %s", inputDesc(n, 3), p.DType)
	}
	setOutputLike(n, 0, x.DType, x)
	return nil
}

// inferEyeLike: a 2-D output of the input's shape and the dtype attr (default
// the input's).
func inferEyeLike(n *Node) error {
	x := n.Inputs[0]
	dt := x.DType
	if n.Attrs.Has("dtype") {
		dt = DType(n.Attrs.Int("dtype", 0))
		if !validDType(dt) {
			return fmt.Errorf("attribute dtype %d is not a known dtype", int32(dt))
		}
	}
	if x.Shape != nil && len(x.Shape) != 2 {
		return fmt.Errorf("%s must be 2-D, got %v", inputDesc(n, 0), x.Shape)
	}
	setOutputLike(n, 0, dt, x)
	return nil
}

// inferGroupNorm: x [N,C,...]; num_groups must divide C; scale and bias are
// [C] (opset 21) or [num_groups] (opset 18).
func inferGroupNorm(n *Node) error {
	g := n.Attrs.Int("num_groups", 0)
	if g <= 0 {
		return fmt.Errorf("attribute num_groups must be > 0, got %d", g)
	}
	c, err := channels(n)
	if err != nil {
		return err
	}
	if c >= 0 && c%g != 0 {
		return fmt.Errorf("num_groups %d does not divide the %d channels", g, c)
	}
	for i := 1; i < 3; i++ {
		s := shapeOf(n.Input(i))
		if s == nil {
			continue
		}
		if len(s) != 1 || (s[0] >= 0 && c >= 0 && s[0] != c && s[0] != g) {
			return fmt.Errorf("%s has shape %v, want [%d] (channels) or [%d] (groups)", inputDesc(n, i), s, c, g)
		}
	}
	x := n.Inputs[0]
	setOutputLike(n, 0, x.DType, x)
	return nil
}

// inferRank3Plus: same shape as x, which must have rank >= 3 ([N, C, ...]).
func inferRank3Plus(n *Node) error {
	x := n.Inputs[0]
	if x.Shape != nil && len(x.Shape) < 3 {
		return fmt.Errorf("%s must have rank >= 3, got %v", inputDesc(n, 0), x.Shape)
	}
	setOutputLike(n, 0, x.DType, x)
	return nil
}

// inferDet: x [..., M, M] gives [...].
func inferDet(n *Node) error {
	x := n.Inputs[0]
	if x.Shape == nil {
		setOutput(n, 0, x.DType, nil)
		return nil
	}
	r := len(x.Shape)
	if r < 2 {
		return fmt.Errorf("%s must have rank >= 2, got %v", inputDesc(n, 0), x.Shape)
	}
	if a, b := x.Shape[r-2], x.Shape[r-1]; a >= 0 && b >= 0 && a != b {
		return fmt.Errorf("%s %v: the last two dims must be equal", inputDesc(n, 0), x.Shape)
	}
	setOutput(n, 0, x.DType, x.Shape[:r-2])
	return nil
}
