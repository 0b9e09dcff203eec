package mindir

import (
	"gkconv/internal/ir"
	pb "gkconv/internal/mindir/mindirpb"
)

// MindSpore's own primitive forms (as MindSpore 2.x exports them, e.g.
// ../shared/corpus/mindir/mnist.mindir), used for nodes read from a
// MindSpore file (ir.SourcePrimitive) so a MindIR -> MindIR conversion keeps
// the model's primitives. Each returns errNoPrimitive when the node does not
// fit the form, and the converter_lite lowering is used instead.
var lowerCoreTable = map[string]lowerFunc{
	"Conv2D":  lowerCoreConv2D,
	"MaxPool": lowerCorePool,
	"AvgPool": lowerCorePool,
	"MatMul":  lowerCoreMatMul,
	"BiasAdd": lowerCoreBiasAdd,
	"ReLU":    lowerCoreUnary,
	"Flatten": lowerCoreUnary,
	"Reshape": lowerCoreReshape,
	"Add":     lowerCoreBinary,
	"Sub":     lowerCoreBinary,
	"Mul":     lowerCoreBinary,
	"RealDiv": lowerCoreBinary,
}

func names(in []string, out ...string) []*pb.AttributeProto {
	if len(out) == 0 {
		out = []string{"output"}
	}
	return []*pb.AttributeProto{aStrs("input_names", in...), aStrs("output_names", out...)}
}

// spatialPads returns MindSpore's pad list [top, bottom, left, right] and
// pad_mode for a 2-D ONNX-style node. auto_pad SAME_UPPER (left for run time
// when the input dims are dynamic) is MindSpore's "same": both put
// floor(total/2) first and the rest last.
func spatialPads(n *ir.Node) ([]int64, string, bool) {
	if ap := n.Attrs.String("auto_pad", "NOTSET"); ap == "SAME_UPPER" && !n.Attrs.Has("pads") {
		return []int64{0, 0, 0, 0}, "same", true
	} else if ap != "NOTSET" && ap != "VALID" {
		return nil, "", false
	}
	p := n.Attrs.Ints("pads", []int64{0, 0, 0, 0})
	if len(p) != 4 {
		return nil, "", false
	}
	list := []int64{p[0], p[2], p[1], p[3]}
	for _, x := range list {
		if x != 0 {
			return list, "pad", true
		}
	}
	return list, "valid", true
}

func twoInts(n *ir.Node, name string, def int64) ([]int64, bool) {
	v := n.Attrs.Ints(name, []int64{def, def})
	return v, len(v) == 2
}

func lowerCoreConv2D(c *lowerCtx) (*msNode, error) {
	n := c.n
	x, w := c.in(0), c.in(1)
	if len(n.Inputs) != 2 || w == nil || len(w.Shape) != 4 || len(x.Shape) != 4 {
		return nil, errNoPrimitive
	}
	k, ok1 := twoInts(n, "kernel_shape", 0)
	if k[0] == 0 {
		k = []int64{w.Shape[2], w.Shape[3]}
	}
	s, ok2 := twoInts(n, "strides", 1)
	d, ok3 := twoInts(n, "dilations", 1)
	pads, mode, ok4 := spatialPads(n)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return nil, errNoPrimitive
	}
	if n.Attrs.Has(ir.AttrActivation) {
		return nil, errNoPrimitive // MindSpore's Conv2D has no fused activation: Conv2DFusion
	}
	g := n.Attrs.Int("group", 1)
	m := &msNode{prim: "Conv2D", inputs: n.Inputs, core: true}
	m.attrs = append(m.attrs,
		aInts("kernel_size", k...), aInt("mode", 1), aInt("out_channel", w.Shape[0]),
		aInts("pad", pads...), aStr("pad_mode", mode), aStr("format", "NCHW"), aInts("pad_list", pads...),
		aInt("groups", g), aInts("stride", 1, 1, s[0], s[1]), aInt("group", g), aInts("dilation", 1, 1, d[0], d[1]))
	m.attrs = append(m.attrs, names([]string{"x", "w"})...)
	return m, nil
}

// unpaddedPool returns the kernel and strides of a 2-D pool without pads,
// dilations or ceil_mode (MindSpore's MaxPool/AvgPool have no explicit pads).
func unpaddedPool(c *lowerCtx) (k, s []int64, ok bool) {
	n := c.n
	if len(n.Inputs) != 1 || len(n.Outputs) != 1 || n.Attrs.Int("ceil_mode", 0) != 0 || len(c.in(0).Shape) != 4 {
		return nil, nil, false
	}
	k, ok1 := twoInts(n, "kernel_shape", 0)
	s, ok2 := twoInts(n, "strides", 1)
	_, mode, ok3 := spatialPads(n)
	return k, s, ok1 && ok2 && ok3 && mode == "valid" && !n.Attrs.Has("dilations")
}

func lowerCorePool(c *lowerCtx) (*msNode, error) {
	n := c.n
	k, s, ok := unpaddedPool(c)
	if !ok {
		return nil, errNoPrimitive
	}
	return corePool(n, k, s, "VALID"), nil
}

// corePool is MindSpore's attribute-form MaxPool/AvgPool of node n.
func corePool(n *ir.Node, k, s []int64, padMode string) *msNode {
	m := &msNode{prim: n.Op, inputs: n.Inputs, core: true}
	m.attrs = append(m.attrs, aStr("pad_mode", padMode), aInts("kernel_size", 1, 1, k[0], k[1]), aStr("format", "NCHW"),
		aInts("strides", 1, 1, s[0], s[1]))
	m.attrs = append(m.attrs, names([]string{"x"})...)
	return m
}

func lowerCoreMatMul(c *lowerCtx) (*msNode, error) {
	n := c.n
	if len(n.Inputs) != 2 || len(c.in(0).Shape) != 2 || len(c.in(1).Shape) != 2 {
		return nil, errNoPrimitive
	}
	for k := range n.Attrs {
		if k != "transpose_a" && k != "transpose_b" {
			return nil, errNoPrimitive
		}
	}
	ta, tb := n.Attrs.Int("transpose_a", 0) != 0, n.Attrs.Int("transpose_b", 0) != 0
	m := &msNode{prim: "MatMul", inputs: n.Inputs, core: true}
	m.attrs = append(m.attrs, aBool("transpose_a", ta), aBool("transpose_x2", tb), aBool("transpose_x1", ta), aBool("transpose_b", tb))
	m.attrs = append(m.attrs, names([]string{"x1", "x2"})...)
	return m, nil
}

func lowerCoreBiasAdd(c *lowerCtx) (*msNode, error) {
	n := c.n
	f := n.Attrs.String("format", "NCHW")
	if len(n.Inputs) != 2 || f != "NCHW" {
		return nil, errNoPrimitive
	}
	m := &msNode{prim: "BiasAdd", inputs: n.Inputs, core: true}
	m.attrs = append(m.attrs, aStr("format", f), aStr("data_format", f))
	m.attrs = append(m.attrs, names([]string{"x", "b"})...)
	return m, nil
}

func lowerCoreUnary(c *lowerCtx) (*msNode, error) {
	n := c.n
	if len(n.Inputs) != 1 {
		return nil, errNoPrimitive
	}
	for k, a := range n.Attrs {
		if !(n.Op == "Flatten" && k == "axis" && a.Kind == ir.AttrInt && a.I == 1) {
			return nil, errNoPrimitive
		}
	}
	m := &msNode{prim: n.Op, inputs: n.Inputs, core: true}
	if n.Op == "ReLU" {
		m.attrs = names([]string{"x"})
	}
	return m, nil
}

func lowerCoreBinary(c *lowerCtx) (*msNode, error) {
	n := c.n
	if len(n.Inputs) != 2 || len(n.Attrs) > 0 {
		return nil, errNoPrimitive
	}
	m := &msNode{prim: n.Op, inputs: n.Inputs, core: true}
	m.attrs = names([]string{"x", "y"})
	return m, nil
}

// lowerCoreReshape: MindSpore's Reshape(tensor, shape) takes -1 but has no
// ONNX "0 copies the input dim", so a shape holding 0 keeps the Lite form.
func lowerCoreReshape(c *lowerCtx) (*msNode, error) {
	n := c.n
	shape, ok := c.constInts(1)
	if len(n.Inputs) != 2 || !ok || n.Attrs.Int("allowzero", 0) != 0 {
		return nil, errNoPrimitive
	}
	for _, d := range shape {
		if d == 0 {
			return nil, errNoPrimitive
		}
	}
	for k := range n.Attrs {
		if k != "allowzero" {
			return nil, errNoPrimitive
		}
	}
	m := &msNode{prim: "Reshape", inputs: n.Inputs, core: true}
	m.attrs = names([]string{"tensor", "shape"})
	return m, nil
}
