package cpu

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"gkconv/internal/ir"
	"gkconv/internal/kernels"
)

// emitRow writes the row-wise kernel: one loop over the rows F[:p] (a
// parallel task when large, see parallelFor), whose body declares the row's indices, runs
// each reduction pass over the row's inner elements F[p:], then stores the
// per-element outputs in one more pass and the per-row outputs once.
//
//	task: row buffers
//	  for (row in the task's share) {
//	    row indices, borrowed row buffers, prefetch row     (rowIndices, borrowRowBufs, planPrefetch)
//	    pass k: accumulators; inner loops combining; results (emitPass)
//	    epilogue: per-element stores; per-row stores         (emitEpilogue)
//	  }
//	  free row buffers                                       (writeRowLoop)
//
// It runs twice: a collection run (g.collect) records which intermediates
// each pass recomputes, then chooseRowBufs picks row buffers and the real
// run writes the code.
func (g *gen) emitRow(w *strings.Builder) error {
	g.rbDone = map[string]int{}
	r := g.newRowLoop()
	r.rowIndices()
	r.borrowRowBufs()
	r.planPrefetch()
	for k, pass := range r.passes {
		if err := r.emitPass(k, pass); err != nil {
			return err
		}
	}
	if err := r.emitEpilogue(); err != nil {
		return err
	}
	r.writeRowLoop(w)
	return nil
}

// rowLoop is the state of one emitRow: the row geometry and the body of
// the row loop being written.
type rowLoop struct {
	g         *gen
	F         []int64
	p         int
	passes    [][]*kernels.Reduction
	rows      int64 // number of rows: F[:p] elements
	inner     int64 // elements of a row: F[p:]
	lc        *loopCtx
	rb        strings.Builder // the per-row body
	row       *kernels.Scope  // per-row statements, in rb
	innerDims []int           // first dim of each inner loop (merged inner dims: g.rowMerge)
	innerSize []int64         // elements of each inner loop
	rbNames   []string        // row buffers, sorted
	// Lane blocking (row.go): the innermost dim N runs in blocks of lanes
	// elements when N >= lanes, in chunks of chunk elements between flushes.
	N, lanes, chunk int64
	blocked         bool
	bodyInd         string // indentation of a pass's per-element statements
	// pfPass is the pass that prefetches the next row (prefetch, its
	// statements); -1 for none.
	pfPass   int
	prefetch string
	// sumBufs are the row buffers of onnxruntime-order sums (ortSum), one
	// per such reduction, allocated per task as the row buffers are.
	sumBufs []string
}

func (g *gen) newRowLoop() *rowLoop {
	F, p := g.full, g.p
	r := &rowLoop{g: g, F: F, p: p, passes: g.rows.Passes, rows: ir.NumElements(F[:p]), inner: ir.NumElements(F[p:]), pfPass: -1}
	r.lc = newLoopCtx(F, g.rowMerge, func(_ int, d int) string {
		if d < p {
			return fmt.Sprintf("o%d", d)
		}
		return fmt.Sprintf("j%d", d)
	})
	g.lc = r.lc
	r.row = kernels.NewScope(&r.rb, "      ", nil)
	for _, n := range g.rowBufs {
		r.rbNames = append(r.rbNames, n)
	}
	sort.Strings(r.rbNames)
	for gi, last := range r.lc.glast {
		if last >= p {
			first := last
			for first > p && (F[first-1] == 1 || r.lc.grp[first-1] == gi) {
				first--
			}
			for F[first] == 1 {
				first++
			}
			r.innerDims = append(r.innerDims, first)
			r.innerSize = append(r.innerSize, r.lc.gsize[gi])
		}
	}
	if len(r.innerDims) > 0 {
		r.N = r.innerSize[len(r.innerSize)-1]
	}
	r.lanes = rowLanesFor(r.N)
	r.chunk = rowChunkTerms * r.lanes
	r.blocked = r.N >= r.lanes
	r.bodyInd = strings.Repeat("  ", len(r.innerDims)+3)
	if r.blocked {
		r.bodyInd = pad(len(r.innerDims) + 2)
	}
	return r
}

// pad is the indentation of inner loop k of the row body.
func pad(k int) string { return strings.Repeat("  ", k+3) }

// rowIndices emits the row's index in each outer dim, decomposed from the
// row number: "const int64_t o<d> = (row / <div>) % <F[d]>;".
func (r *rowLoop) rowIndices() {
	div := int64(1)
	for d := r.p - 1; d >= 0; d-- {
		if r.F[d] != 1 {
			if div == 1 && d == firstNonOne(r.F[:r.p]) {
				r.row.Line("const int64_t o%d = row;", d)
			} else {
				r.row.Line("const int64_t o%d = (row / %d) %% %d;", d, div, r.F[d])
			}
		}
		div *= r.F[d]
	}
}

// borrowRowBufs emits the row buffers that live in an output's row:
// "float *const rb<i> = out<k> + row * <inner>;".
func (r *rowLoop) borrowRowBufs() {
	for _, n := range r.rbNames {
		if oi, ok := r.g.rbOut[n]; ok {
			r.row.Line("float *const %s = out%d + row * %d;", n, oi, r.inner)
		}
	}
}

// planPrefetch prepares the prefetch of the next row's per-element inputs
// and outputs (one __builtin_prefetch per cache line of a lane block) for
// the pass after the first, which streams the row in: memory then runs
// while that pass computes instead of stalling the next row's first pass
// and stores. It emits the next row's number, "const int64_t pf = ...;".
func (r *rowLoop) planPrefetch() {
	if !r.blocked || len(r.innerDims) != 1 || r.rows <= 1 {
		return
	}
	g, F := r.g, r.F
	r.pfPass = min(1, len(r.passes))
	var pf strings.Builder
	for i, v := range g.body.Inputs {
		if ir.NumElements(v.Shape) != r.rows*r.inner {
			continue
		}
		if _, ok := onesMap(v.Shape, F, identityMap(F)); !ok {
			continue
		}
		for q := 0; q < max(1, v.DType.Size()*int(r.lanes)/64); q++ { // the block's cache lines
			fmt.Fprintf(&pf, "%s    __builtin_prefetch((const char *)(in%d + pf * %d + jb) + %d, 0, 3);\n", pad(0), i, r.inner, q*64)
		}
	}
	for i, v := range g.body.Outputs {
		if ir.NumElements(v.Shape) != r.rows*r.inner {
			continue
		}
		if _, ok := onesMap(v.Shape, F, identityMap(F)); !ok {
			continue
		}
		for q := 0; q < max(1, v.DType.Size()*int(r.lanes)/64); q++ {
			fmt.Fprintf(&pf, "%s    __builtin_prefetch((const char *)(out%d + pf * %d + jb) + %d, 1, 3);\n", pad(0), i, r.inner, q*64)
		}
	}
	r.prefetch = pf.String()
	if r.prefetch == "" {
		r.pfPass = -1
	} else {
		r.row.Line("const int64_t pf = row + 1 < %d ? row + 1 : row;", r.rows)
	}
}

// prefetchFor is the prefetch text of pass k ("" for every other pass).
func (r *rowLoop) prefetchFor(k int) string {
	if k == r.pfPass {
		return r.prefetch
	}
	return ""
}

// emitPass emits reduction pass k: the accumulators (per-row), a loop over
// the row's inner elements folding each reduction's input into them, and
// the results (merged lanes, then the finished value bound per row for the
// later passes).
func (r *rowLoop) emitPass(k int, pass []*kernels.Reduction) error {
	g := r.g
	var ib strings.Builder
	sc := kernels.NewScope(&ib, r.bodyInd, r.row)
	sc.Pass = k
	ort := make([]ortRow, len(pass))
	for i, rs := range pass {
		ort[i], _ = r.ortSum(rs)
	}
	accs, lanes, laneList, byOp := r.declareAccumulators(pass, ort)
	fullMap := identityMap(r.F)
	var streams []ortRow
	for i, rs := range pass {
		if ort[i].direct {
			continue // summed where it lies
		}
		e, err := g.eval(sc, rs.Node.Inputs[0], fullMap)
		if err != nil {
			return err
		}
		if o := ort[i]; o.stream {
			sc.Line("%s[jl] = %s;", o.blk, e)
			streams = append(streams, o)
		} else if o.ptr != "" {
			sc.Line("%s[%s] = %s;", o.ptr, g.innerOffset(r.lc), e)
		} else if la := lanes[i]; la != nil {
			sc.Line("%s[jl] = %s;", la.lanes, la.combine(e))
		} else {
			sc.Line("%s = %s;", accs[i], rs.Combine(accs[i], e))
		}
	}
	var clause strings.Builder
	for _, op := range []string{"+", "*", "max", "min"} {
		if l := byOp[op]; len(l) > 0 {
			fmt.Fprintf(&clause, " reduction(%s:%s)", op, strings.Join(l, ","))
		}
	}
	if r.blocked {
		r.blockLoops(ib.String(), clause.String(), laneList, streams, r.prefetchFor(k))
	} else {
		r.innerLoops(ib.String(), clause.String())
	}
	r.finishPass(pass, accs, lanes, ort)
	return nil
}

// ortRow is where an onnxruntime-order sum finds its row after its pass:
// ptr, the input's own row (direct) or a row buffer the pass fills.
type ortRow struct {
	ptr    string
	direct bool
	// stream: the sum is accumulated during the pass itself, in the same
	// order (ortStreams): acc the 8 float lanes of Eigen's two 4-float
	// packet accumulators (a gk_v8f), blk the block's values.
	stream   bool
	acc, blk string
}

// ortSum reports a reduction summed in onnxruntime's order, as the
// runtime's ReduceSum and ReduceMean sum (gk_ort_sum_row_f32, Eigen's redux
// order; a mean then divides by the count, and ReduceMean usually reaches
// the kernel expanded into the sum and a RealDiv): a float32 ReduceSum or
// ReduceMean over exactly the row's inner dims of an input laid out as the
// rows, rows of 1 to ortSumMaxRow elements. Its input
// is stored in a row buffer during the pass (or read where it lies, a body
// input) and summed once the row is complete, so the kernel has the
// unfused op's bits. Other sums keep the float lanes and double flushes.
func (r *rowLoop) ortSum(rs *kernels.Reduction) (ortRow, bool) {
	g, n := r.g, rs.Node
	x := n.Inputs[0]
	if (n.Op != "ReduceSum" && n.Op != "ReduceMean") || x.DType != ir.Float32 || r.inner < 1 || r.inner > ortSumMaxRow ||
		ir.NumElements(x.Shape) != r.rows*r.inner || softmaxDenominator(n) {
		return ortRow{}, false
	}
	for d, size := range r.F {
		if size != 1 && rs.Reduced[d] != (d >= r.p) {
			return ortRow{}, false
		}
	}
	if _, ok := onesMap(x.Shape, r.F, identityMap(r.F)); !ok {
		return ortRow{}, false
	}
	if r.ortStreams() {
		a := g.newTmp("os")
		return ortRow{stream: true, acc: a, blk: a + "b"}, true
	}
	for i, in := range g.body.Inputs {
		if in == x {
			return ortRow{ptr: fmt.Sprintf("(in%d + row * %d)", i, r.inner), direct: true}, true
		}
	}
	name := g.newTmp("sb")
	r.sumBufs = append(r.sumBufs, name)
	return ortRow{ptr: name}, true
}

// ortStreams reports whether this row layout accumulates its
// onnxruntime-order sums during their pass: gk_ort_sum_row_f32's order is
// then 8 float lanes, lane l taking elements l, l+8, l+16, ... in turn,
// added as (l0+l4 + l2+l6) + (l1+l5 + l3+l7), when every row starts on a
// 16-byte boundary of the tensor (no held-back head: rows of a multiple of
// 4 elements, or one row) and splits into whole blocks of a multiple of 8
// elements (no extra packet, no tail). Summed after the pass, a row of n
// elements is n/8 dependent adds with nothing beside them (InstanceNorm's
// rows of 12544: most of its time); during it, they overlap the pass's
// loads and arithmetic.
func (r *rowLoop) ortStreams() bool {
	return r.blocked && r.lanes%8 == 0 && r.N%r.lanes == 0 && (r.inner%4 == 0 || r.rows == 1)
}

// softmaxDenominator reports a sum of exp(x - max(x)) over the same axes:
// Softmax's (and LogSoftmax's) expansion. onnxruntime computes Softmax with
// MLAS, which accumulates the exponentials in vector lanes, not in its
// ReduceSum's order, and so does the runtime's Softmax (16 float lanes): no
// order to keep, and the lanes accumulate during the exponentials' pass
// instead of a row buffer summed in one dependent chain afterwards (a third
// of a 768-wide Softmax's time).
func softmaxDenominator(sum *ir.Node) bool {
	e := sum.Inputs[0].Producer
	if e == nil || e.Op != "Exp" {
		return false
	}
	d := e.Inputs[0].Producer
	if d == nil || d.Op != "Sub" {
		return false
	}
	m := d.Inputs[1].Producer
	if m == nil || m.Op != "ReduceMax" || m.Inputs[0] != d.Inputs[0] {
		return false
	}
	a, errA := kernels.NewReduction(sum, false)
	b, errB := kernels.NewReduction(m, false)
	return errA == nil && errB == nil && slices.Equal(a.Reduced, b.Reduced)
}

// declareAccumulators emits the per-row accumulators of a pass (none for
// onnxruntime-order sums): float lane arrays (and the double lanes sums
// flush into) for lane-blocked reductions, "<acc type> a<n> = <init>;" for
// the others, which the OpenMP SIMD clause reduces (byOp lists them per
// operator).
func (r *rowLoop) declareAccumulators(pass []*kernels.Reduction, ort []ortRow) (accs []string, lanes, laneList []*laneAcc, byOp map[string][]string) {
	accs = make([]string, len(pass))
	lanes = make([]*laneAcc, len(pass))
	byOp = map[string][]string{}
	for i, rs := range pass {
		if o := ort[i]; o.stream {
			// -0 + x is x for every x (+0 and -0 included), so starting
			// from -0 equals starting from the first two packets
			r.row.Line("gk_v8f %s = {-0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f};", o.acc)
			continue
		}
		if ort[i].ptr != "" {
			continue // summed after the pass
		}
		a := r.g.newTmp("a")
		if r.blocked && laneable(rs) {
			la := &laneAcc{rs: rs, lanes: a + "l"}
			if r.N%r.lanes != 0 {
				la.tail = a + "t"
				r.row.Line("float %s = %s;", la.tail, rs.Init)
			}
			// A row of one chunk has float lanes of at most rowChunkTerms
			// terms already: summed pairwise in float, without double
			// lanes, it costs less per row (1152 rows of 49: 20 -> 15 us).
			if rs.Op == "+" && r.inner > r.chunk {
				la.dbl = a + "d"
				r.row.Line("float %s[%d]; double %s[%d];", la.lanes, r.lanes, la.dbl, r.lanes)
				r.row.Line("for (int l = 0; l < %d; l++) %s[l] = 0.0;", r.lanes, la.dbl)
			} else {
				r.row.Line("float %s[%d];", la.lanes, r.lanes)
				r.row.Line("for (int l = 0; l < %d; l++) %s[l] = %s;", r.lanes, la.lanes, rs.Init)
			}
			lanes[i] = la
			laneList = append(laneList, la)
			continue
		}
		accs[i] = a
		byOp[rs.Op] = append(byOp[rs.Op], a)
		r.row.Line("%s %s = %s;", rs.Acc, a, rs.Init)
	}
	return accs, lanes, laneList, byOp
}

// finishPass emits each reduction's result after its pass: lanes summed
// pairwise, then "const <type> r<n> = (<type>)(<finish>);", bound in the
// row scope as the value at its per-row index.
func (r *rowLoop) finishPass(pass []*kernels.Reduction, accs []string, lanes []*laneAcc, ort []ortRow) {
	g := r.g
	for i, rs := range pass {
		if o := ort[i]; o.ptr != "" || o.stream {
			if o.stream {
				accs[i] = fmt.Sprintf("(((%s[0] + %s[4]) + (%s[2] + %s[6])) + ((%s[1] + %s[5]) + (%s[3] + %s[7])))",
					o.acc, o.acc, o.acc, o.acc, o.acc, o.acc, o.acc, o.acc)
			} else {
				accs[i] = fmt.Sprintf("gk_ort_sum_row_f32(%s, %d, row * %d)", o.ptr, r.inner, r.inner)
			}
			if rs.Node.Op == "ReduceMean" { // divided, as onnxruntime's mean
				accs[i] = fmt.Sprintf("(%s / %d.0f)", accs[i], r.inner)
			}
			v := rs.Node.Outputs[0]
			t := g.newTmp("r")
			r.row.Line("const float %s = %s;", t, accs[i])
			r.row.Remember(mapKey(v, g.rowMap(rs, v)), t)
			continue
		}
		if la := lanes[i]; la != nil {
			// Pairwise over the lanes.
			arr := la.lanes
			if la.dbl != "" {
				arr = la.dbl
			}
			r.row.Line("for (int w = %d; w > 0; w >>= 1) for (int l = 0; l < w; l++) %s[l] = %s;", r.lanes/2, arr, rs.Merge(arr+"[l]", arr+"[l + w]"))
			accs[i] = arr + "[0]"
			if la.tail != "" {
				accs[i] = "(" + rs.Merge(accs[i], la.tail) + ")"
			}
		}
		v := rs.Node.Outputs[0]
		t := g.newTmp("r")
		ct := kernels.ComputeType(v.DType)
		r.row.Line("const %s %s = (%s)(%s);", ct, t, ct, rs.Finish(accs[i]))
		r.row.Remember(mapKey(v, g.rowMap(rs, v)), t)
	}
}

// emitEpilogue emits the outputs: the per-element ones in one more pass
// over the row (all loads before any store, as row buffers may live in
// output rows), then the per-row ones, "out<i>[<row offset>] = ...;".
func (r *rowLoop) emitEpilogue() error {
	g, F, lc := r.g, r.F, r.lc
	fullMap := identityMap(F)
	epi := kernels.NewScope(&strings.Builder{}, r.bodyInd, r.row)
	epi.Pass = len(r.passes)
	var rowOuts []int
	var stores []string
	for i, v := range g.body.Outputs {
		m, ok := onesMap(v.Shape, F, fullMap)
		if !ok || !g.usesInner(m) {
			rowOuts = append(rowOuts, i)
			continue
		}
		e, err := g.eval(epi, v, m)
		if err != nil {
			return err
		}
		stores = append(stores, fmt.Sprintf("out%d[%s] = %s;", i, lc.offset(lc.accessStrides(v.Shape, m)), kernels.StoreConv(v.DType, e)))
	}
	for _, st := range stores {
		epi.Line("%s", st)
	}
	if len(stores) > 0 {
		if r.blocked {
			r.blockLoops(epi.SB.String(), "", nil, nil, r.prefetchFor(len(r.passes)))
		} else {
			r.innerLoops(epi.SB.String(), "")
		}
	}
	for _, i := range rowOuts {
		v := g.body.Outputs[i]
		m, ok := onesMap(v.Shape, F[:r.p], identityMap(F[:r.p]))
		if !ok {
			return fmt.Errorf("output %s does not fit the row layout", v.Name)
		}
		e, err := g.eval(r.row, v, m)
		if err != nil {
			return err
		}
		r.row.Line("out%d[%s] = %s;", i, lc.offset(lc.accessStrides(v.Shape, m)), kernels.StoreConv(v.DType, e))
	}
	return nil
}

// innerLoops wraps a pass body in plain loops over the row's inner dims,
// the innermost "#pragma omp simd<clause>".
func (r *rowLoop) innerLoops(body string, clause string) {
	rb := &r.rb
	for k, d := range r.innerDims {
		if k == len(r.innerDims)-1 {
			fmt.Fprintf(rb, "%s#pragma omp simd%s\n", pad(k), clause)
		}
		fmt.Fprintf(rb, "%sfor (int64_t j%d = 0; j%d < %d; j%d++) {\n", pad(k), d, d, r.innerSize[k], d)
	}
	if len(r.innerDims) == 0 {
		rb.WriteString("      {\n")
	}
	rb.WriteString(body)
	if len(r.innerDims) == 0 {
		rb.WriteString("      }\n")
	}
	for k := len(r.innerDims) - 1; k >= 0; k-- {
		fmt.Fprintf(rb, "%s}\n", pad(k))
	}
}

// blockLoops wraps a pass body in the lane-blocked loops: the outer inner
// dims plain, the innermost in chunks (clearing the float lanes of sums)
// of full SIMD blocks of r.lanes elements (j<d> = jb + jl), a last partial
// block, and the flush of the float lanes into the double lanes.
func (r *rowLoop) blockLoops(body, clause string, lanes []*laneAcc, streams []ortRow, prefetch string) {
	rb := &r.rb
	N, rowLanes, rowChunkElems := r.N, r.lanes, r.chunk
	outer := r.innerDims[:len(r.innerDims)-1]
	d := r.innerDims[len(r.innerDims)-1]
	for k, od := range outer {
		fmt.Fprintf(rb, "%sfor (int64_t j%d = 0; j%d < %d; j%d++) {\n", pad(k), od, od, r.innerSize[k], od)
	}
	ind := pad(len(outer))
	fmt.Fprintf(rb, "%sfor (int64_t jc = 0; jc < %d; jc += %d) {\n", ind, N, rowChunkElems)
	for _, la := range lanes {
		if la.dbl != "" {
			fmt.Fprintf(rb, "%s  for (int l = 0; l < %d; l++) %s[l] = 0.0f;\n", ind, rowLanes, la.lanes)
		}
	}
	fmt.Fprintf(rb, "%s  const int64_t je = jc + %d < %d ? jc + %d : %d;\n", ind, rowChunkElems, N, rowChunkElems, N)
	fmt.Fprintf(rb, "%s  int64_t jb = jc;\n", ind)
	fmt.Fprintf(rb, "%s  for (; jb + %d <= je; jb += %d) {\n", ind, rowLanes, rowLanes)
	rb.WriteString(prefetch)
	for _, o := range streams {
		fmt.Fprintf(rb, "%s    float %s[%d];\n", ind, o.blk, rowLanes)
	}
	fmt.Fprintf(rb, "%s    #pragma omp simd%s\n", ind, clause)
	fmt.Fprintf(rb, "%s    for (int64_t jl = 0; jl < %d; jl++) {\n", ind, rowLanes)
	fmt.Fprintf(rb, "%s      const int64_t j%d = jb + jl;\n", ind, d)
	rb.WriteString(body)
	fmt.Fprintf(rb, "%s    }\n", ind)
	for _, o := range streams {
		// the block's 8-element groups in turn: Eigen's packets in order
		// (one 8-float vector add each: as a plain loop over l, gcc kept
		// eight scalar chains, slower than the sum after the pass)
		fmt.Fprintf(rb, "%s    for (int q = 0; q < %d; q += 8) { gk_v8f v; memcpy(&v, %s + q, sizeof v); %s += v; }\n", ind, rowLanes, o.blk, o.acc)
	}
	fmt.Fprintf(rb, "%s  }\n", ind)
	if N%rowLanes != 0 {
		// The last partial block: lane reductions fold into their scalar
		// tail accumulators, SIMD-reduced when every one is a sum or a
		// product (max and min keep Combine's NaN rule in a plain loop).
		tail := body
		simd, vec := clause, len(lanes) > 0
		for _, la := range lanes {
			tail = strings.ReplaceAll(tail, la.lanes+"[jl]", la.tail)
			switch la.rs.Op {
			case "+", "*":
				simd += fmt.Sprintf(" reduction(%s:%s)", la.rs.Op, la.tail)
			default:
				vec = false
			}
		}
		if vec {
			fmt.Fprintf(rb, "%s  #pragma omp simd%s\n", ind, simd)
		}
		fmt.Fprintf(rb, "%s  for (int64_t jl = 0; jl < je - jb; jl++) {\n", ind)
		fmt.Fprintf(rb, "%s    const int64_t j%d = jb + jl;\n", ind, d)
		rb.WriteString(tail)
		fmt.Fprintf(rb, "%s  }\n", ind)
	}
	for _, la := range lanes {
		if la.dbl != "" {
			fmt.Fprintf(rb, "%s  #pragma omp simd\n", ind)
			fmt.Fprintf(rb, "%s  for (int l = 0; l < %d; l++) %s[l] += (double)%s[l];\n", ind, rowLanes, la.dbl, la.lanes)
		}
	}
	fmt.Fprintf(rb, "%s}\n", ind)
	for k := len(outer) - 1; k >= 0; k-- {
		fmt.Fprintf(rb, "%s}\n", pad(k))
	}
}

// writeRowLoop writes the loop over the rows around the row body: when the
// kernel is large, a task (parallelFor) over the rows, each task allocating
// the row buffers that borrow no output row; else the loop in place.
func (r *rowLoop) writeRowLoop(w *strings.Builder) {
	g := r.g
	par := r.rows > 1 && r.rows*r.inner >= parallelMinElems
	fmt.Fprintf(w, "  /* row-wise: %d rows of %d elements, %d reduction pass(es) */\n", r.rows, r.inner, len(r.passes))
	var pre, post strings.Builder
	for _, n := range r.rbNames {
		if _, ok := g.rbOut[n]; !ok {
			fmt.Fprintf(&pre, "    float *restrict %s = (float *)gk_alloc(sizeof(float) * %dULL);\n", n, max(r.inner, 1))
			fmt.Fprintf(&post, "    free(%s);\n", n)
		}
	}
	for _, n := range r.sumBufs {
		fmt.Fprintf(&pre, "    float *restrict %s = (float *)gk_alloc(sizeof(float) * %dULL);\n", n, max(r.inner, 1))
		fmt.Fprintf(&post, "    free(%s);\n", n)
	}
	if par {
		g.parallelFor(w, "  ", r.rows, "row", pre.String(), r.rb.String(), post.String())
		return
	}
	w.WriteString("  {\n")
	w.WriteString(pre.String())
	fmt.Fprintf(w, "    for (int64_t row = 0; row < %d; row++) {\n", r.rows)
	w.WriteString(r.rb.String())
	w.WriteString("    }\n")
	w.WriteString(post.String())
	w.WriteString("  }\n")
}
