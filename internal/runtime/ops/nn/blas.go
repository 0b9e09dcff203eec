package nn

// OpenBLAS binding for the GEMM hot paths.
//
// Debian's OpenBLAS detects the AMD EPYC CPUs we run on as Haswell and uses
// its AVX2 kernels (about half the AVX-512 speed); it only picks the AVX-512
// (SkylakeX) kernels when OPENBLAS_CORETYPE=SkylakeX is in the environment
// before the library loads. The binary's main arranges that; nothing here can,
// since the library is loaded before any Go code runs.

/*
#cgo LDFLAGS: -lopenblas
#include <cblas.h>
*/
import "C"

import (
	"sync"
	"unsafe"
)

var (
	blasMu      sync.Mutex
	blasThreads int
)

// setBLASThreads tells OpenBLAS how many threads to use, calling into the
// library only when the number changes (the call is not free).
func setBLASThreads(n int) {
	if n < 1 {
		n = 1
	}
	blasMu.Lock()
	if n != blasThreads {
		C.openblas_set_num_threads(C.int(n))
		blasThreads = n
	}
	blasMu.Unlock()
}

func trans(t bool) C.enum_CBLAS_TRANSPOSE {
	if t {
		return C.CblasTrans
	}
	return C.CblasNoTrans
}

// sgemm computes C = alpha*op(A)*op(B) + beta*C on row-major matrices:
// op(A) is m x k, op(B) is k x n, C is m x n with leading dimensions lda, ldb, ldc.
func sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		scaleF32(c, m, n, ldc, beta)
		return
	}
	C.cblas_sgemm(C.CblasRowMajor, trans(transA), trans(transB), C.blasint(m), C.blasint(n), C.blasint(k),
		C.float(alpha), (*C.float)(unsafe.Pointer(&a[0])), C.blasint(lda),
		(*C.float)(unsafe.Pointer(&b[0])), C.blasint(ldb),
		C.float(beta), (*C.float)(unsafe.Pointer(&c[0])), C.blasint(ldc))
}

// dgemm is sgemm for float64.
func dgemm(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		scaleF64(c, m, n, ldc, beta)
		return
	}
	C.cblas_dgemm(C.CblasRowMajor, trans(transA), trans(transB), C.blasint(m), C.blasint(n), C.blasint(k),
		C.double(alpha), (*C.double)(unsafe.Pointer(&a[0])), C.blasint(lda),
		(*C.double)(unsafe.Pointer(&b[0])), C.blasint(ldb),
		C.double(beta), (*C.double)(unsafe.Pointer(&c[0])), C.blasint(ldc))
}

func scaleF32(c []float32, m, n, ldc int, beta float32) {
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 { // C may hold garbage (NaN): overwrite, do not scale
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

func scaleF64(c []float64, m, n, ldc int, beta float64) {
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 { // C may hold garbage (NaN): overwrite, do not scale
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}
