package randgraph

import (
	"math"

	"gkconv/internal/ir"
)

// The float32 op library is not an exact reference: a random graph can be
// ill-conditioned at its input (a LayerNorm of a thrice-softmaxed row
// subtracts values equal to 1e-3 relative), so two correct float32
// evaluations differ by more than a fixed tolerance. Tests judge how far the
// op library itself is from the float64 evaluation of the same body and
// allow a kernel that much.

// Float64Body returns a copy of a fused body that computes in float64:
// every float32 value (inputs, constants, results) becomes float64; other
// values, the nodes' ops and attributes are kept. body is not modified.
func Float64Body(body *ir.Graph) *ir.Graph {
	vals := map[*ir.Value]*ir.Value{}
	wide := func(v *ir.Value) *ir.Value {
		if v == nil {
			return nil
		}
		if w, ok := vals[v]; ok {
			return w
		}
		w := *v
		if v.DType == ir.Float32 {
			w.DType = ir.Float64
			if v.Const != nil {
				w.Const = Float64Tensors([]*ir.Tensor{v.Const})[0]
			}
		}
		vals[v] = &w
		return &w
	}
	g := ir.NewGraph(body.Name + "_f64")
	for _, v := range body.Inputs {
		g.Inputs = append(g.Inputs, wide(v))
	}
	for _, v := range body.Consts {
		g.Consts = append(g.Consts, wide(v))
	}
	for _, n := range body.Nodes {
		m := *n
		m.Inputs = make([]*ir.Value, len(n.Inputs))
		for i, v := range n.Inputs {
			m.Inputs[i] = wide(v)
		}
		m.Outputs = make([]*ir.Value, len(n.Outputs))
		for i, v := range n.Outputs {
			if w := wide(v); w != nil {
				w.Producer = &m
				m.Outputs[i] = w
			}
		}
		g.Nodes = append(g.Nodes, &m)
	}
	for _, v := range body.Outputs {
		g.Outputs = append(g.Outputs, wide(v))
	}
	return g
}

// Float64Tensors widens float32 tensors to float64; others are returned
// as they are.
func Float64Tensors(ts []*ir.Tensor) []*ir.Tensor {
	out := make([]*ir.Tensor, len(ts))
	for i, t := range ts {
		if t == nil || t.DType != ir.Float32 {
			out[i] = t
			continue
		}
		w := ir.NewTensor(ir.Float64, t.Shape)
		for j, x := range t.F32() {
			w.F64()[j] = float64(x)
		}
		out[i] = w
	}
	return out
}

// ScaledError is the largest |got-want| / max(|want|, 0.1*max|want|) over
// the finite elements of want (the scale kerneltest.CompareTensors judges
// by); 0 when a tensor is not numeric or the sizes differ.
func ScaledError(got, want *ir.Tensor) float64 {
	g, err1 := got.Float64s()
	w, err2 := want.Float64s()
	if err1 != nil || err2 != nil || len(g) != len(w) {
		return 0
	}
	var maxAbs float64
	for _, x := range w {
		if !math.IsInf(x, 0) && !math.IsNaN(x) {
			maxAbs = math.Max(maxAbs, math.Abs(x))
		}
	}
	var worst float64
	for i := range w {
		if math.IsInf(w[i], 0) || math.IsNaN(w[i]) || math.IsInf(g[i], 0) || math.IsNaN(g[i]) {
			continue
		}
		if s := math.Max(math.Abs(w[i]), 0.1*maxAbs); s > 0 {
			worst = math.Max(worst, math.Abs(g[i]-w[i])/s)
		}
	}
	return worst
}
