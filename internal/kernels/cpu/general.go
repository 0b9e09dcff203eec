package cpu

import (
	"fmt"
	"slices"
	"strings"

	"gkconv/internal/ir"
	"gkconv/internal/kernels"
)

// General mode: reductions (and reshape inputs that are no plain view) are
// materialised in buffers, each by its own loop nest, then the outputs are
// computed grouped by shape, one loop nest each.

type stage struct {
	kind    int // 0: store values, 1: reduction
	shape   []int64
	vals    []*ir.Value
	targets []*buf
	red     *kernels.Reduction
	accBuf  *buf
	self    bool // materialises its own value: evaluate it, do not load it
	// ortRow: the reduction (kind 1) is an onnxruntime-order row sum of
	// src, ortRow elements a row (generalOrtSum).
	ortRow int64
	src    *buf
}

// emitGeneral materialises reductions (and reshape inputs that are no plain
// view), then computes the outputs grouped by shape, one loop nest each.
func (g *gen) emitGeneral(w *strings.Builder) error {
	// Which values live in memory: inputs, constants, reductions, reshape
	// inputs that are no plain view, and reshapes of any of those.
	inMem := func(v *ir.Value) bool { return g.bufs[v] != nil || v.Const != nil }
	bufLike := map[*ir.Value]bool{}
	mat := map[*ir.Value]bool{}
	for _, n := range g.body.Nodes {
		switch {
		case kernels.IsReduce(n.Op) && !kernels.IsNoopReduce(n):
			bufLike[n.Outputs[0]] = true
		case kernels.IsReshape(n.Op):
			x, o := n.Inputs[0], n.Outputs[0]
			if inMem(x) || bufLike[x] {
				bufLike[o] = true
				continue
			}
			if _, ok := onesMap(x.Shape, o.Shape, identityMap(o.Shape)); ok {
				continue
			}
			mat[x], bufLike[x], bufLike[o] = true, true, true
		}
	}
	var stages []*stage
	materialise := func(v *ir.Value) {
		st := &stage{shape: v.Shape, vals: []*ir.Value{v}}
		if idx, ok := g.outIdx[v]; ok {
			g.written[idx[0]] = true
			g.bufs[v] = &buf{ptr: fmt.Sprintf("out%d", idx[0]), dt: v.DType, shape: v.Shape}
		} else {
			st2, _ := kernels.StorageType(v.DType)
			g.bufs[v] = &buf{ptr: g.alloc(st2, ir.NumElements(v.Shape)), dt: v.DType, shape: v.Shape}
		}
		st.targets = []*buf{g.bufs[v]}
		st.self = true
		stages = append(stages, st)
	}
	for _, n := range g.body.Nodes {
		for _, o := range n.Outputs {
			if mat[o] {
				materialise(o)
			}
		}
		switch {
		case kernels.IsReduce(n.Op) && !kernels.IsNoopReduce(n):
			rs, err := kernels.NewReduction(n, false)
			if err != nil {
				return err
			}
			v := n.Outputs[0]
			st := &stage{kind: 1, shape: n.Inputs[0].Shape, red: rs}
			if row := generalOrtSum(rs); row > 0 {
				// the input's rows in memory, then one sum per row
				x := n.Inputs[0]
				if b := g.bufs[x]; b == nil || b.acc != "" || b.dt != ir.Float32 || !slices.Equal(b.shape, x.Shape) {
					materialise(x)
				}
				st.ortRow, st.src = row, g.bufs[x]
			}
			acc := g.alloc(rs.Acc, ir.NumElements(v.Shape))
			b := &buf{ptr: acc, dt: v.DType, shape: v.Shape, acc: rs.Acc}
			g.bufs[v] = b
			st.accBuf = b
			stages = append(stages, st)
		case kernels.IsReshape(n.Op) && bufLike[n.Outputs[0]]:
			x, o := n.Inputs[0], n.Outputs[0]
			if g.bufs[x] == nil {
				continue // a one-element constant: the view is the same scalar
			}
			b := *g.bufs[x]
			b.shape = o.Shape
			g.bufs[o] = &b
		}
	}
	// Outputs not yet written, grouped by shape in first-appearance order.
	var groups []*stage
	for i, v := range g.body.Outputs {
		if g.written[i] {
			continue
		}
		var grp *stage
		for _, s := range groups {
			if slices.Equal(s.shape, v.Shape) {
				grp = s
			}
		}
		if grp == nil {
			grp = &stage{shape: v.Shape}
			groups = append(groups, grp)
		}
		grp.vals = append(grp.vals, v)
		grp.targets = append(grp.targets, &buf{ptr: fmt.Sprintf("out%d", i), dt: v.DType, shape: v.Shape})
	}
	for _, st := range append(stages, groups...) {
		var err error
		if st.kind == 1 && st.ortRow > 0 {
			g.emitOrtSumNest(w, st)
		} else if st.kind == 1 {
			err = g.emitReduceNest(w, st)
		} else {
			err = g.emitStoreNest(w, st)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// runNest generates a loop body twice: once to record the accesses, once with
// the loop dims merged accordingly. It returns the body and the loop context.
func (g *gen) runNest(dims []int64, ind string, body func(sc *kernels.Scope, lc *loopCtx) error) (string, *loopCtx, error) {
	_, b, lc, err := g.runNestHoisted(dims, ind, false, body)
	return b, lc, err
}

// runNestHoisted is runNest that, with hoist, also returns the statements
// of the values that do not vary along the innermost loop (per-channel
// factors such as BatchNorm's scale/sqrt(var+eps)): computed once per outer
// iteration before the inner loop instead of per element. gcc does not move
// them out of a vectorised loop itself (a sqrt and a division per 8 lanes
// made a fused BatchNorm compute-bound). The values and their order of
// operations are the same, so are the results.
func (g *gen) runNestHoisted(dims []int64, ind string, hoist bool, body func(sc *kernels.Scope, lc *loopCtx) error) (string, string, *loopCtx, error) {
	iv := func(gi, _ int) string { return fmt.Sprintf("i%d", gi) }
	lc := newLoopCtx(dims, nil, iv)
	saved := g.tmp
	g.lc = lc
	if err := body(kernels.NewScope(&strings.Builder{}, ind, nil), lc); err != nil {
		return "", "", nil, err
	}
	g.tmp = saved
	lc2 := newLoopCtx(dims, mergePlan(dims, lc.rec), iv)
	var pre, sb strings.Builder
	g.lc = lc2
	sc := kernels.NewScope(&sb, ind, nil)
	if hoist {
		g.hoistTo = kernels.NewScope(&pre, ind, nil)
		sc = kernels.NewScope(&sb, ind, g.hoistTo)
		g.hoistFrom = sc
		defer func() { g.hoistFrom, g.hoistTo = nil, nil }()
	}
	if err := body(sc, lc2); err != nil {
		return "", "", nil, err
	}
	return pre.String(), sb.String(), lc2, nil
}

// usesInnermostLoop reports whether map m indexes a dim of the innermost
// loop of the nest being written.
func (g *gen) usesInnermostLoop(m []int) bool {
	last := len(g.lc.glast) - 1
	for _, l := range m {
		if l >= 0 && g.lc.grp[l] == last {
			return true
		}
	}
	return false
}

func (g *gen) emitStoreNest(w *strings.Builder, st *stage) error {
	total := ir.NumElements(st.shape)
	if total == 0 {
		return nil
	}
	depth := 0
	for _, d := range st.shape {
		if d != 1 {
			depth++
		}
	}
	ind := strings.Repeat("  ", depth+2)
	pre, body, lc, err := g.runNestHoisted(st.shape, ind, true, func(sc *kernels.Scope, lc *loopCtx) error {
		m := identityMap(st.shape)
		for i, v := range st.vals {
			var saved *buf
			if st.self {
				saved = g.bufs[v]
				delete(g.bufs, v)
			}
			e, err := g.eval(sc, v, m)
			if st.self {
				g.bufs[v] = saved
			}
			if err != nil {
				return err
			}
			t := st.targets[i]
			sc.Line("%s[%s] = %s;", t.ptr, lc.offset(lc.accessStrides(t.shape, m)), kernels.StoreConv(t.dt, e))
		}
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  { /* %s */\n", describeStage(st))
	g.writeLoops(w, lc, pre, body, total >= parallelMinElems, "")
	w.WriteString("  }\n")
	return nil
}

func describeStage(st *stage) string {
	var names []string
	for _, v := range st.vals {
		names = append(names, v.Name)
	}
	return fmt.Sprintf("%v: %s", st.shape, strings.Join(names, ", "))
}

// emitReduceNest accumulates a reduction in the input's natural order, so
// memory is read contiguously whatever the axes; a reduced innermost run is
// summed in a register first.
func (g *gen) emitReduceNest(w *strings.Builder, st *stage) error {
	rs, acc := st.red, st.accBuf
	x := rs.Node.Inputs[0]
	nacc := ir.NumElements(acc.shape)
	fmt.Fprintf(w, "  { /* %s %s over %v */\n", rs.Node.Op, rs.Node.Name, x.Shape)
	fmt.Fprintf(w, "    for (int64_t k = 0; k < %d; k++) %s[k] = %s;\n", nacc, acc.ptr, rs.Init)
	accStrides := func(lc *loopCtx) []int64 {
		st := kernels.Strides(rs.Keep)
		s := make([]int64, len(lc.dims))
		for a := range rs.Keep {
			if !rs.Reduced[a] {
				s[a] = st[a]
			}
		}
		return s
	}
	total := ir.NumElements(x.Shape)
	if total > 0 {
		// The innermost loop is a register reduction when its dim is reduced.
		var innerReduced bool
		body, lc, err := g.runNest(x.Shape, "      ", func(sc *kernels.Scope, lc *loopCtx) error {
			e, err := g.eval(sc, x, identityMap(x.Shape))
			if err != nil {
				return err
			}
			as := accStrides(lc)
			G := len(lc.glast)
			innerReduced = G > 0 && as[lc.glast[G-1]] == 0
			// Record the accumulator access in both forms: otherwise, when
			// the body reads only contiguous inputs, mergePlan would merge a
			// kept dim into the reduced one and sum every row into one slot.
			off := lc.offset(as)
			if innerReduced {
				sc.Line("s = %s;", rs.Combine("s", e))
			} else {
				sc.Line("%s[%s] = %s;", acc.ptr, off, rs.Combine(fmt.Sprintf("%s[%s]", acc.ptr, off), e))
			}
			return nil
		})
		if err != nil {
			return err
		}
		G := len(lc.gsize)
		as := accStrides(lc)
		par := total >= parallelMinElems && G > 1 && as[lc.glast[0]] != 0
		if innerReduced {
			// Outer loops, then a register accumulator over the innermost.
			inner := &loopCtx{dims: lc.dims, grp: lc.grp, glast: lc.glast[G-1:], gsize: lc.gsize[G-1:], vars: lc.vars[G-1:]}
			outer := &loopCtx{dims: lc.dims, grp: lc.grp, glast: lc.glast[:G-1], gsize: lc.gsize[:G-1], vars: lc.vars[:G-1]}
			var ib strings.Builder
			fmt.Fprintf(&ib, "      { %s s = %s;\n", rs.Acc, rs.Init)
			g.writeLoops(&ib, inner, "", body, false, fmt.Sprintf(" reduction(%s:s)", rs.Op))
			off := outer.offset(as)
			fmt.Fprintf(&ib, "      %s[%s] = %s; }\n", acc.ptr, off, rs.Merge(fmt.Sprintf("%s[%s]", acc.ptr, off), "s"))
			g.writeOuterLoops(w, outer, ib.String(), par)
		} else {
			if par {
				g.writeOuterLoops(w, lc, body, true)
			} else {
				g.writeLoops(w, lc, "", body, false, "")
			}
		}
	}
	if fin := rs.Finish("v"); fin != "v" {
		fmt.Fprintf(w, "    for (int64_t k = 0; k < %d; k++) { const %s v = %s[k]; %s[k] = %s; }\n", nacc, rs.Acc, acc.ptr, acc.ptr, fin)
	}
	w.WriteString("  }\n")
	return nil
}

// generalOrtSum is the row length of a reduction general mode sums in
// onnxruntime's order, as row mode does (rowLoop.ortSum): a float32
// ReduceSum or ReduceMean over a trailing run of dims (size-1 dims aside) of 1 to
// ortSumMaxRow elements; 0 for any other.
func generalOrtSum(rs *kernels.Reduction) int64 {
	x := rs.Node.Inputs[0]
	if (rs.Node.Op != "ReduceSum" && rs.Node.Op != "ReduceMean") || x.DType != ir.Float32 || rs.Count < 1 || rs.Count > ortSumMaxRow {
		return 0
	}
	kept := false // a kept dim after a reduced one
	for d := len(x.Shape) - 1; d >= 0; d-- {
		switch {
		case x.Shape[d] == 1:
		case !rs.Reduced[d]:
			kept = true
		case kept:
			return 0
		}
	}
	return rs.Count
}

// emitOrtSumNest sums each row of the reduction's input buffer with
// gk_ort_sum_row_f32 (row r starts at element r*row of the tensor); a mean
// divides the float32 sum. The accumulator buffer holds the result exactly.
func (g *gen) emitOrtSumNest(w *strings.Builder, st *stage) {
	rs, acc := st.red, st.accBuf
	rows := ir.NumElements(acc.shape)
	fmt.Fprintf(w, "  { /* %s %s over %v, onnxruntime's order */\n", rs.Node.Op, rs.Node.Name, rs.Node.Inputs[0].Shape)
	sum := fmt.Sprintf("gk_ort_sum_row_f32(%s + k * %d, %d, k * %d)", st.src.ptr, st.ortRow, st.ortRow, st.ortRow)
	if rs.Node.Op == "ReduceMean" { // divided in float32, as onnxruntime's mean
		sum = fmt.Sprintf("(%s / %d.0f)", sum, st.ortRow)
	}
	fmt.Fprintf(w, "    for (int64_t k = 0; k < %d; k++) %s[k] = %s;\n", rows, acc.ptr, sum)
	w.WriteString("  }\n")
}
