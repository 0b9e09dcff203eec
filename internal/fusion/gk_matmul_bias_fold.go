package fusion

import (
	"fmt"
	"slices"

	"gkconv/internal/ir"
)

// matmul_bias_fold (preprocess, level 2, CPU): MindSpore's simplify rule
// Add(MatMul(A,B),C) = MatMul(A,B,C) (MindSpore Lite's MatMulFusion has the
// bias input) applied to the whole graph before clustering. A bias Add or
// BiasAdd that alone reads a float32 MatMul with a constant B and adds one
// constant per output column becomes the MatMul's third input. The runtime
// adds it to each finished output tile, so the result rounds exactly as
// MatMul then Add, and:
//   - the Add's pass over the product is gone;
//   - the elementwise op that used to follow the bias Add (a residual Add,
//     GeLU) now reads the product over an injective edge, so the split
//     model lets a reduction absorb it (a residual Add joins its LayerNorm).
//
// MatMuls that enable_cluster_ops makes clusterable are left alone: the
// kernel generators take two-input MatMuls only.
func runMatMulBiasFold(st *state) (bool, string, error) {
	g := st.g
	valid := map[string]bool{}
	for _, op := range st.flags.ValidClusterOps(clusterTable, st.backend) {
		valid[op] = true
	}
	if valid["MatMul"] {
		return false, "MatMul is clusterable (enable_cluster_ops): its bias stays an Add", nil
	}
	users := g.Consumers()
	graphOut := graphOutputs(g)
	folded := map[*ir.Node]bool{}
	for _, n := range g.Nodes {
		if n.Op != "MatMul" || len(n.Inputs) != 2 || len(n.Outputs) != 1 || n.Body != nil {
			continue
		}
		if n.Attrs.Has(ir.AttrActivation) { // an Add after it comes after the activation
			continue
		}
		v := n.Outputs[0]
		b := n.Inputs[1]
		if graphOut[v] || len(users[v]) != 1 || v.DType != ir.Float32 || !v.ShapeKnown() || len(v.Shape) == 0 ||
			b == nil || !b.IsConst() || len(b.Const.Shape) != 2 { // a 1-D B drops the column axis
			continue
		}
		add := users[v][0]
		bias, ok := biasOperand(add, v)
		if !ok || !ir.IsRowBias(bias, v.Shape[len(v.Shape)-1]) {
			continue
		}
		out := add.Outputs[0]
		if out.DType != ir.Float32 || !slices.Equal(out.Shape, v.Shape) {
			continue
		}
		n.Inputs = append(n.Inputs, bias)
		out.Producer, out.OutIndex = n, 0
		n.Outputs[0] = out
		n.Provenance = append(n.Provenance, add.Provenance...)
		folded[add] = true
	}
	if len(folded) == 0 {
		return false, "no bias Add reads a MatMul with constant B alone", nil
	}
	dropNodes(g, folded)
	return true, fmt.Sprintf("%d bias Add folded into MatMul", len(folded)), nil
}

// biasOperand returns the operand of add other than v when add is a plain
// Add, or a BiasAdd whose channel axis is the last one.
func biasOperand(add *ir.Node, v *ir.Value) (*ir.Value, bool) {
	if len(add.Inputs) != 2 || len(add.Outputs) != 1 || add.Body != nil {
		return nil, false
	}
	switch add.Op {
	case "Add":
		if add.Inputs[0] == v && add.Inputs[1] != v {
			return add.Inputs[1], true
		}
		if add.Inputs[1] == v && add.Inputs[0] != v {
			return add.Inputs[0], true
		}
	case "BiasAdd":
		f := add.Attrs.String("format", add.Attrs.String("data_format", "NCHW"))
		last := len(v.Shape) <= 2 || f == "NHWC"
		if add.Inputs[0] == v && add.Inputs[1] != v && last {
			return add.Inputs[1], true
		}
	}
	return nil, false
}
