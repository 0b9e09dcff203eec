package fusion

import (
	"fmt"
	"slices"

	"gkconv/internal/ir"
)

// ConvElemwiseAddFusion: the residual ending of a ResNet-style block,
//
//	y = Add(Conv2D(x, w, b?), z)   then optionally ReLU, ReLU6, Clip(0), Clip(0, 6)
//
// becomes one Conv2D(x, w, b?, z) with activation_type (ir.ConvResidualInput:
// the runtime adds z in each convolution path's epilogue, between the bias
// and the activation; onnxruntime's FusedConv with its Z input). The conv
// must have no activation of its own, its output only that Add as reader
// and not be a graph output (convTails); z must have exactly the conv
// output's shape and dtype (the Add does not broadcast), and the activation
// is taken only when the Add's output has it as its only reader and is not a
// graph output. When the Add reads two such convs (a downsampling block's
// main and shortcut convs), the first in node order takes the Add and the
// other's output is its residual. The fused conv takes the place of the last
// node of the chain, where z and the conv's own inputs are all computed, so
// a z produced after the conv needs no other reordering.
//
// The MindIR writer writes the fused node as MindSpore Lite expresses it:
// Conv2DFusion (NO_ACTIVATION) then AddFusion with activation_type (what
// converter_lite's AddActivationFusion makes), which the reader joins again.
func runConvElemwiseAddFusion(st *state) (bool, string, error) {
	g := st.g
	users := g.Consumers()
	outs := graphOutputs(g)
	dead := map[*ir.Node]bool{}
	slot := map[*ir.Node]*ir.Node{} // the chain's last node -> the fused conv that takes its place
	moved := map[*ir.Node]bool{}
	acts := 0
	for _, c := range convTails(g) {
		add := c.next
		if dead[add] || add.Op != "Add" || len(c.conv.Inputs) > ir.ConvResidualInput || !sameOut(add, c.out) {
			continue
		}
		z, ok := otherOperand(add, c.out)
		if !ok || z == nil || z.DType != c.out.DType || !z.ShapeKnown() || !slices.Equal(z.Shape, c.out.Shape) {
			continue
		}
		chain := []*ir.Node{add}
		act := int64(ir.ActNone)
		if av := add.Outputs[0]; !outs[av] && len(users[av]) == 1 && !dead[users[av][0]] {
			if next := users[av][0]; sameOut(next, av) {
				if act = activationOf(next, av); act != ir.ActNone {
					chain = append(chain, next)
					acts++
				}
			}
		}
		for len(c.conv.Inputs) < ir.ConvResidualInput {
			c.conv.Inputs = append(c.conv.Inputs, nil) // no bias
		}
		c.conv.Inputs = append(c.conv.Inputs, z)
		if act != ir.ActNone {
			c.conv.Attrs = c.conv.Attrs.Clone()
			if c.conv.Attrs == nil {
				c.conv.Attrs = ir.Attrs{}
			}
			c.conv.Attrs[ir.AttrActivation] = ir.IntAttr(act)
		}
		absorb(c.conv, dead, chain...)
		slot[chain[len(chain)-1]] = c.conv
		moved[c.conv] = true
	}
	if len(slot) == 0 {
		return false, "no Conv2D + Add matched", nil
	}
	kept := make([]*ir.Node, 0, len(g.Nodes))
	for _, n := range g.Nodes {
		switch {
		case slot[n] != nil:
			kept = append(kept, slot[n])
		case dead[n], moved[n]:
		default:
			kept = append(kept, n)
		}
	}
	g.Nodes = kept
	return true, fmt.Sprintf("%d Add folded into Conv2D as its residual input (%d with the ReLU/ReLU6 after it)", len(slot), acts), nil
}
