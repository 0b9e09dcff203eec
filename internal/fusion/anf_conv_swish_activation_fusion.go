package fusion

import (
	"fmt"

	"gkconv/internal/ir"
)

// ConvSwishActivationFusion (not a converter_lite pass: its
// ConvActivationFusion takes RELU/RELU6 only, the activations MindSpore
// Lite's convolution kernels apply): a Conv2D followed by
//
//	Sigmoid(y)                  -> activation_type SIGMOID
//	Tanh(y)                     -> TANH
//	HSwish(y) (ONNX HardSwish)  -> HSWISH
//	Mul(y, Sigmoid(y)), either operand order (ONNX's SiLU) -> SWISH
//
// becomes one Conv2D with that activation_type (ir.IsEpilogueActivation),
// applied by the runtime's convolution epilogue on each output tile while
// it is in cache, instead of a pass of its own over the conv's output. The
// conv's output must be read by exactly those nodes (the Sigmoid's output
// by the Mul only) and no value of the chain but its last may be a graph
// output. A conv that already has an activation or a residual input
// (ConvElemwiseAddFusion's, which only takes RELU/RELU6 after its Add) is
// left alone. The MindIR writer writes the fused node as Conv2DFusion
// (NO_ACTIVATION) then an Activation with the type, which is what MindSpore
// Lite computes; the reader joins the pair again.
func runConvSwishActivationFusion(st *state) (bool, string, error) {
	g := st.g
	users := g.Consumers()
	outs := graphOutputs(g)
	dead := map[*ir.Node]bool{}
	counts := map[string]int{}
	unary := func(n *ir.Node, v *ir.Value) bool {
		return n.Body == nil && len(n.Attrs) == 0 && len(n.Inputs) == 1 && n.Inputs[0] == v && len(n.Outputs) == 1 && sameOut(n, v)
	}
	for _, conv := range g.Nodes {
		if conv.Op != "Conv2D" || conv.Body != nil || len(conv.Outputs) != 1 || len(conv.Inputs) < 2 ||
			ir.ConvResidual(conv) != nil || dead[conv] {
			continue
		}
		if a, _ := ir.FusedActivation(conv); a != ir.ActNone {
			continue
		}
		v := conv.Outputs[0]
		if outs[v] || v.DType != ir.Float32 || !channelsKnown(v) {
			continue
		}
		var chain []*ir.Node
		act := int64(ir.ActNone)
		switch us := users[v]; len(us) {
		case 1:
			u := us[0]
			if !unary(u, v) {
				continue
			}
			switch u.Op {
			case "Sigmoid":
				act = ir.ActSigmoid
			case "Tanh":
				act = ir.ActTanh
			case "HSwish":
				act = ir.ActHSwish
			default:
				continue
			}
			chain = []*ir.Node{u}
		case 2:
			sig, mul := us[0], us[1]
			if sig.Op != "Sigmoid" {
				sig, mul = mul, sig
			}
			if sig.Op != "Sigmoid" || mul.Op != "Mul" || !unary(sig, v) || mul.Body != nil || len(mul.Outputs) != 1 || !sameOut(mul, v) {
				continue
			}
			s := sig.Outputs[0]
			if outs[s] || len(users[s]) != 1 || users[s][0] != mul {
				continue
			}
			if o, ok := otherOperand(mul, v); !ok || o != s {
				continue
			}
			act, chain = ir.ActSwish, []*ir.Node{sig, mul}
		default:
			continue
		}
		if dead[chain[0]] || dead[chain[len(chain)-1]] {
			continue
		}
		conv.Attrs = conv.Attrs.Clone()
		if conv.Attrs == nil {
			conv.Attrs = ir.Attrs{}
		}
		conv.Attrs[ir.AttrActivation] = ir.IntAttr(act)
		absorb(conv, dead, chain...)
		counts[chain[len(chain)-1].Op]++
	}
	if len(dead) == 0 {
		return false, "no Conv2D + Sigmoid, Tanh, HSwish or Mul(y, Sigmoid(y)) matched", nil
	}
	dropNodes(g, dead)
	return true, fmt.Sprintf("folded into Conv2D's activation: %d SiLU (Mul(y, Sigmoid(y))), %d Sigmoid, %d Tanh, %d HSwish",
		counts["Mul"], counts["Sigmoid"], counts["Tanh"], counts["HSwish"]), nil
}
