package kernels

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"gkconv/internal/ir"
)

// This file exports the pieces of the C generator that the device code
// generators (internal/kernels/cuda, internal/kernels/ascend) share: the
// scalar expression rules of every op, and ElemGen, an evaluator that writes
// C statements computing body values at symbolic element indices (the device
// generators decide which loops and threads the indices come from).

// StorageType is the C type a buffer of dt holds (fixed-width integer names).
func StorageType(dt ir.DType) (string, bool) { return storageType(dt) }

// ComputeType is the C type expressions of dt are computed in.
func ComputeType(dt ir.DType) string { return computeType(dt) }

// LoadConv converts a storage read into the compute type.
func LoadConv(dt ir.DType, e string) string { return loadConv(dt, e) }

// StoreConv converts a compute-type expression for a store into dt.
func StoreConv(dt ir.DType, e string) string { return storeConv(dt, e) }

// IsReduce reports whether op is a reduction the generators understand.
func IsReduce(op string) bool { return reduceOps[op] }

// IsNoopReduce reports a reduction with empty axes and noop_with_empty_axes.
func IsNoopReduce(n *ir.Node) bool { return isNoopReduce(n) }

// ConstArray writes a file-scope array definition named name holding v's
// constant data; qual (e.g. "__device__") is put in front of "static const".
func ConstArray(qual, name string, v *ir.Value) string {
	g := &gen{}
	g.writeConstArray(name, v)
	s := g.statics.String()
	if qual != "" {
		s = qual + " " + s
	}
	return s
}

// RowPlan reports whether body fits the row-wise strategy (every reduction
// reduces the same trailing axes of one shape F; outputs are per element of
// F or per row). F[:p] are the rows; passes groups the reductions so that a
// pass only needs the results of earlier passes.
func RowPlan(body *ir.Graph) (F []int64, p int, passes [][]*ir.Node, ok bool, err error) {
	g := newGen("k", body)
	ok, err = g.planRow()
	if err != nil || !ok {
		return nil, 0, nil, false, err
	}
	ps, err := g.passesOf()
	if err != nil {
		return nil, 0, nil, false, err
	}
	for _, pass := range ps {
		var nodes []*ir.Node
		for _, rs := range pass {
			nodes = append(nodes, rs.node)
		}
		passes = append(passes, nodes)
	}
	return g.full, g.p, passes, true, nil
}

// Reduction is the accumulation rule of one reduce node, in C.
type Reduction struct {
	rs  *reduceSpec
	Acc string // accumulator C type
	// Init is the identity; Count the number of elements folded per result.
	Init  string
	Count int64
	// Reduced marks the reduced axes of the input.
	Reduced []bool
}

// NewReduction describes reduce node n. With floatAcc, float32/float16
// inputs accumulate in float (device code: tree reductions keep the error
// small and double is slow there) instead of double.
func NewReduction(n *ir.Node, floatAcc bool) (*Reduction, error) {
	rs, err := newReduceSpec(n)
	if err != nil {
		return nil, err
	}
	if floatAcc && rs.acc == "double" && (n.Inputs[0].DType == ir.Float32 || n.Inputs[0].DType == ir.Float16 || n.Inputs[0].DType == ir.BFloat16) {
		rs.acc = "float"
		rs.init = map[string]string{"0.0": "0.0f", "1.0": "1.0f"}[rs.init]
	}
	return &Reduction{rs: rs, Acc: rs.acc, Init: rs.init, Count: rs.count, Reduced: rs.reduced}, nil
}

// Combine folds element x into accumulator s.
func (r *Reduction) Combine(s, x string) string { return r.rs.combine(s, x) }

// Merge folds two partial accumulators.
func (r *Reduction) Merge(a, b string) string { return r.rs.merge(a, b) }

// Finish turns the final accumulator into the result.
func (r *Reduction) Finish(s string) string { return r.rs.finish(s) }

// ElemGen writes C statements computing body values element by element. An
// index is one C expression per dim of the value ("0" for size-1 dims).
// Elementwise results are memoised per scope; a reduction met at an index
// whose result is not bound in the scope chain is computed inline by loops
// over its reduced axes (always correct; the device generators bind row
// results computed cooperatively instead).
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
}

// Tmp returns a fresh C identifier with the prefix.
func (g *ElemGen) Tmp(prefix string) string {
	g.tmp++
	return fmt.Sprintf("%s%d", prefix, g.tmp)
}

// Scope is a block of C statements; lookups of memoised values walk up to
// the enclosing scopes.
type Scope struct {
	SB     *strings.Builder
	Ind    string
	memo   map[string]string
	parent *Scope
}

// NewScope opens a scope writing to sb, nested in parent (nil: top level).
func NewScope(sb *strings.Builder, ind string, parent *Scope) *Scope {
	return &Scope{SB: sb, Ind: ind, memo: map[string]string{}, parent: parent}
}

// Line writes one statement.
func (sc *Scope) Line(format string, args ...any) {
	sc.SB.WriteString(sc.Ind)
	fmt.Fprintf(sc.SB, format, args...)
	sc.SB.WriteByte('\n')
}

func idxKey(v *ir.Value, idx []string) string {
	return fmt.Sprintf("%p|%s", v, strings.Join(idx, ","))
}

// Bind records that v at idx is the C expression e in sc.
func (sc *Scope) Bind(v *ir.Value, idx []string, e string) {
	sc.memo[idxKey(v, NormIdx(v.Shape, idx))] = e
}

func (sc *Scope) lookup(key string) (string, bool) {
	for s := sc; s != nil; s = s.parent {
		if e, ok := s.memo[key]; ok {
			return e, true
		}
	}
	return "", false
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
	st := stridesOf(shape)
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
	res := make([]string, len(in))
	j := 0
	ok := true
	for a, d := range in {
		if d == 1 {
			res[a] = "0"
			continue
		}
		for j < len(out) && out[j] == 1 {
			j++
		}
		if j >= len(out) || out[j] != d {
			ok = false
			break
		}
		res[a] = idx[j]
		j++
	}
	for ; ok && j < len(out); j++ {
		if out[j] != 1 {
			ok = false
		}
	}
	if ok {
		return res
	}
	lin := g.Tmp("f")
	sc.Line("const %s %s = %s;", g.IdxT, lin, Offset(out, idx))
	return g.Decompose(sc, lin, lin+"_", in)
}

// Eval returns a C expression for v at idx, writing the statements it needs
// into sc.
func (g *ElemGen) Eval(sc *Scope, v *ir.Value, idx []string) (string, error) {
	if v == nil {
		return "", errors.New("missing operand")
	}
	if len(idx) != len(v.Shape) {
		return "", fmt.Errorf("value %s: index rank %d for shape %v", v.Name, len(idx), v.Shape)
	}
	idx = NormIdx(v.Shape, idx)
	if c := v.Const; c != nil && c.NumElements() == 1 {
		f, err := c.Float64s()
		if err != nil {
			return "", fmt.Errorf("constant %s: %w", v.Name, err)
		}
		return literal(v.DType, f[0]), nil
	}
	key := idxKey(v, idx)
	if e, ok := sc.lookup(key); ok {
		return e, nil
	}
	n := v.Producer
	if v.Const != nil || n == nil {
		isIn := v.Const != nil
		for _, bi := range g.Body.Inputs {
			isIn = isIn || bi == v
		}
		if !isIn {
			return "", fmt.Errorf("value %s is neither an input, a constant nor a node output", v.Name)
		}
		t := g.Tmp("t")
		sc.Line("const %s %s = %s;", computeType(v.DType), t, g.Load(v, Offset(v.Shape, idx)))
		sc.memo[key] = t
		return t, nil
	}
	fail := func(err error) (string, error) { return "", fmt.Errorf("node %s (%s): %w", n.Name, n.Op, err) }
	operand := func(i int) (string, error) {
		in := n.Input(i)
		if in == nil {
			return "", fmt.Errorf("input %d is missing", i)
		}
		im, err := bcastIdx(in.Shape, v.Shape, idx)
		if err != nil {
			return "", err
		}
		return g.Eval(sc, in, im)
	}
	spill := func(e string) string {
		t := g.Tmp("t")
		sc.Line("const %s %s = %s;", computeType(v.DType), t, e)
		return t
	}
	var expr string
	alias := false // the result is the operand's expression itself
	switch {
	case reduceOps[n.Op]:
		if isNoopReduce(n) {
			e, err := g.Eval(sc, n.Inputs[0], idx)
			if err != nil {
				return fail(err)
			}
			expr, alias = e, true
			break
		}
		e, err := g.inlineReduce(sc, n, idx)
		if err != nil {
			return fail(err)
		}
		expr, alias = e, true
	case reshapeOps[n.Op]:
		x := n.Inputs[0]
		e, err := g.Eval(sc, x, g.reshapeIdx(sc, x.Shape, v.Shape, idx))
		if err != nil {
			return fail(err)
		}
		expr, alias = e, true
	case n.Op == "BroadcastTo" || n.Op == "Identity" || n.Op == "Dropout":
		e, err := operand(0)
		if err != nil {
			return fail(err)
		}
		expr, alias = e, true
	case unaryOps[n.Op]:
		a, err := operand(0)
		if err != nil {
			return fail(err)
		}
		if expr, err = unaryExpr(n, a, n.Inputs[0].DType, v.DType); err != nil {
			return fail(err)
		}
	case binaryOps[n.Op]:
		a, err := operand(0)
		if err != nil {
			return fail(err)
		}
		b, err := operand(1)
		if err != nil {
			return fail(err)
		}
		if expr, err = binaryExpr(n.Op, a, b, n.Inputs[0].DType, v.DType, powConstOf(n)); err != nil {
			return fail(err)
		}
	case variadicOps[n.Op]:
		e, err := variadicExpr(n, v.DType, operand, spill)
		if err != nil {
			return fail(err)
		}
		expr = e
	case n.Op == "Select":
		e, err := selectExpr(operand)
		if err != nil {
			return fail(err)
		}
		expr = e
	case n.Op == "Clip":
		e, err := clipExpr(n, operand, spill)
		if err != nil {
			return fail(err)
		}
		expr = e
	case n.Op == "BiasAdd":
		x, err := operand(0)
		if err != nil {
			return fail(err)
		}
		c := biasChannelAxis(n, len(v.Shape))
		if c >= len(idx) {
			return fail(fmt.Errorf("rank %d has no channel axis", len(idx)))
		}
		b, err := g.Eval(sc, n.Inputs[1], []string{idx[c]})
		if err != nil {
			return fail(err)
		}
		expr = "(" + x + " + " + b + ")"
	default:
		return fail(errors.New("not supported by the device code generator"))
	}
	if alias {
		sc.memo[key] = expr
		return expr, nil
	}
	t := g.Tmp("t")
	sc.Line("const %s %s = %s;", computeType(v.DType), t, expr)
	sc.memo[key] = t
	return t, nil
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
	ct := computeType(out.DType)
	sc.Line("const %s %s = (%s)(%s);", ct, t, ct, r.Finish(s))
	return t, nil
}

// CheckDeviceBody reports why body cannot become device code: the C
// generator's checks plus the device limits (no float64 transcendental
// functions: the device headers implement float versions only).
func CheckDeviceBody(body *ir.Graph) error {
	if err := CheckBody(body); err != nil {
		return err
	}
	var errs []error
	for _, n := range body.Nodes {
		for _, o := range n.Outputs {
			if o != nil && o.DType == ir.Float64 && opCost(n.Op) >= 3 {
				errs = append(errs, fmt.Errorf("node %s: %s on float64 is not supported on device targets", n.Name, n.Op))
			}
		}
	}
	return errors.Join(errs...)
}

// TypeList writes the MindSpore TypeIds of the values, "43," each.
func TypeList(vs []*ir.Value) string {
	var sb strings.Builder
	for _, v := range vs {
		fmt.Fprintf(&sb, "%d,", MindTypeID(v.DType))
	}
	return sb.String()
}

// WriteAtomic writes data to path through a temporary file and a rename, so
// readers never see a partial file.
func WriteAtomic(path string, data []byte) error { return writeAtomic(path, data) }

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
