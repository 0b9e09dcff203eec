package ir

import (
	"errors"
	"fmt"
)

// InferFunc sets DType and Shape of n.Outputs from n.Inputs, whose counts
// InferNode has checked against the op's row (Arity). An input whose
// Const is set has known data (always the case at run time), which shape ops
// such as Reshape need; when such data is missing the func leaves the
// affected dims unknown (-1) or the rank unknown (nil) instead of failing.
type InferFunc func(n *Node) error

// HasInfer reports whether op has a shape function (a row of the op table).
func HasInfer(op string) bool { o := LookupOp(op); return o != nil && o.Infer != nil }

// InferNode checks the node's input and output counts against its op's row
// and runs the row's shape function.
func InferNode(n *Node) error {
	o := LookupOp(n.Op)
	if o == nil || o.Infer == nil {
		return fmt.Errorf("node %s: no shape inference for op %s", n.Name, n.Op)
	}
	err := checkInputs(n, o.In.Min, o.In.Max)
	if err == nil {
		err = checkOutputs(n, o.Out.Min, o.Out.Max)
	}
	if err == nil {
		err = o.Infer(n)
	}
	if err != nil {
		return fmt.Errorf("node %s (%s): %w", n.Name, n.Op, err)
	}
	for i, o := range n.Outputs {
		if o != nil && o.Shape != nil {
			if err := CheckSize(o.Shape, o.DType); err != nil {
				return fmt.Errorf("node %s (%s): output %d: %w", n.Name, n.Op, i, err)
			}
		}
	}
	return nil
}

// InferShapes runs shape inference over the graph in order and returns every
// failure joined, not just the first.
func InferShapes(g *Graph) error {
	var errs []error
	for _, n := range g.Nodes {
		if err := InferNode(n); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
