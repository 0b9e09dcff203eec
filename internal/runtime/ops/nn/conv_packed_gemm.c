// GEMM of the packed-weight convolution on large planes: the constant
// weights are the A operand, packed once in slivers of 12 output channels,
// and the im2col tile (or, for a 1x1 conv, the input itself) is B, read in
// place with its row stride: 32 pixels of a row are two zmm. The 12 x 32
// micro-kernel writes NCHW rows directly (no transpose) and starts from the
// bias (AVX2: two 6 x 16 halves of a sliver, below). Blocking as GotoBLAS: K in blocks of KC, channels in blocks of MC so
// an MC x KC block of A stays in L2 while a KC x 32 slice of B sits in L1.
#include <immintrin.h>
#include <string.h>

#include "conv_packed_gemm.h"
#include "isa.h"

#define MR 12
#define NR 32
#define KC 256
#define MC 240

void conv_pack_w(const float *w, float *ap, int m, int k, int mr) {
    for (int s = 0; s < m; s += mr) {
        int rows = m - s < mr ? m - s : mr;
        for (int p = 0; p < k; p++) {
            int r = 0;
            for (; r < rows; r++) ap[(long)p * mr + r] = w[(long)(s + r) * k + p];
            for (; r < mr; r++) ap[(long)p * mr + r] = 0;
        }
        ap += (long)k * mr;
    }
}

#define AVX512 __attribute__((target("avx512f")))
#define INLINE static inline __attribute__((always_inline))

// wide: the column block has more than 16 columns (both zmm of each row);
// otherwise only the first, so a plane's last few columns (196 = 6 x 32 + 4
// on 14x14) cost one FMA per row and k step, not two.
INLINE AVX512 void ukr(const int mr, const int wide, int kc, const float *a, const float *b, long ldb, float *c,
                       long ldc, int acc, const float *bias, const float *z, __mmask16 m0, __mmask16 m1, int act) {
    __m512 c0[MR], c1[MR];
#pragma GCC unroll 12
    for (int r = 0; r < mr; r++) {
        float *cr = c + (long)r * ldc;
        if (acc) {
            c0[r] = _mm512_maskz_loadu_ps(m0, cr);
            c1[r] = wide ? _mm512_maskz_loadu_ps(m1, cr + 16) : c0[r];
        } else {
            c0[r] = c1[r] = bias ? _mm512_set1_ps(bias[r]) : _mm512_setzero_ps();
            // The next column block of this row, for writing: the output
            // rows are outVol apart, too many streams for the hardware
            // prefetcher, so without it every line written to memory not in
            // cache stalls on its read (16 -> 96 1x1 on 112x112 with a cold
            // output: 528 -> 297 us; 273 with the output in cache).
            if (wide) { // (a narrow block is a row's last)
                __builtin_prefetch(cr + NR, 1, 3);
                __builtin_prefetch(cr + NR + 16, 1, 3);
            }
        }
    }
    for (int p = 0; p < kc; p++) {
        __m512 b0 = _mm512_maskz_loadu_ps(m0, b);
        __m512 b1 = wide ? _mm512_maskz_loadu_ps(m1, b + 16) : b0;
        __asm__("" : "+v"(b0), "+v"(b1)); // keep B in registers (see packed_gemm.c)
        // The next column block of this row of B, for reading. A 1x1
        // conv's B is its input read in place, one stream per input channel
        // (outVol apart), again too many for the hardware prefetcher; in a
        // model that input was just written, often half of it by the other
        // core (a depthwise conv splits by channels). 144 -> 24 1x1 on 56x56
        // after a channel-split write, 2 threads: 297 -> 190 us; with the
        // input in cache 107 -> 84 (AVX-512). One block ahead measured best
        // (two and four: equal or slower).
        if (wide) {
            __builtin_prefetch(b + NR, 0, 3);
            __builtin_prefetch(b + NR + 16, 0, 3);
        }
#pragma GCC unroll 12
        for (int r = 0; r < mr; r++) {
            __m512 av = _mm512_set1_ps(a[r]);
            c0[r] = _mm512_fmadd_ps(av, b0, c0[r]);
            if (wide) c1[r] = _mm512_fmadd_ps(av, b1, c1[r]);
        }
        a += MR;
        b += ldb;
    }
    if (z) { // the residual, after the last K block (the epilogue's order: (bias + sum) + z)
#pragma GCC unroll 12
        for (int r = 0; r < mr; r++) {
            const float *zr = z + (long)r * ldc;
            c0[r] = _mm512_add_ps(c0[r], _mm512_maskz_loadu_ps(m0, zr));
            if (wide) {
                c1[r] = _mm512_add_ps(c1[r], _mm512_maskz_loadu_ps(m1, zr + 16));
                __builtin_prefetch(zr + NR, 0, 3); // its next column block (see the output's)
                __builtin_prefetch(zr + NR + 16, 0, 3);
            }
        }
    }
    if (act) { // RELU / RELU6 in registers; max(0, x) and min(6, x) keep NaN
        const __m512 zero = _mm512_setzero_ps(), six = _mm512_set1_ps(6.0f);
#pragma GCC unroll 12
        for (int r = 0; r < mr; r++) {
            c0[r] = _mm512_max_ps(zero, c0[r]);
            if (wide) c1[r] = _mm512_max_ps(zero, c1[r]);
            if (act == ACT_RELU6) {
                c0[r] = _mm512_min_ps(six, c0[r]);
                if (wide) c1[r] = _mm512_min_ps(six, c1[r]);
            }
        }
    }
#pragma GCC unroll 12
    for (int r = 0; r < mr; r++) {
        float *cr = c + (long)r * ldc;
        _mm512_mask_storeu_ps(cr, m0, c0[r]);
        if (wide) _mm512_mask_storeu_ps(cr + 16, m1, c1[r]);
    }
}

static AVX512 void ukr_any(int mr, int kc, const float *a, const float *b, long ldb, float *c, long ldc,
                           int acc, const float *bias, const float *z, __mmask16 m0, __mmask16 m1, int act) {
#define UKR(R)                                                                                                 \
    (m1 ? ukr(R, 1, kc, a, b, ldb, c, ldc, acc, bias, z, m0, m1, act)                                          \
        : ukr(R, 0, kc, a, b, ldb, c, ldc, acc, bias, z, m0, m1, act))
    GK_SWITCH_MR12(mr, UKR)
#undef UKR
}

static AVX512 void gemm(int m, int n, int k, const float *ap, const float *b, long ldb, float *c, long ldc,
                        const float *bias, const float *z, int act) {
    for (int pc = 0; pc < k; pc += KC) {
        int kc = k - pc < KC ? k - pc : KC;
        // the residual and the activation come with the last K block
        const float *zk = pc + kc == k ? z : 0;
        const int actk = pc + kc == k ? act : 0;
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
                            c + (long)i * ldc + j0, ldc, pc > 0, bias ? bias + i : 0,
                            zk ? zk + (long)i * ldc + j0 : 0, m0, m1, actk);
                }
            }
        }
    }
}

// ---------------------------------------------------------------- AVX2
//
// 16 ymm registers: a sliver of 12 rows goes as two halves of 6 rows x 16
// columns (12 accumulators, 2 B registers, 1 broadcast), reading the same
// packed A (rows r0..r0+5 of each 12-wide k step). Partial column tiles load
// and store through lane masks; full ones use plain loads and stores
// (masked stores are slow on AMD).

#define AVX2 __attribute__((target("avx2,fma")))
#define MR2 6
#define NR2 16

// wide: as in ukr, with blocks of 8 columns (8 or fewer: only the first ymm).
INLINE AVX2 void ukr2(const int mr, const int masked, const int wide, int kc, const float *a, const float *b,
                      long ldb, float *c, long ldc, int acc, const float *bias, const float *z, __m256i k0, __m256i k1,
                      int act) {
    __m256 c0[MR2], c1[MR2];
#pragma GCC unroll 6
    for (int r = 0; r < mr; r++) {
        float *cr = c + (long)r * ldc;
        if (acc) {
            c0[r] = masked ? _mm256_maskload_ps(cr, k0) : _mm256_loadu_ps(cr);
            c1[r] = !wide ? c0[r] : masked ? _mm256_maskload_ps(cr + 8, k1) : _mm256_loadu_ps(cr + 8);
        } else {
            c0[r] = c1[r] = bias ? _mm256_set1_ps(bias[r]) : _mm256_setzero_ps();
            if (wide) __builtin_prefetch(cr + NR2, 1, 3); // the next column block (see ukr)
        }
    }
    for (int p = 0; p < kc; p++) {
        __m256 b0 = masked ? _mm256_maskload_ps(b, k0) : _mm256_loadu_ps(b);
        __m256 b1 = !wide ? b0 : masked ? _mm256_maskload_ps(b + 8, k1) : _mm256_loadu_ps(b + 8);
        if (wide) __builtin_prefetch(b + NR2, 0, 3); // the next column block (see ukr)
#pragma GCC unroll 6
        for (int r = 0; r < mr; r++) {
            __m256 av = _mm256_broadcast_ss(a + r);
            c0[r] = _mm256_fmadd_ps(av, b0, c0[r]);
            if (wide) c1[r] = _mm256_fmadd_ps(av, b1, c1[r]);
        }
        a += MR;
        b += ldb;
    }
    if (z) { // the residual, after the last K block (see ukr)
#pragma GCC unroll 6
        for (int r = 0; r < mr; r++) {
            const float *zr = z + (long)r * ldc;
            c0[r] = _mm256_add_ps(c0[r], masked ? _mm256_maskload_ps(zr, k0) : _mm256_loadu_ps(zr));
            if (wide) {
                c1[r] = _mm256_add_ps(c1[r], masked ? _mm256_maskload_ps(zr + 8, k1) : _mm256_loadu_ps(zr + 8));
                __builtin_prefetch(zr + NR2, 0, 3);
            }
        }
    }
    if (act) { // RELU / RELU6 in registers; max(0, x) and min(6, x) keep NaN
        const __m256 zero = _mm256_setzero_ps(), six = _mm256_set1_ps(6.0f);
#pragma GCC unroll 6
        for (int r = 0; r < mr; r++) {
            c0[r] = _mm256_max_ps(zero, c0[r]);
            if (wide) c1[r] = _mm256_max_ps(zero, c1[r]);
            if (act == ACT_RELU6) {
                c0[r] = _mm256_min_ps(six, c0[r]);
                if (wide) c1[r] = _mm256_min_ps(six, c1[r]);
            }
        }
    }
#pragma GCC unroll 6
    for (int r = 0; r < mr; r++) {
        float *cr = c + (long)r * ldc;
        if (masked) {
            _mm256_maskstore_ps(cr, k0, c0[r]);
            if (wide) _mm256_maskstore_ps(cr + 8, k1, c1[r]);
        } else {
            _mm256_storeu_ps(cr, c0[r]);
            _mm256_storeu_ps(cr + 8, c1[r]);
        }
    }
}

// masked: 0 a full block of 16 columns, 1 a partial one of 9-15, 2 of 1-8.
static AVX2 void ukr2_any(int mr, int masked, int kc, const float *a, const float *b, long ldb, float *c, long ldc,
                          int acc, const float *bias, const float *z, __m256i k0, __m256i k1, int act) {
#define UKR2(R)                                                                                                 \
    (masked == 2 ? ukr2(R, 1, 0, kc, a, b, ldb, c, ldc, acc, bias, z, k0, k1, act)                             \
     : masked    ? ukr2(R, 1, 1, kc, a, b, ldb, c, ldc, acc, bias, z, k0, k1, act)                             \
                 : ukr2(R, 0, 1, kc, a, b, ldb, c, ldc, acc, bias, z, k0, k1, act))
    switch (mr) {
    case 6: UKR2(6); break;
    case 5: UKR2(5); break;
    case 4: UKR2(4); break;
    case 3: UKR2(3); break;
    case 2: UKR2(2); break;
    default: UKR2(1); break;
    }
#undef UKR2
}

static AVX2 void gemm2(int m, int n, int k, const float *ap, const float *b, long ldb, float *c, long ldc,
                       const float *bias, const float *z, int act) {
    for (int pc = 0; pc < k; pc += KC) {
        int kc = k - pc < KC ? k - pc : KC;
        // the residual and the activation come with the last K block
        const float *zk = pc + kc == k ? z : 0;
        const int actk = pc + kc == k ? act : 0;
        for (int ic = 0; ic < m; ic += MC) {
            int mc = m - ic < MC ? m - ic : MC;
            for (int j0 = 0; j0 < n; j0 += NR2) {
                int nc = n - j0 < NR2 ? n - j0 : NR2;
                __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
                __m256i k0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(nc), lane);
                __m256i k1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(nc - 8), lane);
                for (int ir = 0; ir < mc; ir += MR2) {
                    int mr = mc - ir < MR2 ? mc - ir : MR2;
                    int i = ic + ir; // a multiple of 6: sliver i / 12, half i % 12
                    const float *as = ap + (long)(i / MR * MR) * k + (long)pc * MR + i % MR;
                    ukr2_any(mr, nc <= NR2 / 2 ? 2 : nc < NR2, kc, as, b + (long)pc * ldb + j0, ldb,
                             c + (long)i * ldc + j0, ldc, pc > 0, bias ? bias + i : 0,
                             zk ? zk + (long)i * ldc + j0 : 0, k0, k1, actk);
                }
            }
        }
    }
}

int conv_gemm_available(void) { return gk_nn_isa() >= GK_ISA_AVX2; }

int conv_gemm_f32(int m, int n, int k, const float *ap, const float *b, long ldb, float *c, long ldc,
                  const float *bias, const float *z, int act) {
    if (!conv_gemm_available()) return -1;
    if (act != ACT_RELU && act != ACT_RELU6) act = 0;
    if (m <= 0 || n <= 0) return 0;
    if (k <= 0) {
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                float v = bias ? bias[i] : 0;
                if (z) v += z[(long)i * ldc + j];
                if (act) v = v < 0.0f ? 0.0f : v;
                if (act == ACT_RELU6) v = v > 6.0f ? 6.0f : v;
                c[(long)i * ldc + j] = v;
            }
        return 0;
    }
    if (gk_nn_isa() >= GK_ISA_AVX512)
        gemm(m, n, k, ap, b, ldb, c, ldc, bias, z, act);
    else
        gemm2(m, n, k, ap, b, ldb, c, ldc, bias, z, act);
    return 0;
}
