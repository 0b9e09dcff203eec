package runtime

import (
	"errors"
	"fmt"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// foldLimit caps the bytes a folded node may produce, so folding never
// inflates the model (a Tile or ConstantOfShape of a big shape stays a node).
const foldLimit = 1 << 20

// FoldConstants evaluates, at conversion time, every node whose inputs are
// all known: constants, and for Shape/Size the statically known shape of the
// input. It runs shape inference along the way so that shape-only subgraphs
// (Shape -> Gather -> Concat -> Reshape) collapse when shapes are static. The
// same CPU kernels as at run time compute the values, so results are exact.
//
// notes are the If branches left unfolded because the shapes given cannot
// flow through them (a branch the run can then not take; it fails at run
// time naming its node if it is taken), one line each.
func FoldConstants(g *ir.Graph) (folded int, notes []string, err error) {
	return foldConstants(g, false)
}

// foldConstants is FoldConstants; with tolerant (an If branch whose
// condition is not known), a node whose shapes do not infer is kept as it
// is, its outputs untyped, and the errors are returned joined in
// inferErr after the whole body was folded consistently.
func foldConstants(g *ir.Graph, tolerant bool) (int, []string, error) {
	ctx := &opkernel.Ctx{Threads: 1}
	folded := 0
	var notes []string
	var inferErrs []error
	kept := g.Nodes[:0:0]
	readers := g.Consumers()
	nodes := g.Nodes
	var names *ir.Names
	for i := 0; i < len(nodes); i++ {
		n := nodes[i]
		if err := ir.InferNode(n); err != nil {
			if !tolerant {
				return folded, notes, err
			}
			inferErrs = append(inferErrs, err)
			for _, o := range n.Outputs {
				if o != nil {
					o.Shape, o.DimNames = nil, nil
				}
			}
			kept = append(kept, n)
			continue
		}
		if ir.QDQWeightKept(n, readers) { // fusion's QDQFusion reads the quantized weight
			kept = append(kept, n)
			continue
		}
		if ir.IsControlFlow(n.Op) {
			// An If with a known condition becomes its branch; the other
			// bodies are folded in place (control_fold.go).
			if names == nil {
				names = ir.GraphNames(g)
			}
			inl, f, nn, err := foldControl(g, n, names)
			folded += f
			notes = append(notes, nn...)
			if err != nil {
				return folded, notes, err
			}
			if inl != nil {
				nodes = append(append(append([]*ir.Node{}, nodes[:i+1]...), inl...), nodes[i+1:]...)
				folded++
				continue
			}
		}
		vals, ok, err := tryFold(ctx, n)
		if err != nil {
			return folded, notes, err
		}
		if !ok {
			kept = append(kept, n)
			continue
		}
		for k, o := range n.Outputs {
			if o == nil {
				continue
			}
			o.Const = vals[k]
			o.DType = vals[k].DType
			o.Shape = append([]int64{}, vals[k].Shape...)
			o.Producer = nil
			g.Consts = append(g.Consts, o)
		}
		folded++
	}
	g.Nodes = kept
	if len(inferErrs) > 0 {
		return folded, notes, &branchShapeError{errors.Join(inferErrs...)}
	}
	return folded, notes, nil
}

// branchShapeError: a body (folded tolerantly) whose shapes do not infer.
type branchShapeError struct{ err error }

func (e *branchShapeError) Error() string { return e.err.Error() }
func (e *branchShapeError) Unwrap() error { return e.err }

func tryFold(ctx *opkernel.Ctx, n *ir.Node) ([]*ir.Tensor, bool, error) {
	if n.Op == ir.OpGraphKernel || len(n.Outputs) == 0 {
		return nil, false, nil
	}
	switch n.Op {
	case "Shape", "Size":
		x := n.Input(0)
		if x == nil || !x.ShapeKnown() {
			return nil, false, nil
		}
		in := []*ir.Tensor{{DType: x.DType, Shape: x.Shape}}
		return runFold(ctx, n, in)
	}
	in := make([]*ir.Tensor, len(n.Inputs))
	inBytes := 0
	for i, v := range n.Inputs {
		if v == nil {
			continue
		}
		if v.Const == nil {
			return nil, false, nil
		}
		in[i] = v.Const
		inBytes += len(v.Const.Data)
	}
	for _, o := range n.Outputs {
		if o == nil || !o.ShapeKnown() || o.DType == ir.Undefined {
			return nil, false, nil
		}
		sz := int(ir.NumElements(o.Shape)) * o.DType.Size()
		if sz > foldLimit && sz > inBytes {
			return nil, false, nil
		}
	}
	return runFold(ctx, n, in)
}

func runFold(ctx *opkernel.Ctx, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, bool, error) {
	f, ok := opkernel.Lookup(n.Op)
	if !ok {
		return nil, false, nil
	}
	out := make([]*ir.Tensor, len(n.Outputs))
	for k, o := range n.Outputs {
		if o == nil || !o.ShapeKnown() {
			return nil, false, nil
		}
		out[k] = ir.NewTensor(o.DType, o.Shape)
	}
	if err := f(ctx, n, in, out); err != nil {
		if _, unsup := err.(*opkernel.Unsupported); unsup {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("constant folding: %w", nodeErr(n, err))
	}
	return out, true, nil
}
