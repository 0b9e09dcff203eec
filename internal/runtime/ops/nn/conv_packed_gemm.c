// GEMM of the packed-weight convolution on large planes: the constant
// weights are the A operand, packed once in slivers of 12 output channels,
// and the im2col tile (or, for a 1x1 conv, the input itself) is B, read in
// place with its row stride: 32 pixels of a row are two zmm. The 12 x 32
// micro-kernel writes NCHW rows directly (no transpose) and starts from the
// bias. Blocking as GotoBLAS: K in blocks of KC, channels in blocks of MC so
// an MC x KC block of A stays in L2 while a KC x 32 slice of B sits in L1.
#include <immintrin.h>
#include <string.h>

#include "conv_packed_gemm.h"
#include "isa.h"

#define MR 12
#define NR 32
#define KC 256
#define MC 240

void conv_pack_w(const float *w, float *ap, int m, int k) {
    for (int s = 0; s < m; s += MR) {
        int rows = m - s < MR ? m - s : MR;
        for (int p = 0; p < k; p++) {
            int r = 0;
            for (; r < rows; r++) ap[(long)p * MR + r] = w[(long)(s + r) * k + p];
            for (; r < MR; r++) ap[(long)p * MR + r] = 0;
        }
        ap += (long)k * MR;
    }
}

#define AVX512 __attribute__((target("avx512f")))
#define INLINE static inline __attribute__((always_inline))

INLINE AVX512 void ukr(const int mr, int kc, const float *a, const float *b, long ldb, float *c, long ldc,
                       int acc, const float *bias, __mmask16 m0, __mmask16 m1) {
    __m512 c0[MR], c1[MR];
#pragma GCC unroll 12
    for (int r = 0; r < mr; r++) {
        float *cr = c + (long)r * ldc;
        if (acc) {
            c0[r] = _mm512_maskz_loadu_ps(m0, cr);
            c1[r] = _mm512_maskz_loadu_ps(m1, cr + 16);
        } else {
            c0[r] = c1[r] = bias ? _mm512_set1_ps(bias[r]) : _mm512_setzero_ps();
        }
    }
    for (int p = 0; p < kc; p++) {
        __m512 b0 = _mm512_maskz_loadu_ps(m0, b);
        __m512 b1 = _mm512_maskz_loadu_ps(m1, b + 16);
        __asm__("" : "+v"(b0), "+v"(b1)); // keep B in registers (see packed_gemm.c)
#pragma GCC unroll 12
        for (int r = 0; r < mr; r++) {
            __m512 av = _mm512_set1_ps(a[r]);
            c0[r] = _mm512_fmadd_ps(av, b0, c0[r]);
            c1[r] = _mm512_fmadd_ps(av, b1, c1[r]);
        }
        a += MR;
        b += ldb;
    }
#pragma GCC unroll 12
    for (int r = 0; r < mr; r++) {
        float *cr = c + (long)r * ldc;
        _mm512_mask_storeu_ps(cr, m0, c0[r]);
        _mm512_mask_storeu_ps(cr + 16, m1, c1[r]);
    }
}

static AVX512 void ukr_any(int mr, int kc, const float *a, const float *b, long ldb, float *c, long ldc,
                           int acc, const float *bias, __mmask16 m0, __mmask16 m1) {
    switch (mr) {
    case 12: ukr(12, kc, a, b, ldb, c, ldc, acc, bias, m0, m1); break;
    case 11: ukr(11, kc, a, b, ldb, c, ldc, acc, bias, m0, m1); break;
    case 10: ukr(10, kc, a, b, ldb, c, ldc, acc, bias, m0, m1); break;
    case 9: ukr(9, kc, a, b, ldb, c, ldc, acc, bias, m0, m1); break;
    case 8: ukr(8, kc, a, b, ldb, c, ldc, acc, bias, m0, m1); break;
    case 7: ukr(7, kc, a, b, ldb, c, ldc, acc, bias, m0, m1); break;
    case 6: ukr(6, kc, a, b, ldb, c, ldc, acc, bias, m0, m1); break;
    case 5: ukr(5, kc, a, b, ldb, c, ldc, acc, bias, m0, m1); break;
    case 4: ukr(4, kc, a, b, ldb, c, ldc, acc, bias, m0, m1); break;
    case 3: ukr(3, kc, a, b, ldb, c, ldc, acc, bias, m0, m1); break;
    case 2: ukr(2, kc, a, b, ldb, c, ldc, acc, bias, m0, m1); break;
    default: ukr(1, kc, a, b, ldb, c, ldc, acc, bias, m0, m1); break;
    }
}

static AVX512 void gemm(int m, int n, int k, const float *ap, const float *b, long ldb, float *c, long ldc,
                        const float *bias) {
    for (int pc = 0; pc < k; pc += KC) {
        int kc = k - pc < KC ? k - pc : KC;
        for (int ic = 0; ic < m; ic += MC) {
            int mc = m - ic < MC ? m - ic : MC;
            for (int j0 = 0; j0 < n; j0 += NR) {
                int nc = n - j0 < NR ? n - j0 : NR;
                __mmask16 m0 = nc >= 16 ? 0xFFFF : (__mmask16)((1u << nc) - 1);
                __mmask16 m1 = nc >= 32 ? 0xFFFF : nc <= 16 ? 0 : (__mmask16)((1u << (nc - 16)) - 1);
                for (int ir = 0; ir < mc; ir += MR) {
                    int mr = mc - ir < MR ? mc - ir : MR;
                    int i = ic + ir;
                    ukr_any(mr, kc, ap + (long)i * k + (long)pc * MR, b + (long)pc * ldb + j0, ldb,
                            c + (long)i * ldc + j0, ldc, pc > 0, bias ? bias + i : 0, m0, m1);
                }
            }
        }
    }
}

int conv_gemm_available(void) { return gk_nn_isa() >= GK_ISA_AVX512; }

int conv_gemm_f32(int m, int n, int k, const float *ap, const float *b, long ldb, float *c, long ldc,
                  const float *bias) {
    if (!conv_gemm_available()) return -1;
    if (m <= 0 || n <= 0) return 0;
    if (k <= 0) {
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) c[(long)i * ldc + j] = bias ? bias[i] : 0;
        return 0;
    }
    gemm(m, n, k, ap, b, ldb, c, ldc, bias);
    return 0;
}
