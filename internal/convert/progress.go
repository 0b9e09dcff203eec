package convert

import "sync"

// Progress is one step of a conversion, for a display (the converter's
// progress bars); Options.Progress receives them, possibly from several
// goroutines (kernels compile in parallel), one call at a time.
type Progress struct {
	Stage string // "load", "passes", "kernels", "write"
	// Stage "passes": the fusion pass about to run ("stage.name") and its
	// position in the pass table.
	Pass                 string
	PassIndex, PassTotal int
	// Stage "kernels": distinct kernel sources done, their total, and the
	// cache hits among them.
	KernelsDone, KernelsTotal, CacheHits int
	// Stage "write": bytes of the output written so far.
	BytesWritten int64
}

// progress serialises calls to the user's callback; a nil callback costs
// nothing.
type progress struct {
	mu sync.Mutex
	fn func(Progress)
	// lastWrite throttles write events to one per MiB.
	lastWrite int64
}

func (p *progress) emit(ev Progress) {
	if p == nil || p.fn == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if ev.Stage == "write" {
		if ev.BytesWritten-p.lastWrite < 1<<20 && ev.BytesWritten != 0 {
			return
		}
		p.lastWrite = ev.BytesWritten
	}
	p.fn(ev)
}

func (p *progress) stage(name string) { p.emit(Progress{Stage: name}) }

func (p *progress) pass(index, total int, name string) {
	p.emit(Progress{Stage: "passes", Pass: name, PassIndex: index, PassTotal: total})
}

func (p *progress) kernels(done, total, hits int) {
	p.emit(Progress{Stage: "kernels", KernelsDone: done, KernelsTotal: total, CacheHits: hits})
}

func (p *progress) written(n int64) { p.emit(Progress{Stage: "write", BytesWritten: n}) }
