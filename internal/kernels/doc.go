// Package kernels is the shared base of the graph-kernel code generators
// (internal/kernels/cpu, internal/kernels/cuda, internal/kernels/ascend):
//
//   - what a body may hold and the C each op computes: CheckBody, the C
//     types (ctypes.go), the expression rules (exprs.go) and reductions
//     (reduce.go);
//   - the one expression evaluator (eval.go), which the CPU generator
//     drives with loop maps and the device generators through ElemGen with
//     C index expressions (elemgen.go);
//   - the row planner (rowplan.go): whether a body is row-wise and its
//     reduction passes;
//   - what builders share (jobs.go, names.go): the GraphKernel nodes to
//     build, identical sources compiled once, kernel names and I/O
//     attributes (the attribute names are ir's GraphKernel schema);
//   - AKG kernel-info JSON, written and read (info*.go);
//   - the device math and the host emulation the device generators' tests
//     run their kernels in (device_math.go, host_emulation.go).
//
// The kernel cache the builders compile through is its own package,
// internal/kernels/cache.
package kernels
