package nn

// The instruction-set level of this package's C code (isa.h): the packed
// GEMM, the packed convolution's GEMM and tile transpose, and the kernels
// of im2col_dwconv.c and conv_packed_tile.c follow cpuisa's level, which
// GKCONV_CPU_ISA can force below the CPU's best.

/*
#cgo CFLAGS: -O3 -std=gnu11 -I${SRCDIR}/../../cpuisa
#include "isa.h"
#include "packed_gemm.h"
#include "conv_packed_gemm.h"
#include <cblas.h>
*/
import "C"

import (
	"sync/atomic"

	"gkconv/internal/runtime/cpuisa"
)

// level512: the package's C code runs at the AVX-512 level (set with it).
var level512 atomic.Bool

func init() {
	cpuisa.Register(func(l cpuisa.Level) {
		C.gk_nn_set_isa(C.int(l))
		convGEMMAvailable.Store(C.conv_gemm_available() != 0)
		level512.Store(l >= cpuisa.AVX512)
		convISAGen.Add(1) // conv plans made at the old level are made again
	})
}

// ISA names the code path of the packed GEMM (portable, avx2, avx512f) and
// whether the packed convolution's AVX-512 GEMM runs, at the current level.
func ISA() (gemm string, convGEMM bool) {
	return C.GoString(C.packed_sgemm_isa()), convGEMMAvailable.Load()
}

// BLASCoreName is the core type OpenBLAS runs its kernels for (Haswell,
// SkylakeX, ...: OPENBLAS_CORETYPE when set before it loaded, else what it
// detected).
func BLASCoreName() string { return C.GoString(C.openblas_get_corename()) }
