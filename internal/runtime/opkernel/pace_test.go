package opkernel

import (
	"testing"
	"time"
)

// TestPacerYieldsOnlyWhenDue pins the Pacer's clock: the first Tick starts
// it, Ticks within the allowance leave it alone, a Tick past it yields and
// restarts it, and a long unit of work between Ticks shortens the
// allowance so that the next such unit still ends before sysmon's 10 ms.
func TestPacerYieldsOnlyWhenDue(t *testing.T) {
	var p Pacer
	p.Tick()
	if p.last.IsZero() {
		t.Fatal("the first Tick did not start the clock")
	}
	if e := p.yieldEvery(); e != sysmonPreemptAfter-paceMargin {
		t.Fatalf("allowance with no work seen: %v", e)
	}
	start := p.last
	p.Tick()
	if !p.last.Equal(start) {
		t.Fatal("a Tick within the allowance restarted the clock")
	}
	// A 3 ms unit of work: the allowance drops to 10 - 1 - 3 = 6 ms.
	p.prev = time.Now().Add(-3 * time.Millisecond)
	p.Tick()
	if e := p.yieldEvery(); e < 5900*time.Microsecond || e > 6*time.Millisecond {
		t.Fatalf("allowance after a 3 ms unit: %v, want ~6 ms", e)
	}
	// Past the allowance: the Tick yields and restarts the clock.
	p.last = time.Now().Add(-7 * time.Millisecond)
	old := p.last
	p.Tick()
	if !p.last.After(old.Add(6 * time.Millisecond)) {
		t.Fatal("a Tick past the allowance did not yield and restart the clock")
	}
	// A unit too long for any allowance (8 ms) does not shrink it.
	p.longest = 0
	p.prev = time.Now().Add(-8 * time.Millisecond)
	p.last = time.Now()
	p.Tick()
	if p.longest != 0 {
		t.Fatalf("an 8 ms unit set the allowance: longest %v", p.longest)
	}
	// After more than 10 ms since the last Tick (blocked between Runs, or
	// preempted anyway) the clock restarts without a yield being due.
	p.prev = time.Now().Add(-time.Second)
	p.last = p.prev
	p.Tick()
	if time.Since(p.last) > time.Second/2 {
		t.Fatal("a Tick after a 1 s pause did not restart the clock")
	}
	// The allowance stays at least minYieldEvery, and an outlier fades with
	// each yield.
	p.longest = time.Hour
	if e := p.yieldEvery(); e != minYieldEvery {
		t.Fatalf("allowance after a 1 h unit: %v, want %v", e, minYieldEvery)
	}
	for range 200 {
		p.last = time.Now().Add(-time.Hour)
		p.Tick()
	}
	if p.longest > time.Millisecond {
		t.Errorf("an outlier did not fade: longest %v after 200 yields", p.longest)
	}
	p.last = time.Now().Add(-time.Hour)
	p.Rescheduled()
	if time.Since(p.last) > time.Second {
		t.Fatal("Rescheduled did not restart the clock")
	}
}
