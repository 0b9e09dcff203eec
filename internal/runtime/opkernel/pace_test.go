package opkernel

import (
	"testing"
	"time"
)

// TestPacerYieldsOnlyWhenDue pins the Pacer's clock: the first Tick starts
// it, Ticks within yieldEvery leave it alone, and a Tick after yieldEvery
// yields and restarts it (sysmon preempts after 10 ms, so the period must
// stay well below that).
func TestPacerYieldsOnlyWhenDue(t *testing.T) {
	if yieldEvery <= 0 || yieldEvery > 5*time.Millisecond {
		t.Fatalf("yieldEvery = %v, want (0, 5ms]: sysmon preempts at 10 ms", yieldEvery)
	}
	var p Pacer
	p.Tick()
	if p.last.IsZero() {
		t.Fatal("the first Tick did not start the clock")
	}
	start := p.last
	p.Tick()
	if !p.last.Equal(start) {
		t.Fatal("a Tick within yieldEvery restarted the clock")
	}
	p.last = time.Now().Add(-yieldEvery - time.Millisecond)
	old := p.last
	p.Tick()
	if !p.last.After(old.Add(yieldEvery)) {
		t.Fatal("a Tick after yieldEvery did not yield and restart the clock")
	}
	p.last = time.Now().Add(-time.Hour)
	p.Rescheduled()
	if time.Since(p.last) > time.Second {
		t.Fatal("Rescheduled did not restart the clock")
	}
}
