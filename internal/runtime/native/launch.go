//go:build cgo

package native

/*
#include <stdint.h>
int gk_run_task_go(void *f, int id, int n, void *cdata);
*/
import "C"

import (
	"runtime/cgo"
	"sync"
	"unsafe"
)

// Launch runs task(id) for every id in [0, n) and returns when all have
// returned; it may run them in parallel, and must run each exactly once.
type Launch func(n int, task func(id int))

// launcher is what a kernel call's callback names (extend_data).
type launcher struct {
	launch  Launch
	threads int
}

// goLaunch runs task 0 in the caller and the others on goroutines.
func goLaunch(n int, task func(id int)) {
	var wg sync.WaitGroup
	for id := 1; id < n; id++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			task(id)
		}()
	}
	task(0)
	wg.Wait()
}

// gkconvParallelLaunch is the kernels' parallel_launch_func (gk_launch in
// loader.go): it runs the task f with the environment cdata as
// l.threads tasks on the call's launcher.
//
//export gkconvParallelLaunch
func gkconvParallelLaunch(l C.uintptr_t, f unsafe.Pointer, cdata unsafe.Pointer) C.int {
	ln := cgo.Handle(l).Value().(*launcher)
	n := ln.threads
	ln.launch(n, func(id int) { C.gk_run_task_go(f, C.int(id), C.int(n), cdata) })
	return 0
}
