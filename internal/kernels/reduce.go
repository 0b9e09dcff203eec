package kernels

import (
	"fmt"

	"gkconv/internal/ir"
)

// IsNoopReduce reports a reduction with empty axes and noop_with_empty_axes
// (an identity).
func IsNoopReduce(n *ir.Node) bool {
	if n.Attrs.Int("noop_with_empty_axes", 0) == 0 {
		return false
	}
	in := n.Input(1)
	return in == nil || in.Const != nil && in.Const.NumElements() == 0
}

// Reduction is a reduce node's axes and accumulation rule, in C.
type Reduction struct {
	Node *ir.Node
	// Reduced marks the reduced axes of the input; Keep is the input
	// shape with those axes 1; Count the number of elements folded per
	// result.
	Reduced []bool
	Keep    []int64
	Count   int64
	Acc     string // C type of the accumulator
	Init    string // its identity
	Op      string // OpenMP reduction operator: + * max min
	// NanAnyway: a Max/Min whose NaN reaches every output anyway (a
	// softmax's row max, see softmaxRowMax), so it skips the NaN test.
	NanAnyway bool
}

// NewReduction describes reduce node n. With floatAcc, float32/float16
// inputs accumulate in float (device code: tree reductions keep the error
// small and double is slow there) instead of double.
func NewReduction(n *ir.Node, floatAcc bool) (*Reduction, error) {
	rs, err := newReduction(n)
	if err != nil {
		return nil, err
	}
	if floatAcc && rs.Acc == "double" && (n.Inputs[0].DType == ir.Float32 || n.Inputs[0].DType == ir.Float16 || n.Inputs[0].DType == ir.BFloat16) {
		rs.Acc = "float"
		rs.Init = map[string]string{"0.0": "0.0f", "1.0": "1.0f"}[rs.Init]
	}
	return rs, nil
}

func newReduction(n *ir.Node) (*Reduction, error) {
	x := n.Inputs[0]
	r := len(x.Shape)
	rs := &Reduction{Node: n, Reduced: make([]bool, r), Count: 1}
	var axes []int64
	if in := n.Input(1); in != nil {
		a, err := in.Const.Int64s()
		if err != nil {
			return nil, fmt.Errorf("node %s: axes: %w", n.Name, err)
		}
		axes = a
	}
	if len(axes) == 0 {
		for i := range rs.Reduced {
			rs.Reduced[i] = true
		}
	}
	for _, a := range axes {
		if a < 0 {
			a += int64(r)
		}
		if a < 0 || a >= int64(r) {
			return nil, fmt.Errorf("node %s: axis %d out of range for rank %d", n.Name, a, r)
		}
		rs.Reduced[a] = true
	}
	for i, d := range x.Shape {
		if rs.Reduced[i] {
			rs.Count *= d
			rs.Keep = append(rs.Keep, 1)
		} else {
			rs.Keep = append(rs.Keep, d)
		}
	}
	dt := x.DType
	ct := ComputeType(dt)
	switch n.Op {
	case "ReduceMax", "ReduceMin":
		rs.Acc = ct
		if n.Op == "ReduceMax" {
			rs.Op = "max"
			rs.Init = typeLimit(dt, false)
		} else {
			rs.Op = "min"
			rs.Init = typeLimit(dt, true)
		}
	case "ReduceProd":
		rs.Acc, rs.Init, rs.Op = "double", "1.0", "*"
		if !dt.IsFloat() {
			rs.Acc, rs.Init = "int64_t", "1"
		}
	default:
		rs.Acc, rs.Init, rs.Op = "double", "0.0", "+"
		if !dt.IsFloat() {
			rs.Acc, rs.Init = "int64_t", "0"
			if n.Op == "ReduceMean" || n.Op == "ReduceL2" || n.Op == "ReduceLogSum" {
				rs.Acc, rs.Init = "double", "0.0"
			}
		}
	}
	return rs, nil
}

func typeLimit(dt ir.DType, max bool) string {
	if dt.IsFloat() {
		if dt == ir.Float64 {
			if max {
				return "__builtin_inf()"
			}
			return "(-__builtin_inf())"
		}
		if max {
			return "__builtin_inff()"
		}
		return "(-__builtin_inff())"
	}
	names := map[ir.DType][2]string{
		ir.Int8: {"INT8_MIN", "INT8_MAX"}, ir.Int16: {"INT16_MIN", "INT16_MAX"}, ir.Int32: {"INT32_MIN", "INT32_MAX"},
		ir.Int64: {"INT64_MIN", "INT64_MAX"}, ir.Uint8: {"0", "UINT8_MAX"}, ir.Uint16: {"0", "UINT16_MAX"},
		ir.Uint32: {"0", "UINT32_MAX"}, ir.Uint64: {"0", "UINT64_MAX"}, ir.Bool: {"0", "1"},
	}
	l := names[dt]
	if max {
		return l[1]
	}
	return l[0]
}

// Combine folds element x into accumulator s. Max and Min propagate NaN,
// as the op library and ONNX do: a NaN x is taken, and a NaN s stays
// (no comparison with it holds).
func (rs *Reduction) Combine(s, x string) string {
	if rs.NanAnyway && rs.Node.Op == "ReduceMax" {
		return fmt.Sprintf("(%s > %s ? %s : %s)", x, s, x, s)
	}
	switch rs.Node.Op {
	case "ReduceMax":
		return fmt.Sprintf("(%s > %s || %s != %s ? %s : %s)", x, s, x, x, x, s)
	case "ReduceMin":
		return fmt.Sprintf("(%s < %s || %s != %s ? %s : %s)", x, s, x, x, x, s)
	case "ReduceProd":
		return fmt.Sprintf("%s * (%s)%s", s, rs.Acc, x)
	case "ReduceSumSquare", "ReduceL2":
		return fmt.Sprintf("%s + (%s)%s * (%s)%s", s, rs.Acc, x, rs.Acc, x)
	case "ReduceL1":
		return fmt.Sprintf("%s + (%s)(%s < 0 ? -%s : %s)", s, rs.Acc, x, x, x)
	}
	return fmt.Sprintf("%s + (%s)%s", s, rs.Acc, x)
}

// Merge folds two partial accumulators.
func (rs *Reduction) Merge(a, b string) string {
	if rs.NanAnyway && rs.Op == "max" {
		return fmt.Sprintf("(%s > %s ? %s : %s)", b, a, b, a)
	}
	switch rs.Op {
	case "max": // NaN in either partial wins, as in Combine
		return fmt.Sprintf("(%s > %s || %s != %s ? %s : %s)", b, a, b, b, b, a)
	case "min":
		return fmt.Sprintf("(%s < %s || %s != %s ? %s : %s)", b, a, b, b, b, a)
	case "*":
		return a + " * " + b
	}
	return a + " + " + b
}

// Finish turns the final accumulator into the result.
func (rs *Reduction) Finish(s string) string {
	switch rs.Node.Op {
	case "ReduceMean":
		if rs.Count == 0 {
			return "(" + s + " * __builtin_nan(\"\"))"
		}
		return fmt.Sprintf("(%s * %s)", s, fmtFloat(1/float64(rs.Count), 64))
	case "ReduceL2":
		return "sqrt(" + s + ")"
	case "ReduceLogSum":
		return "log(" + s + ")"
	}
	return s
}
