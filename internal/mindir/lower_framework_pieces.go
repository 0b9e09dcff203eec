package mindir

// The framework form's pieces (lower_framework.go): IR nodes that MindSpore
// 2.7 writes as several nodes, because its primitives lack the IR's fused
// bias, residual or activation, its padding, or its broadcasting, and the
// PadV3 a padded MaxPool becomes.

import (
	"fmt"
	"math"
	"slices"

	"gkconv/internal/ir"
	pb "gkconv/internal/mindir/mindirpb"
)

// frameworkPieces returns the IR nodes n is written as in the framework
// form, when that is more than one: a Conv2D or MatMul with a bias,
// residual or fused activation becomes the bare op then BiasAdd/Add, Add(z)
// and the activation; Clip becomes Maximum then Minimum; a padded or
// ceil_mode MaxPool becomes PadV3(-inf) then an unpadded MaxPool. Each piece
// is an ordinary IR node; the values between them are new.
func frameworkPieces(n *ir.Node) []*ir.Node {
	if n.Op == "Split" {
		return splitUneven(n)
	}
	if len(n.Outputs) != 1 || n.Outputs[0] == nil {
		return nil
	}
	switch n.Op {
	case "Conv2D", "MatMul":
		return splitBiasActivation(n)
	case "Clip":
		return splitClip(n)
	case "MaxPool":
		return splitPaddedMaxPool(n)
	case "DepthToSpace":
		return splitDepthToSpaceCRD(n)
	case "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp":
		return splitReduce(n)
	case "GeLU":
		return splitGeLU(n)
	case "AddN":
		return splitAddN(n)
	case "DequantizeLinear":
		return splitDequantize(n)
	}
	return nil
}

// splitDequantize: MindSpore has no DequantizeLinear primitive; with
// constant scale and zero point (per tensor or per axis, not blocked) it is
// Cast(x, float32), Sub(zero point, when one is not 0) and Mul(scale), the
// scale and zero point shaped to broadcast along the axis: the same float32
// arithmetic, so WEIGHT_QUANT's int8 weights run in MindSpore as stored.
func splitDequantize(n *ir.Node) []*ir.Node {
	x, s, zp := n.Input(0), n.Input(1), n.Input(2)
	out := n.Outputs[0]
	if x == nil || s == nil || s.Const == nil || s.DType != ir.Float32 || out.DType != ir.Float32 || x.Shape == nil ||
		n.Attrs.Int("block_size", 0) != 0 || (zp != nil && zp.Const == nil) {
		return nil
	}
	rank := len(x.Shape)
	bshape := []int64{}
	if len(s.Shape) == 1 && rank > 0 {
		axis := n.Attrs.Int("axis", 1)
		if axis < 0 {
			axis += int64(rank)
		}
		if axis < 0 || axis >= int64(rank) {
			return nil
		}
		bshape = make([]int64, rank)
		for i := range bshape {
			bshape[i] = 1
		}
		bshape[axis] = s.Shape[0]
	} else if len(s.Shape) != 0 {
		return nil
	}
	konst := func(what string, t *ir.Tensor) *ir.Value {
		t = &ir.Tensor{DType: t.DType, Shape: bshape, Data: t.Data}
		return &ir.Value{Name: n.Name + "/" + what, DType: t.DType, Shape: bshape, Const: t}
	}
	ch := &chain{n: n, cur: x}
	ch.step("Cast", ir.Attrs{"to": ir.IntAttr(int64(ir.Float32))})
	if zp != nil {
		zs, err := zp.Const.Float64s()
		if err != nil {
			return nil
		}
		zf := ir.NewTensor(ir.Float32, zp.Shape)
		nonzero := false
		for i, z := range zs {
			zf.F32()[i] = float32(z)
			nonzero = nonzero || z != 0
		}
		if nonzero {
			ch.step("Sub", ir.Attrs{}, konst("zero_point", zf))
		}
	}
	ch.step("Mul", ir.Attrs{}, konst("scale", s.Const))
	return ch.finish()
}

// splitAddN: ONNX's Sum broadcasts its operands, MindSpore's AddN does
// not: a chain of Adds, in operand order.
func splitAddN(n *ir.Node) []*ir.Node {
	if len(n.Inputs) < 2 || len(n.Attrs) > 0 || slices.Contains(n.Inputs, nil) {
		return nil
	}
	ch := &chain{n: n, cur: n.Inputs[0]}
	for _, v := range n.Inputs[1:] {
		ch.step("Add", ir.Attrs{}, v)
	}
	return ch.finish()
}

// splitGeLU: the exact GeLU, x·(1 + erf(x/√2))/2, as ONNX defines it
// (MindSpore's GeLU primitive is the tanh approximation).
func splitGeLU(n *ir.Node) []*ir.Node {
	x := n.Inputs[0]
	if len(n.Inputs) != 1 || x == nil || n.Attrs.String("approximate", "none") != "none" || x.DType != ir.Float32 {
		return nil
	}
	scalar := func(what string, v float32) *ir.Value {
		return &ir.Value{Name: n.Name + "/" + what, DType: ir.Float32, Shape: []int64{}, Const: ir.Float32Tensor([]int64{}, v)}
	}
	ch := &chain{n: n, cur: x}
	ch.step("Mul", ir.Attrs{}, scalar("rsqrt2", float32(1/math.Sqrt2)))
	ch.step("Erf", ir.Attrs{})
	ch.step("Add", ir.Attrs{}, scalar("one", 1))
	ch.step("Mul", ir.Attrs{}, x)
	ch.step("Mul", ir.Attrs{}, scalar("half", 0.5))
	return ch.finish()
}

// splitUneven: MindSpore's Split cuts equal parts only (lowerFwSplit), so
// a Split into parts of different sizes is one Slice per output (a
// StridedSlice each); a converter_lite Split with size_splits in a
// mind_ir_version 3 file crashed MindSpore 2.7.2 (SIGSEGV).
func splitUneven(n *ir.Node) []*ir.Node {
	x := n.Inputs[0]
	if x == nil || !x.ShapeKnown() || len(n.Outputs) < 2 {
		return nil
	}
	r := int64(len(x.Shape))
	axis := n.Attrs.Int("axis", 0)
	if axis < -r || axis >= r {
		return nil
	}
	if axis < 0 {
		axis += r
	}
	equal := true
	var off int64
	var pieces []*ir.Node
	for i, o := range n.Outputs {
		if o == nil || !o.ShapeKnown() {
			return nil
		}
		d := o.Shape[axis]
		equal = equal && d*int64(len(n.Outputs)) == x.Shape[axis]
		konst := func(what string, v int64) *ir.Value {
			return &ir.Value{Name: fmt.Sprintf("%s/%s_%d", n.Name, what, i), DType: ir.Int64, Shape: []int64{1}, Const: ir.Int64Tensor([]int64{1}, v)}
		}
		pieces = append(pieces, &ir.Node{Name: fmt.Sprintf("%s/Slice_%d", n.Name, i), Op: "Slice",
			Inputs: []*ir.Value{x, konst("start", off), konst("end", off+d), konst("axis", axis)}, Outputs: []*ir.Value{o}, Provenance: n.Provenance})
		off += d
	}
	if equal || off != x.Shape[axis] {
		return nil
	}
	return pieces
}

// splitReduce writes the reductions MindSpore has no primitive for as the
// ONNX definitions: L1 = ReduceSum(Abs), L2 = Sqrt(ReduceSum(Square)),
// SumSquare = ReduceSum(Square), LogSum = Log(ReduceSum), LogSumExp =
// Log(ReduceSum(Exp)) (ONNX's own expansion; no max subtraction, so it
// overflows where the reference does).
func splitReduce(n *ir.Node) []*ir.Node {
	x := n.Inputs[0]
	if x == nil || !x.DType.IsFloat() || len(n.Inputs) > 2 {
		return nil
	}
	ch := &chain{n: n, cur: x}
	pre := map[string]string{"ReduceL1": "Abs", "ReduceL2": "Square", "ReduceSumSquare": "Square", "ReduceLogSumExp": "Exp"}[n.Op]
	if pre != "" {
		ch.stepShape(pre, x.Shape, ir.Attrs{})
	}
	ch.step("ReduceSum", n.Attrs.Clone(), n.Inputs[1:]...)
	switch n.Op {
	case "ReduceL2":
		ch.step("Sqrt", ir.Attrs{})
	case "ReduceLogSum", "ReduceLogSumExp":
		ch.step("Log", ir.Attrs{})
	}
	return ch.finish()
}

// splitDepthToSpaceCRD: MindSpore's DepthToSpace has DCR order only, so
// CRD is ONNX's definition: Reshape [N, C/b², b, b, H, W], Transpose
// (0,1,4,2,5,3), Reshape [N, C/b², H·b, W·b].
func splitDepthToSpaceCRD(n *ir.Node) []*ir.Node {
	x := n.Inputs[0]
	b := n.Attrs.Int("blocksize", 0)
	if n.Attrs.String("mode", "DCR") != "CRD" || x == nil || len(x.Shape) != 4 || !x.ShapeKnown() || b <= 0 {
		return nil
	}
	N, C, H, W := x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
	if C%(b*b) != 0 {
		return nil
	}
	ch := &chain{n: n, cur: x}
	ch.stepShape("Reshape", []int64{N, C / (b * b), b, b, H, W}, ir.Attrs{})
	ch.stepShape("Transpose", []int64{N, C / (b * b), H, b, W, b}, ir.Attrs{"perm": ir.IntsAttr(0, 1, 4, 2, 5, 3)})
	ch.step("Reshape", ir.Attrs{})
	return ch.finish()
}

// chain builds pieces: each step reads the previous step's output; the
// last produces n's output.
type chain struct {
	n      *ir.Node
	pieces []*ir.Node
	cur    *ir.Value
}

func (ch *chain) step(op string, attrs ir.Attrs, extra ...*ir.Value) {
	ch.stepShape(op, ch.n.Outputs[0].Shape, attrs, extra...)
}

// stepShape is step for a piece whose output has the given shape (n's
// output dtype).
func (ch *chain) stepShape(op string, shape []int64, attrs ir.Attrs, extra ...*ir.Value) {
	out := &ir.Value{Name: ch.n.Name + "/" + op, DType: ch.n.Outputs[0].DType, Shape: shape}
	p := &ir.Node{Name: ch.n.Name + "/" + op, Op: op, Attrs: attrs, Inputs: append([]*ir.Value{ch.cur}, extra...),
		Outputs: []*ir.Value{out}, Provenance: ch.n.Provenance}
	out.Producer = p
	ch.pieces = append(ch.pieces, p)
	ch.cur = out
}

// finish makes the last piece produce n's own output.
func (ch *chain) finish() []*ir.Node {
	last := ch.pieces[len(ch.pieces)-1]
	last.Outputs = ch.n.Outputs
	last.Name = ch.n.Name
	return ch.pieces
}

var activationOps = map[int64]string{ir.ActReLU: "ReLU", ir.ActReLU6: "ReLU6", ir.ActSigmoid: "Sigmoid", ir.ActTanh: "Tanh", ir.ActHSwish: "HSwish"}

func splitBiasActivation(n *ir.Node) []*ir.Node {
	act, ok := ir.FusedActivation(n)
	if !ok {
		return nil
	}
	actOp, known := activationOps[act]
	if act != ir.ActNone && !known && act != ir.ActSwish {
		return nil
	}
	var bias, z *ir.Value
	if len(n.Inputs) > 2 {
		bias = n.Inputs[2]
	}
	if n.Op == "Conv2D" {
		z = ir.ConvResidual(n)
	} else if len(n.Inputs) > 3 {
		return nil
	}
	if bias == nil && z == nil && act == ir.ActNone {
		return nil
	}
	core := &ir.Node{Name: n.Name + "/" + n.Op, Op: n.Op, Attrs: n.Attrs.Clone(), Inputs: n.Inputs[:2], Provenance: n.Provenance}
	delete(core.Attrs, ir.AttrActivation)
	delete(core.Attrs, "pack_b")
	out := &ir.Value{Name: core.Name, DType: n.Outputs[0].DType, Shape: n.Outputs[0].Shape, Producer: core}
	core.Outputs = []*ir.Value{out}
	ch := &chain{n: n, pieces: []*ir.Node{core}, cur: out}
	if bias != nil {
		if n.Op == "Conv2D" {
			ch.step("BiasAdd", ir.Attrs{}, bias)
		} else {
			ch.step("Add", ir.Attrs{}, bias)
		}
	}
	if z != nil {
		ch.step("Add", ir.Attrs{}, z)
	}
	switch {
	case act == ir.ActSwish:
		x := ch.cur
		ch.step("Sigmoid", ir.Attrs{})
		ch.step("Mul", ir.Attrs{}, x)
	case act != ir.ActNone:
		ch.step(actOp, ir.Attrs{})
	}
	return ch.finish()
}

func splitClip(n *ir.Node) []*ir.Node {
	if len(n.Attrs) > 0 || len(n.Inputs) > 3 || n.Inputs[0] == nil {
		return nil
	}
	ch := &chain{n: n, cur: n.Inputs[0]}
	if len(n.Inputs) > 1 && n.Inputs[1] != nil {
		ch.step("Maximum", ir.Attrs{}, n.Inputs[1])
	}
	if len(n.Inputs) == 3 && n.Inputs[2] != nil {
		ch.step("Minimum", ir.Attrs{}, n.Inputs[2])
	}
	if len(ch.pieces) == 0 {
		ch.step("Identity", ir.Attrs{}) // no bounds: ONNX's Clip is the identity
	}
	return ch.finish()
}

// splitPaddedMaxPool: MindSpore's MaxPool pads only by SAME (extra at the
// end), so ONNX's explicit pads, and ceil_mode's extra windows, become a
// PadV3 of -inf: the maximum over a window is unchanged by -inf entries, and
// every window ONNX counts holds at least one element of x.
func splitPaddedMaxPool(n *ir.Node) []*ir.Node {
	x := n.Inputs[0]
	if len(n.Inputs) != 1 || len(x.Shape) != 4 || (x.DType != ir.Float32 && x.DType != ir.Float64) || n.Attrs.Has("dilations") ||
		n.Attrs.String("auto_pad", "NOTSET") != "NOTSET" || !n.Outputs[0].ShapeKnown() || !x.ShapeKnown() {
		return nil
	}
	p := n.Attrs.Ints("pads", []int64{0, 0, 0, 0})
	k, _ := twoInts(n, "kernel_shape", 0)
	s, _ := twoInts(n, "strides", 1)
	if len(p) != 4 || k[0] == 0 {
		return nil
	}
	out := n.Outputs[0].Shape
	// The padded extent the unpadded pool needs for ONNX's output size.
	extra := func(i int) int64 {
		need := (out[2+i]-1)*s[i] + k[i]
		return max(need-(x.Shape[2+i]+p[i]+p[i+2]), 0)
	}
	eh, ew := extra(0), extra(1)
	if p[0] == 0 && p[1] == 0 && p[2]+eh == 0 && p[3]+ew == 0 {
		if n.Attrs.Int("ceil_mode", 0) == 0 {
			return nil
		}
		// ceil_mode that adds no window: the floor-mode pool.
		pool := &ir.Node{Name: n.Name, Op: "MaxPool", Attrs: n.Attrs.Clone(), Inputs: n.Inputs, Outputs: n.Outputs, Provenance: n.Provenance}
		delete(pool.Attrs, "ceil_mode")
		return []*ir.Node{pool}
	}
	// PadV3's paddings run from the last dim: (left, right, top, bottom).
	pads := []int64{p[1], p[3] + ew, p[0], p[2] + eh}
	padded := &ir.Value{Name: n.Name + "/PadV3", DType: x.DType,
		Shape: []int64{x.Shape[0], x.Shape[1], x.Shape[2] + p[0] + p[2] + eh, x.Shape[3] + p[1] + p[3] + ew}}
	pad := &ir.Node{Name: n.Name + "/PadV3", Op: opPadV3, Attrs: ir.Attrs{"paddings": ir.IntsAttr(pads...)},
		Inputs: []*ir.Value{x}, Outputs: []*ir.Value{padded}, Provenance: n.Provenance}
	padded.Producer = pad
	pool := &ir.Node{Name: n.Name, Op: "MaxPool", Attrs: n.Attrs.Clone(), Inputs: []*ir.Value{padded}, Outputs: n.Outputs, Provenance: n.Provenance}
	delete(pool.Attrs, "pads")
	delete(pool.Attrs, "ceil_mode")
	return []*ir.Node{pad, pool}
}

// negInf is a scalar -inf of float dtype dt (nil for other dtypes).
func negInf(dt ir.DType) *ir.Tensor {
	t := ir.NewTensor(dt, []int64{})
	switch dt {
	case ir.Float32:
		t.F32()[0] = float32(math.Inf(-1))
	case ir.Float64:
		t.F64()[0] = math.Inf(-1)
	default:
		return nil
	}
	return t
}

// lowerFwPad: the PadV3 a split MaxPool makes (its paddings already in
// PadV3's order), in MindSpore's attribute form.
func lowerFwPad(c *lowerCtx) (*msNode, error) {
	n := c.n
	x := n.Inputs[0]
	m := (&msNode{prim: "PadV3", inputs: []*ir.Value{x}}).with(vInts(n.Attrs.Ints("paddings", nil)...))
	m.inputs = append(m.inputs, c.konst("neg_inf", negInf(x.DType)))
	m.attrs = []*pb.AttributeProto{aStr("mode", "constant"), aBool("paddings_contiguous", true)}
	return m, nil
}
