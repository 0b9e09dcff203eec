package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"

	"gkconv/internal/convert"
)

// progressDelay: conversions that finish sooner show no progress at all.
var progressDelay = time.Second

// progressDisplay draws a conversion's progress on a terminal: the fusion
// pass running, kernels compiled n/N with the cache hits, MiB written. It
// starts drawing only after progressDelay and removes its lines when done,
// so the result line stands alone.
type progressDisplay struct {
	mu      sync.Mutex
	p       *mpb.Progress
	start   chan any
	timer   *time.Timer
	stage   *mpb.Bar // the current step, by name
	kernels *mpb.Bar
	write   *mpb.Bar
	// label and hits are read by mpb's render goroutine through the
	// decorators; atomics, because event holds mu while it calls into mpb
	// (which waits for that goroutine).
	label atomic.Value // string
	hits  atomic.Int64
}

// newProgress returns nil (no display) unless mode is "on", or "auto" with
// w a terminal: CI logs and pipes get nothing.
func newProgress(mode string, w io.Writer) (*progressDisplay, error) {
	switch mode {
	case "off":
		return nil, nil
	case "auto":
		f, ok := w.(*os.File)
		if !ok || !term.IsTerminal(int(f.Fd())) {
			return nil, nil
		}
	case "on":
	default:
		return nil, fmt.Errorf("--progress=%s: want auto, on or off", mode)
	}
	// The bar's width on a terminal; elsewhere ("on" into a file) mpb takes
	// it as the whole line's, so give the labels room there.
	width := 100
	if f, ok := w.(*os.File); ok {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			width = 32
		}
	}
	d := &progressDisplay{start: make(chan any)}
	d.p = mpb.New(mpb.WithOutput(w), mpb.WithWidth(width), mpb.WithRenderDelay(d.start), mpb.WithAutoRefresh(),
		mpb.WithRefreshRate(100*time.Millisecond))
	d.timer = time.AfterFunc(progressDelay, func() { close(d.start) })
	d.stage = d.p.New(0, mpb.NopStyle(), mpb.BarRemoveOnComplete(),
		mpb.PrependDecorators(decor.Any(func(decor.Statistics) string {
			l, _ := d.label.Load().(string)
			return l
		})))
	return d, nil
}

// event is convert.Options.Progress.
func (d *progressDisplay) event(ev convert.Progress) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch ev.Stage {
	case "load":
		d.label.Store("loading the model")
	case "passes":
		d.label.Store(fmt.Sprintf("fusion pass %d/%d %s", ev.PassIndex+1, ev.PassTotal, ev.Pass))
	case "kernels":
		d.label.Store("compiling kernels")
		if d.kernels == nil {
			d.kernels = d.p.New(int64(ev.KernelsTotal), mpb.BarStyle(), mpb.BarRemoveOnComplete(),
				mpb.PrependDecorators(decor.Name("kernels "), decor.CountersNoUnit("%d/%d")),
				mpb.AppendDecorators(decor.Any(func(decor.Statistics) string {
					return fmt.Sprintf(" %d from the cache", d.hits.Load())
				})))
		}
		d.hits.Store(int64(ev.CacheHits))
		d.kernels.SetCurrent(int64(ev.KernelsDone))
	case "write":
		d.label.Store("writing the model")
		if d.write == nil {
			d.write = d.p.New(0, mpb.NopStyle(), mpb.BarRemoveOnComplete(),
				mpb.PrependDecorators(decor.Any(func(s decor.Statistics) string {
					return fmt.Sprintf("written %.1f MiB", float64(s.Current)/(1<<20))
				})))
		}
		d.write.SetCurrent(ev.BytesWritten)
	}
}

// finish removes the display (drawn or not) before the result line.
func (d *progressDisplay) finish() {
	if d == nil {
		return
	}
	d.timer.Stop()
	d.mu.Lock()
	bars := []*mpb.Bar{d.stage, d.kernels, d.write}
	d.mu.Unlock()
	for _, b := range bars {
		if b != nil {
			b.Abort(true)
		}
	}
	d.p.Shutdown()
}
