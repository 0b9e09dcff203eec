// Package opkernel is the CPU op library's contract: the signature of an op
// implementation (an op kernel; not a fused GraphKernel, which internal/kernels
// generates), the registry the executor looks ops up in, and small
// helpers (parallel loops) shared by the op packages.
package opkernel

import (
	"fmt"
	"runtime"
	"sort"
	"sync"

	"gkconv/internal/ir"
)

// Ctx is what an op implementation may use besides its tensors.
type Ctx struct {
	// Threads is the number of worker threads (>= 1) the op may use.
	Threads int
}

// NumThreads is the thread count an op may use: ctx.Threads, 1 for a nil ctx
// (and never below 1).
func (ctx *Ctx) NumThreads() int {
	if ctx == nil {
		return 1
	}
	return max(1, ctx.Threads)
}

// DefaultCtx uses every core (not GOMAXPROCS, which the worker pool raises
// above the core count; see grow in workers.go).
func DefaultCtx() *Ctx { return &Ctx{Threads: runtime.NumCPU()} }

// Func runs one node. in[i] is nil for an omitted optional input. out holds
// tensors already allocated (zeroed is not guaranteed) with the dtypes and
// shapes that ir.InferNode computed; the op fills them and must not resize them.
type Func func(ctx *Ctx, n *ir.Node, in []*ir.Tensor, out []*ir.Tensor) error

var (
	mu       sync.RWMutex
	registry = map[string]Func{}
)

// Register installs the implementation of an IR op; a second registration of
// the same op is a programming error.
func Register(op string, f Func) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := registry[op]; dup {
		panic("opkernel: op registered twice: " + op)
	}
	registry[op] = f
}

// Lookup finds the implementation of an IR op.
func Lookup(op string) (Func, bool) {
	mu.RLock()
	defer mu.RUnlock()
	f, ok := registry[op]
	return f, ok
}

// Preparer is an op's load-time step for one node: it may do one-time work
// on the node's constant inputs (pack a weight for a faster kernel) and
// returns the Func that runs this node, or nil when the node keeps the op's
// registered Func. The returned Func must compute what the registered one
// does for the same inputs.
type Preparer func(p *Prep, n *ir.Node) (Func, error)

var preparers = map[string]Preparer{}

// RegisterPreparer installs the load-time step of an IR op (at most one).
func RegisterPreparer(op string, f Preparer) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := preparers[op]; dup {
		panic("opkernel: preparer registered twice: " + op)
	}
	preparers[op] = f
}

// Prep is one session's preparation (model load): the load-time copies of
// constants its preparers built, shared by the nodes that read the same
// constant, and their count and size.
type Prep struct {
	memo map[any]any

	// Weights and WeightBytes count the load-time weight copies built (such
	// as packed MatMul weights) and their bytes.
	Weights     int
	WeightBytes int64
}

// NewPrep starts a preparation.
func NewPrep() *Prep { return &Prep{memo: map[any]any{}} }

// Once returns the value stored under key, calling build to make it the
// first time: one load-time copy per constant however many nodes read it.
func (p *Prep) Once(key any, build func() any) any {
	if v, ok := p.memo[key]; ok {
		return v
	}
	v := build()
	p.memo[key] = v
	return v
}

// Bind returns the Func that runs n: what its op's preparer returns for n,
// else the op's registered Func. ok is false when the op has no kernel.
func (p *Prep) Bind(n *ir.Node) (f Func, ok bool, err error) {
	mu.RLock()
	f, ok = registry[n.Op]
	pf := preparers[n.Op]
	mu.RUnlock()
	if !ok || pf == nil {
		return f, ok, nil
	}
	pfn, err := pf(p, n)
	if err != nil {
		return nil, true, err
	}
	if pfn != nil {
		f = pfn
	}
	return f, true, nil
}

// Registered lists the registered ops, sorted.
func Registered() []string {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]string, 0, len(registry))
	for k := range registry {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Unsupported is the error an op returns for a dtype or attribute combination
// it does not implement, so callers can report it as "unsupported", not "wrong".
type Unsupported struct{ Node, Op, Reason string }

func (e *Unsupported) Error() string {
	return fmt.Sprintf("node %s (%s): unsupported: %s", e.Node, e.Op, e.Reason)
}

// Unsupportedf builds an Unsupported error for node n.
func Unsupportedf(n *ir.Node, format string, args ...any) error {
	return &Unsupported{Node: n.Name, Op: n.Op, Reason: fmt.Sprintf(format, args...)}
}

// ParallelFor splits [0,n) into at most ctx.Threads contiguous chunks of at
// least grain items and runs body on each, waiting for all. The chunks run on
// the caller and the persistent workers (workers.go); any of them may run
// more than one chunk.
func ParallelFor(ctx *Ctx, n, grain int, body func(start, end int)) {
	parallelFor(ctx, n, grain, 1, body)
}

// ParallelForShared is ParallelFor for loops whose items are cheap to start
// and may differ in cost (conv tiles, depthwise planes): the range goes in up
// to four chunks per thread, each a multiple of grain items, claimed as
// threads become free, so a worker that starts late or an uneven item does
// not leave the others waiting at the end (with one chunk per thread, a
// worker that woke 10 us late made the caller wait for its whole chunk).
func ParallelForShared(ctx *Ctx, n, grain int, body func(start, end int)) {
	parallelFor(ctx, n, grain, 4, body)
}

func parallelFor(ctx *Ctx, n, grain, perThread int, body func(start, end int)) {
	if n <= 0 {
		return
	}
	t := ctx.NumThreads()
	if grain < 1 {
		grain = 1
	}
	if max := (n + grain - 1) / grain; t > max {
		t = max
	}
	if t <= 1 {
		body(0, n)
		return
	}
	chunk := (n + t - 1) / t
	if perThread > 1 { // whole grains: a body may work in groups of grain items
		chunk = ((n+t*perThread-1)/(t*perThread) + grain - 1) / grain * grain
	}
	l := &loop{body: body, n: n, chunk: chunk, chunks: (n + chunk - 1) / chunk}
	l.init()
	if workers.run(l, min(t, runtime.NumCPU())-1) {
		return
	}
	var wg sync.WaitGroup
	for s := 0; s < n; s += chunk {
		e := s + chunk
		if e > n {
			e = n
		}
		wg.Add(1)
		go func(s, e int) {
			defer wg.Done()
			body(s, e)
		}(s, e)
	}
	wg.Wait()
}
