package runtime

import (
	"bytes"
	"slices"

	"gkconv/internal/ir"
)

// A node's output types are inferred from its actual inputs before each run
// of its kernel (inferRuntime), since a model's shapes may change from run to
// run. Inference builds a node and values and parses attributes every time:
// ~2% of efficientnet_b0's run at 1 thread (116 nodes, 2-vCPU AMD EPYC). A
// shapeMemo remembers the last inference of a node whose output types
// depend on its inputs' types and shapes alone, and reuses it while those
// stay the same.
//
// Whether a node's outputs depend on its inputs' values (Reshape fed a
// computed shape, Slice with runtime starts, NonZero, Range, ...) is decided
// by inferring once more with the runtime inputs' values hidden (graph
// constants stay visible): only when that inference still gives fully known
// types equal to the real ones is the node memoized. As a further guard, the
// bytes of every small runtime input (at most smallInputBytes, the size of
// any shape, axes, pads or repeats tensor) are part of the memo's key, so
// even an inference that falls back to a default when a value is hidden
// cannot be reused for different values.
type shapeMemo struct {
	keyed    bool // the key below describes the inputs of the last inference
	reusable bool // and outs holds that inference, valid for any inputs with that key
	dtypes   []ir.DType
	shapes   [][]int64
	small    [][]byte // bytes of the small runtime inputs; nil for the others
	outs     []typeShape
}

const smallInputBytes = 256

// outputTypes infers n's output types for the inputs in, or reuses the
// memoized inference.
func (m *shapeMemo) outputTypes(n *ir.Node, in []*ir.Tensor) ([]typeShape, error) {
	if m.matches(n, in) {
		if m.reusable {
			return m.outs, nil
		}
		return inferRuntime(n, inputValues(n, in, false))
	}
	m.keyed, m.reusable, m.outs = false, false, nil
	outs, err := inferRuntime(n, inputValues(n, in, false))
	if err != nil {
		return nil, err
	}
	blind, err := inferRuntime(n, inputValues(n, in, true))
	m.setKey(n, in)
	if err == nil && sameStaticTypes(blind, outs) && !hasStrings(in) {
		m.reusable, m.outs = true, outs
	}
	return outs, nil
}

// matches: in has the key's dtypes, shapes and small inputs' bytes.
func (m *shapeMemo) matches(n *ir.Node, in []*ir.Tensor) bool {
	if !m.keyed || len(in) != len(m.dtypes) {
		return false
	}
	for k, t := range in {
		if t == nil {
			if m.shapes[k] != nil || m.dtypes[k] != ir.Undefined {
				return false
			}
			continue
		}
		if t.DType != m.dtypes[k] || !slices.Equal(t.Shape, m.shapes[k]) {
			return false
		}
		if isSmallRuntimeInput(n, k, t) != (m.small[k] != nil) || (m.small[k] != nil && !bytes.Equal(t.Data, m.small[k])) {
			return false
		}
	}
	return true
}

func (m *shapeMemo) setKey(n *ir.Node, in []*ir.Tensor) {
	m.dtypes, m.shapes, m.small = m.dtypes[:0], m.shapes[:0], m.small[:0]
	for k, t := range in {
		if t == nil {
			m.dtypes, m.shapes, m.small = append(m.dtypes, ir.Undefined), append(m.shapes, nil), append(m.small, nil)
			continue
		}
		var small []byte
		if isSmallRuntimeInput(n, k, t) {
			small = append([]byte{}, t.Data...)
		}
		m.dtypes = append(m.dtypes, t.DType)
		m.shapes = append(m.shapes, slices.Clone(t.Shape))
		m.small = append(m.small, small)
	}
	m.keyed = true
}

// inputValues describes in for inference; hide leaves out the values of
// the inputs that are not graph constants.
func inputValues(n *ir.Node, in []*ir.Tensor, hide bool) []*ir.Value {
	vs := make([]*ir.Value, len(in))
	for k, t := range in {
		if t == nil {
			continue
		}
		vs[k] = &ir.Value{Name: n.Inputs[k].Name, DType: t.DType, Shape: t.Shape, Const: t}
		if hide && !isGraphConst(n, k) {
			vs[k].Const = nil
		}
	}
	return vs
}

// isSmallRuntimeInput: input k is computed at run time and small enough
// to be a shape, axes, pads or repeats tensor.
func isSmallRuntimeInput(n *ir.Node, k int, t *ir.Tensor) bool {
	return !isGraphConst(n, k) && len(t.Data) <= smallInputBytes
}

// hasStrings: string tensors keep no bytes in Data for the key to compare.
func hasStrings(in []*ir.Tensor) bool {
	for _, t := range in {
		if t != nil && t.DType == ir.String {
			return true
		}
	}
	return false
}

// isGraphConst: input k of n is a constant of the graph, the same in every run.
func isGraphConst(n *ir.Node, k int) bool {
	return n.Inputs[k] != nil && n.Inputs[k].Const != nil
}

// sameStaticTypes: a and b give the same dtype and the same fully known
// shape for every output.
func sameStaticTypes(a, b []typeShape) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if a[k].DType != b[k].DType || (a[k].Shape == nil) != (b[k].Shape == nil) || !slices.Equal(a[k].Shape, b[k].Shape) {
			return false
		}
		for _, d := range a[k].Shape {
			if d < 0 {
				return false
			}
		}
	}
	return true
}
