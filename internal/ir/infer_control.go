package ir

import (
	"errors"
	"fmt"
	"slices"
)

// Shape functions of If, Loop and Scan: the bodies are typed from the
// node's inputs and inferred; the outputs are what the bodies give, merged
// where more than one shape can come out (two branches, loop iterations).

// captured returns the number of trailing outer-scope inputs, checked.
func captured(n *Node, fixed int) (int, error) {
	k := int(n.Attrs.Int(CapturedInputs, 0))
	if k < 0 || fixed+k > len(n.Inputs) {
		return 0, fmt.Errorf("%s=%d with %d inputs", CapturedInputs, k, len(n.Inputs))
	}
	return k, nil
}

// inferGraph is InferShapes, set at init (the op table's shape functions
// cannot refer to it statically: initialization cycle).
var inferGraph func(*Graph) error

func init() { inferGraph = InferShapes }

// bindInput types body input b from v (the node input it receives) unless
// the body declares a shape of its own of the same rank; a captured value
// (exact) always takes v's type.
func bindInput(b, v *Value, exact bool) {
	if v == nil {
		return
	}
	if b.DType == Undefined || exact {
		b.DType = v.DType
	}
	if v.Shape != nil && (exact || b.Shape == nil || len(b.Shape) != len(v.Shape)) {
		b.Shape = cloneShape(v.Shape)
		b.DimNames = nil
	}
}

// mergeShapes is the shape both a and b fit: equal dims stay, others are
// unknown; ranks that differ give an unknown rank.
func mergeShapes(a, b []int64) []int64 {
	if a == nil || b == nil || len(a) != len(b) {
		return nil
	}
	out := make([]int64, len(a))
	for i := range a {
		out[i] = a[i]
		if a[i] != b[i] {
			out[i] = unknownDim
		}
	}
	return out
}

// inferBody types and infers a body whose inputs were bound. The body is at
// least one level deep, so what hangs below it may nest MaxGraphDepth-1
// more: checked first, it bounds the recursion of inference over bodies.
func inferBody(n *Node, attr string, g *Graph) error {
	if err := checkDepthFrom(g, 1); err != nil {
		return err
	}
	if err := inferGraph(g); err != nil {
		return fmt.Errorf("%s: %w", attr, err)
	}
	for i, o := range g.Outputs {
		if o == nil {
			return fmt.Errorf("%s: output %d is missing", attr, i)
		}
	}
	return nil
}

func inferIf(n *Node) error {
	then, els := n.Attrs.Graph("then_branch"), n.Attrs.Graph("else_branch")
	if then == nil || els == nil {
		return fmt.Errorf("needs graph attributes then_branch and else_branch")
	}
	k, err := captured(n, 1)
	if err != nil {
		return err
	}
	if k != len(n.Inputs)-1 {
		return fmt.Errorf("%d inputs besides the condition, %s=%d", len(n.Inputs)-1, CapturedInputs, k)
	}
	branches := []SubgraphAttr{{"then_branch", then}, {"else_branch", els}}
	errs := make([]error, 2)
	for bi, br := range branches {
		if len(br.Graph.Inputs) != k {
			return fmt.Errorf("%s has %d inputs, want the %d captured values", br.Attr, len(br.Graph.Inputs), k)
		}
		if len(br.Graph.Outputs) != len(n.Outputs) {
			return fmt.Errorf("%s has %d outputs, the node %d", br.Attr, len(br.Graph.Outputs), len(n.Outputs))
		}
		for i, b := range br.Graph.Inputs {
			bindInput(b, n.Inputs[1+i], true)
		}
		errs[bi] = inferBody(n, br.Attr, br.Graph)
		var de *DepthError
		if errors.As(errs[bi], &de) {
			return errs[bi] // not a branch that cannot run: the model is refused
		}
	}
	// A branch that cannot run with these shapes (the usual guard of an
	// expanded function: a Split that only fits the other case) does not
	// make the node fail while the condition is unknown; a constant
	// condition picks the branch.
	if c := n.Input(0); c != nil && c.Const != nil && c.Const.NumElements() == 1 {
		v, err := c.Const.Int64s()
		if err == nil {
			pick := 1
			if v[0] != 0 {
				pick = 0
			}
			if errs[pick] != nil {
				return errs[pick]
			}
			for i, o := range branches[pick].Graph.Outputs {
				setOutput(n, i, o.DType, o.Shape)
			}
			return nil
		}
	}
	switch {
	case errs[0] != nil && errs[1] != nil:
		return errs[0]
	case errs[0] != nil || errs[1] != nil:
		ok := then
		if errs[0] != nil {
			ok = els
		}
		for i, o := range ok.Outputs {
			setOutput(n, i, o.DType, nil)
		}
		return nil
	}
	for i := range n.Outputs {
		a, b := then.Outputs[i], els.Outputs[i]
		if a.DType != b.DType && a.DType != Undefined && b.DType != Undefined {
			return fmt.Errorf("output %d is %s in then_branch and %s in else_branch", i, a.DType, b.DType)
		}
		setOutput(n, i, firstDType(a, b), mergeShapes(a.Shape, b.Shape))
	}
	return nil
}

// LoopCounts returns the number of loop-carried values N and of scan outputs
// K of a Loop node.
func LoopCounts(n *Node) (carried, scans int, err error) {
	body := n.Attrs.Graph("body")
	if body == nil {
		return 0, 0, fmt.Errorf("needs graph attribute body")
	}
	if len(n.Inputs) < 2 {
		return 0, 0, fmt.Errorf("needs inputs M and cond (either may be omitted, not left out)")
	}
	k, err := captured(n, 2)
	if err != nil {
		return 0, 0, err
	}
	carried = len(n.Inputs) - 2 - k
	if len(body.Inputs) != 2+carried+k {
		return 0, 0, fmt.Errorf("body has %d inputs, want 2 + %d loop-carried + %d captured", len(body.Inputs), carried, k)
	}
	scans = len(body.Outputs) - 1 - carried
	if scans < 0 {
		return 0, 0, fmt.Errorf("body has %d outputs, want at least 1 + %d loop-carried", len(body.Outputs), carried)
	}
	if len(n.Outputs) != carried+scans {
		return 0, 0, fmt.Errorf("%d outputs, the body gives %d loop-carried and %d scan outputs", len(n.Outputs), carried, scans)
	}
	return carried, scans, nil
}

func inferLoop(n *Node) error {
	body := n.Attrs.Graph("body")
	N, K, err := LoopCounts(n)
	if err != nil {
		return err
	}
	iter, cond := body.Inputs[0], body.Inputs[1]
	if iter.DType == Undefined {
		iter.DType = Int64
	}
	if iter.Shape == nil {
		iter.Shape = []int64{}
	}
	if cond.DType == Undefined {
		cond.DType = Bool
	}
	if cond.Shape == nil {
		cond.Shape = []int64{}
	}
	for i := 2; i < len(body.Inputs); i++ {
		bindInput(body.Inputs[i], n.Inputs[i], i >= 2+N)
	}
	// Loop-carried shapes may change between iterations: widen the body's
	// input shapes until its outputs fit them.
	for round := 0; ; round++ {
		if err := inferBody(n, "body", body); err != nil {
			return err
		}
		changed := false
		for j := 0; j < N; j++ {
			in, out := body.Inputs[2+j], body.Outputs[1+j]
			m := mergeShapes(in.Shape, out.Shape)
			if !sameShape(m, in.Shape) {
				in.Shape, in.DimNames = m, nil
				changed = true
			}
		}
		if !changed || round >= 3 {
			if changed {
				for j := 0; j < N; j++ {
					body.Inputs[2+j].Shape = nil
				}
				if err := inferBody(n, "body", body); err != nil {
					return err
				}
			}
			break
		}
	}
	for j := 0; j < N; j++ {
		v, o := n.Inputs[2+j], body.Outputs[1+j]
		setOutput(n, j, firstDType(o, v), mergeShapes(shapeOf(v), o.Shape))
	}
	for j := 0; j < K; j++ {
		o := body.Outputs[1+N+j]
		var s []int64
		if o.Shape != nil {
			s = append([]int64{unknownDim}, o.Shape...)
		}
		setOutput(n, N+j, o.DType, s)
	}
	return nil
}

func sameShape(a, b []int64) bool { return (a == nil) == (b == nil) && slices.Equal(a, b) }

// ScanLayout is a Scan node's split of inputs and outputs.
type ScanLayout struct {
	States, ScanIns, Captured, ScanOuts int
	InAxes, InDirs, OutAxes, OutDirs    []int64
}

// ScanCounts reads a Scan node's layout from its attributes and body.
func ScanCounts(n *Node) (ScanLayout, error) {
	var l ScanLayout
	body := n.Attrs.Graph("body")
	if body == nil {
		return l, fmt.Errorf("needs graph attribute body")
	}
	k, err := captured(n, 0)
	if err != nil {
		return l, err
	}
	l.Captured = k
	l.ScanIns = int(n.Attrs.Int("num_scan_inputs", -1))
	if l.ScanIns < 1 || l.ScanIns > len(n.Inputs)-k {
		return l, fmt.Errorf("num_scan_inputs=%d with %d inputs", l.ScanIns, len(n.Inputs)-k)
	}
	l.States = len(n.Inputs) - k - l.ScanIns
	if len(body.Inputs) != len(n.Inputs) {
		return l, fmt.Errorf("body has %d inputs, the node %d", len(body.Inputs), len(n.Inputs))
	}
	l.ScanOuts = len(body.Outputs) - l.States
	if l.ScanOuts < 0 || len(n.Outputs) != len(body.Outputs) {
		return l, fmt.Errorf("%d outputs, the body %d (%d state variables)", len(n.Outputs), len(body.Outputs), l.States)
	}
	list := func(name string, cnt int) ([]int64, error) {
		v := n.Attrs.Ints(name, nil)
		if v == nil {
			return make([]int64, cnt), nil
		}
		if len(v) != cnt {
			return nil, fmt.Errorf("%s has %d entries, want %d", name, len(v), cnt)
		}
		return v, nil
	}
	if l.InAxes, err = list("scan_input_axes", l.ScanIns); err != nil {
		return l, err
	}
	if l.InDirs, err = list("scan_input_directions", l.ScanIns); err != nil {
		return l, err
	}
	if l.OutAxes, err = list("scan_output_axes", l.ScanOuts); err != nil {
		return l, err
	}
	if l.OutDirs, err = list("scan_output_directions", l.ScanOuts); err != nil {
		return l, err
	}
	return l, nil
}

func inferScan(n *Node) error {
	body := n.Attrs.Graph("body")
	l, err := ScanCounts(n)
	if err != nil {
		return err
	}
	seq := int64(unknownDim)
	for i := range n.Inputs {
		v, b := n.Inputs[i], body.Inputs[i]
		if v == nil {
			return fmt.Errorf("input %d is missing", i)
		}
		if i < l.States || i >= l.States+l.ScanIns {
			bindInput(b, v, i >= l.States+l.ScanIns)
			continue
		}
		j := i - l.States
		if b.DType == Undefined {
			b.DType = v.DType
		}
		if v.Shape == nil {
			continue
		}
		ax, err := normAxis(l.InAxes[j], len(v.Shape))
		if err != nil {
			return fmt.Errorf("scan_input_axes[%d]: %w", j, err)
		}
		if seq < 0 {
			seq = v.Shape[ax]
		} else if v.Shape[ax] >= 0 && v.Shape[ax] != seq {
			return fmt.Errorf("scan input %d has %d steps along axis %d, the first %d", j, v.Shape[ax], ax, seq)
		}
		s := append(cloneShape(v.Shape[:ax]), v.Shape[ax+1:]...)
		if b.Shape == nil || len(b.Shape) != len(s) {
			b.Shape, b.DimNames = s, nil
		}
	}
	if err := inferBody(n, "body", body); err != nil {
		return err
	}
	for j := 0; j < l.States; j++ {
		o := body.Outputs[j]
		setOutput(n, j, firstDType(o, n.Inputs[j]), mergeShapes(n.Inputs[j].Shape, o.Shape))
	}
	for j := 0; j < l.ScanOuts; j++ {
		o := body.Outputs[l.States+j]
		var s []int64
		if o.Shape != nil {
			ax, err := normAxis(l.OutAxes[j], len(o.Shape)+1)
			if err != nil {
				return fmt.Errorf("scan_output_axes[%d]: %w", j, err)
			}
			s = append(append(cloneShape(o.Shape[:ax]), seq), o.Shape[ax:]...)
		}
		setOutput(n, l.States+j, o.DType, s)
	}
	return nil
}
