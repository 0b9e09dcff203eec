package cpu

import (
	"math/rand"
	"slices"
	"strings"
	"sync"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/native"
	"gkconv/internal/testkit"
)

// TestKernelTasks checks that large loops (a block loop, a row-wise
// LayerNorm, a reduction) run as tasks of the callback's launcher, each
// task once, in any order, with results bit for bit those of one task; and
// that no kernel asks for OpenMP threads of its own.
func TestKernelTasks(t *testing.T) {
	if !native.Available {
		t.Skip("built without cgo: kernels cannot be loaded")
	}
	b := testkit.New(t, "tasks")
	x := b.Input("", 300, 700)
	aff := b.GraphKernel("tasks_affine", b.Op("Add", nil, b.Op("Mul", nil, x, b.Scalar(3)), b.Scalar(-1)))
	b2 := testkit.New(t, "tasks_sum")
	x2 := b2.Input("", 64, 96, 40) // the middle axis: loop nests, not row-wise
	sum := b2.GraphKernel("tasks_sum", b2.Op("ReduceSum", keep(0), b2.Op("Mul", nil, x2, x2), b2.Ints(1)))
	ln := layerNormBody(t, 256, 768)
	r := rand.New(rand.NewSource(9))
	cases := []struct {
		n   *ir.Node
		ins []*ir.Tensor
	}{
		{aff, []*ir.Tensor{randTensor(r, x.Shape, -2, 2)}},
		{sum, []*ir.Tensor{randTensor(r, x2.Shape, -2, 2)}},
		{ln, []*ir.Tensor{randTensor(r, []int64{256, 768}, -3, 5), randTensor(r, []int64{768}, 0.5, 1.5), randTensor(r, []int64{768}, -1, 1)}},
	}
	for _, c := range cases {
		build(t, t.TempDir(), c.n)
		src := c.n.Attrs.String(ir.GKKernelSource, "")
		if strings.Contains(src, "omp parallel") || !strings.Contains(src, "gk_launch(args[0]") {
			t.Fatalf("%s: want tasks and no OpenMP parallel region:\n%s", c.n.Name, src)
		}
		one := runKernel(t, c.n, 1, c.ins...)
		k, err := native.Load(c.n.Attrs[ir.GKKernelSO].B, c.n.Attrs.String(ir.GKKernelSOHash, ""), c.n.Attrs.String(ir.GKKernelName, ""))
		if err != nil {
			t.Fatal(err)
		}
		if k.OpenMP() {
			t.Fatalf("%s: kernel exports the OpenMP thread-count entry", c.n.Name)
		}
		for _, threads := range []int{2, 3, 7} {
			var mu sync.Mutex
			var ran []int
			launches := 0
			// tasks in reverse order, serially: a task must not rely on another
			launch := func(n int, task func(id int)) {
				launches++
				if n != threads {
					t.Errorf("%s: launcher asked for %d tasks, want %d", c.n.Name, n, threads)
				}
				for id := n - 1; id >= 0; id-- {
					task(id)
					mu.Lock()
					ran = append(ran, id)
					mu.Unlock()
				}
			}
			bufs, outs := kernelBufs(c.n, c.ins)
			k.CallOn(threads, launch, bufs)
			if launches == 0 {
				t.Errorf("%s: %d threads: no task launched", c.n.Name, threads)
			}
			count := make([]int, threads)
			for _, id := range ran {
				count[id]++
			}
			for id, n := range count {
				if n != launches {
					t.Fatalf("%s: task %d ran %d times in %d launches", c.n.Name, id, n, launches)
				}
			}
			for i := range outs {
				if !slices.Equal(outs[i].Data, one[i].Data) {
					t.Errorf("%s: %d threads: output %d differs from one task's", c.n.Name, threads, i)
				}
			}
			// and on goroutines (Call's own launcher), from several callers
			// at once: each call has its own launcher and environment
			var wg sync.WaitGroup
			for range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					bufs, got := kernelBufs(c.n, c.ins)
					k.Call(threads, bufs)
					for i := range got {
						if !slices.Equal(got[i].Data, one[i].Data) {
							t.Errorf("%s: %d goroutines: output %d differs from one task's", c.n.Name, threads, i)
						}
					}
				}()
			}
			wg.Wait()
		}
	}
}
