package cpu

import (
	"fmt"
	"strings"

	"gkconv/internal/kernels"
)

// Parallel regions as tasks of the AKG CPU ABI. A kernel does not start
// threads of its own: each parallel loop is outlined into a static task
// function
//
//	static int <sym>_task<k>(int task_id, int num_task, void *cdata)
//
// that runs its share [N*task_id/num_task, N*(task_id+1)/num_task) of the
// loop, and the kernel hands it to parallel_launch_func, the first member of
// the AkgCallBack in args[0]: MindSpore Lite's AkgKernel runs the tasks on
// its thread pool, this repository's runtime on its worker pool, and a
// caller that gives no launcher (args[0] NULL, or its parallel_launch_func
// NULL) gets one task, in the calling thread. So one pool serves the
// operators and the kernels, and a kernel links no OpenMP runtime.
//
// cdata is the kernel's environment: its first member points at the
// callback's members after parallel_launch_func, as MindSpore Lite's
// launcher expects (it reads its extend_data two pointers further on), then
// every buffer the kernel function declares: inputs, outputs, allocations.
// A task declares them again from there under the same names, so a loop
// body reads the same in either place.

// capture is a pointer variable of the kernel function a task may read.
type capture struct {
	name  string
	ctype string // pointee type
	cnst  bool
}

// captures lists the kernel function's buffers in environment order.
func (g *gen) captures() []capture {
	var cs []capture
	for i, v := range g.body.Inputs {
		st, _ := kernels.StorageType(v.DType)
		cs = append(cs, capture{name: fmt.Sprintf("in%d", i), ctype: st, cnst: true})
	}
	for i, v := range g.body.Outputs {
		st, _ := kernels.StorageType(v.DType)
		cs = append(cs, capture{name: fmt.Sprintf("out%d", i), ctype: st})
	}
	return append(cs, g.allocated...)
}

// parallelFor writes, at the call site in w, the launch of a task that runs
// "for (int64_t v = lo; v < hi; v++) { body }" over its share of [0, n),
// after pre and before post (per-task set-up and clean-up, e.g. row
// buffers). body and pre may use the kernel's buffers by name.
func (g *gen) parallelFor(w *strings.Builder, ind string, n int64, v, pre, body, post string) {
	name := fmt.Sprintf("%s_task%d", g.sym, len(g.tasks))
	var t strings.Builder
	fmt.Fprintf(&t, "static int %s(int task_id, int num_task, void *cdata) {\n", name)
	t.WriteString("  void *const *env = (void *const *)cdata;\n")
	for i, c := range g.captures() {
		q := ""
		if c.cnst {
			q = "const "
		}
		fmt.Fprintf(&t, "  %s%s *restrict %s = (%s%s *)env[%d]; (void)%s;\n", q, c.ctype, c.name, q, c.ctype, i+1, c.name)
	}
	t.WriteString(pre)
	fmt.Fprintf(&t, "  const int64_t lo = gk_share(%d, task_id, num_task), hi = gk_share(%d, task_id + 1, num_task);\n", n, n)
	fmt.Fprintf(&t, "  for (int64_t %s = lo; %s < hi; %s++) {\n", v, v, v)
	t.WriteString(body)
	t.WriteString("  }\n")
	t.WriteString(post)
	t.WriteString("  return 0;\n}\n\n")
	g.tasks = append(g.tasks, t.String())
	fmt.Fprintf(w, "%sgk_launch(args[0], %s, env);\n", ind, name)
}

// envDecl declares the environment the kernel function passes its tasks
// (after the allocations, so they are in it); "" when there are none.
func (g *gen) envDecl() string {
	if len(g.tasks) == 0 {
		return ""
	}
	var sb strings.Builder
	cs := g.captures()
	fmt.Fprintf(&sb, "  void *env[%d] = {gk_cb_tail(args[0])", len(cs)+1)
	for _, c := range cs {
		fmt.Fprintf(&sb, ", (void *)%s", c.name)
	}
	sb.WriteString("};\n")
	return sb.String()
}
