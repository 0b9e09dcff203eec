// Package kernels turns fused GraphKernel bodies into native CPU kernels: it
// writes one C function per body with the AKG CPU ABI
// `void <kernel_name>(void **args)` (args = [callback*, inputs..., outputs...]),
// compiles it with the system C compiler into a shared object (deduplicated,
// in parallel, through a content-addressed on-disk cache), records the
// converter_lite Custom attributes on the node and writes AKG kernel-info JSON.
package kernels

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"gkconv/internal/ir"
)

// Tuning constants of the generated loops.
const (
	parallelMinElems = 1 << 15 // below this a loop runs on one thread
	blockElems       = 8192    // 1-D loops are split into blocks of this size for threads
	rowBufMinCost    = 10      // a row intermediate read by two passes is buffered at this cost
	stackBufMaxElems = 256     // reduction accumulators up to this size live on the stack
)

// GenerateC returns the C source of body as a function named symbol with the
// AKG CPU ABI. Reductions over trailing axes with their elementwise prologue
// and epilogue (LayerNorm, Softmax) become one row-wise loop; anything else
// runs as a sequence of loop nests with materialised reductions.
func GenerateC(symbol string, body *ir.Graph) (string, error) {
	if body == nil {
		return "", errors.New("GraphKernel has no body")
	}
	if !validCIdent(symbol) {
		return "", fmt.Errorf("kernel name %q is not a C identifier", symbol)
	}
	if err := checkBody(body); err != nil {
		return "", err
	}
	g := newGen(symbol, body)
	src, rowErr := g.generate(true)
	if rowErr == nil {
		return src, nil
	}
	g = newGen(symbol, body)
	src, err := g.generate(false)
	if err != nil {
		return "", err
	}
	return src, nil
}

// CheckBody reports why body cannot be compiled, or nil.
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
		if _, ok := storageType(v.DType); !ok {
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
		if reduceOps[n.Op] {
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

func validCIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return false
	}
	return true
}

// buf is a value that lives in memory: a kernel input or output, a constant
// array, a materialised intermediate, or a reshape alias of one of those.
type buf struct {
	ptr   string
	dt    ir.DType
	shape []int64
	acc   string // non-empty: an accumulator array of this C type (loads cast)
}

type gen struct {
	body    *ir.Graph
	sym     string
	bufs    map[*ir.Value]*buf
	outIdx  map[*ir.Value][]int // body output positions of a value
	written map[int]bool        // outputs already stored by a materialising stage
	tmp     int
	statics strings.Builder // file-scope constant arrays
	allocs  strings.Builder
	frees   strings.Builder
	costs   map[*ir.Value]int

	// row mode
	rowMode  bool
	full     []int64           // the reduced tensors' shape F
	p        int               // F[:p] are rows, F[p:] the reduced inner dims
	rowBufs  map[string]string // memo key -> row buffer name
	rbDone   map[string]int    // memo key -> pass that filled the row buffer
	passUses map[string]map[int]bool
	collect  bool
	rbOut    map[string]int // row buffer name -> output whose row it borrows
}

func newGen(sym string, body *ir.Graph) *gen {
	g := &gen{body: body, sym: sym, bufs: map[*ir.Value]*buf{}, outIdx: map[*ir.Value][]int{},
		written: map[int]bool{}, costs: map[*ir.Value]int{}, rowBufs: map[string]string{},
		rbDone: map[string]int{}, passUses: map[string]map[int]bool{}, rbOut: map[string]int{}}
	for i, v := range body.Outputs {
		g.outIdx[v] = append(g.outIdx[v], i)
	}
	return g
}

func (g *gen) newTmp(prefix string) string {
	g.tmp++
	return fmt.Sprintf("%s%d", prefix, g.tmp)
}

// contiguous row-major strides.
func stridesOf(shape []int64) []int64 {
	s := make([]int64, len(shape))
	acc := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		s[i] = acc
		acc *= shape[i]
	}
	return s
}

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
	res, ok := AlignOnes(in, out)
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

func mapKey(v *ir.Value, m []int) string { return fmt.Sprintf("%p%v", v, m) }

// loopCtx describes the loops a scope runs in: original dims, how they are
// merged into loop groups, and the variable of each group.
type loopCtx struct {
	dims  []int64
	grp   []int // group of each original dim; -1 for a size-1 dim
	glast []int // last original dim of each group
	gsize []int64
	vars  []string
	rec   [][]int64 // strides of every access (collection run)
}

// newLoopCtx builds loops over dims; merge lists, for each original dim, whether
// it merges with the previous kept dim.
func newLoopCtx(dims []int64, merge []bool, varFor func(g int, first int) string) *loopCtx {
	lc := &loopCtx{dims: dims, grp: make([]int, len(dims))}
	for i, d := range dims {
		if d == 1 {
			lc.grp[i] = -1
			continue
		}
		if merge != nil && merge[i] && len(lc.glast) > 0 {
			gi := len(lc.glast) - 1
			lc.grp[i] = gi
			lc.glast[gi] = i
			lc.gsize[gi] *= d
			continue
		}
		lc.grp[i] = len(lc.glast)
		lc.glast = append(lc.glast, i)
		lc.gsize = append(lc.gsize, d)
		lc.vars = append(lc.vars, varFor(len(lc.glast)-1, i))
	}
	return lc
}

// mergePlan merges adjacent kept dims where every recorded access walks them
// as one contiguous run (stride[l] == stride[l+1]*dims[l+1]).
func mergePlan(dims []int64, rec [][]int64) []bool {
	merge := make([]bool, len(dims))
	prev := -1
	for i, d := range dims {
		if d == 1 {
			continue
		}
		if prev >= 0 {
			ok := true
			for _, s := range rec {
				if s[prev] != s[i]*d {
					ok = false
					break
				}
			}
			merge[i] = ok
		}
		prev = i
	}
	return merge
}

// offset writes the element offset of an access with the given strides.
func (lc *loopCtx) offset(strides []int64) string {
	lc.rec = append(lc.rec, strides)
	var terms []string
	for gi, last := range lc.glast {
		s := strides[last]
		if s == 0 {
			continue
		}
		if s == 1 {
			terms = append(terms, lc.vars[gi])
		} else {
			terms = append(terms, fmt.Sprintf("%s*%d", lc.vars[gi], s))
		}
	}
	if len(terms) == 0 {
		return "0"
	}
	return strings.Join(terms, " + ")
}

// accessStrides turns a value's index map into per-loop-dim strides.
func (lc *loopCtx) accessStrides(shape []int64, m []int) []int64 {
	st := stridesOf(shape)
	s := make([]int64, len(lc.dims))
	for a, l := range m {
		if l >= 0 {
			s[l] += st[a]
		}
	}
	return s
}

type scope struct {
	sb     *strings.Builder
	ind    string
	memo   map[string]string
	lc     *loopCtx
	parent *scope // row scope of an inner (per-element) scope in row mode
	pass   int
}

func (sc *scope) line(format string, args ...any) {
	sc.sb.WriteString(sc.ind)
	fmt.Fprintf(sc.sb, format, args...)
	sc.sb.WriteByte('\n')
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

// eval returns a C expression for value v at index map m (one loop dim or -1
// per dim of v), emitting the statements it needs into sc. Elementwise
// results are memoised per (value, map), so a subexpression used twice is
// computed once, in a register.
func (g *gen) eval(sc *scope, v *ir.Value, m []int) (string, error) {
	if v == nil {
		return "", errors.New("missing operand")
	}
	if c := v.Const; c != nil && c.NumElements() == 1 && g.bufs[v] == nil {
		f, err := c.Float64s()
		if err != nil {
			return "", fmt.Errorf("constant %s: %w", v.Name, err)
		}
		return literal(v.DType, f[0]), nil
	}
	if g.rowMode && sc.parent != nil && !g.usesInner(m) {
		sc = sc.parent
	}
	key := mapKey(v, m)
	if s, ok := sc.memo[key]; ok {
		return s, nil
	}
	if rb, ok := g.rowBufs[key]; ok && sc.parent != nil {
		if pass, done := g.rbDone[key]; done && pass < sc.pass {
			t := g.newTmp("t")
			sc.line("const %s %s = %s[%s];", computeType(v.DType), t, rb, g.innerOffset(sc.lc))
			sc.memo[key] = t
			return t, nil
		}
	}
	if b := g.bufs[v]; b != nil {
		off := sc.lc.offset(sc.lc.accessStrides(b.shape, m))
		ct := computeType(v.DType)
		var e string
		if b.acc != "" {
			e = fmt.Sprintf("(%s)%s[%s]", ct, b.ptr, off)
		} else {
			e = loadConv(b.dt, fmt.Sprintf("%s[%s]", b.ptr, off))
		}
		t := g.newTmp("t")
		sc.line("const %s %s = %s;", ct, t, e)
		sc.memo[key] = t
		return t, nil
	}
	n := v.Producer
	if n == nil {
		return "", fmt.Errorf("value %s is neither an input, a constant nor a node output", v.Name)
	}
	expr, err := g.nodeExpr(sc, n, v, m)
	if err != nil {
		return "", err
	}
	if reshapeOps[n.Op] || n.Op == "BroadcastTo" || n.Op == "Identity" || n.Op == "Dropout" {
		// Pure index remaps: the operand's variable is the result.
		sc.memo[key] = expr
		return expr, nil
	}
	t := g.newTmp("t")
	sc.line("const %s %s = %s;", computeType(v.DType), t, expr)
	sc.memo[key] = t
	if sc.parent != nil && g.rowMode {
		if g.collect {
			if g.passUses[key] == nil {
				g.passUses[key] = map[int]bool{}
			}
			g.passUses[key][sc.pass] = true
		} else if rb, ok := g.rowBufs[key]; ok {
			if _, done := g.rbDone[key]; !done {
				sc.line("%s[%s] = %s;", rb, g.innerOffset(sc.lc), t)
				g.rbDone[key] = sc.pass
			}
		}
	}
	return t, nil
}

// innerOffset is the offset of the current element within one row.
func (g *gen) innerOffset(lc *loopCtx) string {
	st := stridesOf(g.full[g.p:])
	s := make([]int64, len(g.full))
	copy(s[g.p:], st)
	return lc.offset(s)
}

// nodeExpr builds the expression of node output v at map m.
func (g *gen) nodeExpr(sc *scope, n *ir.Node, v *ir.Value, m []int) (string, error) {
	fail := func(err error) (string, error) { return "", fmt.Errorf("node %s (%s): %w", n.Name, n.Op, err) }
	operand := func(i int) (string, error) {
		in := n.Input(i)
		if in == nil {
			return "", fmt.Errorf("input %d is missing", i)
		}
		im, err := bcastMap(in.Shape, v.Shape, m)
		if err != nil {
			return "", err
		}
		return g.eval(sc, in, im)
	}
	spill := func(e string) string {
		t := g.newTmp("t")
		sc.line("const %s %s = %s;", computeType(v.DType), t, e)
		return t
	}
	switch {
	case reduceOps[n.Op]:
		if isNoopReduce(n) {
			e, err := g.eval(sc, n.Inputs[0], m)
			if err != nil {
				return fail(err)
			}
			return e, nil
		}
		return fail(errors.New("reduction result used before it is computed"))
	case reshapeOps[n.Op]:
		x := n.Inputs[0]
		im, ok := onesMap(x.Shape, v.Shape, m)
		if !ok {
			return fail(fmt.Errorf("reshape %v -> %v needs a materialised input", x.Shape, v.Shape))
		}
		e, err := g.eval(sc, x, im)
		if err != nil {
			return fail(err)
		}
		return e, nil
	case n.Op == "BroadcastTo" || n.Op == "Identity" || n.Op == "Dropout":
		e, err := operand(0)
		if err != nil {
			return fail(err)
		}
		return e, nil
	case unaryOps[n.Op]:
		a, err := operand(0)
		if err != nil {
			return fail(err)
		}
		e, err := unaryExpr(n, a, n.Inputs[0].DType, v.DType)
		if err != nil {
			return fail(err)
		}
		return e, nil
	case binaryOps[n.Op]:
		a, err := operand(0)
		if err != nil {
			return fail(err)
		}
		b, err := operand(1)
		if err != nil {
			return fail(err)
		}
		if n.Op == "RealDiv" && v.DType.IsFloat() && g.rowMode && sc.parent != nil {
			// Division by a per-row value (Softmax's sum): one reciprocal per
			// row, a multiply per element (at most 1 ulp apart).
			bm, err := bcastMap(n.Inputs[1].Shape, v.Shape, m)
			if err == nil && !g.usesInner(bm) {
				key := "inv|" + mapKey(n.Inputs[1], bm)
				inv, ok := sc.parent.memo[key]
				if !ok {
					inv = g.newTmp("t")
					sc.parent.line("const %s %s = %s / %s;", computeType(v.DType), inv, literal(v.DType, 1), b)
					sc.parent.memo[key] = inv
				}
				return "(" + a + " * " + inv + ")", nil
			}
		}
		e, err := binaryExpr(n.Op, a, b, n.Inputs[0].DType, v.DType, powConstOf(n))
		if err != nil {
			return fail(err)
		}
		return e, nil
	case variadicOps[n.Op]:
		e, err := variadicExpr(n, v.DType, operand, spill)
		if err != nil {
			return fail(err)
		}
		return e, nil
	case n.Op == "Select":
		e, err := selectExpr(operand)
		if err != nil {
			return fail(err)
		}
		return e, nil
	case n.Op == "Clip":
		e, err := clipExpr(n, operand, spill)
		if err != nil {
			return fail(err)
		}
		return e, nil
	case n.Op == "BiasAdd":
		x, err := operand(0)
		if err != nil {
			return fail(err)
		}
		c := biasChannelAxis(n, len(v.Shape))
		bias := n.Inputs[1]
		bm := []int{m[c]}
		if bias.Shape[0] == 1 {
			bm[0] = -1
		}
		b, err := g.eval(sc, bias, bm)
		if err != nil {
			return fail(err)
		}
		return "(" + x + " + " + b + ")", nil
	}
	return fail(errors.New("not supported by the C generator"))
}

func isNoopReduce(n *ir.Node) bool {
	if n.Attrs.Int("noop_with_empty_axes", 0) == 0 {
		return false
	}
	in := n.Input(1)
	return in == nil || in.Const != nil && in.Const.NumElements() == 0
}

// reduceSpec is a reduction's axes and accumulation rule.
type reduceSpec struct {
	node    *ir.Node
	reduced []bool
	count   int64
	acc     string // C type of the accumulator
	init    string
	omp     string // OpenMP reduction operator
	keep    []int64
	// nanAnyway: a Max/Min whose NaN reaches every output anyway (a
	// softmax's row max, see softmaxRowMax), so it skips the NaN test.
	nanAnyway bool
}

func newReduceSpec(n *ir.Node) (*reduceSpec, error) {
	x := n.Inputs[0]
	r := len(x.Shape)
	rs := &reduceSpec{node: n, reduced: make([]bool, r), count: 1}
	var axes []int64
	if in := n.Input(1); in != nil {
		a, err := in.Const.Int64s()
		if err != nil {
			return nil, fmt.Errorf("node %s: axes: %w", n.Name, err)
		}
		axes = a
	}
	if len(axes) == 0 {
		for i := range rs.reduced {
			rs.reduced[i] = true
		}
	}
	for _, a := range axes {
		if a < 0 {
			a += int64(r)
		}
		if a < 0 || a >= int64(r) {
			return nil, fmt.Errorf("node %s: axis %d out of range for rank %d", n.Name, a, r)
		}
		rs.reduced[a] = true
	}
	for i, d := range x.Shape {
		if rs.reduced[i] {
			rs.count *= d
			rs.keep = append(rs.keep, 1)
		} else {
			rs.keep = append(rs.keep, d)
		}
	}
	dt := x.DType
	ct := computeType(dt)
	switch n.Op {
	case "ReduceMax", "ReduceMin":
		rs.acc = ct
		if n.Op == "ReduceMax" {
			rs.omp = "max"
			rs.init = typeLimit(dt, false)
		} else {
			rs.omp = "min"
			rs.init = typeLimit(dt, true)
		}
	case "ReduceProd":
		rs.acc, rs.init, rs.omp = "double", "1.0", "*"
		if !dt.IsFloat() {
			rs.acc, rs.init = "int64_t", "1"
		}
	default:
		rs.acc, rs.init, rs.omp = "double", "0.0", "+"
		if !dt.IsFloat() {
			rs.acc, rs.init = "int64_t", "0"
			if n.Op == "ReduceMean" || n.Op == "ReduceL2" || n.Op == "ReduceLogSum" {
				rs.acc, rs.init = "double", "0.0"
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

// combine folds element x into accumulator s. Max and Min propagate NaN,
// as the op library and ONNX do: a NaN x is taken, and a NaN s stays
// (no comparison with it holds).
func (rs *reduceSpec) combine(s, x string) string {
	if rs.nanAnyway && rs.node.Op == "ReduceMax" {
		return fmt.Sprintf("(%s > %s ? %s : %s)", x, s, x, s)
	}
	switch rs.node.Op {
	case "ReduceMax":
		return fmt.Sprintf("(%s > %s || %s != %s ? %s : %s)", x, s, x, x, x, s)
	case "ReduceMin":
		return fmt.Sprintf("(%s < %s || %s != %s ? %s : %s)", x, s, x, x, x, s)
	case "ReduceProd":
		return fmt.Sprintf("%s * (%s)%s", s, rs.acc, x)
	case "ReduceSumSquare", "ReduceL2":
		return fmt.Sprintf("%s + (%s)%s * (%s)%s", s, rs.acc, x, rs.acc, x)
	case "ReduceL1":
		return fmt.Sprintf("%s + (%s)(%s < 0 ? -%s : %s)", s, rs.acc, x, x, x)
	}
	return fmt.Sprintf("%s + (%s)%s", s, rs.acc, x)
}

// merge folds two accumulators.
func (rs *reduceSpec) merge(a, b string) string {
	if rs.nanAnyway && rs.omp == "max" {
		return fmt.Sprintf("(%s > %s ? %s : %s)", b, a, b, a)
	}
	switch rs.omp {
	case "max": // NaN in either partial wins, as in combine
		return fmt.Sprintf("(%s > %s || %s != %s ? %s : %s)", b, a, b, b, b, a)
	case "min":
		return fmt.Sprintf("(%s < %s || %s != %s ? %s : %s)", b, a, b, b, b, a)
	case "*":
		return a + " * " + b
	}
	return a + " + " + b
}

// finish turns the final accumulator into the result.
func (rs *reduceSpec) finish(s string) string {
	switch rs.node.Op {
	case "ReduceMean":
		if rs.count == 0 {
			return "(" + s + " * __builtin_nan(\"\"))"
		}
		return fmt.Sprintf("(%s * %s)", s, fmtFloat(1/float64(rs.count), 64))
	case "ReduceL2":
		return "sqrt(" + s + ")"
	case "ReduceLogSum":
		return "log(" + s + ")"
	}
	return s
}

// generate writes the whole kernel; rowMode selects the row-wise strategy and
// fails (so the caller falls back) when the body does not fit it.
func (g *gen) generate(rowMode bool) (string, error) {
	var stages strings.Builder
	g.bindIO()
	if rowMode {
		ok, err := g.planRow()
		if err != nil || !ok {
			if err == nil {
				err = errors.New("body is not row-wise")
			}
			return "", err
		}
		g.rowMode = true
		// Collection run: which intermediates each pass recomputes.
		g.collect = true
		saved := g.tmp
		if err := g.emitRow(&strings.Builder{}); err != nil {
			return "", err
		}
		g.collect = false
		g.tmp = saved
		g.chooseRowBufs()
		if err := g.emitRow(&stages); err != nil {
			return "", err
		}
	} else {
		if err := g.emitGeneral(&stages); err != nil {
			return "", err
		}
	}
	var sb strings.Builder
	sb.WriteString(prelude)
	sb.WriteString(g.statics.String())
	fmt.Fprintf(&sb, "\nvoid %s(void **args) {\n", g.sym)
	for i, v := range g.body.Inputs {
		st, _ := storageType(v.DType)
		fmt.Fprintf(&sb, "  const %s *restrict in%d = (const %s *)args[%d]; /* %s %s%v */\n", st, i, st, i+1, v.Name, v.DType, v.Shape)
	}
	for i, v := range g.body.Outputs {
		st, _ := storageType(v.DType)
		fmt.Fprintf(&sb, "  %s *restrict out%d = (%s *)args[%d]; /* %s %s%v */\n", st, i, st, len(g.body.Inputs)+i+1, v.Name, v.DType, v.Shape)
	}
	sb.WriteString(g.allocs.String())
	sb.WriteString(stages.String())
	sb.WriteString(g.frees.String())
	sb.WriteString("}\n")
	return sb.String(), nil
}

// bindIO registers inputs and non-scalar constants as buffers.
func (g *gen) bindIO() {
	for i, v := range g.body.Inputs {
		if g.bufs[v] == nil {
			g.bufs[v] = &buf{ptr: fmt.Sprintf("in%d", i), dt: v.DType, shape: v.Shape}
		}
	}
	ci := 0
	addConst := func(v *ir.Value) {
		if v == nil || v.Const == nil || g.bufs[v] != nil || v.Const.NumElements() == 1 {
			return
		}
		name := fmt.Sprintf("gk_c%d", ci)
		ci++
		g.writeConstArray(name, v)
		g.bufs[v] = &buf{ptr: name, dt: v.DType, shape: v.Shape}
	}
	for _, v := range g.body.Consts {
		addConst(v)
	}
	for _, n := range g.body.Nodes {
		for i, in := range n.Inputs {
			if reduceOps[n.Op] && i == 1 || (reshapeOps[n.Op] || n.Op == "BroadcastTo") && i > 0 {
				continue // axes and shapes are read at generation time
			}
			addConst(in)
		}
	}
}

func (g *gen) writeConstArray(name string, v *ir.Value) {
	st, _ := storageType(v.DType)
	t := v.Const
	n := int(t.NumElements())
	fmt.Fprintf(&g.statics, "static const %s %s[%d] = {", st, name, max(n, 1))
	var elems []string
	switch t.DType {
	case ir.Float16, ir.BFloat16:
		for _, h := range t.U16()[:n] {
			elems = append(elems, fmt.Sprintf("0x%04x", h))
		}
	case ir.Float32, ir.Float64:
		f, _ := t.Float64s()
		for _, x := range f {
			elems = append(elems, literal(t.DType, x))
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
			g.statics.WriteString("\n  ")
		}
		g.statics.WriteString(e)
		g.statics.WriteString(", ")
	}
	g.statics.WriteString("\n};\n")
}

// alloc declares a heap (or small stack) array of n elements of ctype.
func (g *gen) alloc(ctype string, n int64) string {
	name := g.newTmp("m")
	if n <= stackBufMaxElems {
		fmt.Fprintf(&g.allocs, "  %s %s[%d];\n", ctype, name, max(n, 1))
		return name
	}
	fmt.Fprintf(&g.allocs, "  %s *restrict %s = (%s *)gk_alloc(sizeof(%s) * %dULL);\n", ctype, name, ctype, ctype, n)
	fmt.Fprintf(&g.frees, "  free(%s);\n", name)
	return name
}

// ---------------------------------------------------------------- general mode

type stage struct {
	kind    int // 0: store values, 1: reduction
	shape   []int64
	vals    []*ir.Value
	targets []*buf
	red     *reduceSpec
	accBuf  *buf
	self    bool // materialises its own value: evaluate it, do not load it
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
		case reduceOps[n.Op] && !isNoopReduce(n):
			bufLike[n.Outputs[0]] = true
		case reshapeOps[n.Op]:
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
			st2, _ := storageType(v.DType)
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
		case reduceOps[n.Op] && !isNoopReduce(n):
			rs, err := newReduceSpec(n)
			if err != nil {
				return err
			}
			v := n.Outputs[0]
			acc := g.alloc(rs.acc, ir.NumElements(v.Shape))
			b := &buf{ptr: acc, dt: v.DType, shape: v.Shape, acc: rs.acc}
			g.bufs[v] = b
			stages = append(stages, &stage{kind: 1, shape: n.Inputs[0].Shape, red: rs, accBuf: b})
		case reshapeOps[n.Op] && bufLike[n.Outputs[0]]:
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
		if st.kind == 1 {
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
func (g *gen) runNest(dims []int64, ind string, body func(sc *scope) error) (string, *loopCtx, error) {
	iv := func(gi, _ int) string { return fmt.Sprintf("i%d", gi) }
	lc := newLoopCtx(dims, nil, iv)
	saved := g.tmp
	if err := body(&scope{sb: &strings.Builder{}, ind: ind, memo: map[string]string{}, lc: lc}); err != nil {
		return "", nil, err
	}
	g.tmp = saved
	lc2 := newLoopCtx(dims, mergePlan(dims, lc.rec), iv)
	var sb strings.Builder
	if err := body(&scope{sb: &sb, ind: ind, memo: map[string]string{}, lc: lc2}); err != nil {
		return "", nil, err
	}
	return sb.String(), lc2, nil
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
	body, lc, err := g.runNest(st.shape, ind, func(sc *scope) error {
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
			sc.line("%s[%s] = %s;", t.ptr, sc.lc.offset(sc.lc.accessStrides(t.shape, m)), storeConv(t.dt, e))
		}
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  { /* %s */\n", describeStage(st))
	writeLoops(w, lc, body, total >= parallelMinElems, "")
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

// writeLoops wraps body in the loops of lc: the outer loops parallel (when
// par), the innermost one SIMD; a single loop is split into blocks so it can
// be both. simdClause is appended to the innermost simd pragma.
func writeLoops(w *strings.Builder, lc *loopCtx, body string, par bool, simdClause string) {
	G := len(lc.gsize)
	ind := func(k int) string { return strings.Repeat("  ", k+2) }
	switch {
	case G == 0:
		w.WriteString(body)
	case G == 1:
		n := lc.gsize[0]
		if par && n > 2*blockElems {
			nb := (n + blockElems - 1) / blockElems
			fmt.Fprintf(w, "%s#pragma omp parallel for schedule(static)\n", ind(0))
			fmt.Fprintf(w, "%sfor (int64_t b = 0; b < %d; b++) {\n", ind(0), nb)
			fmt.Fprintf(w, "%s  const int64_t e = b * %d + %d < %d ? b * %d + %d : %d;\n", ind(0), blockElems, blockElems, n, blockElems, blockElems, n)
			fmt.Fprintf(w, "%s  #pragma omp simd%s\n", ind(0), simdClause)
			fmt.Fprintf(w, "%s  for (int64_t %s = b * %d; %s < e; %s++) {\n", ind(0), lc.vars[0], blockElems, lc.vars[0], lc.vars[0])
			w.WriteString(body)
			fmt.Fprintf(w, "%s  }\n%s}\n", ind(0), ind(0))
			return
		}
		fmt.Fprintf(w, "%s#pragma omp simd%s\n", ind(0), simdClause)
		fmt.Fprintf(w, "%sfor (int64_t %s = 0; %s < %d; %s++) {\n", ind(0), lc.vars[0], lc.vars[0], n, lc.vars[0])
		w.WriteString(body)
		fmt.Fprintf(w, "%s}\n", ind(0))
	default:
		if par {
			if G > 2 {
				fmt.Fprintf(w, "%s#pragma omp parallel for collapse(%d) schedule(static)\n", ind(0), G-1)
			} else {
				fmt.Fprintf(w, "%s#pragma omp parallel for schedule(static)\n", ind(0))
			}
		}
		for k := 0; k < G; k++ {
			if k == G-1 {
				fmt.Fprintf(w, "%s#pragma omp simd%s\n", ind(k), simdClause)
			}
			fmt.Fprintf(w, "%sfor (int64_t %s = 0; %s < %d; %s++) {\n", ind(k), lc.vars[k], lc.vars[k], lc.gsize[k], lc.vars[k])
		}
		w.WriteString(body)
		for k := G - 1; k >= 0; k-- {
			fmt.Fprintf(w, "%s}\n", ind(k))
		}
	}
}

// emitReduceNest accumulates a reduction in the input's natural order, so
// memory is read contiguously whatever the axes; a reduced innermost run is
// summed in a register first.
func (g *gen) emitReduceNest(w *strings.Builder, st *stage) error {
	rs, acc := st.red, st.accBuf
	x := rs.node.Inputs[0]
	nacc := ir.NumElements(acc.shape)
	fmt.Fprintf(w, "  { /* %s %s over %v */\n", rs.node.Op, rs.node.Name, x.Shape)
	fmt.Fprintf(w, "    for (int64_t k = 0; k < %d; k++) %s[k] = %s;\n", nacc, acc.ptr, rs.init)
	accStrides := func(lc *loopCtx) []int64 {
		st := stridesOf(rs.keep)
		s := make([]int64, len(lc.dims))
		for a := range rs.keep {
			if !rs.reduced[a] {
				s[a] = st[a]
			}
		}
		return s
	}
	total := ir.NumElements(x.Shape)
	if total > 0 {
		// The innermost loop is a register reduction when its dim is reduced.
		var innerReduced bool
		body, lc, err := g.runNest(x.Shape, "      ", func(sc *scope) error {
			e, err := g.eval(sc, x, identityMap(x.Shape))
			if err != nil {
				return err
			}
			as := accStrides(sc.lc)
			G := len(sc.lc.glast)
			innerReduced = G > 0 && as[sc.lc.glast[G-1]] == 0
			// Record the accumulator access in both forms: otherwise, when
			// the body reads only contiguous inputs, mergePlan would merge a
			// kept dim into the reduced one and sum every row into one slot.
			off := sc.lc.offset(as)
			if innerReduced {
				sc.line("s = %s;", rs.combine("s", e))
			} else {
				sc.line("%s[%s] = %s;", acc.ptr, off, rs.combine(fmt.Sprintf("%s[%s]", acc.ptr, off), e))
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
			fmt.Fprintf(&ib, "      { %s s = %s;\n", rs.acc, rs.init)
			writeLoops(&ib, inner, body, false, fmt.Sprintf(" reduction(%s:s)", rs.omp))
			off := outer.offset(as)
			fmt.Fprintf(&ib, "      %s[%s] = %s; }\n", acc.ptr, off, rs.merge(fmt.Sprintf("%s[%s]", acc.ptr, off), "s"))
			writeOuterLoops(w, outer, ib.String(), par)
		} else {
			if par {
				writeOuterLoops(w, lc, body, true)
			} else {
				writeLoops(w, lc, body, false, "")
			}
		}
	}
	if fin := rs.finish("v"); fin != "v" {
		fmt.Fprintf(w, "    for (int64_t k = 0; k < %d; k++) { const %s v = %s[k]; %s[k] = %s; }\n", nacc, rs.acc, acc.ptr, acc.ptr, fin)
	}
	w.WriteString("  }\n")
	return nil
}

// writeOuterLoops writes plain loops (the first parallel when par) with the
// innermost SIMD only when the body is a plain statement list.
func writeOuterLoops(w *strings.Builder, lc *loopCtx, body string, par bool) {
	G := len(lc.gsize)
	ind := func(k int) string { return strings.Repeat("  ", k+2) }
	for k := 0; k < G; k++ {
		if k == 0 && par {
			fmt.Fprintf(w, "%s#pragma omp parallel for schedule(static)\n", ind(k))
		}
		fmt.Fprintf(w, "%sfor (int64_t %s = 0; %s < %d; %s++) {\n", ind(k), lc.vars[k], lc.vars[k], lc.gsize[k], lc.vars[k])
	}
	w.WriteString(body)
	for k := G - 1; k >= 0; k-- {
		fmt.Fprintf(w, "%s}\n", ind(k))
	}
}

// ---------------------------------------------------------------- row mode

// planRow checks that every reduction reduces the same trailing axes of
// tensors of one shape F and that every output is per element of F or per
// row; it fixes F and p.
func (g *gen) planRow() (bool, error) {
	var reds []*reduceSpec
	for _, n := range g.body.Nodes {
		if reduceOps[n.Op] && !isNoopReduce(n) {
			rs, err := newReduceSpec(n)
			if err != nil {
				return false, err
			}
			reds = append(reds, rs)
		}
	}
	if len(reds) == 0 {
		return false, nil
	}
	F := reds[0].node.Inputs[0].Shape
	p := -1
	for _, rs := range reds {
		if !slices.Equal(rs.node.Inputs[0].Shape, F) {
			return false, nil
		}
		q := len(F)
		for q > 0 && rs.reduced[q-1] {
			q--
		}
		for a := 0; a < q; a++ {
			if rs.reduced[a] {
				return false, nil
			}
		}
		if p >= 0 && q != p {
			return false, nil
		}
		p = q
	}
	g.full, g.p = F, p
	for _, v := range g.body.Outputs {
		if _, ok := onesMap(v.Shape, F, identityMap(F)); ok {
			continue
		}
		if _, ok := onesMap(v.Shape, F[:p], identityMap(F[:p])); ok {
			continue
		}
		return false, nil
	}
	return true, nil
}

// passesOf groups reductions into passes: a reduction runs in the first pass
// after every reduction its input depends on.
func (g *gen) passesOf() ([][]*reduceSpec, error) {
	passOf := map[*ir.Value]int{} // value -> 1 + last pass it depends on (0: none)
	var dep func(v *ir.Value) int
	dep = func(v *ir.Value) int {
		if v == nil || v.Producer == nil {
			return 0
		}
		if d, ok := passOf[v]; ok {
			return d
		}
		n := v.Producer
		d := 0
		for _, in := range n.Inputs {
			if x := dep(in); x > d {
				d = x
			}
		}
		if reduceOps[n.Op] && !isNoopReduce(n) {
			d++ // the result exists after pass d-1 ... so users run at pass >= d
		}
		passOf[v] = d
		return d
	}
	var passes [][]*reduceSpec
	for _, n := range g.body.Nodes {
		if !reduceOps[n.Op] || isNoopReduce(n) {
			continue
		}
		rs, err := newReduceSpec(n)
		if err != nil {
			return nil, err
		}
		rs.nanAnyway = softmaxRowMax(g.body, n)
		k := dep(n.Inputs[0])
		for len(passes) <= k {
			passes = append(passes, nil)
		}
		passes[k] = append(passes[k], rs)
	}
	return passes, nil
}

func (g *gen) chooseRowBufs() {
	fullKey := map[string]*ir.Value{}
	for _, n := range g.body.Nodes {
		for _, o := range n.Outputs {
			if o != nil && slices.Equal(o.Shape, g.full) {
				fullKey[mapKey(o, identityMap(g.full))] = o
			}
		}
	}
	i := 0
	keys := make([]string, 0, len(g.passUses))
	for k := range g.passUses {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		v, ok := fullKey[key]
		if !ok || len(g.passUses[key]) < 2 || g.cost(v) < rowBufMinCost {
			continue
		}
		if computeType(v.DType) != "float" {
			continue
		}
		g.rowBufs[key] = fmt.Sprintf("rb%d", i)
		i++
	}
	// A row buffer borrows the row of a float32 per-element output: the
	// output row is written only in the epilogue, after its last read, and
	// the buffer's stores then warm the cache lines the epilogue writes.
	names := make([]string, 0, len(g.rowBufs))
	for _, n := range g.rowBufs {
		names = append(names, n)
	}
	sort.Strings(names)
	taken := map[int]bool{}
	for _, name := range names {
		for oi, v := range g.body.Outputs {
			if taken[oi] || v.DType != ir.Float32 || ir.NumElements(v.Shape) != ir.NumElements(g.full) {
				continue
			}
			if m, ok := onesMap(v.Shape, g.full, identityMap(g.full)); !ok || !g.usesInner(m) {
				continue
			}
			taken[oi] = true
			g.rbOut[name] = oi
			break
		}
	}
}

// Row-mode blocking. A long innermost row dim runs in blocks of L elements
// (rowLanesFor) with one accumulator per lane, so a reduction is several
// independent vector chains instead of one latency-bound chain. Float lane
// sums are flushed into double lanes every rowChunkTerms*L elements, so each
// float partial sum has at most rowChunkTerms (16) terms, and the double
// lanes are summed pairwise: far more accurate than a float row sum.
const rowChunkTerms = 16

// rowLanesFor is L for rows of n elements: 64 lanes (four AVX-512 chains)
// for long rows, fewer for short ones, whose per-row cost is dominated by
// clearing and pairwise-summing the lanes (bert's softmax, rows of 128:
// 0.136 -> 0.120 ms per call with 16 lanes instead of 64).
func rowLanesFor(n int64) int64 {
	switch {
	case n <= 256:
		return 16
	case n <= 1024:
		return 32
	}
	return 64
}

// laneable reports whether a reduction accumulates in float lanes.
func laneable(rs *reduceSpec) bool {
	if computeType(rs.node.Inputs[0].DType) != "float" {
		return false
	}
	switch rs.node.Op {
	case "ReduceMax", "ReduceMin", "ReduceSum", "ReduceMean", "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSum":
		return true
	}
	return false
}

// laneAcc is the lane arrays of one lane-blocked reduction: lanes (float,
// indexed by jl) and, for sums, dbl (the double lanes they flush into).
type laneAcc struct {
	rs    *reduceSpec
	lanes string
	dbl   string
}

// combine folds x into the lane jl of a.
func (a *laneAcc) combine(x string) string {
	f := *a.rs
	f.acc = "float"
	return f.combine(a.lanes+"[jl]", x)
}

// cost of recomputing v from buffers and reduction results.
func (g *gen) cost(v *ir.Value) int {
	if c, ok := g.costs[v]; ok {
		return c
	}
	n := v.Producer
	if n == nil || g.bufs[v] != nil || reduceOps[n.Op] {
		return 0
	}
	c := opCost(n.Op)
	for _, in := range n.Inputs {
		if in != nil {
			c += g.cost(in)
		}
	}
	g.costs[v] = c
	return c
}

func (g *gen) emitRow(w *strings.Builder) error {
	F, p := g.full, g.p
	passes, err := g.passesOf()
	if err != nil {
		return err
	}
	g.rbDone = map[string]int{}
	rows := ir.NumElements(F[:p])
	inner := ir.NumElements(F[p:])
	lc := newLoopCtx(F, nil, func(_ int, d int) string {
		if d < p {
			return fmt.Sprintf("o%d", d)
		}
		return fmt.Sprintf("j%d", d)
	})
	var rb strings.Builder // the per-row body
	row := &scope{sb: &rb, ind: "      ", memo: map[string]string{}, lc: lc}
	// Row index decomposition into the outer dims.
	div := int64(1)
	for d := p - 1; d >= 0; d-- {
		if F[d] != 1 {
			if div == 1 && d == firstNonOne(F[:p]) {
				row.line("const int64_t o%d = row;", d)
			} else {
				row.line("const int64_t o%d = (row / %d) %% %d;", d, div, F[d])
			}
		}
		div *= F[d]
	}
	var rbNames []string
	for _, n := range g.rowBufs {
		rbNames = append(rbNames, n)
	}
	sort.Strings(rbNames)
	for _, n := range rbNames {
		if oi, ok := g.rbOut[n]; ok {
			row.line("float *const %s = out%d + row * %d;", n, oi, inner)
		}
	}
	innerDims := []int{}
	for d := p; d < len(F); d++ {
		if F[d] != 1 {
			innerDims = append(innerDims, d)
		}
	}
	pad := func(k int) string { return strings.Repeat("  ", k+3) }
	innerLoops := func(body string, clause string) {
		for k, d := range innerDims {
			if k == len(innerDims)-1 {
				fmt.Fprintf(&rb, "%s#pragma omp simd%s\n", pad(k), clause)
			}
			fmt.Fprintf(&rb, "%sfor (int64_t j%d = 0; j%d < %d; j%d++) {\n", pad(k), d, d, F[d], d)
		}
		if len(innerDims) == 0 {
			rb.WriteString("      {\n")
		}
		rb.WriteString(body)
		if len(innerDims) == 0 {
			rb.WriteString("      }\n")
		}
		for k := len(innerDims) - 1; k >= 0; k-- {
			fmt.Fprintf(&rb, "%s}\n", pad(k))
		}
	}
	// A long innermost dim runs in blocks of rowLanes (see rowLanesFor).
	var N int64
	if len(innerDims) > 0 {
		N = F[innerDims[len(innerDims)-1]]
	}
	rowLanes := rowLanesFor(N)
	rowChunkElems := rowChunkTerms * rowLanes
	blocked := N >= rowLanes
	blockLoops := func(body, clause string, lanes []*laneAcc, prefetch string) {
		outer := innerDims[:len(innerDims)-1]
		d := innerDims[len(innerDims)-1]
		for k, od := range outer {
			fmt.Fprintf(&rb, "%sfor (int64_t j%d = 0; j%d < %d; j%d++) {\n", pad(k), od, od, F[od], od)
		}
		ind := pad(len(outer))
		fmt.Fprintf(&rb, "%sfor (int64_t jc = 0; jc < %d; jc += %d) {\n", ind, N, rowChunkElems)
		for _, la := range lanes {
			if la.dbl != "" {
				fmt.Fprintf(&rb, "%s  for (int l = 0; l < %d; l++) %s[l] = 0.0f;\n", ind, rowLanes, la.lanes)
			}
		}
		fmt.Fprintf(&rb, "%s  const int64_t je = jc + %d < %d ? jc + %d : %d;\n", ind, rowChunkElems, N, rowChunkElems, N)
		fmt.Fprintf(&rb, "%s  int64_t jb = jc;\n", ind)
		fmt.Fprintf(&rb, "%s  for (; jb + %d <= je; jb += %d) {\n", ind, rowLanes, rowLanes)
		rb.WriteString(prefetch)
		fmt.Fprintf(&rb, "%s    #pragma omp simd%s\n", ind, clause)
		fmt.Fprintf(&rb, "%s    for (int64_t jl = 0; jl < %d; jl++) {\n", ind, rowLanes)
		fmt.Fprintf(&rb, "%s      const int64_t j%d = jb + jl;\n", ind, d)
		rb.WriteString(body)
		fmt.Fprintf(&rb, "%s    }\n%s  }\n", ind, ind)
		if N%rowLanes != 0 {
			// The last partial block, in lanes 0..je-jb-1.
			fmt.Fprintf(&rb, "%s  for (int64_t jl = 0; jl < je - jb; jl++) {\n", ind)
			fmt.Fprintf(&rb, "%s    const int64_t j%d = jb + jl;\n", ind, d)
			rb.WriteString(body)
			fmt.Fprintf(&rb, "%s  }\n", ind)
		}
		for _, la := range lanes {
			if la.dbl != "" {
				fmt.Fprintf(&rb, "%s  #pragma omp simd\n", ind)
				fmt.Fprintf(&rb, "%s  for (int l = 0; l < %d; l++) %s[l] += (double)%s[l];\n", ind, rowLanes, la.dbl, la.lanes)
			}
		}
		fmt.Fprintf(&rb, "%s}\n", ind)
		for k := len(outer) - 1; k >= 0; k-- {
			fmt.Fprintf(&rb, "%s}\n", pad(k))
		}
	}
	// The pass after the first (which streams the row in) prefetches the
	// next row of the per-element inputs and outputs, so memory runs while
	// it computes instead of stalling the next row's first pass and stores.
	pfPass := -1
	var prefetch string
	if blocked && len(innerDims) == 1 && rows > 1 {
		pfPass = min(1, len(passes))
		var pf strings.Builder
		for i, v := range g.body.Inputs {
			if ir.NumElements(v.Shape) != rows*inner {
				continue
			}
			if _, ok := onesMap(v.Shape, F, identityMap(F)); !ok {
				continue
			}
			for q := 0; q < max(1, v.DType.Size()*int(rowLanes)/64); q++ { // the block's cache lines
				fmt.Fprintf(&pf, "%s    __builtin_prefetch((const char *)(in%d + pf * %d + jb) + %d, 0, 3);\n", pad(0), i, inner, q*64)
			}
		}
		for i, v := range g.body.Outputs {
			if ir.NumElements(v.Shape) != rows*inner {
				continue
			}
			if _, ok := onesMap(v.Shape, F, identityMap(F)); !ok {
				continue
			}
			for q := 0; q < max(1, v.DType.Size()*int(rowLanes)/64); q++ {
				fmt.Fprintf(&pf, "%s    __builtin_prefetch((const char *)(out%d + pf * %d + jb) + %d, 1, 3);\n", pad(0), i, inner, q*64)
			}
		}
		prefetch = pf.String()
		if prefetch == "" {
			pfPass = -1
		} else {
			row.line("const int64_t pf = row + 1 < %d ? row + 1 : row;", rows)
		}
	}
	bodyInd := strings.Repeat("  ", len(innerDims)+3)
	if blocked {
		bodyInd = pad(len(innerDims) + 2)
	}
	fullMap := identityMap(F)
	for k, pass := range passes {
		var ib strings.Builder
		sc := &scope{sb: &ib, ind: bodyInd, memo: map[string]string{}, lc: lc, parent: row, pass: k}
		accs := make([]string, len(pass))
		lanes := make([]*laneAcc, len(pass))
		var laneList []*laneAcc
		byOp := map[string][]string{}
		for i, rs := range pass {
			a := g.newTmp("a")
			if blocked && laneable(rs) {
				la := &laneAcc{rs: rs, lanes: a + "l"}
				if rs.omp == "+" {
					la.dbl = a + "d"
					row.line("float %s[%d]; double %s[%d];", la.lanes, rowLanes, la.dbl, rowLanes)
					row.line("for (int l = 0; l < %d; l++) %s[l] = 0.0;", rowLanes, la.dbl)
				} else {
					row.line("float %s[%d];", la.lanes, rowLanes)
					row.line("for (int l = 0; l < %d; l++) %s[l] = %s;", rowLanes, la.lanes, rs.init)
				}
				lanes[i] = la
				laneList = append(laneList, la)
				continue
			}
			accs[i] = a
			byOp[rs.omp] = append(byOp[rs.omp], a)
			row.line("%s %s = %s;", rs.acc, a, rs.init)
		}
		for i, rs := range pass {
			e, err := g.eval(sc, rs.node.Inputs[0], fullMap)
			if err != nil {
				return err
			}
			if la := lanes[i]; la != nil {
				sc.line("%s[jl] = %s;", la.lanes, la.combine(e))
			} else {
				sc.line("%s = %s;", accs[i], rs.combine(accs[i], e))
			}
		}
		var clause strings.Builder
		for _, op := range []string{"+", "*", "max", "min"} {
			if l := byOp[op]; len(l) > 0 {
				fmt.Fprintf(&clause, " reduction(%s:%s)", op, strings.Join(l, ","))
			}
		}
		if blocked {
			pf := ""
			if k == pfPass {
				pf = prefetch
			}
			blockLoops(ib.String(), clause.String(), laneList, pf)
		} else {
			innerLoops(ib.String(), clause.String())
		}
		for i, rs := range pass {
			if la := lanes[i]; la != nil {
				// Pairwise over the lanes.
				arr := la.lanes
				if la.dbl != "" {
					arr = la.dbl
				}
				row.line("for (int w = %d; w > 0; w >>= 1) for (int l = 0; l < w; l++) %s[l] = %s;", rowLanes/2, arr, rs.merge(arr+"[l]", arr+"[l + w]"))
				accs[i] = arr + "[0]"
			}
			v := rs.node.Outputs[0]
			r := g.newTmp("r")
			row.line("const %s %s = (%s)(%s);", computeType(v.DType), r, computeType(v.DType), rs.finish(accs[i]))
			row.memo[mapKey(v, g.rowMap(rs, v))] = r
		}
	}
	// Epilogue: per-element outputs in one more pass (all loads before any
	// store, as row buffers may live in output rows), then per-row ones.
	epi := &scope{sb: &strings.Builder{}, ind: bodyInd, memo: map[string]string{}, lc: lc, parent: row, pass: len(passes)}
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
		stores = append(stores, fmt.Sprintf("out%d[%s] = %s;", i, lc.offset(lc.accessStrides(v.Shape, m)), storeConv(v.DType, e)))
	}
	for _, st := range stores {
		epi.line("%s", st)
	}
	if len(stores) > 0 {
		if blocked {
			pf := ""
			if pfPass == len(passes) {
				pf = prefetch
			}
			blockLoops(epi.sb.String(), "", nil, pf)
		} else {
			innerLoops(epi.sb.String(), "")
		}
	}
	for _, i := range rowOuts {
		v := g.body.Outputs[i]
		m, ok := onesMap(v.Shape, F[:p], identityMap(F[:p]))
		if !ok {
			return fmt.Errorf("output %s does not fit the row layout", v.Name)
		}
		e, err := g.eval(row, v, m)
		if err != nil {
			return err
		}
		row.line("out%d[%s] = %s;", i, lc.offset(lc.accessStrides(v.Shape, m)), storeConv(v.DType, e))
	}
	par := rows > 1 && rows*inner >= parallelMinElems
	fmt.Fprintf(w, "  /* row-wise: %d rows of %d elements, %d reduction pass(es) */\n", rows, inner, len(passes))
	if par {
		w.WriteString("  #pragma omp parallel\n")
	}
	w.WriteString("  {\n")
	var allocated []string
	for _, n := range rbNames {
		if _, ok := g.rbOut[n]; !ok {
			allocated = append(allocated, n)
			fmt.Fprintf(w, "    float *restrict %s = (float *)gk_alloc(sizeof(float) * %dULL);\n", n, max(inner, 1))
		}
	}
	if par {
		w.WriteString("    #pragma omp for schedule(static)\n")
	}
	fmt.Fprintf(w, "    for (int64_t row = 0; row < %d; row++) {\n", rows)
	w.WriteString(rb.String())
	w.WriteString("    }\n")
	for _, n := range allocated {
		fmt.Fprintf(w, "    free(%s);\n", n)
	}
	w.WriteString("  }\n")
	return nil
}

// rowMap is the canonical map of a row-wise reduction's result.
func (g *gen) rowMap(rs *reduceSpec, v *ir.Value) []int {
	m := make([]int, len(v.Shape))
	keep := len(v.Shape) == len(g.full)
	for a := range v.Shape {
		switch {
		case v.Shape[a] == 1:
			m[a] = -1
		case keep && rs.reduced[a]:
			m[a] = -1
		default:
			m[a] = a
		}
	}
	return m
}

func firstNonOne(s []int64) int {
	for i, d := range s {
		if d != 1 {
			return i
		}
	}
	return -1
}

const prelude = `/* Generated by gkconv internal/kernels: AKG CPU ABI, void f(void **args),
   args = [callback, inputs..., outputs...]. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(GK_MVEC) && defined(__x86_64__)
/* Vector variants from glibc's libmvec, so SIMD loops keep calling them. */
float expf(float) __attribute__((simd("notinbranch")));
float logf(float) __attribute__((simd("notinbranch")));
float sinf(float) __attribute__((simd("notinbranch")));
float cosf(float) __attribute__((simd("notinbranch")));
#if defined(GK_MVEC_TANH)
float tanhf(float) __attribute__((simd("notinbranch")));
float erff(float) __attribute__((simd("notinbranch")));
float log1pf(float) __attribute__((simd("notinbranch")));
float expm1f(float) __attribute__((simd("notinbranch")));
#endif
#endif

static inline float gk_h2f(uint16_t h) {
#if defined(__FLT16_MAX__)
  _Float16 f; memcpy(&f, &h, 2); return (float)f;
#else
  uint32_t s = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 0x1f, m = h & 0x3ff, u;
  if (e == 0) { if (m == 0) u = s; else { e = 113; while (!(m & 0x400)) { m <<= 1; e--; } m &= 0x3ff; u = s | (e << 23) | (m << 13); } }
  else if (e == 31) u = s | 0x7f800000u | (m << 13);
  else u = s | ((e + 112) << 23) | (m << 13);
  float f; memcpy(&f, &u, 4); return f;
#endif
}
static inline uint16_t gk_f2h(float x) {
#if defined(__FLT16_MAX__)
  _Float16 f = (_Float16)x; uint16_t h; memcpy(&h, &f, 2); return h;
#else
  uint32_t b; memcpy(&b, &x, 4);
  uint16_t s = (b >> 16) & 0x8000; int32_t e = (int32_t)((b >> 23) & 0xff) - 112; uint32_t m = b & 0x7fffff;
  if (((b >> 23) & 0xff) == 0xff) return s | (m ? 0x7e00 : 0x7c00);
  if (e >= 31) return s | 0x7c00;
  if (e <= 0) { if (e < -10) return s; m |= 0x800000; uint32_t sh = 14 - e, r = m >> sh, rem = m & ((1u << sh) - 1), half = 1u << (sh - 1);
    if (rem > half || (rem == half && (r & 1))) r++; return s | r; }
  uint32_t r = ((uint32_t)e << 10) | (m >> 13), rem = m & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (r & 1))) r++;
  return s | r;
#endif
}
static inline float gk_bf2f(uint16_t h) { uint32_t u = (uint32_t)h << 16; float f; memcpy(&f, &u, 4); return f; }
static inline uint16_t gk_f2bf(float x) {
  uint32_t u; memcpy(&u, &x, 4);
  if (x != x) return (uint16_t)((u >> 16) | 0x40);
  u += 0x7fff + ((u >> 16) & 1); return (uint16_t)(u >> 16);
}
/* expf inline and branch-free so SIMD loops vectorise it without a call:
   Cody-Waite reduction by ln2, a degree-5 minimax polynomial (the
   coefficients of Arm optimized-routines' vector expf; max error under
   2 ulp), the 2^k scale applied in two halves so that overflow and gradual
   underflow come out right; NaN propagates through the arithmetic. */
static inline float gk_expf(float x) {
  x = x < -104.0f ? -104.0f : x;
  x = x > 89.0f ? 89.0f : x;
  /* round to nearest by the 1.5*2^23 trick: no libm call, vectorises */
  const float k = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = x - k * 0.693359375f;
  r = r - k * -2.12194440e-4f;
  const float r2 = r * r;
  const float p = 0x1.0e4020p-7f * r + 0x1.573e2ep-5f;
  const float q = (0x1.555e66p-3f * r + 0x1.fffdb6p-2f) + p * r2;
  const float y = (q * r2 + 0x1.ffffecp-1f * r) + 1.0f;
  const int32_t ki = (int32_t)k, k1 = ki >> 1, k2 = ki - k1;
  const uint32_t b1 = (uint32_t)(k1 + 127) << 23, b2 = (uint32_t)(k2 + 127) << 23;
  float s1, s2; memcpy(&s1, &b1, 4); memcpy(&s2, &b2, 4);
  return y * s1 * s2;
}
/* gk_expf even where libmvec links: inlined, it keeps the lane accumulators
   of row loops in registers, where a vector call spills them. */
#define GK_EXPF gk_expf
static inline void *gk_alloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) { fputs("gkconv kernel: out of memory\n", stderr); abort(); }
  return p;
}
/* The loader sets the OpenMP team size through this before each call. */
void gk_set_num_threads(int n) {
#ifdef _OPENMP
  if (n > 0) omp_set_num_threads(n);
#else
  (void)n;
#endif
}

`

// softmaxRowMax reports whether ReduceMax m is a softmax's row max: m is
// read only by Sub(x, m) of its own input x, each Sub only by Exp, each Exp
// e only by one ReduceSum s of e over m's axes and by RealDiv(e, s), s only
// by those RealDivs, and none of m, the Subs, Exps or s is a body output.
// A NaN in a row of x then makes e, s and so every output of the row NaN
// whether or not m itself is NaN, so m may skip the per-element NaN test
// (about 10% of a long-row softmax kernel).
func softmaxRowMax(body *ir.Graph, m *ir.Node) bool {
	if m.Op != "ReduceMax" || len(m.Outputs) != 1 {
		return false
	}
	users := body.Consumers()
	out := map[*ir.Value]bool{}
	for _, o := range body.Outputs {
		out[o] = true
	}
	internal := func(v *ir.Value) bool { return !out[v] && len(users[v]) > 0 }
	x, mv := m.Inputs[0], m.Outputs[0]
	sameAxes := func(s *ir.Node) bool {
		if len(s.Inputs) < 2 || len(m.Inputs) < 2 || s.Inputs[1] == nil || m.Inputs[1] == nil ||
			s.Inputs[1].Const == nil || m.Inputs[1].Const == nil {
			return false
		}
		a, err1 := s.Inputs[1].Const.Int64s()
		b, err2 := m.Inputs[1].Const.Int64s()
		return err1 == nil && err2 == nil && slices.Equal(a, b) && len(s.Inputs[0].Shape) == len(x.Shape)
	}
	if !internal(mv) {
		return false
	}
	for _, d := range users[mv] {
		if d.Op != "Sub" || d.Inputs[0] != x || d.Inputs[1] != mv || !internal(d.Outputs[0]) {
			return false
		}
		for _, e := range users[d.Outputs[0]] {
			if e.Op != "Exp" || !internal(e.Outputs[0]) {
				return false
			}
			ev := e.Outputs[0]
			var sum *ir.Node
			for _, u := range users[ev] {
				if u.Op == "ReduceSum" && u.Inputs[0] == ev && sameAxes(u) && sum == nil {
					sum = u
				}
			}
			if sum == nil || !internal(sum.Outputs[0]) {
				return false
			}
			for _, u := range users[ev] {
				if u != sum && (u.Op != "RealDiv" || u.Inputs[0] != ev || u.Inputs[1] != sum.Outputs[0]) {
					return false
				}
			}
			for _, u := range users[sum.Outputs[0]] {
				if u.Op != "RealDiv" || u.Inputs[0] != ev || u.Inputs[1] != sum.Outputs[0] {
					return false
				}
			}
		}
	}
	return true
}
