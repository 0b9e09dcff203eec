package cpu

import (
	"errors"
	"fmt"

	"gkconv/internal/ir"
	"gkconv/internal/kernels"
)

// How the CPU generator drives the shared evaluator (kernels.Evaluator).
// An element index is a map m: dim a of a value runs along loop dim m[a] of
// the loop nest being written (g.lc), or is fixed at 0 (-1). Values in
// memory (inputs, constant arrays, materialised stages) are loaded at the
// offset the map and the nest's loop variables give; in row mode per-row
// values are computed once per row, and an intermediate several passes
// need may be kept in a row buffer (row.go).

func (g *gen) evaluator() *kernels.Evaluator[[]int] {
	return &kernels.Evaluator[[]int]{
		Index:     mapIndex{},
		Tmp:       g.newTmp,
		Load:      g.load,
		Reduce:    g.reduceAt,
		Generator: "C generator",
		Stored:    func(v *ir.Value) bool { return g.bufs[v] != nil },
		Enter:     g.enter,
		Computed:  g.computed,
	}
}

// eval returns a C expression for value v at index map m, emitting the
// statements it needs into sc.
func (g *gen) eval(sc *kernels.Scope, v *ir.Value, m []int) (string, error) {
	return g.ev.Eval(sc, v, m)
}

// mapIndex is the Indexer of loop maps.
type mapIndex struct{}

func (mapIndex) Normalize(_ *ir.Value, m []int) ([]int, error) { return m, nil }

func (mapIndex) Key(v *ir.Value, m []int) string { return mapKey(v, m) }

func (mapIndex) Broadcast(in, out []int64, m []int) ([]int, error) { return bcastMap(in, out, m) }

func (mapIndex) Reshape(_ *kernels.Scope, in, out []int64, m []int) ([]int, error) {
	im, ok := onesMap(in, out, m)
	if !ok {
		return nil, fmt.Errorf("reshape %v -> %v needs a materialised input", in, out)
	}
	return im, nil
}

func (mapIndex) Channel(bias *ir.Value, m []int, c int) []int {
	bm := []int{m[c]}
	if bias.Shape[0] == 1 {
		bm[0] = -1
	}
	return bm
}

func mapKey(v *ir.Value, m []int) string { return fmt.Sprintf("%p%v", v, m) }

// identityMap maps each dim of shape to the loop dim of the same index.
func identityMap(shape []int64) []int {
	m := make([]int, len(shape))
	for i, d := range shape {
		m[i] = i
		if d == 1 {
			m[i] = -1
		}
	}
	return m
}

// bcastMap derives an operand's index map from its consumer's by numpy
// broadcasting (right-aligned; operand dims of size 1 are fixed at 0).
func bcastMap(in, out []int64, m []int) ([]int, error) {
	off := len(out) - len(in)
	if off < 0 {
		return nil, fmt.Errorf("operand shape %v has higher rank than result %v", in, out)
	}
	res := make([]int, len(in))
	for a, d := range in {
		switch {
		case d == 1:
			res[a] = -1
		case d == out[a+off]:
			res[a] = m[a+off]
		default:
			return nil, fmt.Errorf("operand shape %v does not broadcast to %v", in, out)
		}
	}
	return res, nil
}

// onesMap maps a reshape whose input and output have the same dims apart
// from 1s (squeeze, unsqueeze, keepdims toggles): no index arithmetic needed.
func onesMap(in, out []int64, m []int) ([]int, bool) {
	res, ok := kernels.AlignOnes(in, out)
	if !ok {
		return nil, false
	}
	for a, j := range res {
		if j >= 0 {
			res[a] = m[j]
		}
	}
	return res, true
}

// usesInner reports whether map m indexes any inner (reduced) loop dim.
func (g *gen) usesInner(m []int) bool {
	for _, l := range m {
		if l >= g.p {
			return true
		}
	}
	return false
}

// enter computes a per-row value (row mode: m uses no inner dim) in the
// row's scope, once per row, and in a store nest a value that does not vary
// along the innermost loop before that loop.
func (g *gen) enter(sc *kernels.Scope, m []int) *kernels.Scope {
	if g.rowMode && sc.Parent() != nil && !g.usesInner(m) {
		return sc.Parent()
	}
	if !g.rowMode && g.hoistTo != nil && sc == g.hoistFrom && !g.usesInnermostLoop(m) {
		return g.hoistTo // a store nest's per-outer-iteration value (runNestHoisted)
	}
	return sc
}

// load reads v from a row buffer an earlier pass filled, or from its
// buffer.
func (g *gen) load(sc *kernels.Scope, v *ir.Value, m []int) (string, bool, error) {
	key := mapKey(v, m)
	if rb, ok := g.rowBufs[key]; ok && sc.Parent() != nil {
		if pass, done := g.rbDone[key]; done && pass < sc.Pass {
			t := g.newTmp("t")
			sc.Line("const %s %s = %s[%s];", kernels.ComputeType(v.DType), t, rb, g.innerOffset(g.lc))
			return t, true, nil
		}
	}
	if b := g.bufs[v]; b != nil {
		off := g.lc.offset(g.lc.accessStrides(b.shape, m))
		ct := kernels.ComputeType(v.DType)
		var e string
		if b.acc != "" {
			e = fmt.Sprintf("(%s)%s[%s]", ct, b.ptr, off)
		} else {
			e = kernels.LoadConv(b.dt, fmt.Sprintf("%s[%s]", b.ptr, off))
		}
		t := g.newTmp("t")
		sc.Line("const %s %s = %s;", ct, t, e)
		return t, true, nil
	}
	return "", false, nil
}

// computed records (collection run) or stores (row buffer) a value a
// row-wise pass computed.
func (g *gen) computed(sc *kernels.Scope, key, t string) {
	if sc.Parent() == nil || !g.rowMode {
		return
	}
	if g.collect {
		if g.passUses[key] == nil {
			g.passUses[key] = map[int]bool{}
		}
		g.passUses[key][sc.Pass] = true
	} else if rb, ok := g.rowBufs[key]; ok {
		if _, done := g.rbDone[key]; !done {
			sc.Line("%s[%s] = %s;", rb, g.innerOffset(g.lc), t)
			g.rbDone[key] = sc.Pass
		}
	}
}

// reduceAt is a reduction's result: materialised (general mode) or bound
// per row (row mode) before any use, so only a no-op reduction gets here.
func (g *gen) reduceAt(sc *kernels.Scope, n *ir.Node, m []int) (string, bool, error) {
	if kernels.IsNoopReduce(n) {
		e, err := g.eval(sc, n.Inputs[0], m)
		return e, false, err
	}
	return "", false, errors.New("reduction result used before it is computed")
}

// innerOffset is the offset of the current element within one row.
func (g *gen) innerOffset(lc *loopCtx) string {
	st := kernels.Strides(g.full[g.p:])
	s := make([]int64, len(g.full))
	copy(s[g.p:], st)
	return lc.offset(s)
}
