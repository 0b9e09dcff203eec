package kernels

import (
	"fmt"
	"strings"

	"gkconv/internal/ir"
)

// ElemGen is the evaluator of the device generators (internal/kernels/cuda,
// internal/kernels/ascend): it writes C statements computing body values
// element by element. An index is one C expression per dim of the value
// ("0" for size-1 dims); the generators decide which loops and threads the
// indices come from. A reduction met at an index whose result is not bound
// in the scope chain is computed inline by loops over its reduced axes
// (always correct; the generators bind row results computed cooperatively
// instead, see Bind).
type ElemGen struct {
	Body *ir.Graph
	// Load returns a compute-type expression reading element off of a body
	// input or constant array.
	Load func(v *ir.Value, off string) string
	// IdxT is the C integer type of index arithmetic ("int" or "long long").
	IdxT string
	// FloatAcc: see NewReduction.
	FloatAcc bool
	tmp      int
	ev       *Evaluator[[]string]
}

// Tmp returns a fresh C identifier with the prefix.
func (g *ElemGen) Tmp(prefix string) string {
	g.tmp++
	return fmt.Sprintf("%s%d", prefix, g.tmp)
}

// Eval returns a C expression for v at idx, writing the statements it needs
// into sc.
func (g *ElemGen) Eval(sc *Scope, v *ir.Value, idx []string) (string, error) {
	if g.ev == nil {
		g.ev = &Evaluator[[]string]{Index: elemIndex{g}, Tmp: g.Tmp, Load: g.loadLeaf, Reduce: g.reduce,
			Generator: "device code generator"}
	}
	return g.ev.Eval(sc, v, idx)
}

// Bind records that v at idx is the C expression e in sc (a row result
// computed cooperatively).
func (g *ElemGen) Bind(sc *Scope, v *ir.Value, idx []string, e string) {
	sc.Remember(idxKey(v, NormIdx(v.Shape, idx)), e)
}

// loadLeaf reads a body input or constant.
func (g *ElemGen) loadLeaf(sc *Scope, v *ir.Value, idx []string) (string, bool, error) {
	if v.Const == nil && v.Producer != nil {
		return "", false, nil
	}
	isIn := v.Const != nil
	for _, bi := range g.Body.Inputs {
		isIn = isIn || bi == v
	}
	if !isIn {
		return "", false, fmt.Errorf("value %s is neither an input, a constant nor a node output", v.Name)
	}
	t := g.Tmp("t")
	sc.Line("const %s %s = %s;", ComputeType(v.DType), t, g.Load(v, Offset(v.Shape, idx)))
	return t, true, nil
}

// reduce is a reduction's result at idx, looped inline.
func (g *ElemGen) reduce(sc *Scope, n *ir.Node, idx []string) (string, bool, error) {
	if IsNoopReduce(n) {
		e, err := g.Eval(sc, n.Inputs[0], idx)
		return e, true, err
	}
	e, err := g.inlineReduce(sc, n, idx)
	return e, true, err
}

// elemIndex is the Indexer of C index expressions.
type elemIndex struct{ g *ElemGen }

func (x elemIndex) Normalize(v *ir.Value, idx []string) ([]string, error) {
	if len(idx) != len(v.Shape) {
		return nil, fmt.Errorf("value %s: index rank %d for shape %v", v.Name, len(idx), v.Shape)
	}
	return NormIdx(v.Shape, idx), nil
}

func (elemIndex) Key(v *ir.Value, idx []string) string { return idxKey(v, idx) }

func (elemIndex) Broadcast(in, out []int64, idx []string) ([]string, error) {
	return bcastIdx(in, out, idx)
}

func (x elemIndex) Reshape(sc *Scope, in, out []int64, idx []string) ([]string, error) {
	return x.g.reshapeIdx(sc, in, out, idx), nil
}

func (elemIndex) Channel(_ *ir.Value, idx []string, c int) []string { return []string{idx[c]} }

func idxKey(v *ir.Value, idx []string) string {
	return fmt.Sprintf("%p|%s", v, strings.Join(idx, ","))
}

// NormIdx replaces the index of size-1 dims by "0".
func NormIdx(shape []int64, idx []string) []string {
	out := make([]string, len(idx))
	for a := range idx {
		out[a] = idx[a]
		if shape[a] == 1 {
			out[a] = "0"
		}
	}
	return out
}

// Offset is the row-major element offset of idx in shape.
func Offset(shape []int64, idx []string) string {
	st := Strides(shape)
	var terms []string
	for a, e := range idx {
		if shape[a] == 1 || e == "0" {
			continue
		}
		if st[a] == 1 {
			terms = append(terms, e)
		} else {
			terms = append(terms, fmt.Sprintf("%s*%d", e, st[a]))
		}
	}
	if len(terms) == 0 {
		return "0"
	}
	return strings.Join(terms, " + ")
}

// Decompose writes statements splitting the linear index lin over shape
// into per-dim index variables (prefix + dim) and returns the index.
func (g *ElemGen) Decompose(sc *Scope, lin, prefix string, shape []int64) []string {
	idx := make([]string, len(shape))
	div := int64(1)
	first := -1
	for a, d := range shape {
		if d != 1 && first < 0 {
			first = a
		}
	}
	for a := len(shape) - 1; a >= 0; a-- {
		d := shape[a]
		if d == 1 {
			idx[a] = "0"
			continue
		}
		name := fmt.Sprintf("%s%d", prefix, a)
		switch {
		case a == first && div == 1:
			sc.Line("const %s %s = %s;", g.IdxT, name, lin)
		case a == first:
			sc.Line("const %s %s = %s / %d;", g.IdxT, name, lin, div)
		case div == 1:
			sc.Line("const %s %s = %s %% %d;", g.IdxT, name, lin, d)
		default:
			sc.Line("const %s %s = (%s / %d) %% %d;", g.IdxT, name, lin, div, d)
		}
		idx[a] = name
		div *= d
	}
	return idx
}

// bcastIdx maps a consumer index onto an operand by numpy broadcasting.
func bcastIdx(in, out []int64, idx []string) ([]string, error) {
	off := len(out) - len(in)
	if off < 0 {
		return nil, fmt.Errorf("operand shape %v has higher rank than result %v", in, out)
	}
	res := make([]string, len(in))
	for a, d := range in {
		switch {
		case d == 1:
			res[a] = "0"
		case d == out[a+off]:
			res[a] = idx[a+off]
		default:
			return nil, fmt.Errorf("operand shape %v does not broadcast to %v", in, out)
		}
	}
	return res, nil
}

// reshapeIdx maps a reshape's output index onto its input: directly when
// the shapes only differ in 1s, else through the linear offset.
func (g *ElemGen) reshapeIdx(sc *Scope, in, out []int64, idx []string) []string {
	if m, ok := AlignOnes(in, out); ok {
		return PickIdx(idx, m)
	}
	lin := g.Tmp("f")
	sc.Line("const %s %s = %s;", g.IdxT, lin, Offset(out, idx))
	return g.Decompose(sc, lin, lin+"_", in)
}

// inlineReduce writes loops over the reduced axes of n for the result
// element at idx.
func (g *ElemGen) inlineReduce(sc *Scope, n *ir.Node, idx []string) (string, error) {
	r, err := NewReduction(n, g.FloatAcc)
	if err != nil {
		return "", err
	}
	x := n.Inputs[0]
	out := n.Outputs[0]
	keep := len(out.Shape) == len(x.Shape)
	xi := make([]string, len(x.Shape))
	k := 0
	s := g.Tmp("s")
	sc.Line("%s %s = %s;", r.Acc, s, r.Init)
	ind := sc.Ind
	var loops int
	for a, d := range x.Shape {
		switch {
		case r.Reduced[a]:
			if d == 1 {
				xi[a] = "0"
			} else {
				lv := g.Tmp("r")
				sc.SB.WriteString(ind)
				fmt.Fprintf(sc.SB, "for (%s %s = 0; %s < %d; %s++) {\n", g.IdxT, lv, lv, d, lv)
				ind += "  "
				loops++
				xi[a] = lv
			}
			if keep {
				k++
			}
		default:
			if k >= len(idx) {
				return "", fmt.Errorf("result rank %d does not match input %v", len(idx), x.Shape)
			}
			xi[a] = idx[k]
			k++
		}
	}
	inner := NewScope(sc.SB, ind, sc)
	e, err := g.Eval(inner, x, xi)
	if err != nil {
		return "", err
	}
	inner.Line("%s = %s;", s, r.Combine(s, e))
	for i := 0; i < loops; i++ {
		ind = ind[:len(ind)-2]
		sc.SB.WriteString(ind + "}\n")
	}
	t := g.Tmp("t")
	ct := ComputeType(out.DType)
	sc.Line("const %s %s = (%s)(%s);", ct, t, ct, r.Finish(s))
	return t, nil
}
