package ir

import "fmt"

// quantOps: quantization: QDQ, QLinear and Integer ops (issue 13). They keep
// their ONNX names and signatures (newest opsets: QuantizeLinear and
// DequantizeLinear 25, QLinearMatMul 21); MindSpore has no primitive of the
// same meaning (converter_lite turns ONNX QuantizeLinear/DequantizeLinear
// into tensor quant params), so the MindIR writer stores them as
// Custom(type="gkconv.<op>").
var quantOps = []OpInfo{
	{Name: "QuantizeLinear", Onnx: "QuantizeLinear", In: Arity{2, 3}, Out: Arity{1, 1}, Infer: inferQuantizeLinear, Pattern: PatternOpaque, Note: "ONNX QuantizeLinear (opset 25): y = saturate(round_half_even(x / y_scale) + y_zero_point); per-tensor, per-axis (attr axis) and blocked (attr block_size) scales; output dtype from y_zero_point, else attr output_dtype, else uint8; integer outputs uint8, int8, uint16, int16 (float8/int4/int2 types are not in the IR)"},
	{Name: "DequantizeLinear", Onnx: "DequantizeLinear", In: Arity{2, 3}, Out: Arity{1, 1}, Infer: inferDequantizeLinear, Pattern: PatternOpaque, Note: "ONNX DequantizeLinear (opset 25): y = (x - x_zero_point) * x_scale; granularity as QuantizeLinear; output dtype attr output_dtype, else x_scale's"},
	{Name: "DynamicQuantizeLinear", Onnx: "DynamicQuantizeLinear", In: Arity{1, 1}, Out: Arity{1, 3}, Infer: inferDynamicQuantizeLinear, Pattern: PatternOpaque, Note: "ONNX DynamicQuantizeLinear: outputs y (uint8), y_scale, y_zero_point; range widened to include 0; scale 1 when the range is empty (as onnxruntime)"},
	{Name: "QLinearMatMul", Onnx: "QLinearMatMul", In: Arity{8, 8}, Out: Arity{1, 1}, Infer: inferQLinearMatMul, Pattern: PatternOpaque, Note: "ONNX QLinearMatMul (opset 21): inputs a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point; int32 accumulation, requantized by a_scale*b_scale/y_scale (float32) with round half to even; b per-column scales allowed"},
	{Name: "QLinearConv", Onnx: "QLinearConv", In: Arity{8, 9}, Out: Arity{1, 1}, Infer: inferQLinearConv, Pattern: PatternOpaque, Note: "ONNX QLinearConv: inputs x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B? (int32); Conv attrs; per-output-channel w_scale/w_zero_point allowed"},
	{Name: "MatMulInteger", Onnx: "MatMulInteger", In: Arity{2, 4}, Out: Arity{1, 1}, Infer: inferMatMulInteger, Pattern: PatternOpaque, Note: "ONNX MatMulInteger: (A - a_zero_point) x (B - b_zero_point) in int32; a_zero_point per-tensor or per-row, b_zero_point per-tensor or per-column"},
	{Name: "ConvInteger", Onnx: "ConvInteger", In: Arity{2, 4}, Out: Arity{1, 1}, Infer: inferConvInteger, Pattern: PatternOpaque, Note: "ONNX ConvInteger: Conv of (x - x_zero_point) and (w - w_zero_point) in int32; Conv attrs; w_zero_point per-tensor or per-output-channel"},
}

// QuantIntRange is the saturation range of an integer quantized dtype; ok is
// false for dtypes QuantizeLinear cannot produce.
func QuantIntRange(dt DType) (lo, hi int64, ok bool) {
	switch dt {
	case Uint8:
		return 0, 255, true
	case Int8:
		return -128, 127, true
	case Uint16:
		return 0, 65535, true
	case Int16:
		return -32768, 32767, true
	case Int32:
		return -1 << 31, 1<<31 - 1, true
	}
	return 0, 0, false
}

// quantOutDType is QuantizeLinear's output dtype.
func quantOutDType(n *Node) (DType, error) {
	if zp := n.Input(2); zp != nil && zp.DType != Undefined {
		if od := n.Attrs.Int("output_dtype", 0); od != 0 && DType(od) != zp.DType {
			return Undefined, fmt.Errorf("attribute output_dtype %s differs from y_zero_point's %s", DType(od), zp.DType)
		}
		return zp.DType, nil
	}
	if od := n.Attrs.Int("output_dtype", 0); od != 0 {
		return DType(od), nil
	}
	if zp := n.Input(2); zp != nil {
		return Undefined, nil
	}
	return Uint8, nil
}

// checkQuantParams checks the scale (and zero point) shapes of a
// QuantizeLinear or DequantizeLinear against x: a scalar (or one-element
// 1-D) per tensor, 1-D of x's axis dim per axis, or x's rank with dim axis
// ceil(D/block_size) when blocked.
func checkQuantParams(n *Node) error {
	x, s, zp := n.Input(0), n.Input(1), n.Input(2)
	// a scalar and a one-element 1-D tensor are both per-tensor parameters
	// (onnxruntime's quantize_static writes a [1] scale beside a scalar zero point)
	perTensor := func(sh []int64) bool { return len(sh) == 0 || (len(sh) == 1 && sh[0] == 1) }
	if zp != nil && s.Shape != nil && zp.Shape != nil && !shapesMayMatch(s.Shape, zp.Shape) &&
		!(perTensor(s.Shape) && perTensor(zp.Shape)) {
		return fmt.Errorf("%s %v and %s %v must have the same shape", inputDesc(n, 1), s.Shape, inputDesc(n, 2), zp.Shape)
	}
	if x.Shape == nil || s.Shape == nil {
		return nil
	}
	bs := n.Attrs.Int("block_size", 0)
	if bs < 0 {
		return fmt.Errorf("attribute block_size must be >= 0, got %d", bs)
	}
	if bs == 0 && (len(s.Shape) == 0 || (len(s.Shape) == 1 && s.Shape[0] == 1)) {
		return nil
	}
	if len(x.Shape) == 0 {
		return fmt.Errorf("%s %v for a scalar x", inputDesc(n, 1), s.Shape)
	}
	ax, err := normAxis(n.Attrs.Int("axis", 1), len(x.Shape))
	if err != nil {
		return err
	}
	if bs == 0 {
		if len(s.Shape) != 1 || (s.Shape[0] >= 0 && x.Shape[ax] >= 0 && s.Shape[0] != x.Shape[ax]) {
			return fmt.Errorf("per-axis %s %v must be [%d] (x %v, axis %d)", inputDesc(n, 1), s.Shape, x.Shape[ax], x.Shape, ax)
		}
		return nil
	}
	if len(s.Shape) != len(x.Shape) {
		return fmt.Errorf("blocked %s %v must have x's rank (x %v)", inputDesc(n, 1), s.Shape, x.Shape)
	}
	for i, d := range x.Shape {
		want := d
		if i == ax && d >= 0 {
			want = ceilDiv(d, bs)
		}
		if want >= 0 && s.Shape[i] >= 0 && s.Shape[i] != want {
			return fmt.Errorf("blocked %s %v does not fit x %v with axis %d and block_size %d", inputDesc(n, 1), s.Shape, x.Shape, ax, bs)
		}
	}
	return nil
}

func inferQuantizeLinear(n *Node) error {
	dt, err := quantOutDType(n)
	if err != nil {
		return err
	}
	if dt != Undefined {
		if _, _, ok := QuantIntRange(dt); !ok || dt == Int32 {
			return fmt.Errorf("quantized dtype %s is not supported (uint8, int8, uint16, int16)", dt)
		}
	}
	if x := n.Inputs[0]; x.DType != Undefined && !x.DType.IsFloat() && x.DType != Int32 {
		return fmt.Errorf("%s must be float or int32, got %s", inputDesc(n, 0), x.DType)
	}
	if err := checkQuantParams(n); err != nil {
		return err
	}
	setOutput(n, 0, dt, n.Inputs[0].Shape)
	return nil
}

func inferDequantizeLinear(n *Node) error {
	x := n.Inputs[0]
	if x.DType != Undefined {
		if _, _, ok := QuantIntRange(x.DType); !ok {
			return fmt.Errorf("%s dtype %s is not supported (uint8, int8, uint16, int16, int32)", inputDesc(n, 0), x.DType)
		}
	}
	if zp := n.Input(2); zp != nil && zp.DType != Undefined && x.DType != Undefined && zp.DType != x.DType {
		return fmt.Errorf("%s dtype %s differs from x's %s", inputDesc(n, 2), zp.DType, x.DType)
	}
	dt := n.Inputs[1].DType
	if od := n.Attrs.Int("output_dtype", 0); od != 0 {
		dt = DType(od)
	}
	if dt != Undefined && !dt.IsFloat() {
		return fmt.Errorf("output dtype %s is not a float type", dt)
	}
	if err := checkQuantParams(n); err != nil {
		return err
	}
	setOutput(n, 0, dt, x.Shape)
	return nil
}

func inferDynamicQuantizeLinear(n *Node) error {
	x := n.Inputs[0]
	if x.DType != Undefined && x.DType != Float32 {
		return fmt.Errorf("%s must be float32, got %s", inputDesc(n, 0), x.DType)
	}
	setOutput(n, 0, Uint8, x.Shape)
	setOutput(n, 1, Float32, []int64{})
	setOutput(n, 2, Uint8, []int64{})
	return nil
}

// int8Operand checks that input i of an integer op is uint8 or int8 (when
// known).
func int8Operand(n *Node, i int) error {
	if v := n.Input(i); v != nil && v.DType != Undefined && v.DType != Uint8 && v.DType != Int8 {
		return fmt.Errorf("%s must be uint8 or int8, got %s", inputDesc(n, i), v.DType)
	}
	return nil
}

// zeroPointOf checks that zero point input zi has the dtype of operand xi.
func zeroPointOf(n *Node, zi, xi int) error {
	z, x := n.Input(zi), n.Input(xi)
	if z != nil && x != nil && z.DType != Undefined && x.DType != Undefined && z.DType != x.DType {
		return fmt.Errorf("%s dtype %s differs from %s's %s", inputDesc(n, zi), z.DType, inputDesc(n, xi), x.DType)
	}
	return nil
}

// integerShape runs the shape function of op (MatMul or Conv2D) on a view
// of n whose inputs a and b get one dtype, and returns the output shape.
func integerShape(n *Node, op string, a, b *Value) ([]int64, error) {
	av, bv := *a, *b
	av.DType, bv.DType = Float32, Float32
	out := &Value{}
	view := &Node{Name: n.Name, Op: op, Inputs: []*Value{&av, &bv}, Outputs: []*Value{out}, Attrs: n.Attrs}
	var err error
	if op == "MatMul" {
		view.Attrs = nil
		err = inferMatMul(view)
	} else {
		err = inferConv(view)
	}
	return out.Shape, err
}

func inferMatMulInteger(n *Node) error { return inferInteger(n, "MatMul") }

func inferConvInteger(n *Node) error { return inferInteger(n, "Conv2D") }

// inferInteger: MatMulInteger and ConvInteger (op MatMul or Conv2D): 8-bit
// operands with zero points of their dtypes, an int32 result.
func inferInteger(n *Node, op string) error {
	for _, c := range [][2]int{{0, -1}, {1, -1}, {2, 0}, {3, 1}} {
		if err := int8Operand(n, c[0]); err != nil {
			return err
		}
		if c[1] >= 0 {
			if err := zeroPointOf(n, c[0], c[1]); err != nil {
				return err
			}
		}
	}
	s, err := integerShape(n, op, n.Inputs[0], n.Inputs[1])
	if err != nil {
		return err
	}
	setOutput(n, 0, Int32, s)
	return nil
}

// qlinearOperands checks the eight QLinearMatMul/QLinearConv operands: a (x),
// b (w) and y are uint8 or int8 with zero points of their dtypes; scales
// float32 or float16. It returns y's dtype.
func qlinearOperands(n *Node) (DType, error) {
	for _, c := range [][2]int{{0, -1}, {3, -1}, {2, 0}, {5, 3}, {7, -1}} {
		if err := int8Operand(n, c[0]); err != nil {
			return Undefined, err
		}
		if c[1] >= 0 {
			if err := zeroPointOf(n, c[0], c[1]); err != nil {
				return Undefined, err
			}
		}
	}
	for _, i := range []int{1, 4, 6} {
		if v := n.Inputs[i]; v.DType != Undefined && v.DType != Float32 && v.DType != Float16 {
			return Undefined, fmt.Errorf("%s must be float32 or float16, got %s", inputDesc(n, i), v.DType)
		}
	}
	return n.Inputs[7].DType, nil
}

func inferQLinearMatMul(n *Node) error {
	dt, err := qlinearOperands(n)
	if err != nil {
		return err
	}
	s, err := integerShape(n, "MatMul", n.Inputs[0], n.Inputs[3])
	if err != nil {
		return err
	}
	setOutput(n, 0, dt, s)
	return nil
}

func inferQLinearConv(n *Node) error {
	dt, err := qlinearOperands(n)
	if err != nil {
		return err
	}
	if b := n.Input(8); b != nil && b.DType != Undefined && b.DType != Int32 {
		return fmt.Errorf("%s must be int32, got %s", inputDesc(n, 8), b.DType)
	}
	s, err := integerShape(n, "Conv2D", n.Inputs[0], n.Inputs[3])
	if err != nil {
		return err
	}
	setOutput(n, 0, dt, s)
	return nil
}

// QDQWeightKept reports whether constant folding should keep DequantizeLinear
// node n although its inputs are constants: n dequantizes the weight (input
// 1) or the bias (Conv2D input 2) of its only reader, a Conv2D or MatMul
// whose result only a QuantizeLinear reads, the QDQ pattern fusion's
// QDQFusion turns into QLinearConv or QLinearMatMul on the quantized
// weight. readers maps values to the nodes reading them (Graph.Consumers).
func QDQWeightKept(n *Node, readers map[*Value][]*Node) bool {
	if n.Op != "DequantizeLinear" || len(n.Outputs) != 1 || n.Outputs[0] == nil {
		return false
	}
	rs := readers[n.Outputs[0]]
	if len(rs) != 1 {
		return false
	}
	c := rs[0]
	if (c.Op != "Conv2D" && c.Op != "MatMul") || len(c.Outputs) != 1 {
		return false
	}
	if c.Input(1) != n.Outputs[0] && (c.Op != "Conv2D" || c.Input(2) != n.Outputs[0]) {
		return false
	}
	q := readers[c.Outputs[0]]
	return len(q) == 1 && q[0].Op == "QuantizeLinear"
}
