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
	"unsafe"

	"gkconv/internal/runtime/opkernel"
)

// One pool of workers runs the op library: the persistent workers of
// opkernel.ParallelFor (opkernel/workers.go). OpenBLAS
// is kept single-threaded: its own threads busy-wait (sched_yield) for a
// long while after each call and fight that pool for the cores; on 2 cores
// a 2-thread run was no faster than 1 thread and swung by 2x between runs.
// A GEMM is split over ctx.Threads instead (gemmOn), each part one
// single-threaded OpenBLAS call on the worker that runs it.
func init() { C.openblas_set_num_threads(1) }

// gemmOn returns serial split over ctx.Threads workers: by blocks of rows
// of C, or by blocks of columns when C has too few rows; small products run
// on the caller.
func gemmOn[T any](ctx *opkernel.Ctx, serial gemmFunc[T]) gemmFunc[T] {
	threads := ctx.NumThreads()
	if threads <= 1 {
		return serial
	}
	return func(transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
		work := int64(m) * int64(n) * int64(max(k, 1))
		if work < 2*minParallelFMAs {
			serial(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
			return
		}
		const rowBlock, colBlock = 16, 64 // multiples of OpenBLAS's micro-kernel tiles
		if m >= rowBlock*threads || m >= n {
			blocks := (m + rowBlock - 1) / rowBlock
			grain := max(1, int(minParallelFMAs/max(int64(rowBlock)*int64(n)*int64(max(k, 1)), 1)))
			opkernel.ParallelFor(ctx, blocks, grain, func(b0, b1 int) {
				i0, i1 := b0*rowBlock, min(b1*rowBlock, m)
				ao := i0 * lda
				if transA {
					ao = i0
				}
				serial(transA, transB, i1-i0, n, k, alpha, a[ao:], lda, b, ldb, beta, c[i0*ldc:], ldc)
			})
			return
		}
		blocks := (n + colBlock - 1) / colBlock
		grain := max(1, int(minParallelFMAs/max(int64(colBlock)*int64(m)*int64(max(k, 1)), 1)))
		opkernel.ParallelFor(ctx, blocks, grain, func(b0, b1 int) {
			j0, j1 := b0*colBlock, min(b1*colBlock, n)
			bo := j0
			if transB {
				bo = j0 * ldb
			}
			serial(transA, transB, m, j1-j0, k, alpha, a, lda, b[bo:], ldb, beta, c[j0:], ldc)
		})
	}
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
