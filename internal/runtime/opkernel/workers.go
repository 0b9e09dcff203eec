package opkernel

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// The persistent worker pool behind ParallelFor.
//
// A model runs hundreds of parallel loops, many of them tens of microseconds
// long. Starting goroutines for each loop made every one of them wait for
// the Go scheduler to wake a parked thread, which costs about as much as such
// a loop: at 2 threads short convs ran slower than at 1. The pool keeps its
// workers spinning for a while after each loop, so the next loop starts at
// once; a worker that finds no loop within spinFor parks and is woken by the
// next one. Chunks are claimed dynamically, so the caller never waits for a
// worker still waking up: it takes the chunks itself.
// Measurements: docs/performance.md#worker-pool.
//
// The pool serves one loop at a time. A loop started while another is in
// flight (a nested loop, or a second session on another goroutine) runs on
// fresh goroutines as before.

// spinFor is how long an idle worker keeps polling for the next loop before
// it parks.
const spinFor = 100 * time.Microsecond

type loop struct {
	body     func(start, end int)
	n, chunk int
	chunks   int
	// ends holds the unclaimed chunks [front, back) as front | back<<32: the
	// caller claims from the front, workers from the back, so the caller
	// runs the first part of the range and a worker the last in every loop
	// (the data an op writes is read by the same core in the next op that
	// splits the same way: on this VM a line written by the other core reads
	// at half the speed) and they meet wherever their speeds make them.
	ends    atomic.Uint64
	pending atomic.Int64 // chunks not yet finished
}

func (l *loop) init() {
	l.ends.Store(uint64(l.chunks) << 32)
	l.pending.Store(int64(l.chunks))
}

// claim takes the next chunk from the front or the back; -1 when none is
// left.
func (l *loop) claim(back bool) int {
	for {
		e := l.ends.Load()
		f, b := uint32(e), uint32(e>>32)
		if f >= b {
			return -1
		}
		c, n := f, e+1
		if back {
			c, n = b-1, e-1<<32
		}
		if l.ends.CompareAndSwap(e, n) {
			return int(c)
		}
	}
}

// work claims and runs chunks until none is left.
func (l *loop) work(back bool) {
	for {
		c := l.claim(back)
		if c < 0 {
			return
		}
		s := c * l.chunk
		l.body(s, min(s+l.chunk, l.n))
		l.pending.Add(-1)
	}
}

type workerPool struct {
	busy    atomic.Bool          // a loop is in flight
	cur     atomic.Pointer[loop] // the loop in flight (nil between loops)
	seq     atomic.Uint64        // incremented once per posted loop
	quiet   atomic.Bool          // park now: another thread team needs the cores
	mu      sync.Mutex
	wake    *sync.Cond
	parked  int          // workers waiting on wake (guarded by mu)
	wakes   atomic.Int64 // loops posted while a worker was parked (tests)
	started int          // workers running (guarded by mu)
}

var workers = func() *workerPool {
	p := &workerPool{}
	p.wake = sync.NewCond(&p.mu)
	return p
}()

// grow starts workers until n run, and sees that GOMAXPROCS leaves one P
// idle beside the caller and the workers. They spend their chunks in cgo
// calls; the Go runtime's monitor takes the P away from a thread that is in a
// cgo call whenever no P is idle, and hands it to another thread, so on 2
// cores three threads would then fight over them
// (docs/performance.md#worker-pool).
func (p *workerPool) grow(n int) {
	if need := n + 2; runtime.GOMAXPROCS(0) < need {
		runtime.GOMAXPROCS(need)
	}
	p.mu.Lock()
	for ; p.started < n; p.started++ {
		go p.worker(p.seq.Load())
	}
	p.mu.Unlock()
}

func (p *workerPool) worker(seen uint64) {
	var pace Pacer
	for {
		pace.Tick()
		s := p.seq.Load()
		if s == seen {
			deadline := time.Now().Add(spinFor)
			for i := 0; s == seen; i++ {
				if i&15 == 15 {
					quiet := p.quiet.Load()
					if !quiet && p.cur.Load() != nil {
						// The loop this worker ran out of chunks in is still
						// running on another thread, and the next one follows
						// it at once: the spin window starts when it ends. A
						// worker whose share finished early had parked, and
						// the next loop waited for its wake-up, which Linux
						// placed on the caller's vCPU
						// (docs/performance.md#worker-pool).
						deadline = time.Now().Add(spinFor)
					} else if quiet || time.Now().After(deadline) {
						p.mu.Lock()
						p.parked++
						for s = p.seq.Load(); s == seen; s = p.seq.Load() {
							p.wake.Wait()
						}
						p.parked--
						p.mu.Unlock()
						pace.Rescheduled()
						break
					}
				}
				cpuRelax()
				s = p.seq.Load()
			}
		}
		seen = s
		if l := p.cur.Load(); l != nil {
			l.work(true)
		}
	}
}

// run runs l on the caller and up to helpers workers; false when the pool
// is serving another loop.
func (p *workerPool) run(l *loop, helpers int) bool {
	if !p.busy.CompareAndSwap(false, true) {
		return false
	}
	p.grow(helpers)
	p.quiet.Store(false)
	p.cur.Store(l)
	p.seq.Add(1)
	p.mu.Lock()
	if p.parked > 0 {
		p.wakes.Add(1)
		p.wake.Broadcast()
	}
	p.mu.Unlock()
	l.work(false)
	for i := 0; l.pending.Load() > 0; i++ {
		if i&1023 == 1023 {
			runtime.Gosched() // a worker holding a chunk may need this P
		}
		cpuRelax()
	}
	p.cur.Store(nil) // a late worker finds no loop; the body's buffers are not kept alive
	p.busy.Store(false)
	return true
}

// Quiesce makes spinning workers park at once. Call it before handing the
// cores to another thread team (an OpenMP kernel), which would otherwise
// share them with workers polling for the next loop.
func Quiesce() { workers.quiet.Store(true) }
