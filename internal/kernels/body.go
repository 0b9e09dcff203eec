package kernels

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"gkconv/internal/ir"
)

// CheckBody reports why the generators cannot compile body, or nil: every
// value needs a static shape and a C type, every op an expression rule,
// reduction axes must be constant.
func CheckBody(body *ir.Graph) error {
	if body == nil {
		return errors.New("no body")
	}
	return checkBody(body)
}

func checkBody(body *ir.Graph) error {
	var errs []error
	check := func(v *ir.Value, what string) {
		if v == nil {
			return
		}
		if !v.ShapeKnown() {
			errs = append(errs, fmt.Errorf("%s %s has no static shape (%v)", what, v.Name, v.Shape))
		}
		if _, ok := StorageType(v.DType); !ok {
			errs = append(errs, fmt.Errorf("%s %s has unsupported dtype %s", what, v.Name, v.DType))
		}
	}
	for _, v := range body.Inputs {
		check(v, "input")
	}
	for _, v := range body.Outputs {
		check(v, "output")
	}
	for _, n := range body.Nodes {
		if !Supported(n.Op) {
			errs = append(errs, fmt.Errorf("node %s: op %s is not supported by the C generator", n.Name, n.Op))
			continue
		}
		for _, o := range n.Outputs {
			check(o, "node "+n.Name+" output")
		}
		if IsReduce(n.Op) {
			if in := n.Input(1); in != nil && in.Const == nil {
				errs = append(errs, fmt.Errorf("node %s: %s axes must be constant", n.Name, n.Op))
			}
		}
		if n.Op == "Dropout" && len(n.Outputs) > 1 && n.Outputs[1] != nil && n.Outputs[1].Name != "" {
			errs = append(errs, fmt.Errorf("node %s: Dropout mask output is not supported", n.Name))
		}
	}
	return errors.Join(errs...)
}

// CheckDeviceBody reports why body cannot become device code: CheckBody's
// checks plus the device limits (no float64 transcendental
// functions: the device headers implement float versions only).
func CheckDeviceBody(body *ir.Graph) error {
	if err := CheckBody(body); err != nil {
		return err
	}
	var errs []error
	for _, n := range body.Nodes {
		for _, o := range n.Outputs {
			if o != nil && o.DType == ir.Float64 && OpCost(n.Op) >= 3 {
				errs = append(errs, fmt.Errorf("node %s: %s on float64 is not supported on device targets", n.Name, n.Op))
			}
		}
	}
	return errors.Join(errs...)
}

// ConstArray writes a file-scope array definition named name holding v's
// constant data; qual (e.g. "__device__") is put in front of "static const".
func ConstArray(qual, name string, v *ir.Value) string {
	var sb strings.Builder
	if qual != "" {
		sb.WriteString(qual + " ")
	}
	st, _ := StorageType(v.DType)
	t := v.Const
	n := int(t.NumElements())
	fmt.Fprintf(&sb, "static const %s %s[%d] = {", st, name, max(n, 1))
	var elems []string
	switch t.DType {
	case ir.Float16, ir.BFloat16:
		for _, h := range t.U16()[:n] {
			elems = append(elems, fmt.Sprintf("0x%04x", h))
		}
	case ir.Float32, ir.Float64:
		f, _ := t.Float64s()
		for _, x := range f {
			elems = append(elems, Literal(t.DType, x))
		}
	case ir.Uint64:
		for _, x := range t.U64()[:n] {
			elems = append(elems, fmt.Sprintf("%dULL", x))
		}
	default:
		iv, _ := t.Int64s()
		for _, x := range iv {
			if x == math.MinInt64 {
				elems = append(elems, "INT64_MIN")
			} else {
				elems = append(elems, fmt.Sprintf("%dLL", x))
			}
		}
	}
	if len(elems) == 0 {
		elems = []string{"0"}
	}
	for i, e := range elems {
		if i%8 == 0 {
			sb.WriteString("\n  ")
		}
		sb.WriteString(e)
		sb.WriteString(", ")
	}
	sb.WriteString("\n};\n")
	return sb.String()
}

// Strides are the contiguous row-major strides of shape.
func Strides(shape []int64) []int64 {
	s := make([]int64, len(shape))
	acc := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		s[i] = acc
		acc *= shape[i]
	}
	return s
}

// AlignOnes maps each dim of in onto a dim of out when the two shapes are
// equal apart from 1s (-1 for size-1 dims of in).
func AlignOnes(in, out []int64) ([]int, bool) {
	res := make([]int, len(in))
	j := 0
	for a, d := range in {
		if d == 1 {
			res[a] = -1
			continue
		}
		for j < len(out) && out[j] == 1 {
			j++
		}
		if j >= len(out) || out[j] != d {
			return nil, false
		}
		res[a] = j
		j++
	}
	for ; j < len(out); j++ {
		if out[j] != 1 {
			return nil, false
		}
	}
	return res, true
}

// PickIdx is the index of a value whose dim a is dim m[a] of idx ("0" where
// m[a] < 0), as AlignOnes maps it.
func PickIdx(idx []string, m []int) []string {
	out := make([]string, len(m))
	for a, l := range m {
		out[a] = "0"
		if l >= 0 {
			out[a] = idx[l]
		}
	}
	return out
}

// ShapeGroups groups the indices of vs by equal shape, groups and members
// in first-seen order: outputs of one shape share an element loop.
func ShapeGroups(vs []*ir.Value) [][]int {
	var groups [][]int
	for i, v := range vs {
		found := false
		for gi, g := range groups {
			if slices.Equal(vs[g[0]].Shape, v.Shape) {
				groups[gi] = append(groups[gi], i)
				found = true
				break
			}
		}
		if !found {
			groups = append(groups, []int{i})
		}
	}
	return groups
}
