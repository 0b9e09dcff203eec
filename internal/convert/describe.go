package convert

import (
	"os"

	"gkconv/internal/kernels/cpu"
)

// CompilerInfo describes the C compiler CPU kernels would be built with on
// this machine (for `converter version`).
type CompilerInfo = cpu.CompilerInfo

// DescribeCompiler resolves $CC (else cc) for -march=native as a conversion
// would.
func DescribeCompiler() (CompilerInfo, error) { return cpu.DescribeCompiler(os.Getenv("CC"), "") }
