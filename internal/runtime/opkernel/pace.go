package opkernel

import (
	"runtime"
	"time"
)

// A Pacer gives the Go scheduler a scheduling point at least every
// p.yieldEvery() on a goroutine that otherwise runs for as long as a model
// runs: the session's node loop and the pool's workers.
//
// Why: the Go runtime's monitor (sysmon) preempts a goroutine that has run
// for 10 ms without passing through the scheduler. Such a goroutine here
// spends nearly all its time in cgo calls, so the preemption finds it in a
// "syscall" and hands its P to another thread; sysmon then drops back to
// short ticks and spinning threads are woken to look for work that does
// not exist, which shows as context switches and a long tail of run times.
// A voluntary runtime.Gosched every few milliseconds keeps the goroutine's
// scheduling tick moving, so sysmon never preempts it. Each yield costs one
// wake-up of an idle thread, so the pacer yields as seldom as it safely
// can: when the time since the last yield plus the longest recent unit of
// work (the gap between two Ticks) would reach sysmon's limit less a
// margin. Measurements: docs/performance.md#scheduler-pacing.
type Pacer struct {
	last    time.Time     // the last yield (or the first Tick)
	prev    time.Time     // the previous Tick
	longest time.Duration // the longest gap between two Ticks lately
}

const (
	sysmonPreemptAfter = 10 * time.Millisecond // the Go runtime's forcePreemptNS
	paceMargin         = time.Millisecond
	minYieldEvery      = 2 * time.Millisecond
)

// yieldEvery is how long p lets its goroutine run between yields.
func (p *Pacer) yieldEvery() time.Duration {
	return max(sysmonPreemptAfter-paceMargin-p.longest, minYieldEvery)
}

// Tick yields when the next unit of work could carry the goroutine past
// sysmon's limit. Call it between units of work, never while holding a lock.
func (p *Pacer) Tick() {
	now := time.Now()
	if p.last.IsZero() {
		p.last, p.prev = now, now
		return
	}
	gap := now.Sub(p.prev)
	if gap > sysmonPreemptAfter {
		// Since the last Tick the goroutine either blocked (a session
		// between two Runs) or was preempted in one long unit: it went
		// through the scheduler either way, so a yield now would be wasted.
		p.Rescheduled()
		return
	}
	// A unit longer than the allowance can have is preempted whatever the
	// pacer does (gpt_small's lm_head at 1 thread); letting it set the
	// allowance would only make the other units yield more often.
	if gap > p.longest && gap <= sysmonPreemptAfter-paceMargin-minYieldEvery {
		p.longest = gap
	}
	p.prev = now
	if now.Sub(p.last) >= p.yieldEvery() {
		runtime.Gosched()
		p.Rescheduled()
		p.longest -= p.longest / 8 // an outlier unit fades
	}
}

// Rescheduled tells p that its goroutine just went through the scheduler
// another way (it parked and was woken).
func (p *Pacer) Rescheduled() { p.last = time.Now(); p.prev = p.last }
