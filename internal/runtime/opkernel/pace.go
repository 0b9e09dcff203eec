package opkernel

import (
	"runtime"
	"time"
)

// A Pacer gives the Go scheduler a scheduling point every yieldEvery on a
// goroutine that otherwise runs for as long as a model runs: the session's
// node loop and the pool's workers.
//
// Why: the Go runtime's monitor (sysmon) preempts a goroutine that has run
// for 10 ms without passing through the scheduler. Such a goroutine here
// spends nearly all its time in cgo calls, so the preemption finds it in a
// "syscall" and hands its P to another thread; sysmon then drops back to
// 20 us ticks and spinning threads are woken to look for work that does
// not exist. On a 2-vCPU VM (AMD EPYC, AVX-512) efficientnet_b0 at 1 thread
// took 37 context switches per 10 ms run instead of ~1, and its runs' P90
// was 1.4x their median (onnxruntime's: 1.03x); resnet50 and bert_base
// medians were 5-10% above those of a Go runtime built without that
// preemption. A voluntary runtime.Gosched every few milliseconds keeps the
// goroutine's scheduling tick moving, so sysmon never preempts it; each
// yield costs one wake-up of an idle thread.
type Pacer struct{ last time.Time }

// yieldEvery is well under sysmon's 10 ms so that a node of a few
// milliseconds between two checks does not cross it.
const yieldEvery = 4 * time.Millisecond

// Tick yields when yieldEvery has passed since the last yield (or since the
// first Tick). Call it between units of work, never while holding a lock.
func (p *Pacer) Tick() {
	now := time.Now()
	if p.last.IsZero() {
		p.last = now
		return
	}
	if now.Sub(p.last) >= yieldEvery {
		runtime.Gosched()
		p.last = time.Now()
	}
}

// Rescheduled tells p that its goroutine just went through the scheduler
// another way (it parked and was woken).
func (p *Pacer) Rescheduled() { p.last = time.Now() }
