// Package cpu is the CPU back end of graph-kernel fusion: it turns fused
// GraphKernel bodies into native kernels. GenerateC writes one C function
// per body with the AKG CPU ABI `void <kernel_name>(void **args)` (args =
// [callback*, inputs..., outputs...]; parallel loops become tasks for the
// callback's parallel_launch_func, see tasks.go); Builder compiles it with
// the system C compiler into a shared object (deduplicated, in parallel,
// through the content-addressed cache of internal/kernels) and records
// converter_lite's Custom attributes on the node. The runtime loads the
// object with internal/runtime/native.
//
// The generator's files: codegen.go (entry, buffers), eval.go (how the
// shared evaluator indexes loop nests), loops.go (loop nests and their
// pragmas), tasks.go (parallel loops as AKG tasks), general.go
// (materialised stages), row.go and row_emit.go (the row-wise strategy),
// prelude.go (the C helpers every kernel starts with).
package cpu

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"gkconv/internal/ir"
	"gkconv/internal/kernels"
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
	if err := kernels.CheckBody(body); err != nil {
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
	ev      *kernels.Evaluator[[]int]
	lc      *loopCtx // the loop nest being written: loads index it
	bufs    map[*ir.Value]*buf
	outIdx  map[*ir.Value][]int // body output positions of a value
	written map[int]bool        // outputs already stored by a materialising stage
	tmp     int
	statics strings.Builder // file-scope constant arrays
	allocs  strings.Builder
	frees   strings.Builder
	costs   map[*ir.Value]int

	// row mode (row.go)
	rowMode  bool
	rows     *kernels.Rows
	full     []int64           // the reduced tensors' shape F
	p        int               // F[:p] are rows, F[p:] the reduced inner dims
	rowBufs  map[string]string // memo key -> row buffer name
	rbDone   map[string]int    // memo key -> pass that filled the row buffer
	passUses map[string]map[int]bool
	collect  bool
	rbOut    map[string]int // row buffer name -> output whose row it borrows
	// tasks are the outlined parallel loops (tasks.go); allocated lists the
	// buffers alloc declared, which the tasks capture.
	tasks     []string
	allocated []capture

	// hoistFrom is the inner-loop scope of the store nest being written and
	// hoistTo the scope before its innermost loop (runNestHoisted); nil
	// outside one.
	hoistFrom, hoistTo *kernels.Scope

	// rowMerge merges the row's inner dims into one loop (newLoopCtx's
	// merge list) where the collection run found every access contiguous
	// over them; nil in the collection run.
	rowMerge []bool
}

func newGen(sym string, body *ir.Graph) *gen {
	g := &gen{body: body, sym: sym, bufs: map[*ir.Value]*buf{}, outIdx: map[*ir.Value][]int{},
		written: map[int]bool{}, costs: map[*ir.Value]int{}, rowBufs: map[string]string{},
		rbDone: map[string]int{}, passUses: map[string]map[int]bool{}, rbOut: map[string]int{}}
	for i, v := range body.Outputs {
		g.outIdx[v] = append(g.outIdx[v], i)
	}
	g.ev = g.evaluator()
	return g
}

func (g *gen) newTmp(prefix string) string {
	g.tmp++
	return fmt.Sprintf("%s%d", prefix, g.tmp)
}

// generate writes the whole kernel; rowMode selects the row-wise strategy and
// fails (so the caller falls back) when the body does not fit it.
func (g *gen) generate(rowMode bool) (string, error) {
	var stages strings.Builder
	g.bindIO()
	if rowMode {
		rows, err := kernels.PlanRows(g.body)
		if err != nil || rows == nil {
			if err == nil {
				err = errors.New("body is not row-wise")
			}
			return "", err
		}
		g.rows, g.full, g.p = rows, rows.Full, rows.P
		g.rowMode = true
		// Collection run: which intermediates each pass recomputes.
		g.collect = true
		saved := g.tmp
		g.rowMerge = nil
		if err := g.emitRow(&strings.Builder{}); err != nil {
			return "", err
		}
		g.rowMerge = innerMergePlan(g.full, g.p, g.lc.rec)
		g.collect = false
		g.tmp = saved
		g.tasks = nil
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
	for _, t := range g.tasks {
		sb.WriteString(t)
	}
	fmt.Fprintf(&sb, "\nvoid %s(void **args) {\n", g.sym)
	for i, v := range g.body.Inputs {
		st, _ := kernels.StorageType(v.DType)
		fmt.Fprintf(&sb, "  const %s *restrict in%d = (const %s *)args[%d]; /* %s %s%v */\n", st, i, st, i+1, v.Name, v.DType, v.Shape)
	}
	for i, v := range g.body.Outputs {
		st, _ := kernels.StorageType(v.DType)
		fmt.Fprintf(&sb, "  %s *restrict out%d = (%s *)args[%d]; /* %s %s%v */\n", st, i, st, len(g.body.Inputs)+i+1, v.Name, v.DType, v.Shape)
	}
	sb.WriteString(g.allocs.String())
	sb.WriteString(g.envDecl())
	sb.WriteString(stages.String())
	sb.WriteString(g.frees.String())
	sb.WriteString(perturbation(g.sym, g.body))
	sb.WriteString("}\n")
	return sb.String(), nil
}

// PerturbEnv names a test hook: a kernel whose symbol contains its value
// gets a wrong first output element, so tests can show that the kernel
// self-check and `converter bisect` catch a broken kernel; with the prefix
// "crash:" (crash:Fused_) the kernel instead dies of SIGSEGV, so tests can
// show the self-check's child process contains it. Never set it outside
// tests.
const PerturbEnv = "GKCONV_TEST_PERTURB_KERNEL"

func perturbation(sym string, body *ir.Graph) string {
	want := os.Getenv(PerturbEnv)
	if rest, crash := strings.CutPrefix(want, "crash:"); crash {
		if rest == "" || !strings.Contains(sym, rest) {
			return ""
		}
		return "  *(volatile int *)0 = 1; /* " + PerturbEnv + " */\n"
	}
	if want == "" || !strings.Contains(sym, want) || len(body.Outputs) == 0 {
		return ""
	}
	if dt := body.Outputs[0].DType; dt != ir.Float32 && dt != ir.Float64 {
		return ""
	}
	return "  out0[0] += 1.0; /* " + PerturbEnv + " */\n"
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
		g.statics.WriteString(kernels.ConstArray("", name, v))
		g.bufs[v] = &buf{ptr: name, dt: v.DType, shape: v.Shape}
	}
	for _, v := range g.body.Consts {
		addConst(v)
	}
	for _, n := range g.body.Nodes {
		for i, in := range n.Inputs {
			if kernels.IsReduce(n.Op) && i == 1 || (kernels.IsReshape(n.Op) || n.Op == "BroadcastTo") && i > 0 {
				continue // axes and shapes are read at generation time
			}
			addConst(in)
		}
	}
}

// alloc declares a heap (or small stack) array of n elements of ctype.
func (g *gen) alloc(ctype string, n int64) string {
	name := g.newTmp("m")
	g.allocated = append(g.allocated, capture{name: name, ctype: ctype})
	if n <= stackBufMaxElems {
		fmt.Fprintf(&g.allocs, "  %s %s[%d];\n", ctype, name, max(n, 1))
		return name
	}
	fmt.Fprintf(&g.allocs, "  %s *restrict %s = (%s *)gk_alloc(sizeof(%s) * %dULL);\n", ctype, name, ctype, ctype, n)
	fmt.Fprintf(&g.frees, "  free(%s);\n", name)
	return name
}
