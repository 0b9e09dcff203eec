package ir

import (
	"errors"
	"fmt"
)

// InferFunc sets DType and Shape of n.Outputs from n.Inputs. An input whose
// Const is set has known data (always the case at run time), which shape ops
// such as Reshape need; when such data is missing the func leaves the
// affected dims unknown (-1) or the rank unknown (nil) instead of failing.
type InferFunc func(n *Node) error

var inferFuncs = map[string]InferFunc{}

// RegisterInfer installs the shape function of an IR op.
func RegisterInfer(op string, f InferFunc) { inferFuncs[op] = f }

// HasInfer reports whether op has a shape function.
func HasInfer(op string) bool { _, ok := inferFuncs[op]; return ok }

// InferNode runs the shape function of one node.
func InferNode(n *Node) error {
	f, ok := inferFuncs[n.Op]
	if !ok {
		return fmt.Errorf("node %s: no shape inference for op %s", n.Name, n.Op)
	}
	if err := f(n); err != nil {
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
