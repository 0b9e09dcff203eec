package convert

import (
	"context"
	"fmt"
	"slices"

	"gkconv/internal/akgcfg"
	"gkconv/internal/ir"
)

// dynamicQuant: DYNAMIC_QUANT (converter_lite's ALWC strategy: activations
// per layer, weights per channel), in the form onnxruntime's
// quantize_dynamic writes. Each MatMul (Gemm) with a constant float weight
// above the thresholds becomes
//
//	x -> DynamicQuantizeLinear -> (x_q uint8, x_scale, x_zero_point)
//	MatMulInteger(x_q, W_q int8 [K,N], x_zero_point) -> Cast(float32)
//	   -> Mul(x_scale * w_scale[N]) [-> Add(bias)]
//
// The activation range is measured at run time per tensor (so there is no
// calibration), the weight is int8 symmetric per output column. The
// runtime runs MatMulInteger -> Cast -> Mul -> Add as one integer GEMM with
// a float epilogue (runtime/quantchain.go).
func dynamicQuant(ctx context.Context, g *ir.Graph, q *akgcfg.QuantConfig, modelFile string, rq *ReportQuantization) error {
	e := ir.NewEditor(g)
	quantized := map[*ir.Value]*dynWeight{}
	changed := false
	for _, n := range slices.Clone(g.Nodes) {
		if err := ctx.Err(); err != nil {
			return &Error{Code: CodeError, Err: err}
		}
		if n.Op == "Conv2D" {
			rq.KeptFloat = append(rq.KeptFloat, ReportQuantKept{Name: n.Name, Op: n.Op,
				Reason: "DYNAMIC_QUANT quantizes MatMul/Gemm weights only (use FULL_QUANT or WEIGHT_QUANT for convolutions)"})
			continue
		}
		w, _, reason := weightCandidate(n, q)
		if w == nil && reason == "" {
			continue
		}
		if reason == "" {
			reason = dynamicBlocker(n)
		}
		if reason != "" {
			rq.KeptFloat = append(rq.KeptFloat, ReportQuantKept{Name: n.Name, Op: n.Op, Reason: reason})
			continue
		}
		dw := quantized[w]
		node := ReportQuantNode{Name: n.Name, Op: n.Op}
		transB := n.Attrs.Int("transpose_b", 0) != 0
		if dw == nil {
			kn := w.Const
			if transB {
				kn = transpose2D(w.Const)
			}
			qt, scale, relErr, err := quantizeWeight(kn, 1, 8, q.PerChannel)
			if err != nil {
				return Errorf(CodeError, "%s: node %s (%s): quantizing weight %s: %v", modelFile, n.Name, n.Op, w.Name, err)
			}
			dw = &dynWeight{q: e.Const(w.Name+"_quant", qt), scale: e.Const(w.Name+"_scale", scale)}
			quantized[w] = dw
			rq.WeightBytesBefore += int64(len(w.Const.Data))
			rq.WeightBytesAfter += int64(len(qt.Data) + len(scale.Data))
			node.WeightMaxError = relErr
		}
		node.WeightChannels = int(dw.scale.Const.NumElements())
		if err := replaceDynamic(e, g, n, dw); err != nil {
			return Errorf(CodeError, "%s: node %s (%s): %v", modelFile, n.Name, n.Op, err)
		}
		rq.Quantized = append(rq.Quantized, node)
		changed = true
	}
	if !changed {
		return nil
	}
	if err := g.TopoSort(); err != nil {
		return Errorf(CodeError, "internal error after DYNAMIC_QUANT: %v", err)
	}
	g.RemoveDead()
	return nil
}

type dynWeight struct{ q, scale *ir.Value }

// dynamicBlocker says why a MatMul with a quantizable weight stays float
// ("" when it does not).
func dynamicBlocker(n *ir.Node) string {
	if n.Attrs.Int("transpose_a", 0) != 0 {
		return "transpose_a (MatMulInteger takes A as it is)"
	}
	if a, _ := ir.FusedActivation(n); a != ir.ActNone && a != ir.ActReLU && a != ir.ActReLU6 {
		return fmt.Sprintf("fused activation %d (only RELU and RELU6 are split off a MatMul)", a)
	}
	x := n.Input(0)
	if x == nil || x.DType != ir.Float32 {
		return "input is not float32"
	}
	if b := n.Input(2); b != nil && (b.DType != ir.Float32 || len(b.Shape) > 1) {
		return "bias is not a float32 vector"
	}
	for _, k := range n.Attrs.Keys() {
		if k != "transpose_a" && k != "transpose_b" && k != ir.AttrActivation && !ir.IsAnnotation(k) {
			return fmt.Sprintf("attribute %s", k)
		}
	}
	return ""
}

// replaceDynamic emits the dynamic-quantization chain for MatMul n in
// n's place: the chain's last node produces n's output value.
func replaceDynamic(e *ir.Editor, g *ir.Graph, n *ir.Node, w *dynWeight) error {
	base := n.Name
	var chain []*ir.Node
	add := func(op string, in []*ir.Value, attrs ir.Attrs, outs ...string) (*ir.Node, error) {
		names := make([]string, len(outs))
		for i, o := range outs {
			names[i] = e.Unique(base + "/" + o)
		}
		c := ir.NewNode(e.Unique(base+"/"+op), op, in, attrs, names...)
		c.Provenance = n.Provenance
		if err := ir.InferNode(c); err != nil {
			return nil, err
		}
		chain = append(chain, c)
		return c, nil
	}
	dql, err := add("DynamicQuantizeLinear", []*ir.Value{n.Inputs[0]}, ir.Attrs{}, "x_q", "x_scale", "x_zero_point")
	if err != nil {
		return err
	}
	scale, err := add("Mul", []*ir.Value{dql.Outputs[1], w.scale}, ir.Attrs{}, "scale")
	if err != nil {
		return err
	}
	mmi, err := add("MatMulInteger", []*ir.Value{dql.Outputs[0], w.q, dql.Outputs[2]}, ir.Attrs{}, "int32")
	if err != nil {
		return err
	}
	cast, err := add("Cast", []*ir.Value{mmi.Outputs[0]}, ir.Attrs{"to": ir.IntAttr(int64(ir.Float32))}, "float")
	if err != nil {
		return err
	}
	last, err := add("Mul", []*ir.Value{cast.Outputs[0], scale.Outputs[0]}, ir.Attrs{}, "scaled")
	if err != nil {
		return err
	}
	if b := n.Input(2); b != nil {
		if last, err = add("Add", []*ir.Value{last.Outputs[0], b}, ir.Attrs{}, "biased"); err != nil {
			return err
		}
	}
	// MatMulActivationFusion's activation (RELU, RELU6) as its own node
	// after the float epilogue: the runtime's chain takes a ReLU into the
	// integer GEMM's epilogue
	switch a, _ := ir.FusedActivation(n); a {
	case ir.ActReLU:
		last, err = add("ReLU", []*ir.Value{last.Outputs[0]}, ir.Attrs{}, "relu")
	case ir.ActReLU6:
		last, err = add("ReLU6", []*ir.Value{last.Outputs[0]}, ir.Attrs{}, "relu6")
	}
	if err != nil {
		return err
	}
	out := n.Outputs[0]
	if !slices.Equal(last.Outputs[0].Shape, out.Shape) || last.Outputs[0].DType != out.DType {
		return fmt.Errorf("internal error: the quantized chain gives %v, the MatMul %v", last.Outputs[0], out)
	}
	e.Release(last.Outputs[0].Name)
	last.Outputs[0] = out
	out.Producer, out.OutIndex = last, 0
	i := slices.Index(g.Nodes, n)
	g.Nodes = slices.Concat(g.Nodes[:i], chain, g.Nodes[i+1:])
	return nil
}

// transpose2D returns the transpose of a 2-D float32 tensor.
func transpose2D(t *ir.Tensor) *ir.Tensor {
	r, c := int(t.Shape[0]), int(t.Shape[1])
	out := ir.NewTensor(t.DType, []int64{t.Shape[1], t.Shape[0]})
	src, dst := t.F32(), out.F32()
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			dst[j*r+i] = src[i*c+j]
		}
	}
	return out
}
