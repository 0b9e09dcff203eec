package convert

import (
	"os"

	"gkconv/internal/kernels/cpu"
	"gkconv/internal/runtime/cpuisa"
)

// CompilerInfo describes the C compiler CPU kernels would be built with on
// this machine (for `converter version`).
type CompilerInfo = cpu.CompilerInfo

// DescribeCompiler resolves $CC (else cc) for the -march that benchmark
// rebuilds kernels with (native, or GKCONV_CPU_ISA's level).
func DescribeCompiler() (CompilerInfo, error) {
	return cpu.DescribeCompiler(os.Getenv("CC"), cpuisa.MArch())
}
