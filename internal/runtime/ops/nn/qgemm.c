// Exact 8-bit integer GEMM: AVX-512 VNNI (vpdpbusd), AVX2 (bytes widened to
// int16, vpmaddwd: exact, unlike vpmaddubsw's saturating int16 pair sums)
// and portable C. See qgemm.h.
#include "qgemm.h"
#include "isa.h"
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

typedef void (*dot_fn)(const uint8_t *, int, int, const int8_t *, int32_t *);

static int has_vnni(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw");
}

static dot_fn pick_dot(void) {
    int level = gk_nn_isa();
    if (level >= GK_ISA_AVX512 && has_vnni()) return dot_vnni;
    if (level >= GK_ISA_AVX2) return dot_avx2;
    return dot_base;
}

const char *gk_qgemm_kernel_name(void) {
    dot_fn f = pick_dot();
    return f == dot_vnni ? "avx512vnni" : f == dot_avx2 ? "avx2" : "portable";
}

void gk_qgemm(int M, int K, int N, const uint8_t *a, int asigned, int lda, const int32_t *za, const int8_t *bp,
              const int32_t *colsum, const int32_t *zb, int s0, int s1, int32_t *c, int ldc) {
    int kp = (K + 3) & ~3;
    dot_fn dot = pick_dot();
    // A is packed in blocks of rows that stay in L2 across the strips.
    int rb = QG_MR * 16;
    uint8_t *ap = malloc((size_t)rb * kp + 64);
    int32_t rowsum[QG_MR * 16], zar[QG_MR * 16];
    int32_t acc[QG_MR * QG_NR];
    for (int i0 = 0; i0 < M; i0 += rb) {
        int rows = M - i0 < rb ? M - i0 : rb;
        pack_a(a + (int64_t)i0 * lda, rows, K, kp, lda, asigned, ap, rowsum);
        for (int r = 0; r < rows; r++) zar[r] = za[i0 + r] + (asigned ? 128 : 0);
        for (int s = s0; s < s1; s++) {
            const int8_t *bs = bp + (int64_t)s * kp * QG_NR;
            int j0 = s * QG_NR, nc = N - j0 < QG_NR ? N - j0 : QG_NR;
            for (int r0 = 0; r0 < rows; r0 += QG_MR) {
                int mr = rows - r0 < QG_MR ? rows - r0 : QG_MR;
                dot(ap + (int64_t)r0 * kp, mr, kp, bs, acc);
                store_strip(acc, mr, nc, K, rowsum + r0, zar + r0, colsum + j0, zb + j0,
                            c + (int64_t)(i0 + r0) * ldc + j0, ldc);
            }
        }
    }
    free(ap);
}

void gk_requant(const int32_t *acc, int n, const float *mult, int per_col, int32_t zp, int lo, int hi, uint8_t *y,
                int ysigned) {
    for (int j = 0; j < n; j++) {
        float f = (float)acc[j] * mult[per_col ? j : 0];
        float r = nearbyintf(f) + (float)zp;
        int v = r < (float)lo ? lo : r > (float)hi ? hi : (int)r;
        y[j] = ysigned ? (uint8_t)(int8_t)v : (uint8_t)v;
    }
}
