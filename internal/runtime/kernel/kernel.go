// Package kernel is the CPU op library's contract: the signature of an op
// implementation, the registry the executor looks ops up in, and small
// helpers (parallel loops) shared by the op packages.
package kernel

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

// DefaultCtx uses every core.
func DefaultCtx() *Ctx { return &Ctx{Threads: runtime.GOMAXPROCS(0)} }

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
		panic("kernel: op registered twice: " + op)
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
// least grain items and runs body on each, waiting for all.
func ParallelFor(ctx *Ctx, n, grain int, body func(start, end int)) {
	if n <= 0 {
		return
	}
	t := 1
	if ctx != nil {
		t = ctx.Threads
	}
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
	var wg sync.WaitGroup
	chunk := (n + t - 1) / t
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
