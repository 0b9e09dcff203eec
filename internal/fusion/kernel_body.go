package fusion

import (
	"fmt"
	"slices"

	"gkconv/internal/ir"
)

// Helpers of the passes that rewrite kernel bodies: arithmetic_simplify,
// transform_op_optimizer and graph_kernel_cse.

// emitLike adds a typed node of op to the body e edits, in place of like: it
// is named after like and takes its provenance and expand_from. It returns
// the node's output, or nil when its shape function fails. The node is
// appended; the body is re-sorted after a rewrite.
func emitLike(e *ir.Editor, like *ir.Node, op string, attrs ir.Attrs, ins ...*ir.Value) *ir.Value {
	name := e.Unique(fmt.Sprintf("%s/s%d_%s", like.Name, e.Seq(), op))
	n := ir.NewNode(name, op, ins, attrs.Clone(), name)
	n.Provenance = append([]string(nil), like.Provenance...)
	if like.Attrs.Has(ir.GKExpandFrom) {
		n.Attrs[ir.GKExpandFrom] = like.Attrs[ir.GKExpandFrom]
	}
	if e.Emit(n) != nil {
		return nil
	}
	return n.Outputs[0]
}

// bodyEditor edits a kernel body; SoleUse answers from the uses at the start
// (and after each e.RefreshUses).
func bodyEditor(b *ir.Graph) *ir.Editor {
	e := ir.NewEditor(b)
	e.RefreshUses()
	return e
}

// prod is v's producer when it is an op node, else nil.
func prod(v *ir.Value, op string) *ir.Node {
	if v == nil || v.Producer == nil || v.Producer.Op != op {
		return nil
	}
	return v.Producer
}

// keepsShape: returning x for n's output must not change dtype or shape.
func keepsShape(x *ir.Value, n *ir.Node) *ir.Value {
	if x == nil || x.DType != n.Outputs[0].DType || !slices.Equal(x.Shape, n.Outputs[0].Shape) {
		return nil
	}
	return x
}

// pruneKernelInputs drops kernel inputs the body no longer reads.
func pruneKernelInputs(k *ir.Node) {
	used := map[*ir.Value]bool{}
	for _, n := range k.Body.Nodes {
		for _, v := range n.Inputs {
			used[v] = true
		}
	}
	for _, o := range k.Body.Outputs {
		used[o] = true
	}
	var ins, outer []*ir.Value
	for i, v := range k.Body.Inputs {
		if used[v] {
			ins = append(ins, v)
			outer = append(outer, k.Inputs[i])
		}
	}
	k.Body.Inputs, k.Inputs = ins, outer
}
