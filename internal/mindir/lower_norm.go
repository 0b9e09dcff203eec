package mindir

// Lowerings of the IR's normalizations to MindSpore primitives: BatchNorm
// -> FusedBatchNorm, InstanceNorm, LayerNorm -> LayerNormFusion, and
// Softmax/LogSoftmax. The tables and shared helpers are in lower_nn.go,
// the lifts in lift_nn.go.

import (
	"gkconv/internal/ir"
)

// ---- normalizations ----

// lowerBatchNorm: ONNX BatchNormalization (inference) -> FusedBatchNorm
// (onnx_batchnorm_parser.cc), whose five outputs are y, batch mean and
// variance and two reserve spaces: only y is the IR's. A node with the
// training outputs falls back.
func lowerBatchNorm(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !attrsOnly(n, "epsilon", "momentum") || len(n.Outputs) != 1 {
		return nil, errNoPrimitive
	}
	ins, ok := inputsUpTo(n, 5)
	if !ok || len(ins) != 5 {
		return nil, errNoPrimitive
	}
	x := ins[0]
	m := &msNode{prim: "FusedBatchNorm", inputs: ins}
	m.attrs = append(m.attrs, aFloat("epsilon", float32(n.Attrs.Float("epsilon", 1e-5))))
	if n.Attrs.Has("momentum") {
		m.attrs = append(m.attrs, aFloat("momentum", float32(n.Attrs.Float("momentum", 0.9))))
	}
	var ch []int64
	if len(x.Shape) >= 2 {
		ch = []int64{x.Shape[1]}
	}
	m.outs = []msOut{{v: n.Outputs[0]}}
	for i := 0; i < 4; i++ {
		m.outs = append(m.outs, msOut{dt: x.DType, shape: ch})
	}
	return m, nil
}

// lowerInstanceNorm: ONNX InstanceNormalization -> InstanceNorm.
func lowerInstanceNorm(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !attrsOnly(n, "epsilon") || len(n.Outputs) != 1 {
		return nil, errNoPrimitive
	}
	ins, ok := inputsUpTo(n, 3)
	if !ok || len(ins) != 3 {
		return nil, errNoPrimitive
	}
	m := &msNode{prim: "InstanceNorm", inputs: ins}
	m.attrs = append(m.attrs, aFloat("epsilon", float32(n.Attrs.Float("epsilon", 1e-5))))
	return m, nil
}

// lowerLayerNorm: ONNX LayerNormalization -> LayerNormFusion
// (onnx_layer_norm_parser.cc: begin_norm_axis = begin_params_axis = axis).
// MindSpore's outputs are y, mean and variance; the IR's second and third
// are mean and 1/std, so a node using them falls back, as does a scale or
// bias that only broadcasts to the normalized dims (MindSpore's gamma and
// beta have exactly x.shape[axis:]).
func lowerLayerNorm(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !attrsOnly(n, "axis", "epsilon", "stash_type") || len(n.Outputs) != 1 {
		return nil, errNoPrimitive
	}
	if n.Attrs.Int("stash_type", int64(ir.Float32)) != int64(ir.Float32) {
		return nil, errNoPrimitive
	}
	ins, ok := inputsUpTo(n, 3)
	if !ok || len(ins) < 2 {
		return nil, errNoPrimitive
	}
	x := ins[0]
	if x.Shape == nil {
		return nil, errNoPrimitive
	}
	axis := n.Attrs.Int("axis", -1)
	r := int64(len(x.Shape))
	if axis < -r || axis >= r {
		return nil, errNoPrimitive
	}
	a := axis
	if a < 0 {
		a += r
	}
	norm := x.Shape[a:]
	for _, p := range ins[1:] {
		if len(p.Shape) != len(norm) {
			return nil, errNoPrimitive
		}
		for i, d := range p.Shape {
			if d < 0 || (norm[i] >= 0 && norm[i] != d) {
				return nil, errNoPrimitive
			}
		}
	}
	m := &msNode{prim: "LayerNormFusion", inputs: ins}
	m.attrs = append(m.attrs, aInt("begin_norm_axis", axis), aInt("begin_params_axis", axis),
		aFloat("epsilon", float32(n.Attrs.Float("epsilon", 1e-5))))
	stat := append([]int64{}, x.Shape...)
	for i := a; i < r; i++ {
		stat[i] = 1
	}
	m.outs = []msOut{{v: n.Outputs[0]}, {dt: ir.Float32, shape: stat}, {dt: ir.Float32, shape: stat}}
	return m, nil
}

// lowerSoftmax: Softmax with axis as a tuple (set_axis({axis})).
func lowerSoftmax(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !attrsOnly(n, "axis") || len(n.Inputs) != 1 || n.Inputs[0] == nil {
		return nil, errNoPrimitive
	}
	m := &msNode{prim: "Softmax", inputs: n.Inputs}
	m.attrs = append(m.attrs, aInts("axis", n.Attrs.Int("axis", -1)))
	return m, nil
}

// lowerLogSoftmax: LogSoftmax with an int axis.
func lowerLogSoftmax(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !attrsOnly(n, "axis") || len(n.Inputs) != 1 || n.Inputs[0] == nil {
		return nil, errNoPrimitive
	}
	m := &msNode{prim: "LogSoftmax", inputs: n.Inputs}
	m.attrs = append(m.attrs, aInt("axis", n.Attrs.Int("axis", -1)))
	return m, nil
}
