package ir

import (
	"fmt"
	"math"
)

// Shared helpers of the shape functions (infer_*.go). Conventions: a nil
// shape is an unknown rank, a dim < 0 is unknown; helpers never fail on
// unknown data, only on data that is known to be inconsistent.

// unknownDim marks a dim whose size is not known.
const unknownDim = -1

// inputDesc names input i of n for error messages.
func inputDesc(n *Node, i int) string {
	if v := n.Input(i); v != nil && v.Name != "" {
		return fmt.Sprintf("input %d (%s)", i, v.Name)
	}
	return fmt.Sprintf("input %d", i)
}

// checkInputs verifies that n has between lo and hi inputs (hi < 0: no
// limit) and that the first lo of them are present.
func checkInputs(n *Node, lo, hi int) error {
	cnt := len(n.Inputs)
	// Trailing omitted optional inputs do not count.
	for cnt > 0 && n.Inputs[cnt-1] == nil {
		cnt--
	}
	if cnt < lo || (hi >= 0 && cnt > hi) {
		switch {
		case hi < 0:
			return fmt.Errorf("expects at least %d inputs, got %d", lo, cnt)
		case lo == hi:
			return fmt.Errorf("expects %d inputs, got %d", lo, cnt)
		default:
			return fmt.Errorf("expects %d to %d inputs, got %d", lo, hi, cnt)
		}
	}
	for i := 0; i < lo; i++ {
		if n.Inputs[i] == nil {
			return fmt.Errorf("required input %d is missing", i)
		}
	}
	return nil
}

// checkOutputs verifies that n has between lo and hi outputs (hi < 0: no limit).
func checkOutputs(n *Node, lo, hi int) error {
	cnt := len(n.Outputs)
	if cnt < lo || (hi >= 0 && cnt > hi) {
		if lo == hi {
			return fmt.Errorf("expects %d outputs, got %d", lo, cnt)
		}
		if hi < 0 {
			return fmt.Errorf("expects at least %d outputs, got %d", lo, cnt)
		}
		return fmt.Errorf("expects %d to %d outputs, got %d", lo, hi, cnt)
	}
	return nil
}

// setOutput sets dtype and shape (copied) of output i; an absent or omitted
// output is skipped so optional outputs need no special casing.
func setOutput(n *Node, i int, dt DType, shape []int64) {
	if i >= len(n.Outputs) || n.Outputs[i] == nil {
		return
	}
	o := n.Outputs[i]
	o.DType = dt
	o.Shape = cloneShape(shape)
	o.DimNames = nil
}

// cloneShape copies a shape, keeping nil (unknown rank) nil.
func cloneShape(s []int64) []int64 {
	if s == nil {
		return nil
	}
	return append(make([]int64, 0, len(s)), s...)
}

// unknownShape is a shape of rank r with every dim unknown.
func unknownShape(r int) []int64 {
	s := make([]int64, r)
	for i := range s {
		s[i] = unknownDim
	}
	return s
}

// shapeOf returns v's shape (nil for an absent value).
func shapeOf(v *Value) []int64 {
	if v == nil {
		return nil
	}
	return v.Shape
}

// dtypeOf returns v's dtype (Undefined for an absent value).
func dtypeOf(v *Value) DType {
	if v == nil {
		return Undefined
	}
	return v.DType
}

// sameDType checks that the inputs at idx (absent ones skipped) whose dtypes
// are known all share one dtype, for ops whose operands must agree
// (elementwise binary and variadic ops, Concat, Where's x/y, MatMul's A/B).
func sameDType(n *Node, idx ...int) error {
	first := -1
	for _, i := range idx {
		d := dtypeOf(n.Input(i))
		if d == Undefined {
			continue
		}
		if first < 0 {
			first = i
			continue
		}
		if fd := dtypeOf(n.Input(first)); d != fd {
			return fmt.Errorf("inputs of different dtypes: %s is %s, %s is %s",
				inputDesc(n, first), fd, inputDesc(n, i), d)
		}
	}
	return nil
}

// allInputs returns 0..len(n.Inputs)-1.
func allInputs(n *Node) []int {
	idx := make([]int, len(n.Inputs))
	for i := range idx {
		idx[i] = i
	}
	return idx
}

// firstDType returns the first defined dtype among vs, so an output gets a
// dtype even when a leading input's is not known yet.
func firstDType(vs ...*Value) DType {
	for _, v := range vs {
		if d := dtypeOf(v); d != Undefined {
			return d
		}
	}
	return Undefined
}

// normAxis maps axis from [-rank, rank) to [0, rank).
func normAxis(axis int64, rank int) (int, error) {
	if axis < -int64(rank) || axis >= int64(rank) {
		return 0, fmt.Errorf("axis %d is out of range for rank %d", axis, rank)
	}
	if axis < 0 {
		axis += int64(rank)
	}
	return int(axis), nil
}

// normAxes normalizes a list of axes and rejects duplicates.
func normAxes(axes []int64, rank int) ([]int, error) {
	out := make([]int, len(axes))
	seen := make([]bool, rank)
	for i, a := range axes {
		ax, err := normAxis(a, rank)
		if err != nil {
			return nil, err
		}
		if seen[ax] {
			return nil, fmt.Errorf("axis %d is repeated in %v", a, axes)
		}
		seen[ax] = true
		out[i] = ax
	}
	return out, nil
}

// broadcastDim merges two dims under numpy rules, unknown dims included:
// unknown vs 1 stays unknown, unknown vs d (d != 1) is d.
func broadcastDim(a, b int64) (int64, bool) {
	switch {
	case a == b:
		return a, true
	case a == 1:
		return b, true
	case b == 1:
		return a, true
	case a < 0:
		return b, true
	case b < 0:
		return a, true
	}
	return 0, false
}

// broadcastShapes is numpy broadcasting of two shapes; nil if a rank is unknown.
func broadcastShapes(a, b []int64) ([]int64, error) {
	if a == nil || b == nil {
		return nil, nil
	}
	r := max(len(a), len(b))
	out := make([]int64, r)
	for i := 0; i < r; i++ {
		da, db := int64(1), int64(1)
		if j := i - (r - len(a)); j >= 0 {
			da = a[j]
		}
		if j := i - (r - len(b)); j >= 0 {
			db = b[j]
		}
		d, ok := broadcastDim(da, db)
		if !ok {
			return nil, fmt.Errorf("shapes %v and %v cannot be broadcast (dim %d: %d vs %d)", a, b, i, da, db)
		}
		out[i] = d
	}
	return out, nil
}

// broadcastInputs broadcasts the shapes of inputs idx of n, naming the
// offending input on failure. Inputs of known rank are still checked against
// each other when another's rank is unknown; the result is then nil.
func broadcastInputs(n *Node, idx ...int) ([]int64, error) {
	var acc []int64
	have, unknownRank := false, false
	for _, i := range idx {
		s := shapeOf(n.Input(i))
		switch {
		case s == nil:
			unknownRank = true
		case !have:
			acc, have = cloneShape(s), true
		default:
			b, err := broadcastShapes(acc, s)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", inputDesc(n, i), err)
			}
			acc = b
		}
	}
	if unknownRank {
		return nil, nil
	}
	return acc, nil
}

// mulDims multiplies dims, unknown if any is unknown.
func mulDims(ds ...int64) int64 {
	p := int64(1)
	for _, d := range ds {
		if d < 0 {
			return unknownDim
		}
		p *= d
	}
	return p
}

// tensorDataOK reports whether t holds as many elements as its shape says,
// so the typed readers in tensor.go cannot slice past Data.
func tensorDataOK(t *Tensor) error {
	if t == nil {
		return fmt.Errorf("no data")
	}
	n := t.NumElements()
	if n < 0 {
		return fmt.Errorf("tensor shape %v has unknown dims", t.Shape)
	}
	if t.DType == String {
		return fmt.Errorf("expected a numeric tensor, got string")
	}
	sz := t.DType.Size()
	if sz == 0 {
		return fmt.Errorf("unsupported tensor dtype %s", t.DType)
	}
	if int64(len(t.Data)) < n*int64(sz) {
		return fmt.Errorf("tensor %s holds %d bytes, needs %d", t, len(t.Data), n*int64(sz))
	}
	return nil
}

// constInts reads input i as int64s when its data is known. ok is false
// when the input is absent or has no data yet; err reports bad data.
func constInts(n *Node, i int) (vals []int64, ok bool, err error) {
	v := n.Input(i)
	if v == nil || v.Const == nil {
		return nil, false, nil
	}
	if err := tensorDataOK(v.Const); err != nil {
		return nil, false, fmt.Errorf("%s: %w", inputDesc(n, i), err)
	}
	vals, err = v.Const.Int64s()
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", inputDesc(n, i), err)
	}
	return vals, true, nil
}

// constFloats reads input i as float64s when its data is known (see constInts).
func constFloats(n *Node, i int) (vals []float64, ok bool, err error) {
	v := n.Input(i)
	if v == nil || v.Const == nil {
		return nil, false, nil
	}
	if err := tensorDataOK(v.Const); err != nil {
		return nil, false, fmt.Errorf("%s: %w", inputDesc(n, i), err)
	}
	vals, err = v.Const.Float64s()
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", inputDesc(n, i), err)
	}
	return vals, true, nil
}

// constScalarInt reads a scalar (or one-element) integer input.
func constScalarInt(n *Node, i int) (int64, bool, error) {
	vals, ok, err := constInts(n, i)
	if !ok || err != nil {
		return 0, ok, err
	}
	if len(vals) != 1 {
		return 0, false, fmt.Errorf("%s: expected a scalar, got %d elements", inputDesc(n, i), len(vals))
	}
	return vals[0], true, nil
}

// vecLen is the element count of a 1-D input from its shape or data, -1 when
// unknown. It lets shape-like inputs without data still fix a rank.
func vecLen(v *Value) int64 {
	if v == nil {
		return unknownDim
	}
	if v.Const != nil {
		return v.Const.NumElements()
	}
	if len(v.Shape) == 1 {
		return v.Shape[0]
	}
	if v.Shape != nil && len(v.Shape) == 0 {
		return 1
	}
	return unknownDim
}

// isEmptyInput reports whether input i is present but known to hold no
// elements: older exporters pass empty tensors for omitted optional inputs.
func isEmptyInput(n *Node, i int) bool {
	v := n.Input(i)
	return v != nil && vecLen(v) == 0
}

// validDType reports whether d is a dtype the IR knows.
func validDType(d DType) bool {
	_, ok := dtypeNames[d]
	return ok && d != Undefined
}

// ceilDiv is ceil(a/b) for b > 0, for any sign of a.
func ceilDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a > 0 {
		q++
	}
	return q
}

// floorDiv is floor(a/b) for b > 0, for any sign of a.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// clampInt64 limits v to [lo, hi].
func clampInt64(v, lo, hi int64) int64 {
	return min(max(v, lo), hi)
}

// float64ToDim converts a computed size to a dim, rejecting values that do
// not fit (NaN, Inf, huge) instead of wrapping around.
func float64ToDim(f float64) (int64, error) {
	if math.IsNaN(f) || f < 0 || f > math.MaxInt64/2 {
		return 0, fmt.Errorf("computed size %g is not a valid dim", f)
	}
	return int64(f), nil
}

// setOutputLike gives output i the shape of v, with v's dim names, and dtype dt.
func setOutputLike(n *Node, i int, dt DType, v *Value) {
	setOutput(n, i, dt, shapeOf(v))
	if i < len(n.Outputs) && n.Outputs[i] != nil && v != nil && len(v.DimNames) == len(v.Shape) && v.DimNames != nil {
		n.Outputs[i].DimNames = append([]string(nil), v.DimNames...)
	}
}
