package kernels

import (
	"errors"
	"fmt"
	"strings"

	"gkconv/internal/ir"
)

// The expression evaluator of every code generator. Eval returns a C
// expression for a body value at one element, writing the statements it
// needs into a Scope: the op's expression rule (exprs.go) over its
// operands, each operand evaluated at the index broadcasting gives it.
// Results are memoised per (value, index), so a subexpression used twice is
// computed once, in a register.
//
// What differs between generators is how an element is indexed and where a
// value comes from: the CPU generator indexes by a map from each dim of a
// value to a loop of its loop nest and reads materialised buffers; the
// device generators (ElemGen) index by one C expression per dim and loop
// over reductions inline. Evaluator takes those as an Indexer and hooks.

// Scope is a block of C statements with the values computed in it; lookups
// walk up to the enclosing scopes.
type Scope struct {
	SB  *strings.Builder
	Ind string
	// Pass is the reduction pass the statements run in (the CPU generator's
	// row-wise loops); 0 elsewhere.
	Pass   int
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

// Parent is the enclosing scope (nil at top level).
func (sc *Scope) Parent() *Scope { return sc.parent }

// Lookup returns the expression memoised under key in sc or an enclosing
// scope.
func (sc *Scope) Lookup(key string) (string, bool) {
	for s := sc; s != nil; s = s.parent {
		if e, ok := s.memo[key]; ok {
			return e, true
		}
	}
	return "", false
}

// Remember memoises e under key in sc.
func (sc *Scope) Remember(key, e string) { sc.memo[key] = e }

// Indexer is a generator's element index I: how an index of a result
// becomes the index of an operand.
type Indexer[I any] interface {
	// Normalize checks idx against v's shape and returns its canonical form
	// (one form per element, so memo keys match).
	Normalize(v *ir.Value, idx I) (I, error)
	// Key is the memo key of v at idx.
	Key(v *ir.Value, idx I) string
	// Broadcast maps the index of a result of shape out onto an operand of
	// shape in (numpy broadcasting).
	Broadcast(in, out []int64, idx I) (I, error)
	// Reshape maps the index of a reshape's output (shape out) onto its
	// input (shape in), writing into sc any index arithmetic it needs.
	Reshape(sc *Scope, in, out []int64, idx I) (I, error)
	// Channel is the index of a BiasAdd's 1-D bias at channel axis c of
	// the result index idx.
	Channel(bias *ir.Value, idx I, c int) I
}

// Evaluator writes C expressions for body values; see the file comment.
type Evaluator[I any] struct {
	Index Indexer[I]
	// Tmp returns a fresh C identifier with the prefix.
	Tmp func(prefix string) string
	// Load reads v at idx when v lives in memory (a body input, a constant
	// array, a buffer the generator materialised), writing the load into
	// sc; ok false means v is computed from its producer.
	Load func(sc *Scope, v *ir.Value, idx I) (e string, ok bool, err error)
	// Reduce is the value of reduction node n at idx; alias reports that e
	// is bound already (no temporary is declared for it).
	Reduce func(sc *Scope, n *ir.Node, idx I) (e string, alias bool, err error)
	// Generator names the generator in errors ("C generator").
	Generator string

	// Optional hooks.

	// Stored reports a one-element constant that lives in memory (it is
	// loaded, not written as a literal).
	Stored func(v *ir.Value) bool
	// Enter picks the scope a value at idx is computed in (the CPU row
	// loop computes per-row values once per row, not per element).
	Enter func(sc *Scope, idx I) *Scope
	// Computed is told that the value memoised under key was declared as
	// the temporary t in sc.
	Computed func(sc *Scope, key, t string)
}

// Eval returns a C expression for value v at idx, writing the statements it
// needs into sc.
func (e *Evaluator[I]) Eval(sc *Scope, v *ir.Value, idx I) (string, error) {
	if v == nil {
		return "", errors.New("missing operand")
	}
	idx, err := e.Index.Normalize(v, idx)
	if err != nil {
		return "", err
	}
	if c := v.Const; c != nil && c.NumElements() == 1 && (e.Stored == nil || !e.Stored(v)) {
		f, err := c.Float64s()
		if err != nil {
			return "", fmt.Errorf("constant %s: %w", v.Name, err)
		}
		return Literal(v.DType, f[0]), nil
	}
	if e.Enter != nil {
		sc = e.Enter(sc, idx)
	}
	key := e.Index.Key(v, idx)
	if s, ok := sc.Lookup(key); ok {
		return s, nil
	}
	if s, ok, err := e.Load(sc, v, idx); err != nil || ok {
		if ok {
			sc.memo[key] = s
		}
		return s, err
	}
	n := v.Producer
	if n == nil {
		return "", fmt.Errorf("value %s is neither an input, a constant nor a node output", v.Name)
	}
	expr, alias, err := e.nodeExpr(sc, n, v, idx)
	if err != nil {
		return "", err
	}
	if alias {
		sc.memo[key] = expr
		return expr, nil
	}
	t := e.Tmp("t")
	sc.Line("const %s %s = %s;", ComputeType(v.DType), t, expr)
	sc.memo[key] = t
	if e.Computed != nil {
		e.Computed(sc, key, t)
	}
	return t, nil
}

// nodeExpr builds the expression of node output v at idx; alias reports
// an expression that only re-indexes an operand (no temporary needed).
func (e *Evaluator[I]) nodeExpr(sc *Scope, n *ir.Node, v *ir.Value, idx I) (expr string, alias bool, err error) {
	fail := func(err error) (string, bool, error) {
		return "", false, fmt.Errorf("node %s (%s): %w", n.Name, n.Op, err)
	}
	operand := func(i int) (string, error) {
		in := n.Input(i)
		if in == nil {
			return "", fmt.Errorf("input %d is missing", i)
		}
		im, err := e.Index.Broadcast(in.Shape, v.Shape, idx)
		if err != nil {
			return "", err
		}
		return e.Eval(sc, in, im)
	}
	spill := func(x string) string {
		t := e.Tmp("t")
		sc.Line("const %s %s = %s;", ComputeType(v.DType), t, x)
		return t
	}
	switch {
	case IsReduce(n.Op):
		x, alias, err := e.Reduce(sc, n, idx)
		if err != nil {
			return fail(err)
		}
		return x, alias, nil
	case IsReshape(n.Op):
		x := n.Inputs[0]
		im, err := e.Index.Reshape(sc, x.Shape, v.Shape, idx)
		if err != nil {
			return fail(err)
		}
		s, err := e.Eval(sc, x, im)
		if err != nil {
			return fail(err)
		}
		return s, true, nil
	case ir.LookupOp(n.Op).PassesThrough(): // Identity, Dropout, BroadcastTo
		s, err := operand(0)
		if err != nil {
			return fail(err)
		}
		return s, true, nil
	case unaryOps[n.Op]:
		a, err := operand(0)
		if err != nil {
			return fail(err)
		}
		s, err := unaryExpr(n, a, n.Inputs[0].DType, v.DType)
		if err != nil {
			return fail(err)
		}
		return s, false, nil
	case binaryOps[n.Op]:
		a, err := operand(0)
		if err != nil {
			return fail(err)
		}
		b, err := operand(1)
		if err != nil {
			return fail(err)
		}
		s, err := binaryExpr(n.Op, a, b, n.Inputs[0].DType, v.DType, powConstOf(n))
		if err != nil {
			return fail(err)
		}
		return s, false, nil
	case variadicOps[n.Op]:
		s, err := variadicExpr(n, v.DType, operand, spill)
		if err != nil {
			return fail(err)
		}
		return s, false, nil
	case n.Op == "Select":
		s, err := selectExpr(operand)
		if err != nil {
			return fail(err)
		}
		return s, false, nil
	case n.Op == "Clip":
		s, err := clipExpr(n, operand, spill)
		if err != nil {
			return fail(err)
		}
		return s, false, nil
	case n.Op == "BiasAdd":
		x, err := operand(0)
		if err != nil {
			return fail(err)
		}
		c := biasChannelAxis(n, len(v.Shape))
		if c >= len(v.Shape) {
			return fail(fmt.Errorf("rank %d has no channel axis", len(v.Shape)))
		}
		b, err := e.Eval(sc, n.Inputs[1], e.Index.Channel(n.Inputs[1], idx, c))
		if err != nil {
			return fail(err)
		}
		return "(" + x + " + " + b + ")", false, nil
	}
	return fail(errors.New("not supported by the " + e.Generator))
}
