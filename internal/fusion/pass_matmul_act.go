package fusion

import (
	"fmt"

	"gkconv/internal/ir"
)

// MatMulActivationFusion (converter_lite's matmul_activation_fusion.cc):
// a float32 MatMul, with or without the bias MatMulAddFusion folded into
// it, whose output only a ReLU, ReLU6, Clip(0) or Clip(0, 6) reads becomes
// one MatMul with activation_type RELU or RELU6 (ir.AttrActivation), the
// two converter_lite's pass accepts and MindSpore Lite's MatMul kernels
// apply after the bias. The CPU runtime's packed GEMM applies it to each
// block of C right after computing it (while in L1), the unpacked MatMul
// after the product; the MindIR writer writes it as MatMulFusion's
// activation_type.
//
// converter_lite replaces the activation with the MatMul without looking at
// the MatMul's other readers, which would apply the activation for them
// too; here, as in ConvActivationFusion, a MatMul whose output another node
// reads or that is a graph output is left alone. A MatMul that already has
// an activation is too.
func runMatMulActivationFusion(st *state) (bool, string, error) {
	g := st.g
	users := g.Consumers()
	outs := graphOutputs(g)
	dead := map[*ir.Node]bool{}
	counts := map[int64]int{}
	for _, n := range g.Nodes {
		if n.Op != "MatMul" || n.Body != nil || len(n.Outputs) != 1 || len(n.Inputs) < 2 || dead[n] {
			continue
		}
		v := n.Outputs[0]
		if outs[v] || len(users[v]) != 1 || v.DType != ir.Float32 {
			continue
		}
		if a, _ := ir.FusedActivation(n); a != ir.ActNone {
			continue
		}
		next := users[v][0]
		act := activationOf(next, v)
		if act == ir.ActNone || dead[next] || !sameOut(next, v) {
			continue
		}
		n.Attrs = n.Attrs.Clone()
		if n.Attrs == nil {
			n.Attrs = ir.Attrs{}
		}
		n.Attrs[ir.AttrActivation] = ir.IntAttr(act)
		absorb(n, dead, next)
		counts[act]++
	}
	if len(dead) == 0 {
		return false, "no MatMul + ReLU/ReLU6 matched", nil
	}
	dropNodes(g, dead)
	return true, fmt.Sprintf("folded into MatMul's activation: %d RELU, %d RELU6", counts[ir.ActReLU], counts[ir.ActReLU6]), nil
}
