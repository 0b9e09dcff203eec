// Package benchmark is what `converter benchmark` does besides reading its
// flags: loading inputs (.pb TensorProto or raw .bin) or making seeded
// random ones, timing runs of a session, the per-node profile, comparing
// outputs with reference files, writing outputs back as TensorProtos and
// the JSON result. The command maps its flags onto these calls and prints.
//
// Functions that read or write files named by an option take that option's
// name (flag) so that their messages say which option was wrong.
package benchmark

import (
	"math"
	"sort"
	"time"

	"gkconv/internal/ir"
	"gkconv/internal/runtime"
)

// Result is the JSON result of one benchmark (--resultFile); its field
// names are a format scripts read, so they do not change.
type Result struct {
	Model      string             `json:"model"`
	Threads    int                `json:"threads"`
	Loops      int                `json:"loops"`
	MedianMs   float64            `json:"median_ms"`
	MinMs      float64            `json:"min_ms"`
	P90Ms      float64            `json:"p90_ms"`
	ArenaBytes int64              `json:"arena_bytes"`
	ISA        string             `json:"isa,omitempty"` // the code paths that ran
	Accuracy   []runtime.Accuracy `json:"accuracy"`
	Profile    []ProfileRow       `json:"profile,omitempty"`
	Pass       bool               `json:"pass"`
	Error      string             `json:"error,omitempty"`
}

// ProfileRow is one node of the per-node profile, in milliseconds.
type ProfileRow struct {
	Node     string  `json:"node"`
	Op       string  `json:"op"`
	Ms       float64 `json:"ms_per_run"`
	MedianMs float64 `json:"median_ms"`
	Share    float64 `json:"share"` // of the summed per-run times, 0..1
}

// Timing is the wall time of the timed runs, in milliseconds.
type Timing struct {
	Sorted                 []float64 // every run, fastest first
	MinMs, MedianMs, P90Ms float64
}

// Time runs the session warmUps times untimed, then loops times timed
// (loops >= 1). The profile is reset after the warm-ups so that it covers
// the timed runs only. Each run's outputs are given back (Session.Recycle),
// so the next run writes into them, as a deployment reusing its output
// buffers does.
func Time(sess *runtime.Session, inputs []*ir.Tensor, warmUps, loops int) (Timing, error) {
	for i := 0; i < warmUps; i++ {
		o, err := sess.Run(inputs)
		if err != nil {
			return Timing{}, err
		}
		sess.Recycle(o)
	}
	sess.ResetProfile()
	times := make([]float64, 0, loops)
	for i := 0; i < loops; i++ {
		t0 := time.Now()
		o, err := sess.Run(inputs)
		if err != nil {
			return Timing{}, err
		}
		times = append(times, milliseconds(time.Since(t0)))
		sess.Recycle(o)
	}
	sort.Float64s(times)
	return Timing{Sorted: times, MinMs: times[0], MedianMs: Percentile(times, 0.5), P90Ms: Percentile(times, 0.9)}, nil
}

// Percentile is the nearest-rank percentile (p in 0..1) of a sorted,
// non-empty slice: the smallest value with at least p of the values at or
// below it.
func Percentile(sorted []float64, p float64) float64 {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	if i < 0 {
		i = 0
	}
	return sorted[i]
}

// Profile turns the session's per-node times into rows, in the session's
// order (slowest first), each with its share of the summed per-run times.
func Profile(prof []runtime.NodeTime) []ProfileRow {
	var total time.Duration
	for _, p := range prof {
		total += p.PerRun
	}
	rows := make([]ProfileRow, 0, len(prof))
	for _, p := range prof {
		share := 0.0
		if total > 0 {
			share = float64(p.PerRun) / float64(total)
		}
		rows = append(rows, ProfileRow{p.Node, p.Op, milliseconds(p.PerRun), milliseconds(p.Median), share})
	}
	return rows
}

func milliseconds(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
