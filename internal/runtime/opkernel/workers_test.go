package opkernel

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// TestParallelForCoversAll: every index is visited exactly once, for loops
// on the pool, nested loops (which fall back to goroutines) and uneven
// chunks.
func TestParallelForCoversAll(t *testing.T) {
	for _, threads := range []int{1, 2, 3, 8} {
		for _, n := range []int{1, 2, 7, 100, 1001} {
			ctx := &Ctx{Threads: threads}
			seen := make([]atomic.Int32, n)
			ParallelFor(ctx, n, 1, func(s, e int) {
				for i := s; i < e; i++ {
					seen[i].Add(1)
					inner := make([]atomic.Int32, 5)
					ParallelFor(ctx, 5, 1, func(a, b int) {
						for j := a; j < b; j++ {
							inner[j].Add(1)
						}
					})
					for j := range inner {
						if inner[j].Load() != 1 {
							t.Errorf("threads %d n %d: nested index %d visited %d times", threads, n, j, inner[j].Load())
						}
					}
				}
			})
			for i := range seen {
				if seen[i].Load() != 1 {
					t.Fatalf("threads %d n %d: index %d visited %d times", threads, n, i, seen[i].Load())
				}
			}
		}
	}
}

var sink atomic.Int64

func spinWork(iters int) {
	x := int64(0)
	for i := 0; i < iters; i++ {
		x += int64(i) * 3
	}
	sink.Add(x)
}

// TestParallelForSharedChunks: ParallelForShared visits every index once,
// in chunks of whole grains (but the last), from both ends of the range.
func TestParallelForSharedChunks(t *testing.T) {
	for _, threads := range []int{1, 2, 3, 8} {
		for _, n := range []int{1, 5, 16, 17, 100, 1001} {
			for _, grain := range []int{1, 4, 16} {
				ctx := &Ctx{Threads: threads}
				seen := make([]atomic.Int32, n)
				ParallelForShared(ctx, n, grain, func(s, e int) {
					if s%grain != 0 || (e != n && (e-s)%grain != 0) {
						t.Errorf("threads %d n %d grain %d: chunk [%d, %d) is not whole grains", threads, n, grain, s, e)
					}
					for i := s; i < e; i++ {
						seen[i].Add(1)
					}
				})
				for i := range seen {
					if seen[i].Load() != 1 {
						t.Fatalf("threads %d n %d grain %d: index %d visited %d times", threads, n, grain, i, seen[i].Load())
					}
				}
			}
		}
	}
}

// BenchmarkParallelForShort: a loop of two ~20 us chunks, as a small conv
// at 2 threads; the pool should make it cost ~one chunk.
func BenchmarkParallelForShort(b *testing.B) {
	ctx := &Ctx{Threads: 2}
	for b.Loop() {
		ParallelFor(ctx, 2, 1, func(s, e int) { spinWork(20000) })
	}
}

func BenchmarkSerialShort(b *testing.B) {
	for b.Loop() {
		spinWork(20000)
	}
}

func BenchmarkParallelForLong(b *testing.B) {
	ctx := &Ctx{Threads: 2}
	for b.Loop() {
		ParallelFor(ctx, 2, 1, func(s, e int) { spinWork(1000000) })
		spinWork(300000) // serial part between loops: workers park
	}
}

func BenchmarkSerialLong(b *testing.B) {
	for b.Loop() {
		spinWork(1000000)
		spinWork(1000000)
		spinWork(300000)
	}
}

// TestWorkerSpinsThroughLoop: a worker that runs out of chunks while the
// caller still works on its own (here 2 ms, far past the 100 us spin
// window) keeps spinning until that loop ends, so the loop posted right
// after finds it awake. Before, it parked 100 us after its last chunk and
// nearly every such next loop had to wake it (a wake-up of up to 250 us
// on a 2-vCPU VM).
func TestWorkerSpinsThroughLoop(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: no worker runs beside the caller")
	}
	ctx := &Ctx{Threads: 2}
	ParallelFor(ctx, 2, 1, func(s, e int) {}) // start the worker
	const pairs = 20
	woken := int64(0)
	for range pairs {
		time.Sleep(2 * time.Millisecond) // the worker parks between pairs
		ParallelFor(ctx, 2, 1, func(s, e int) {})
		// the long loop: chunk 0 (the caller's, from the front) takes 2 ms
		ParallelFor(ctx, 2, 1, func(s, e int) {
			if s == 0 {
				time.Sleep(2 * time.Millisecond)
			}
		})
		before := workers.wakes.Load()
		ParallelFor(ctx, 2, 1, func(s, e int) {}) // posted as the long loop ends
		woken += workers.wakes.Load() - before
	}
	if woken > pairs/2 {
		t.Fatalf("the loop after a long one found the worker parked %d times of %d", woken, pairs)
	}
}
