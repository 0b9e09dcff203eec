package mindir

// Lowerings of the IR's MatMul (MatMul/Gemm -> MatMulFusion, with the bias
// as a third input) and Einsum to MindSpore primitives. The tables and
// shared helpers are in lower_nn.go, the lifts in lift_nn.go.

import (
	"fmt"

	"gkconv/internal/ir"
)

// ---- MatMul, Einsum ----

// lowerMatMul: MatMul / Gemm -> MatMulFusion (onnx_matmul_parser.cc) with
// the IR's bias as MatMulFusion's third input. Other IR attributes (the
// pack_b hint, ...) are kept as extra primitive attributes, which MindSpore
// keeps as they are and the lift reads back.
func lowerMatMul(c *lowerCtx) (*msNode, error) {
	n := c.n
	ins, ok := inputsUpTo(n, 3)
	if !ok || len(ins) < 2 || len(n.Outputs) != 1 {
		return nil, errNoPrimitive
	}
	// activation_type: MatMulActivationFusion's RELU or RELU6 (ir.AttrActivation,
	// MindSpore's values), which MindSpore Lite's MatMul applies after the bias.
	act := n.Attrs.Int(ir.AttrActivation, msActNone)
	if act != msActNone && act != msActReLU && act != msActReLU6 {
		return nil, fmt.Errorf("mindir: node %s (MatMul): activation_type %d is not writable (MatMulFusion applies RELU and RELU6)", n.Name, act)
	}
	m := &msNode{prim: "MatMulFusion", inputs: ins}
	m.attrs = append(m.attrs,
		aBool("transpose_a", n.Attrs.Int("transpose_a", 0) != 0),
		aBool("transpose_b", n.Attrs.Int("transpose_b", 0) != 0),
		aInt("activation_type", act))
	for _, k := range n.Attrs.Keys() {
		switch k {
		case "transpose_a", "transpose_b", ir.AttrActivation:
			continue
		case "input_names", "output_names", "shape":
			return nil, errNoPrimitive // would read back as MatMulFusion's own
		case ir.AttrPackB:
			// A MindSpore bool, like transpose_a (the IR keeps 0/1).
			m.attrs = append(m.attrs, aBool(k, n.Attrs.Int(k, 0) != 0))
			continue
		}
		a, err := irAttrProto(k, n.Attrs[k])
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", k, err)
		}
		m.attrs = append(m.attrs, a)
	}
	return m, nil
}

// lowerEinsum: Einsum with the equation as a string attribute
// (onnx_einsum_parser.cc).
func lowerEinsum(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !attrsOnly(n, "equation") || !n.Attrs.Has("equation") || len(n.Outputs) != 1 {
		return nil, errNoPrimitive
	}
	for _, v := range n.Inputs {
		if v == nil {
			return nil, errNoPrimitive
		}
	}
	m := &msNode{prim: "Einsum", inputs: n.Inputs, pack: &[2]int{0, len(n.Inputs)}}
	m.attrs = append(m.attrs, aStr("equation", n.Attrs.String("equation", "")))
	return m, nil
}
