// Exact 8-bit integer GEMM: AVX-512 VNNI (vpdpbusd), AVX2 (bytes widened to
// int16, vpmaddwd: exact, unlike vpmaddubsw's saturating int16 pair sums)
// and portable C. See qgemm.h.
#include "qgemm.h"
#include "isa.h"
#include "qpack4.h"
#include <immintrin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define QG_MR 4

int64_t gk_qgemm_packed_size(int K, int N) {
    int64_t kp = (K + 3) & ~3, ns = (N + QG_NR - 1) / QG_NR;
    return ns * kp * QG_NR;
}

void gk_qgemm_pack_b(const uint8_t *b, int bsigned, int K, int N, int ldb, int8_t *out, int32_t *colsum) {
    int kp = (K + 3) & ~3, ns = (N + QG_NR - 1) / QG_NR;
    uint8_t flip = bsigned ? 0 : 0x80;
    memset(out, 0, (size_t)gk_qgemm_packed_size(K, N));
    for (int j = 0; j < N; j++) colsum[j] = 0;
    for (int s = 0; s < ns; s++) {
        int8_t *ps = out + (int64_t)s * kp * QG_NR;
        for (int k = 0; k < K; k++) {
            const uint8_t *row = b + (int64_t)k * ldb;
            for (int c = 0; c < QG_NR; c++) {
                int j = s * QG_NR + c;
                if (j >= N) break;
                int8_t v = (int8_t)(row[j] ^ flip);
                ps[((k >> 2) * QG_NR + c) * 4 + (k & 3)] = v;
                colsum[j] += v;
            }
        }
    }
}

// pack_a copies rows of A as uint8 (xor 0x80 when signed) with K padded by
// zeros to kp, and sums each row.
static void pack_a(const uint8_t *a, int rows, int K, int kp, int lda, int asigned, uint8_t *out, int32_t *rowsum) {
    uint8_t flip = asigned ? 0x80 : 0;
    for (int r = 0; r < rows; r++) {
        const uint8_t *src = a + (int64_t)r * lda;
        uint8_t *dst = out + (int64_t)r * kp;
        int32_t s = 0;
        for (int k = 0; k < K; k++) {
            uint8_t v = src[k] ^ flip;
            dst[k] = v;
            s += v;
        }
        for (int k = K; k < kp; k++) dst[k] = 0;
        rowsum[r] = s;
    }
}

// epilogue: C = dot - zb'*rowsum - za'*colsum + K*za'*zb' (wrapping int32).
static inline void store_strip(const int32_t *acc, int rows, int ncols, int K, const int32_t *rowsum,
                               const int32_t *za, const int32_t *colsum, const int32_t *zb, int32_t *c, int ldc) {
    for (int r = 0; r < rows; r++) {
        uint32_t zar = (uint32_t)za[r];
        for (int j = 0; j < ncols; j++) {
            uint32_t v = (uint32_t)acc[r * QG_NR + j] - (uint32_t)zb[j] * (uint32_t)rowsum[r] -
                         zar * (uint32_t)colsum[j] + (uint32_t)K * zar * (uint32_t)zb[j];
            c[(int64_t)r * ldc + j] = (int32_t)v;
        }
    }
}

// dot_* compute acc[r][c] = sum_k ap[r][k] * bs[k][c] for rows r < rows
// (<= QG_MR) of packed A and one packed strip bs.
static void dot_base(const uint8_t *ap, int rows, int kp, const int8_t *bs, int32_t *acc) {
    for (int r = 0; r < rows; r++) {
        const uint8_t *ar = ap + (int64_t)r * kp;
        int32_t s[QG_NR] = {0};
        for (int g = 0; g < kp / 4; g++) {
            const int8_t *bg = bs + (int64_t)g * QG_NR * 4;
            for (int c = 0; c < QG_NR; c++)
                for (int t = 0; t < 4; t++) s[c] += (int32_t)ar[g * 4 + t] * (int32_t)bg[c * 4 + t];
        }
        memcpy(acc + r * QG_NR, s, sizeof s);
    }
}

__attribute__((target("avx2"))) static void dot_avx2(const uint8_t *ap, int rows, int kp, const int8_t *bs,
                                                      int32_t *acc) {
    // per row: four int32x8 accumulators of column pairs' partial sums:
    // lanes of q0 are (c0: k0k1, k2k3, c1: ..., c2, c3), q1 c4-c7, q2 c8-c11, q3 c12-c15.
    __m256i q[QG_MR][4];
    for (int r = 0; r < QG_MR; r++)
        for (int h = 0; h < 4; h++) q[r][h] = _mm256_setzero_si256();
    for (int g = 0; g < kp / 4; g++) {
        const int8_t *bg = bs + (int64_t)g * QG_NR * 4;
        __m256i w[4];
        for (int h = 0; h < 4; h++) w[h] = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(bg + 16 * h)));
        for (int r = 0; r < rows; r++) {
            int32_t a4;
            memcpy(&a4, ap + (int64_t)r * kp + g * 4, 4);
            __m256i av = _mm256_cvtepu8_epi16(_mm_set1_epi32(a4));
            for (int h = 0; h < 4; h++) q[r][h] = _mm256_add_epi32(q[r][h], _mm256_madd_epi16(av, w[h]));
        }
    }
    for (int r = 0; r < rows; r++) {
        // hadd within 128-bit lanes: [c0 c1 c4 c5 | c2 c3 c6 c7]; permute to order
        __m256i lo = _mm256_permute4x64_epi64(_mm256_hadd_epi32(q[r][0], q[r][1]), 0xD8);
        __m256i hi = _mm256_permute4x64_epi64(_mm256_hadd_epi32(q[r][2], q[r][3]), 0xD8);
        _mm256_storeu_si256((__m256i *)(acc + r * QG_NR), lo);
        _mm256_storeu_si256((__m256i *)(acc + r * QG_NR + 8), hi);
    }
}

// ---- AVX2: int16 pairs, 6x16 register tiles ------------------------------
//
// AVX2 has no byte dot product that is exact: vpmaddubsw adds two u8*s8
// products into a saturating int16 (255*127*2 overflows), which is why
// onnxruntime's AVX2 U8S8 kernel can saturate. Widened to int16, one
// vpmaddwd does 16 exact multiply-adds, the same 16 per multiply uop as
// vpmaddubsw + vpmaddwd(ones) (two uops for 32), so widening costs nothing
// in multiplies; what it must not cost is shuffles and registers in the
// inner loop. The operands are therefore widened outside it, once per use:
// A (a row block of weights) as int16 rows, B (one packed strip, reused by
// every row tile of the block) as int16 pairs of k per column,
//   bw[((k/2) * QG_NR + c) * 2 + (k & 1)],
// so a k pair of 8 columns is one 32-byte load and a row's k pair one
// 32-bit broadcast: 12 accumulators (6 rows x 16 columns) + 2 B + 1 A
// registers, and per k pair 12 vpmaddwd against 8 loads and no shuffle.
// (The byte-layout kernel this replaces kept 4x16 tiles in 16
// accumulators plus its operands, spilling, and widened in the loop.)
#define QG_MR2 6

// widen_b16 rewrites one packed strip bs (kp/4 groups of QG_NR columns x 4
// bytes) as the int16 pairs above.
__attribute__((target("avx2"))) static void widen_b16(const int8_t *bs, int kp, int16_t *bw) {
    // per 4 columns (16 bytes), bytes t0 t1 of each column to the low half
    // and t2 t3 to the high half, then 8 columns' halves sign-extended
    const __m128i pairs = _mm_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15);
    for (int g = 0; g < kp / 4; g++) {
        const int8_t *src = bs + (int64_t)g * QG_NR * 4;
        int16_t *d0 = bw + (int64_t)(2 * g) * QG_NR * 2, *d1 = d0 + QG_NR * 2;
        for (int h = 0; h < 2; h++) {
            __m128i a = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(src + 32 * h)), pairs);
            __m128i b = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(src + 32 * h + 16)), pairs);
            _mm256_storeu_si256((__m256i *)(d0 + 16 * h), _mm256_cvtepi8_epi16(_mm_unpacklo_epi64(a, b)));
            _mm256_storeu_si256((__m256i *)(d1 + 16 * h), _mm256_cvtepi8_epi16(_mm_unpackhi_epi64(a, b)));
        }
    }
}

// widen_a16 widens rows of packed A (uint8, row stride kp) to int16.
__attribute__((target("avx2"))) static void widen_a16(const uint8_t *ap, int rows, int kp, int16_t *aw) {
    for (int64_t i = 0; i < (int64_t)rows * kp; i++) aw[i] = ap[i];
}

// tile6_avx2: acc[r][c] = sum_k aw[r][k] * b[k][c] for rows r < rows (<=
// QG_MR2; the missing rows recompute row 0 and are not stored).
__attribute__((target("avx2"))) static void tile6_avx2(const int16_t *aw, int rows, int kp, const int16_t *bw,
                                                        int32_t *acc) {
    __m256i q[QG_MR2][2];
    const int16_t *ar[QG_MR2];
#pragma GCC unroll 6
    for (int r = 0; r < QG_MR2; r++) {
        ar[r] = aw + (int64_t)(r < rows ? r : 0) * kp;
        q[r][0] = q[r][1] = _mm256_setzero_si256();
    }
    for (int p = 0; p < kp / 2; p++) {
        __m256i b0 = _mm256_loadu_si256((const __m256i *)(bw + (int64_t)p * 2 * QG_NR));
        __m256i b1 = _mm256_loadu_si256((const __m256i *)(bw + (int64_t)p * 2 * QG_NR + QG_NR));
#pragma GCC unroll 6
        for (int r = 0; r < QG_MR2; r++) {
            int32_t x;
            memcpy(&x, ar[r] + 2 * p, 4);
            __m256i av = _mm256_set1_epi32(x);
            q[r][0] = _mm256_add_epi32(q[r][0], _mm256_madd_epi16(av, b0));
            q[r][1] = _mm256_add_epi32(q[r][1], _mm256_madd_epi16(av, b1));
        }
    }
#pragma GCC unroll 6
    for (int r = 0; r < QG_MR2; r++) {
        if (r >= rows) break;
        _mm256_storeu_si256((__m256i *)(acc + r * QG_NR), q[r][0]);
        _mm256_storeu_si256((__m256i *)(acc + r * QG_NR + 8), q[r][1]);
    }
}

// ---- AVX2: vpmaddubsw where it cannot saturate ---------------------------
//
// vpmaddubsw (u8 x s8, adjacent pairs summed into a saturating int16, then
// vpmaddwd by ones into int32) does 32 multiply-adds in two multiply uops
// against the widened path's 16 in one, and needs no widened copies: 1.85x
// the widened kernel's rate on this machine's AVX2 (Zen). It is exact
// whenever no pair can leave int16. With the unsigned operand the columns
// (u8, any value 0..255) and the signed one the rows of A (s8), a pair
// (u, v) of A is safe for every column iff 255 * (max(u,0) + max(v,0)) <=
// 32767 and 255 * (min(u,0) + min(v,0)) >= -32768, i.e. its positive part
// and its negative part each sum to at most 128 in magnitude. A constant A
// (convolution weights, packed once) is split once, pair by pair, into a
// safe part and a residual, A = S + R: R takes a violating pair's excess
// off its larger element, so it is nonzero in few places (the largest
// weights of a channel next to another large weight of the same sign) and
// is added exactly, per residual, in int32 after the tile's main loop.
// A residual costs about what 7 values of the main loop do, so up to 1 in 8
// values (the shallow 1x1 convolutions of a MobileNet reach 1 in 13) the
// split still beats the widened kernels by half; an A with more (uniform
// bytes, a zero-point-shifted weight, activations as A) keeps the widened
// path.
//
// The packed operands are A as uint8 a' (a xor 0x80 when signed) and B as
// int8 b'; here S/R hold a'' = a' - 128 and the strip is read as b'' = b' +
// 128 (uint8), and over the K real taps (a'' is 0 on the padding)
//   sum a' b' = sum a'' b'' - 128 rowsum(a') + 128 colsum(b') + 16384 K.

int gk_qgemm_split_a(const uint8_t *apk, int M, int K, int8_t *sa, int32_t *roff, int32_t *rk, int16_t *rv, int cap) {
    int kp = (K + 3) & ~3, n = 0;
    for (int r = 0; r < M; r++) {
        roff[r] = n;
        const uint8_t *a = apk + (int64_t)r * kp;
        int8_t *s = sa + (int64_t)r * kp;
        for (int k = 0; k < kp; k += 2) {
            int u = k < K ? (int)a[k] - 128 : 0, v = k + 1 < K ? (int)a[k + 1] - 128 : 0, second;
            int ex = gk_qsplit_pair(&u, &v, &second), at = k + second;
            if (ex) {
                if (n >= cap) return -1;
                rk[n] = at; // int32: k passes 32767 at 3x3 x 3641 channels
                rv[n] = (int16_t)ex;
                n++;
            }
            s[k] = (int8_t)u;
            s[k + 1] = (int8_t)v;
        }
    }
    roff[M] = n;
    return n;
}

// tile6_u8s8: acc[r][c] = sum_k (S + R)[r][k] * bu[k][c] for rows r < rows
// (<= QG_MR2; missing rows recompute row 0 and are not stored) of the split
// A (sa, row stride kp; residuals roff/rk/rv of this tile's first row on)
// and one strip bu of b'' bytes.
__attribute__((target("avx2"))) static void tile6_u8s8(const int8_t *sa, int rows, int kp, const uint8_t *bu,
                                                        const int32_t *roff, const int32_t *rk, const int16_t *rv,
                                                        int32_t *acc) {
    __m256i q[QG_MR2][2];
    const int8_t *ar[QG_MR2];
    const __m256i ones = _mm256_set1_epi16(1);
#pragma GCC unroll 6
    for (int r = 0; r < QG_MR2; r++) {
        ar[r] = sa + (int64_t)(r < rows ? r : 0) * kp;
        q[r][0] = q[r][1] = _mm256_setzero_si256();
    }
    for (int g = 0; g < kp / 4; g++) {
        __m256i b0 = _mm256_loadu_si256((const __m256i *)(bu + (int64_t)g * QG_NR * 4));
        __m256i b1 = _mm256_loadu_si256((const __m256i *)(bu + (int64_t)g * QG_NR * 4 + 32));
#pragma GCC unroll 6
        for (int r = 0; r < QG_MR2; r++) {
            int32_t x;
            memcpy(&x, ar[r] + 4 * g, 4);
            __m256i av = _mm256_set1_epi32(x);
            q[r][0] = _mm256_add_epi32(q[r][0], _mm256_madd_epi16(_mm256_maddubs_epi16(b0, av), ones));
            q[r][1] = _mm256_add_epi32(q[r][1], _mm256_madd_epi16(_mm256_maddubs_epi16(b1, av), ones));
        }
    }
    const __m256i low = _mm256_set1_epi32(0xFF);
#pragma GCC unroll 6
    for (int r = 0; r < QG_MR2; r++) {
        if (r >= rows) break;
        for (int i = roff[r]; i < roff[r + 1]; i++) {
            int k = rk[i];
            const uint8_t *bg = bu + (int64_t)(k >> 2) * QG_NR * 4;
            __m128i sh = _mm_cvtsi32_si128(8 * (k & 3));
            // b'' of tap k for the 16 columns as int32 (< 256), times the
            // residual by vpmaddwd against (rv, 0) pairs: exact
            __m256i x0 = _mm256_and_si256(_mm256_srl_epi32(_mm256_loadu_si256((const __m256i *)bg), sh), low);
            __m256i x1 = _mm256_and_si256(_mm256_srl_epi32(_mm256_loadu_si256((const __m256i *)(bg + 32)), sh), low);
            __m256i vv = _mm256_set1_epi32((int32_t)(uint16_t)rv[i]);
            q[r][0] = _mm256_add_epi32(q[r][0], _mm256_madd_epi16(x0, vv));
            q[r][1] = _mm256_add_epi32(q[r][1], _mm256_madd_epi16(x1, vv));
        }
        _mm256_storeu_si256((__m256i *)(acc + r * QG_NR), q[r][0]);
        _mm256_storeu_si256((__m256i *)(acc + r * QG_NR + 8), q[r][1]);
    }
}

// store_strip_u8s8 is store_strip for tile6_u8s8's sums (the identity above
// folded into the zero-point terms).
static inline void store_strip_u8s8(const int32_t *acc, int rows, int ncols, int K, const int32_t *rowsum,
                                    const int32_t *za, const int32_t *colsum, const int32_t *zb, int32_t *c, int ldc) {
    for (int r = 0; r < rows; r++) {
        uint32_t zar = (uint32_t)za[r];
        for (int j = 0; j < ncols; j++) {
            uint32_t v = (uint32_t)acc[r * QG_NR + j] - ((uint32_t)zb[j] + 128u) * (uint32_t)rowsum[r] -
                         (zar - 128u) * (uint32_t)colsum[j] + (uint32_t)K * (zar * (uint32_t)zb[j] + 16384u);
            c[(int64_t)r * ldc + j] = (int32_t)v;
        }
    }
}

__attribute__((target("avx512f,avx512bw,avx512vnni"))) static void dot_vnni(const uint8_t *ap, int rows, int kp,
                                                                              const int8_t *bs, int32_t *acc) {
    __m512i q0 = _mm512_setzero_si512(), q1 = q0, q2 = q0, q3 = q0;
    const uint8_t *a0 = ap, *a1 = ap + kp, *a2 = ap + 2 * (int64_t)kp, *a3 = ap + 3 * (int64_t)kp;
    int ng = kp / 4;
    if (rows == QG_MR) {
        for (int g = 0; g < ng; g++) {
            __m512i w = _mm512_loadu_si512(bs + (int64_t)g * QG_NR * 4);
            int32_t x0, x1, x2, x3;
            memcpy(&x0, a0 + 4 * g, 4);
            memcpy(&x1, a1 + 4 * g, 4);
            memcpy(&x2, a2 + 4 * g, 4);
            memcpy(&x3, a3 + 4 * g, 4);
            q0 = _mm512_dpbusd_epi32(q0, _mm512_set1_epi32(x0), w);
            q1 = _mm512_dpbusd_epi32(q1, _mm512_set1_epi32(x1), w);
            q2 = _mm512_dpbusd_epi32(q2, _mm512_set1_epi32(x2), w);
            q3 = _mm512_dpbusd_epi32(q3, _mm512_set1_epi32(x3), w);
        }
    } else {
        for (int g = 0; g < ng; g++) {
            __m512i w = _mm512_loadu_si512(bs + (int64_t)g * QG_NR * 4);
            int32_t x;
            memcpy(&x, a0 + 4 * g, 4);
            q0 = _mm512_dpbusd_epi32(q0, _mm512_set1_epi32(x), w);
            if (rows > 1) {
                memcpy(&x, a1 + 4 * g, 4);
                q1 = _mm512_dpbusd_epi32(q1, _mm512_set1_epi32(x), w);
            }
            if (rows > 2) {
                memcpy(&x, a2 + 4 * g, 4);
                q2 = _mm512_dpbusd_epi32(q2, _mm512_set1_epi32(x), w);
            }
        }
    }
    _mm512_storeu_si512(acc, q0);
    _mm512_storeu_si512(acc + QG_NR, q1);
    _mm512_storeu_si512(acc + 2 * QG_NR, q2);
    _mm512_storeu_si512(acc + 3 * QG_NR, q3);
}

// vnni_tile computes and stores C for up to MR rows (from packed ap) and
// NS consecutive strips from bs (MR x NS accumulators, at most 16), with the zero-point epilogue applied
// on the accumulators (masked loads and stores for a partial last strip;
// rows past `rows` reuse row 0 and are not stored).
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"), always_inline)) static inline void
vnni_tile(const uint8_t *ap, int rows, int kp, const int8_t *bs, const int MR, const int NS, int ncols, int K, const int32_t *rowsum,
          const int32_t *zar, const int32_t *colsum, const int32_t *zb, int32_t *c, int ldc, const gk_qepi *e, int ri0) {
    __m512i q[16][4];
    const uint8_t *ar[16];
#pragma GCC unroll 16
    for (int r = 0; r < MR; r++) {
        ar[r] = ap + (int64_t)(r < rows ? r : 0) * kp;
#pragma GCC unroll 4
        for (int t = 0; t < NS; t++) q[r][t] = _mm512_setzero_si512();
    }
    const int64_t sstride = (int64_t)kp * QG_NR;
    for (int g = 0; g < kp / 4; g++) {
        __m512i w[4];
#pragma GCC unroll 4
        for (int t = 0; t < NS; t++) w[t] = _mm512_loadu_si512(bs + t * sstride + (int64_t)g * QG_NR * 4);
#pragma GCC unroll 16
        for (int r = 0; r < MR; r++) {
            int32_t x;
            memcpy(&x, ar[r] + 4 * g, 4);
            __m512i xv = _mm512_set1_epi32(x);
#pragma GCC unroll 4
            for (int t = 0; t < NS; t++) q[r][t] = _mm512_dpbusd_epi32(q[r][t], xv, w[t]);
        }
    }
    // requantized in registers when e asks for bytes (QLinearConv,
    // QLinearMatMul, QDQ): storing the int32 tile and reading it back in
    // gk_qepilogue_rows was a sixth of an int8 resnet18 on AVX-512 VNNI
    // without AMX (requant_avx512 + gk_qepilogue_rows in perf)
    const int requant = e && e->qout && e->scale_mode != GK_QEPI_PER_COL;
    uint8_t *out = requant ? e->qout + (c - e->cbase) : NULL;
    const __m512 flo = _mm512_set1_ps(requant ? (float)(e->qlo - e->qzp) : 0),
                 fhi = _mm512_set1_ps(requant ? (float)(e->qhi - e->qzp) : 0);
    const __m512i zpi = _mm512_set1_epi32(requant ? e->qzp : 0);
    // one zero point for every column (a convolution's x) and for every row
    // of the tile (per-tensor or symmetric weights): the corrections are a
    // vector per strip and a scalar per row, not two multiplies per vector
    // (with K = 16, as in mobilenet_v2's first expansion, the epilogue was
    // most of the tile's instructions)
    int uniform = 1;
    for (int r = 1; r < MR && r < rows; r++) uniform &= zar[r] == zar[0];
#pragma GCC unroll 4
    for (int t = 0; t < NS; t++) {
        int nc = ncols - t * QG_NR;
        if (nc <= 0) break;
        __mmask16 m = nc >= QG_NR ? (__mmask16)0xFFFF : (__mmask16)((1u << nc) - 1);
        uniform &= _mm512_mask_cmpneq_epi32_mask(m, _mm512_maskz_loadu_epi32(m, zb + t * QG_NR), _mm512_set1_epi32(zb[0])) == 0;
    }
#pragma GCC unroll 4
    for (int t = 0; t < NS; t++) {
        int nc = ncols - t * QG_NR;
        if (nc <= 0) break;
        __mmask16 m = nc >= QG_NR ? (__mmask16)0xFFFF : (__mmask16)((1u << nc) - 1);
        __m512i zbv = _mm512_maskz_loadu_epi32(m, zb + t * QG_NR);
        __m512i csv = _mm512_maskz_loadu_epi32(m, colsum + t * QG_NR);
        const __m512i czv = _mm512_mullo_epi32(csv, _mm512_set1_epi32(zar[0]));
#pragma GCC unroll 16
        for (int r = 0; r < MR; r++) {
            if (r >= rows) break;
            // acc - zb*(rowsum - K*za) - za*colsum, wrapping as store_strip
            const uint32_t rk = (uint32_t)rowsum[r] - (uint32_t)K * (uint32_t)zar[r];
            const int ri = ri0 + r;
            __m512i v;
            if (uniform) {
                // (+ qbias folded into the row's scalar: the same wrapping sum)
                uint32_t sr = (uint32_t)zb[0] * rk;
                if (requant && e->qbias) sr -= (uint32_t)e->qbias[ri];
                v = _mm512_sub_epi32(_mm512_sub_epi32(q[r][t], czv), _mm512_set1_epi32((int32_t)sr));
            } else {
                v = _mm512_sub_epi32(q[r][t], _mm512_mullo_epi32(zbv, _mm512_set1_epi32((int32_t)rk)));
                v = _mm512_sub_epi32(v, _mm512_mullo_epi32(csv, _mm512_set1_epi32(zar[r])));
                if (requant && e->qbias) v = _mm512_add_epi32(v, _mm512_set1_epi32(e->qbias[ri]));
            }
            if (requant) {
                // gk_qepilogue_rows's qout form: + qbias (wrapping, above),
                // the float32 scale, rounding half to even, the zero point,
                // the clamp, the low byte
                // (clamped to [lo - zp, hi - zp] before rounding, the zero
                // point added as an integer after: the same bytes, since the
                // bounds are integers and rounding is monotone, NaN -> lo
                // as maxps gives it; one instruction fewer per vector)
                __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(v), _mm512_set1_ps(e->scale[e->scale_mode == GK_QEPI_PER_ROW ? ri : 0]));
                f = _mm512_min_ps(_mm512_max_ps(f, flo), fhi);
                __m512i iv = _mm512_add_epi32(_mm512_cvt_roundps_epi32(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zpi);
                _mm_mask_storeu_epi8(out + (int64_t)r * ldc + t * QG_NR, m, _mm512_cvtepi32_epi8(iv));
            } else if (nc >= QG_NR) {
                // a plain store: the epilogue reads it right back, and loads
                // wait for masked stores (no forwarding)
                _mm512_storeu_si512(c + (int64_t)r * ldc + t * QG_NR, v);
            } else {
                _mm512_mask_storeu_epi32(c + (int64_t)r * ldc + t * QG_NR, m, v);
            }
        }
    }
}

__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"))) static void vnni_tile4(const uint8_t *ap, int rows, int kp,
    const int8_t *bs, int ncols, int K, const int32_t *rowsum, const int32_t *zar, const int32_t *colsum,
    const int32_t *zb, int32_t *c, int ldc, const gk_qepi *e, int ri0) {
    vnni_tile(ap, rows, kp, bs, QG_MR, 4, ncols, K, rowsum, zar, colsum, zb, c, ldc, e, ri0);
}

// The last one to three strips of B run in tiles of more rows (16 x 1, 8 x
// 2, 5 x 3): four rows of one strip were four dependent chains of
// vpdpbusd, waiting on its latency (vnni_tile1 was a tenth of resnet18's
// 14x14 layer for its 4 columns of 196).
#define VNNI_TAIL(NS, MR)                                                                                              \
    __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"))) static void vnni_tail##NS(                         \
        const uint8_t *ap, int rows, int kp, const int8_t *bs, int ncols, int K, const int32_t *rowsum,                 \
        const int32_t *zar, const int32_t *colsum, const int32_t *zb, int32_t *c, int ldc, const gk_qepi *e, int ri0) { \
        vnni_tile(ap, rows, kp, bs, MR, NS, ncols, K, rowsum, zar, colsum, zb, c, ldc, e, ri0);                        \
    }
VNNI_TAIL(1, 16)
VNNI_TAIL(2, 8)
VNNI_TAIL(3, 5)
#undef VNNI_TAIL

typedef void (*dot_fn)(const uint8_t *, int, int, const int8_t *, int32_t *);

static int has_vnni(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
}

static dot_fn pick_dot(void) {
    int level = gk_nn_isa();
    if (level >= GK_ISA_AVX512 && has_vnni()) return dot_vnni;
    if (level >= GK_ISA_AVX2) return dot_avx2;
    return dot_base;
}

int gk_qgemm_wants_split(void) { return pick_dot() == dot_avx2; }

const char *gk_qgemm_kernel_name(void) {
    dot_fn f = pick_dot();
    return f == dot_vnni ? (gk_qgemm_amx_ok() ? "amx-int8" : "avx512vnni") : f == dot_avx2 ? "avx2" : "portable";
}

void gk_qgemm_pack_a(const uint8_t *a, int asigned, int M, int K, int lda, uint8_t *out, int32_t *rowsum) {
    pack_a(a, M, K, (K + 3) & ~3, lda, asigned, out, rowsum);
}

void gk_qgemm(int M, int K, int N, const uint8_t *a, int asigned, int lda, const int32_t *za, const int8_t *bp,
              const int32_t *colsum, const int32_t *zb, int s0, int s1, int32_t *c, int ldc, const uint8_t *apk,
              const int32_t *arow, const gk_qepi *e, const gk_qsplit *sp) {
    int kp = (K + 3) & ~3;
    dot_fn dot = pick_dot();
    // A is packed in blocks of rows that stay in L2 across the strips
    // (unless packed already: apk, arow).
    int rb = QG_MR * 16;
    uint8_t *abuf = apk ? NULL : malloc((size_t)rb * kp + 64);
    int32_t rowbuf[QG_MR * 16], zar[QG_MR * 16];
    int32_t acc[QG_MR2 * QG_NR];
    int16_t *aw = NULL, *bw = NULL; // the AVX2 path's widened operands
    uint8_t *bu = NULL;              // the AVX2 split path's strip as b''
    if (dot != dot_avx2 || !apk) sp = NULL;
    for (int i0 = 0; i0 < M; i0 += rb) {
        int rows = M - i0 < rb ? M - i0 : rb;
        const uint8_t *ap;
        const int32_t *rowsum;
        if (apk) {
            ap = apk + (int64_t)i0 * kp;
            rowsum = arow + i0;
        } else {
            pack_a(a + (int64_t)i0 * lda, rows, K, kp, lda, asigned, abuf, rowbuf);
            ap = abuf;
            rowsum = rowbuf;
        }
        for (int r = 0; r < rows; r++) zar[r] = za[i0 + r] + (asigned ? 128 : 0);
        if (dot == dot_vnni && gk_qgemm_amx_ok()) {
            gk_qgemm_amx(ap, rows, apk ? M - i0 : rb, kp, K, N, bp, s0, s1, rowsum, zar, colsum, zb,
                         c + (int64_t)i0 * ldc, ldc, e, i0);
            continue;
        }
        if (dot == dot_vnni) { // 4x64 tiles with the epilogue in registers
            for (int s = s0; s < s1; s += 4) {
                int nst = s1 - s < 4 ? s1 - s : 4, j0 = s * QG_NR;
                const int8_t *bs = bp + (int64_t)s * kp * QG_NR;
                int ncols = N - j0 < nst * QG_NR ? N - j0 : nst * QG_NR;
                const int tmr = nst == 4 ? QG_MR : nst == 3 ? 5 : nst == 2 ? 8 : 16;
                for (int r0 = 0; r0 < rows; r0 += tmr) {
                    int mr = rows - r0 < tmr ? rows - r0 : tmr;
                    int32_t *cc = c + (int64_t)(i0 + r0) * ldc + j0;
                    const uint8_t *a0 = ap + (int64_t)r0 * kp;
                    if (nst == 4)
                        vnni_tile4(a0, mr, kp, bs, ncols, K, rowsum + r0, zar + r0, colsum + j0, zb + j0, cc, ldc, e, i0 + r0);
                    else if (nst == 3)
                        vnni_tail3(a0, mr, kp, bs, ncols, K, rowsum + r0, zar + r0, colsum + j0, zb + j0, cc, ldc, e, i0 + r0);
                    else if (nst == 2)
                        vnni_tail2(a0, mr, kp, bs, ncols, K, rowsum + r0, zar + r0, colsum + j0, zb + j0, cc, ldc, e, i0 + r0);
                    else
                        vnni_tail1(a0, mr, kp, bs, ncols, K, rowsum + r0, zar + r0, colsum + j0, zb + j0, cc, ldc, e, i0 + r0);
                    // the float epilogue in place on the tile just stored (in
                    // L1); the requantizing one ran in the tile's registers
                    if (e && !(e->qout && e->scale_mode != GK_QEPI_PER_COL))
                        gk_qepilogue_rows(cc, mr, ncols, ldc, e, i0 + r0, j0, (float *)cc, ldc);
                }
            }
            continue;
        }
        if (sp) { // constant A split once (gk_qgemm_split_a): vpmaddubsw tiles
            if (!bu) bu = malloc((size_t)kp * QG_NR + 64);
            const int8_t *sa = sp->sa + (int64_t)i0 * kp;
            const int32_t *roff = sp->roff + i0;
            for (int s = s0; s < s1; s++) {
                const int8_t *bs = bp + (int64_t)s * kp * QG_NR;
                for (int64_t i = 0; i < (int64_t)kp * QG_NR; i++) bu[i] = (uint8_t)bs[i] ^ 0x80;
                int j0 = s * QG_NR, nc = N - j0 < QG_NR ? N - j0 : QG_NR;
                for (int r0 = 0; r0 < rows; r0 += QG_MR2) {
                    int mr = rows - r0 < QG_MR2 ? rows - r0 : QG_MR2;
                    tile6_u8s8(sa + (int64_t)r0 * kp, mr, kp, bu, roff + r0, sp->rk, sp->rv, acc);
                    int32_t *cc = c + (int64_t)(i0 + r0) * ldc + j0;
                    store_strip_u8s8(acc, mr, nc, K, rowsum + r0, zar + r0, colsum + j0, zb + j0, cc, ldc);
                    if (e) gk_qepilogue_rows(cc, mr, nc, ldc, e, i0 + r0, j0, (float *)cc, ldc);
                }
            }
            continue;
        }
        if (dot == dot_avx2) { // int16 operands widened once, 6x16 tiles
            if (!aw) {
                aw = malloc(sizeof(int16_t) * (size_t)rb * kp + 64);
                bw = malloc(sizeof(int16_t) * (size_t)kp * QG_NR + 64);
            }
            widen_a16(ap, rows, kp, aw);
            for (int s = s0; s < s1; s++) {
                widen_b16(bp + (int64_t)s * kp * QG_NR, kp, bw);
                int j0 = s * QG_NR, nc = N - j0 < QG_NR ? N - j0 : QG_NR;
                for (int r0 = 0; r0 < rows; r0 += QG_MR2) {
                    int mr = rows - r0 < QG_MR2 ? rows - r0 : QG_MR2;
                    tile6_avx2(aw + (int64_t)r0 * kp, mr, kp, bw, acc);
                    int32_t *cc = c + (int64_t)(i0 + r0) * ldc + j0;
                    store_strip(acc, mr, nc, K, rowsum + r0, zar + r0, colsum + j0, zb + j0, cc, ldc);
                    if (e) gk_qepilogue_rows(cc, mr, nc, ldc, e, i0 + r0, j0, (float *)cc, ldc);
                }
            }
            continue;
        }
        for (int s = s0; s < s1; s++) {
            const int8_t *bs = bp + (int64_t)s * kp * QG_NR;
            int j0 = s * QG_NR, nc = N - j0 < QG_NR ? N - j0 : QG_NR;
            for (int r0 = 0; r0 < rows; r0 += QG_MR) {
                int mr = rows - r0 < QG_MR ? rows - r0 : QG_MR;
                dot(ap + (int64_t)r0 * kp, mr, kp, bs, acc);
                int32_t *cc = c + (int64_t)(i0 + r0) * ldc + j0;
                store_strip(acc, mr, nc, K, rowsum + r0, zar + r0, colsum + j0, zb + j0, cc, ldc);
                if (e) gk_qepilogue_rows(cc, mr, nc, ldc, e, i0 + r0, j0, (float *)cc, ldc);
            }
        }
    }
    free(abuf);
    free(aw);
    free(bw);
    free(bu);
}

GK_ISA_BODY void requant_run_body(const int32_t *acc, int n, const float *mult,
                                                                 int per_col, int32_t zp, int lo, int hi, uint8_t *y,
                                                                 int ysigned) {
    float flo = (float)lo, fhi = (float)hi, fz = (float)zp, m0 = mult[0];
    for (int j = 0; j < n; j++) {
        float f = (float)acc[j] * (per_col ? mult[j] : m0);
        float r = __builtin_nearbyintf(f) + fz;
        r = r < flo ? flo : r > fhi ? fhi : r;
        int v = (int)r;
        y[j] = ysigned ? (uint8_t)(int8_t)v : (uint8_t)v;
    }
}

GK_ISA_VARIANTS(gk_nn_isa(), requant_run,
                (const int32_t *acc, int n, const float *mult, int per_col, int32_t zp, int lo, int hi, uint8_t *y,
                 int ysigned),
                (acc, n, mult, per_col, zp, lo, hi, y, ysigned))

// requant_avx2 is requant_run_body 8 values per step (gcc left the body's
// loop scalar: a tenth of a 3x3 convolution's time): the same float32
// multiply, rounding to nearest even, add, clamp and conversion.
__attribute__((target("avx2"))) static void requant_avx2(const int32_t *acc, int32_t bias, int n, const float *mult,
                                                          int per_col, int32_t zp, int lo, int hi, uint8_t *y,
                                                          int ysigned) {
    const __m256i bv = _mm256_set1_epi32(bias);
    const __m256 flo = _mm256_set1_ps((float)lo), fhi = _mm256_set1_ps((float)hi), fz = _mm256_set1_ps((float)zp);
    const __m256 m0 = _mm256_set1_ps(mult[0]);
    int j = 0;
    for (; j + 8 <= n; j += 8) {
        __m256i a = _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(acc + j)), bv);
        __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(a), per_col ? _mm256_loadu_ps(mult + j) : m0);
        __m256 r = _mm256_add_ps(_mm256_round_ps(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), fz);
        r = _mm256_min_ps(_mm256_max_ps(r, flo), fhi);
        __m256i v = _mm256_cvtps_epi32(r);
        __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
        w = ysigned ? _mm_packs_epi16(w, w) : _mm_packus_epi16(w, w);
        _mm_storel_epi64((__m128i *)(y + j), w);
    }
    if (j < n) {
        int32_t t[8];
        for (int i = 0; i < n - j; i++) t[i] = (int32_t)((uint32_t)acc[j + i] + (uint32_t)bias);
        requant_run(t, n - j, per_col ? mult + j : mult, per_col, zp, lo, hi, y + j, ysigned);
    }
}

// requant_avx512 is requant_avx2 16 values per step, the tail masked.
__attribute__((target("avx512f"))) static void requant_avx512(const int32_t *acc, int32_t bias, int n,
                                                             const float *mult, int per_col, int32_t zp, int lo,
                                                             int hi, uint8_t *y) {
    const __m512i bv = _mm512_set1_epi32(bias);
    const __m512 flo = _mm512_set1_ps((float)lo), fhi = _mm512_set1_ps((float)hi), fz = _mm512_set1_ps((float)zp);
    const __m512 m0 = _mm512_set1_ps(mult[0]);
    for (int j = 0; j < n; j += 16) {
        const __mmask16 k = n - j >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - j)) - 1);
        __m512i a = _mm512_add_epi32(_mm512_maskz_loadu_epi32(k, acc + j), bv);
        __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(a), per_col ? _mm512_maskz_loadu_ps(k, mult + j) : m0);
        __m512 r = _mm512_add_ps(_mm512_roundscale_ps(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), fz);
        r = _mm512_min_ps(_mm512_max_ps(r, flo), fhi);
        // clamped to the type's range: the low byte is the value
        _mm512_mask_cvtepi32_storeu_epi8(y + j, k, _mm512_cvtps_epi32(r));
    }
}

// requant_f32_planes_avx512 is gk_requant_f32_planes 16 values a step, the
// tail of each plane masked.
__attribute__((target("avx512f"))) static void requant_f32_planes_avx512(const float *acc, int t0, int t1, int m, long ov,
                                                                        const int32_t *bias, const float *mult, int perch,
                                                                        int zp, int lo, int hi, uint8_t *y) {
    const __m512 flo = _mm512_set1_ps((float)lo), fhi = _mm512_set1_ps((float)hi), fz = _mm512_set1_ps((float)zp);
    for (int t = t0; t < t1; t++) {
        const int oc = t % m;
        const __m512i bv = _mm512_set1_epi32(bias ? bias[oc] : 0);
        const __m512 mv = _mm512_set1_ps(mult[perch ? oc : 0]);
        const float *a = acc + (int64_t)t * ov;
        uint8_t *yp = y + (int64_t)t * ov;
        for (long j = 0; j < ov; j += 16) {
            const __mmask16 k = ov - j >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (ov - j)) - 1);
            __m512i v = _mm512_add_epi32(_mm512_cvttps_epi32(_mm512_maskz_loadu_ps(k, a + j)), bv);
            __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(v), mv);
            __m512 r = _mm512_add_ps(_mm512_roundscale_ps(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), fz);
            r = _mm512_min_ps(_mm512_max_ps(r, flo), fhi);
            _mm512_mask_cvtepi32_storeu_epi8(yp + j, k, _mm512_cvtps_epi32(r));
        }
    }
}

void gk_requant_f32_planes(const float *acc, int t0, int t1, int m, long ov, const int32_t *bias, const float *mult,
                           int perch, int zp, int ysigned, uint8_t *y) {
    const int lo = ysigned ? -128 : 0, hi = ysigned ? 127 : 255;
    if (gk_nn_isa() >= GK_ISA_AVX512) {
        requant_f32_planes_avx512(acc, t0, t1, m, ov, bias, mult, perch, zp, lo, hi, y);
        return;
    }
    int32_t *tmp = malloc(sizeof(int32_t) * (size_t)(ov > 0 ? ov : 1));
    for (int t = t0; t < t1; t++) {
        const int oc = t % m;
        gk_f32_to_i32(acc + (int64_t)t * ov, tmp, ov);
        gk_requant_b(tmp, bias ? bias[oc] : 0, (int)ov, mult + (perch ? oc : 0), 0, zp, lo, hi, y + (int64_t)t * ov, ysigned);
    }
    free(tmp);
}

// gk_requant's rounding is nearbyint's (the default mode: half to even).
void gk_requant(const int32_t *acc, int n, const float *mult, int per_col, int32_t zp, int lo, int hi, uint8_t *y,
                int ysigned) {
    gk_requant_b(acc, 0, n, mult, per_col, zp, lo, hi, y, ysigned);
}

void gk_requant_b(const int32_t *acc, int32_t bias, int n, const float *mult, int per_col, int32_t zp, int lo, int hi,
                  uint8_t *y, int ysigned) {
    if (gk_nn_isa() >= GK_ISA_AVX512) {
        requant_avx512(acc, bias, n, mult, per_col, zp, lo, hi, y);
        return;
    }
    if (gk_nn_isa() >= GK_ISA_AVX2) {
        requant_avx2(acc, bias, n, mult, per_col, zp, lo, hi, y, ysigned);
        return;
    }
    if (!bias) {
        requant_run(acc, n, mult, per_col, zp, lo, hi, y, ysigned);
        return;
    }
    for (int j = 0; j < n; j += 256) { // the bias added in blocks (acc is const)
        int32_t t[256];
        int k = n - j < 256 ? n - j : 256;
        for (int i = 0; i < k; i++) t[i] = (int32_t)((uint32_t)acc[j + i] + (uint32_t)bias);
        requant_run(t, k, per_col ? mult + j : mult, per_col, zp, lo, hi, y + j, ysigned);
    }
}

// next_output_row moves output position (od, oh, ow) on by run, a run
// that ends at or before its row's end.
static inline void next_output_row(int *ow, int *oh, int *od, int run, const int *o) {
    *ow += run;
    if (*ow == o[2]) {
        *ow = 0;
        if (++*oh == o[1]) {
            *oh = 0;
            ++*od;
        }
    }
}

// unfold_row writes tap k's values of x for the n output positions from p0
// into row (pad outside x).
__attribute__((optimize("no-tree-loop-distribute-patterns"))) static void unfold_row(const uint8_t *x, int k, int kvol, const int *geo, int64_t invol, uint8_t pad, int p0, int n,
                       uint8_t *row) {
    const int *in = geo, *kk = geo + 3, *st = geo + 6, *pb = geo + 9, *dl = geo + 12, *o = geo + 15;
    int ic = k / kvol, r = k % kvol;
    int kd = r / (kk[1] * kk[2]), kh = (r / kk[2]) % kk[1], kw = r % kk[2];
    const uint8_t *xc = x + ic * invol;
    int ow = p0 % o[2], oh = (p0 / o[2]) % o[1], od = p0 / (o[2] * o[1]);
    int i = 0;
    while (i < n) {
        int id = od * st[0] - pb[0] + kd * dl[0], ih = oh * st[1] - pb[1] + kh * dl[1];
        int run = o[2] - ow < n - i ? o[2] - ow : n - i;
        if (id < 0 || id >= in[0] || ih < 0 || ih >= in[1]) {
            memset(row + i, pad, (size_t)run);
        } else {
            const uint8_t *xr = xc + ((int64_t)id * in[1] + ih) * in[2];
            int iw = ow * st[2] - pb[2] + kw * dl[2];
            // positions j with 0 <= iw + j*s < in[2] read x, the ones
            // before and after are padding: three block copies, not a
            // per-byte test (a padded 3x3 conv's kw=0 and kw=2 taps touch
            // an edge on every row); plain loops, not libc calls: runs are
            // a feature-map row (tens of bytes), and three calls per row
            // and tap were 40% of a small conv's time
            const int s2 = st[2];
            int lo = iw < 0 ? (-iw + s2 - 1) / s2 : 0, hi = in[2] - iw <= 0 ? 0 : (in[2] - iw + s2 - 1) / s2;
            if (lo > run) lo = run;
            if (hi > run) hi = run;
            if (hi < lo) hi = lo;
            uint8_t *d = row + i;
            const uint8_t *sx = xr + iw;
            for (int j = 0; j < lo; j++) d[j] = pad;
            if (s2 == 1)
                for (int j = lo; j < hi; j++) d[j] = sx[j];
            else if (s2 == 2)
                for (int j = lo; j < hi; j++) d[j] = sx[2 * j];
            else
                for (int j = lo; j < hi; j++) d[j] = sx[(int64_t)j * s2];
            for (int j = hi; j < run; j++) d[j] = pad;
        }
        i += run;
        next_output_row(&ow, &oh, &od, run, o);
    }
}

// unfold_row_bw is unfold_row for windows of stride 1 along the row (the
// 3x3 and 1xk convs of CNNs) with AVX-512BW byte masks: each run of an
// output row is one masked load from the input row (the bytes masked off,
// before and after the row, are not read) with the padding blended in, and
// one masked store, 64 bytes at a time. unfold_row spent two integer
// divisions and three byte loops on every run, a feature-map row of tens of
// bytes: the unfold was 36% of QDQ resnet18's time, the int8 GEMM 18%.
static int has_bw(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("bmi2");
}

static inline __mmask64 lenmask64(int m) { return m >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << m) - 1); }

// The tap (input channel and window position) of unfold row k, and the
// output position p0 split into its coordinates: the callers step them
// instead of dividing for every row (nine integer divisions a call were most
// of the unfold of a small plane's rows).
typedef struct {
    int ic, kd, kh, kw;
} unfold_tap;

static inline void unfold_tap_next(unfold_tap *t, const int *kk) {
    if (++t->kw < kk[2]) return;
    t->kw = 0;
    if (++t->kh < kk[1]) return;
    t->kh = 0;
    if (++t->kd < kk[0]) return;
    t->kd = 0;
    t->ic++;
}

// unfold_run_s2_bw: run bytes d[j] = xr[iw + 2j] (padding where iw + 2j
// leaves [0, W)), 32 at a time: the 64 source bytes loaded through a mask
// of their even bytes (no byte outside the row is read) and narrowed word
// to byte (vpmovwb keeps each word's low, even, byte). Stride-2 convs (the
// stems, downsampling 3x3s) ran unfold_row's strided byte loop.
__attribute__((target("avx512f,avx512bw,avx512vl,bmi2"))) static void unfold_run_s2_bw(const uint8_t *xr, int iw, int W,
                                                                                       int run, uint8_t pad,
                                                                                       uint8_t *d) {
    const __m256i padv = _mm256_set1_epi8((char)pad);
    for (int c = 0; c < run; c += 32) {
        int m = run - c < 32 ? run - c : 32, s = iw + 2 * c; // d[c + j] reads s + 2j
        int lo = s < 0 ? (1 - s) / 2 : 0, hi = W - s <= 0 ? 0 : (W - s + 1) / 2;
        if (lo > m) lo = m;
        if (hi > m) hi = m;
        if (hi < lo) hi = lo;
        uint32_t valid = (uint32_t)(lenmask64(hi) & ~lenmask64(lo));
        __mmask64 src = _pdep_u64(valid, 0x5555555555555555ULL);
        __m512i w = _mm512_maskz_loadu_epi8(src, (const void *)((uintptr_t)xr + (intptr_t)s));
        __m256i v = _mm256_mask_blend_epi8(valid, padv, _mm512_cvtepi16_epi8(w));
        _mm256_mask_storeu_epi8(d + c, (__mmask32)lenmask64(m), v);
    }
}

__attribute__((target("avx512f,avx512bw"))) static void unfold_row_bw(const uint8_t *x, unfold_tap tap, const int *geo,
                                                                     int64_t invol, uint8_t pad, const int *pos, int n,
                                                                     uint8_t *row) {
    const int *in = geo, *st = geo + 6, *pb = geo + 9, *dl = geo + 12, *o = geo + 15;
    const int kd = tap.kd, kh = tap.kh, kw = tap.kw;
    const uint8_t *xc = x + tap.ic * invol;
    int ow = pos[0], oh = pos[1], od = pos[2];
    const __m512i padv = _mm512_set1_epi8((char)pad);
    const int W = in[2], shift = kw * dl[2] - pb[2];
    int i = 0;
    while (i < n) {
        int id = od * st[0] - pb[0] + kd * dl[0], ih = oh * st[1] - pb[1] + kh * dl[1];
        int run = o[2] - ow < n - i ? o[2] - ow : n - i;
        uint8_t *d = row + i;
        if (id < 0 || id >= in[0] || ih < 0 || ih >= in[1]) {
            for (int c = 0; c < run; c += 64) _mm512_mask_storeu_epi8(d + c, lenmask64(run - c), padv);
        } else if (st[2] == 2) {
            unfold_run_s2_bw(xc + ((int64_t)id * in[1] + ih) * in[2], 2 * ow + shift, W, run, pad, d);
        } else {
            const uint8_t *xr = xc + ((int64_t)id * in[1] + ih) * in[2];
            for (int c = 0; c < run; c += 64) {
                int m = run - c < 64 ? run - c : 64, s = ow + c + shift; // d[c + j] reads x's row at s + j
                int lo = s < 0 ? -s : 0, hi = W - s;
                if (lo > m) lo = m;
                if (hi > m) hi = m;
                if (hi < lo) hi = lo;
                __mmask64 valid = lenmask64(hi) & ~lenmask64(lo);
                __m512i v = _mm512_mask_loadu_epi8(padv, valid, (const void *)((uintptr_t)xr + (intptr_t)s));
                _mm512_mask_storeu_epi8(d + c, lenmask64(m), v);
            }
        }
        i += run;
        next_output_row(&ow, &oh, &od, run, o);
    }
}

// unfold_flat_bw: a 2-D window of stride 1 whose output rows are as wide as
// the input's ("same" padding) reads, for output position p, input element
// p + ch*W + cw of the channel plane (ch, cw: the tap's row and column
// offsets): the unfolded row is the plane itself, shifted, with padding where
// the row or the column leaves it. So it goes 64 positions at a time across
// output rows, one masked load and store each, the columns' validity from
// colmask (per starting column, for this tap's cw), the rows' as the range
// [plo, phi) of positions: on 7x7 and 14x14 planes a run of unfold_row_bw was
// 7 or 14 bytes.
__attribute__((target("avx512f,avx512bw"))) static void unfold_flat_bw(const uint8_t *xc, int H, int W, int OH, int ch,
                                                                      int cw, uint8_t pad, int p0, int n, uint8_t *row,
                                                                      const uint64_t *colmask) {
    const int OW = W;
    const __m512i padv = _mm512_set1_epi8((char)pad);
    int plo = (ch < 0 ? -ch : 0) * OW, phi = (H - ch < OH ? H - ch : OH) * OW;
    int a = p0 > plo ? p0 : plo, b = p0 + n < phi ? p0 + n : phi;
    if (b < a) a = b = p0; // no valid row: all padding
    for (int q = p0; q < a; q += 64) _mm512_mask_storeu_epi8(row + (q - p0), lenmask64(a - q), padv);
    for (int q = b; q < p0 + n; q += 64) _mm512_mask_storeu_epi8(row + (q - p0), lenmask64(p0 + n - q), padv);
    const int64_t shift = (int64_t)ch * W + cw;
    const int step = 64 % OW;
    int col = a % OW;
    for (int q = a; q < b; q += 64) {
        int m = b - q < 64 ? b - q : 64;
        __mmask64 keep = lenmask64(m);
        __m512i v = _mm512_mask_loadu_epi8(padv, colmask[col] & keep, (const void *)((uintptr_t)xc + (intptr_t)(q + shift)));
        _mm512_mask_storeu_epi8(row + (q - p0), keep, v);
        col += step;
        if (col >= OW) col -= OW;
    }
}

// interleave4_vnni: gk_interleave4x16 for strips [0, ns4) of four unfolded
// rows (ns4 a multiple of 4), four strips per step: the byte and word
// unpacks of 64 columns, a 4x4 transpose of their 128-bit lanes into the
// four strips, and each strip's column sums by vpdpbusd with ones (the sum
// of a word's four signed bytes). The SSE2 form did 16 columns a step and
// widened the sums by shifts: a sixth of QDQ resnet18's time.
__attribute__((target("avx512f,avx512bw,avx512vnni"))) static void interleave4_vnni(
    const uint8_t *r0, const uint8_t *r1, const uint8_t *r2, const uint8_t *r3, int ns4, uint8_t flip, int8_t *out,
    int64_t strip_stride, int32_t *cs) {
    const __m512i vflip = _mm512_set1_epi8((char)flip), ones = _mm512_set1_epi8(1);
    for (int sp = 0; sp < ns4; sp += 4) {
        const int j0 = sp * QG_NR;
        __m512i a = _mm512_xor_si512(_mm512_loadu_si512(r0 + j0), vflip);
        __m512i b = _mm512_xor_si512(_mm512_loadu_si512(r1 + j0), vflip);
        __m512i d = _mm512_xor_si512(_mm512_loadu_si512(r2 + j0), vflip);
        __m512i f = _mm512_xor_si512(_mm512_loadu_si512(r3 + j0), vflip);
        __m512i ab0 = _mm512_unpacklo_epi8(a, b), ab1 = _mm512_unpackhi_epi8(a, b);
        __m512i df0 = _mm512_unpacklo_epi8(d, f), df1 = _mm512_unpackhi_epi8(d, f);
        __m512i w0 = _mm512_unpacklo_epi16(ab0, df0), w1 = _mm512_unpackhi_epi16(ab0, df0);
        __m512i w2 = _mm512_unpacklo_epi16(ab1, df1), w3 = _mm512_unpackhi_epi16(ab1, df1);
        // lane L of w0..w3 are columns 16L+0..3, +4..7, +8..11, +12..15
        __m512i t0 = _mm512_shuffle_i32x4(w0, w1, 0x44), t1 = _mm512_shuffle_i32x4(w2, w3, 0x44);
        __m512i t2 = _mm512_shuffle_i32x4(w0, w1, 0xEE), t3 = _mm512_shuffle_i32x4(w2, w3, 0xEE);
        __m512i st[4] = {_mm512_shuffle_i32x4(t0, t1, 0x88), _mm512_shuffle_i32x4(t0, t1, 0xDD),
                         _mm512_shuffle_i32x4(t2, t3, 0x88), _mm512_shuffle_i32x4(t2, t3, 0xDD)};
        for (int q = 0; q < 4; q++) {
            _mm512_storeu_si512(out + (int64_t)(sp + q) * strip_stride, st[q]);
            int32_t *c = cs + j0 + q * QG_NR;
            _mm512_storeu_si512(c, _mm512_dpbusd_epi32(_mm512_loadu_si512(c), ones, st[q]));
        }
    }
}

static void qconv_pack(const uint8_t *x, int xsigned, int cg, const int *geo, uint8_t pad, int p0, int p1, int8_t *out,
                       int32_t *colsum, int local);

void gk_qconv_pack(const uint8_t *x, int xsigned, int cg, const int *geo, uint8_t pad, int p0, int p1, int8_t *out,
                   int32_t *colsum) {
    qconv_pack(x, xsigned, cg, geo, pad, p0, p1, out, colsum, 0);
}

void gk_qconv_pack_local(const uint8_t *x, int xsigned, int cg, const int *geo, uint8_t pad, int p0, int p1,
                         int8_t *out, int32_t *colsum) {
    qconv_pack(x, xsigned, cg, geo, pad, p0, p1, out, colsum, 1);
}

// qconv_pack: local 0 writes strip p0/QG_NR of the whole packed B and
// colsum[p0...]; local 1 writes the positions' strips from out and their
// column sums from colsum[0].
static void qconv_pack(const uint8_t *x, int xsigned, int cg, const int *geo, uint8_t pad, int p0, int p1, int8_t *out,
                       int32_t *colsum, int local) {
    const int *kk = geo + 3;
    int kvol = kk[0] * kk[1] * kk[2], K = cg * kvol, kp = (K + 3) & ~3;
    int64_t invol = (int64_t)geo[0] * geo[1] * geo[2];
    uint8_t flip = xsigned ? 0 : 0x80;
    int n = p1 - p0;
    if (n <= 0) return;
    // four taps (one group of 4 k) at a time, padded to whole strips
    int ns = (n + QG_NR - 1) / QG_NR, np = ns * QG_NR;
    uint8_t *rows = malloc((size_t)4 * np);
    int32_t *cs = calloc((size_t)np, sizeof(int32_t));
    // a 1x1 window of stride 1 without padding reads x's rows as they are:
    // no unfold copy (it was a tenth of mobilenet_v2's int8 time), only
    // the last partial strip through a padded copy
    const int pointwise = kvol == 1 && geo[6] == 1 && geo[7] == 1 && geo[8] == 1 && geo[9] == 0 && geo[10] == 0 &&
                          geo[11] == 0 && geo[15] == geo[0] && geo[16] == geo[1] && geo[17] == geo[2];
    static int bw_cpu = -1;
    if (bw_cpu < 0) bw_cpu = has_bw();
    const int bw = (geo[8] == 1 || geo[8] == 2) && bw_cpu && gk_nn_isa() >= GK_ISA_AVX512;
    const int pos[3] = {p0 % geo[17], (p0 / geo[17]) % geo[16], p0 / (geo[17] * geo[16])};
    unfold_tap tap = {0, 0, 0, 0}; // of row k0 + t, stepped with it
    static int vnni_cpu = -1;
    if (vnni_cpu < 0) vnni_cpu = has_vnni();
    const int vnni4 = vnni_cpu && gk_nn_isa() >= GK_ISA_AVX512;
    // 2-D, stride 1, output rows as wide as the input's: unfold_flat_bw,
    // with each column tap's validity masks (kk[2] x OW of them)
    const int flat = bw && geo[8] == 1 && !pointwise && geo[0] == 1 && geo[3] == 1 && geo[15] == 1 && geo[7] == 1 && geo[17] == geo[2];
    uint64_t *colmask = NULL;
    if (flat) {
        const int OW = geo[17];
        colmask = malloc(sizeof(uint64_t) * (size_t)kk[2] * (size_t)OW);
        for (int kw = 0; kw < kk[2]; kw++) {
            int cw = kw * geo[14] - geo[11];
            int vlo = cw < 0 ? -cw : 0, vhi = geo[2] - cw < OW ? geo[2] - cw : OW;
            // bit b of column c's mask: column (c + b) % OW valid; the
            // next column's mask is this one shifted down with bit 63 for
            // (c + 64) % OW (a bit loop per column was three quarters of
            // the pack's time on resnet18's 56x56 layer)
            uint64_t m = 0;
            for (int bit = 0, col = 0; bit < 64; bit++, col = col + 1 == OW ? 0 : col + 1)
                if (col >= vlo && col < vhi) m |= (uint64_t)1 << bit;
            for (int c = 0, top = OW > 0 ? 64 % OW : 0; c < OW; c++, top = top + 1 == OW ? 0 : top + 1) {
                colmask[(size_t)kw * OW + c] = m;
                m = m >> 1 | (uint64_t)(top >= vlo && top < vhi) << 63;
            }
        }
    }
    for (int k0 = 0; k0 < kp; k0 += 4) {
        if (pointwise) {
            const uint8_t *src[4];
            for (int t = 0; t < 4; t++) src[t] = k0 + t < K ? x + (int64_t)(k0 + t) * invol + p0 : NULL;
            const __m128i vflip = _mm_set1_epi8((char)flip);
            int sp = 0;
            if (vnni4 && src[3]) { // four real rows: the whole groups of four strips
                sp = n / (4 * QG_NR) * 4;
                interleave4_vnni(src[0], src[1], src[2], src[3], sp, flip,
                                 out + ((int64_t)(local ? 0 : p0 / QG_NR) * kp + k0) * QG_NR, (int64_t)kp * QG_NR, cs);
            }
            for (; sp < ns; sp++) {
                __m128i *dst = (__m128i *)(out + ((int64_t)((local ? 0 : p0 / QG_NR) + sp) * kp + k0) * QG_NR);
                const int j0 = sp * QG_NR, nc = n - j0 < QG_NR ? n - j0 : QG_NR;
                __m128i v[4];
                for (int t = 0; t < 4; t++) {
                    if (!src[t]) {
                        v[t] = _mm_setzero_si128(); // zero after the flip
                    } else if (nc == QG_NR) {
                        v[t] = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(src[t] + j0)), vflip);
                    } else {
                        uint8_t tmp[QG_NR];
                        memset(tmp, flip, sizeof tmp);
                        memcpy(tmp, src[t] + j0, (size_t)nc);
                        v[t] = _mm_xor_si128(_mm_loadu_si128((const __m128i *)tmp), vflip);
                    }
                }
                gk_interleave4x16(v[0], v[1], v[2], v[3], dst, cs + j0);
            }
            continue;
        }
        for (int t = 0; t < 4; t++) {
            uint8_t *row = rows + (size_t)t * np;
            if (k0 + t < K) {
                if (flat)
                    unfold_flat_bw(x + tap.ic * invol, geo[1], geo[2], geo[16], tap.kh * geo[13] - geo[10],
                                   tap.kw * geo[14] - geo[11], pad, p0, n, row, colmask + (size_t)tap.kw * geo[17]);
                else if (bw)
                    unfold_row_bw(x, tap, geo, invol, pad, pos, n, row);
                else
                    unfold_row(x, k0 + t, kvol, geo, invol, pad, p0, n, row);
                memset(row + n, flip, (size_t)(np - n));
            } else {
                memset(row, flip, (size_t)np); // zero after the flip
            }
            unfold_tap_next(&tap, kk);
        }
        const uint8_t *r0 = rows, *r1 = rows + np, *r2 = rows + 2 * (size_t)np, *r3 = rows + 3 * (size_t)np;
        // the four rows interleaved into 32-bit columns and their signed
        // byte sums added to the column sums, 16 columns (one strip) per
        // step in SSE2 (the byte loop was most of a small conv's time),
        // four strips a step with VNNI
        _Static_assert(QG_NR == 16, "one strip is one 16-byte vector per row");
        const __m128i vflip = _mm_set1_epi8((char)flip);
        int sp = 0;
        if (vnni4) {
            sp = ns / 4 * 4;
            interleave4_vnni(r0, r1, r2, r3, sp, flip, out + ((int64_t)(local ? 0 : p0 / QG_NR) * kp + k0) * QG_NR,
                             (int64_t)kp * QG_NR, cs);
        }
        for (; sp < ns; sp++) {
            __m128i *dst = (__m128i *)(out + ((int64_t)((local ? 0 : p0 / QG_NR) + sp) * kp + k0) * QG_NR);
            const int j0 = sp * QG_NR;
            __m128i a = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(r0 + j0)), vflip);
            __m128i b = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(r1 + j0)), vflip);
            __m128i d = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(r2 + j0)), vflip);
            __m128i e = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(r3 + j0)), vflip);
            gk_interleave4x16(a, b, d, e, dst, cs + j0);
        }
    }
    for (int j = 0; j < n; j++) colsum[(local ? 0 : p0) + j] = cs[j];
    free(rows);
    free(cs);
    free(colmask);
}

void gk_qdw_conv(const uint8_t *x, int xsigned, const uint8_t *w, int wsigned, const int32_t *wz, int xz,
                 const int *geo, int c0, int c1, int32_t *y) {
    const int *in = geo, *k = geo + 3, *s = geo + 6, *pb = geo + 9, *d = geo + 12, *out = geo + 15;
    const long iv = (long)in[0] * in[1] * in[2], ov = (long)out[0] * out[1] * out[2];
    const int kv = k[0] * k[1] * k[2];
    int32_t wt[kv > 0 ? kv : 1];
    for (int c = c0; c < c1; c++) {
        const uint8_t *xc = x + c * iv, *wc = w + (long)c * kv;
        for (int t = 0; t < kv; t++) wt[t] = (wsigned ? (int32_t)(int8_t)wc[t] : (int32_t)wc[t]) - wz[c];
        int32_t *yc = y + c * ov;
        for (int o0 = 0; o0 < out[0]; o0++)
            for (int o1 = 0; o1 < out[1]; o1++) {
                int32_t *yr = yc + ((long)o0 * out[1] + o1) * out[2];
                memset(yr, 0, sizeof(int32_t) * out[2]);
                for (int a = 0; a < k[0]; a++) {
                    const int i0 = o0 * s[0] - pb[0] + a * d[0];
                    if (i0 < 0 || i0 >= in[0]) continue;
                    for (int b = 0; b < k[1]; b++) {
                        const int i1 = o1 * s[1] - pb[1] + b * d[1];
                        if (i1 < 0 || i1 >= in[1]) continue;
                        const uint8_t *xr = xc + ((long)i0 * in[1] + i1) * in[2];
                        for (int e = 0; e < k[2]; e++) {
                            const int32_t wv = wt[(a * k[1] + b) * k[2] + e];
                            const int off = e * d[2] - pb[2]; // ix = ox*s + off
                            int lo = off >= 0 ? 0 : (-off + s[2] - 1) / s[2];
                            int hi = in[2] - off <= 0 ? 0 : (in[2] - off + s[2] - 1) / s[2];
                            if (hi > out[2]) hi = out[2];
                            if (s[2] == 1) {
                                const uint8_t *xo = xr + off;
                                if (xsigned)
                                    for (int ox = lo; ox < hi; ox++) yr[ox] += ((int32_t)(int8_t)xo[ox] - xz) * wv;
                                else
                                    for (int ox = lo; ox < hi; ox++) yr[ox] += ((int32_t)xo[ox] - xz) * wv;
                            } else {
                                for (int ox = lo; ox < hi; ox++) {
                                    const uint8_t v = xr[ox * s[2] + off];
                                    yr[ox] += ((xsigned ? (int32_t)(int8_t)v : (int32_t)v) - xz) * wv;
                                }
                            }
                        }
                    }
                }
            }
    }
}
