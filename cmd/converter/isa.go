package main

import (
	"fmt"

	"gkconv/internal/ir"
	"gkconv/internal/runtime"
	"gkconv/internal/runtime/cpuisa"
)

// isaLevel says which ISA level the runtime's own code runs at and why.
func isaLevel() string {
	l, forced := cpuisa.Forced()
	if forced {
		return fmt.Sprintf("%s (forced by %s; CPU best %s)", l, cpuisa.EnvVar, cpuisa.Detected())
	}
	return fmt.Sprintf("%s (CPU best)", l)
}

// forcedLevel says what GKCONV_CPU_ISA forces, for converter version.
func forcedLevel() string {
	if l, ok := cpuisa.Forced(); ok {
		return fmt.Sprintf("forced %s by %s (OpenBLAS core type %s, kernel -march=%s)", l, cpuisa.EnvVar, blasCore(), l.MArch())
	}
	return fmt.Sprintf("not forced (%s unset)", cpuisa.EnvVar)
}

// isaPath is benchmark's line on the code paths that ran: the level, the
// packed GEMM's path, whether the packed conv has its sliver GEMM, the
// OpenBLAS core type, the -march of the fused kernels and the 8-bit integer
// GEMM's path (QLinearMatMul, QLinearConv, ...).
func isaPath(g *ir.Graph, trustedEmbedded bool) string {
	gemm, convGEMM, _ := runtime.KernelISA()
	conv := gemm + " (transposed form only)"
	if convGEMM {
		conv = gemm + " + " + gemm + " sliver GEMM"
	}
	return fmt.Sprintf("level %s, packed GEMM %s, packed conv %s, OpenBLAS %s, kernel %s, int8 GEMM %s",
		isaLevel(), gemm, conv, blasCore(), kernelMArch(g, trustedEmbedded), runtime.Int8GEMMPath())
}

// kernelMArch is the -march of the model's fused CPU kernels as benchmark
// runs them: rebuilt here (cpuisa.MArch) or embedded (their recorded march).
func kernelMArch(g *ir.Graph, trustedEmbedded bool) string {
	if !hasGraphKernels(g) {
		return "-march: no fused kernels"
	}
	if !trustedEmbedded {
		return "-march=" + cpuisa.MArch() + " (rebuilt)"
	}
	for _, n := range g.Nodes {
		if n.Op == ir.OpGraphKernel {
			if m := n.Attrs.String(ir.GKMArch, ""); m != "" {
				return "-march=" + m + " (embedded)"
			}
		}
	}
	return "-march unknown (embedded)"
}

// blasCore is OpenBLAS's core type.
func blasCore() string {
	_, _, core := runtime.KernelISA()
	return core
}
