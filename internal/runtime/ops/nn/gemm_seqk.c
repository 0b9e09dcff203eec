// C = A^T B with every element one fused multiply-add chain over k, in k
// order, from +0: what MLAS's SGEMM kernels compute when k fits one of
// their K blocks (MLAS_SGEMM_STRIDEK, 128 or more), on every x86-64 level
// (AVX2/FMA3 and AVX-512F alike). onnxruntime's ConvTranspose runs its
// W^T X product through MlasGemm; OpenBLAS's Haswell kernels round it
// otherwise (its SkylakeX kernels happen to agree), so this product keeps
// onnxruntime's bits whatever the ISA level. fmaf is explicit: the AVX-512
// and AVX2 variants inline it as vfmadd, the baseline calls libm's (exact,
// slower; no-math-errno lets gcc inline and vectorise it, fma sets no errno).
#pragma GCC optimize("no-math-errno", "fp-contract=off")
#include <math.h>
#include "gemm_seqk.h"
#include "isa.h"

// a is k x lda (op(A) row i is column i of a), b is k x ldb, c is m x ldc.
GK_ISA_BODY void sgemm_tn_seqk_f32_body(const float *a, long lda, const float *b, long ldb, float *c, long ldc,
                                        long m, long n, long k) {
    enum { NB = 256 }; // a block of C's row and the k x NB panel of b stay in L1
    for (long j0 = 0; j0 < n; j0 += NB) {
        const long j1 = j0 + NB < n ? j0 + NB : n;
        for (long i = 0; i < m; i++) {
            float *ci = c + i * ldc;
            for (long j = j0; j < j1; j++) ci[j] = 0.0f;
            for (long p = 0; p < k; p++) {
                const float w = a[p * lda + i];
                const float *bp = b + p * ldb;
                for (long j = j0; j < j1; j++) ci[j] = fmaf(w, bp[j], ci[j]);
            }
        }
    }
}
GK_ISA_VARIANTS_FMA(gk_nn_isa(), sgemm_tn_seqk_f32, (const float *a, long lda, const float *b, long ldb, float *c,
                    long ldc, long m, long n, long k), (a, lda, b, ldb, c, ldc, m, n, k))
