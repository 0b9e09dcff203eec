// Fused attention for one (batch, head): QK^T and PV on OpenBLAS, the row
// pass (softcap, mask, causal limit, softmax) in one sweep over the score
// row while it is in cache.
#include <cblas.h>
#include <math.h>
#include <string.h>

#include "attention.h"
#include "isa.h"

#define CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

// exp(x) for x <= 0 (scores minus the row maximum), 0 below -87.3 (where
// expf is subnormal) and for -inf. Range reduction x = n*ln2 + r with
// |r| <= ln2/2 and a degree-6 Taylor polynomial: relative error below
// 2e-7, written so gcc vectorizes the loops that call it.
static inline float exp_nonpos(float x) {
    const float log2e = 1.44269504088896341f, ln2hi = 0.693145751953125f, ln2lo = 1.428606765330187e-06f;
    float xc = x < -87.3f ? -87.3f : x;
    int n = (int)(xc * log2e - 0.5f); // round to nearest for xc <= 0
    float fn = (float)n;
    float r = (xc - fn * ln2hi) - fn * ln2lo;
    float p = 1.0f / 720;
    p = p * r + 1.0f / 120;
    p = p * r + 1.0f / 24;
    p = p * r + 1.0f / 6;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    union {
        int i;
        float f;
    } s;
    s.i = (n + 127) << 23;
    float e = p * s.f;
    return x < -87.3f ? 0.0f : e;
}

// exp_nonpos and the softmax row on W lanes (GCC vector types), the same
// operations in the same order as the scalar code: gcc did not vectorise
// the scalar loop (its int conversion and bit cast), and the softmax was
// half of bert_base's attention time. 16 lanes for AVX-512; 8 for AVX2 and
// the baseline (16-lane vectors there were split badly, compares went
// scalar).
#define SOFTMAX_ROW(NAME, W, TARGET)                                                                   \
    typedef float NAME##_f __attribute__((vector_size(4 * W)));                                        \
    typedef int NAME##_i __attribute__((vector_size(4 * W)));                                          \
    typedef float NAME##_u __attribute__((vector_size(4 * W), aligned(4)));                            \
    TARGET static inline __attribute__((always_inline)) void NAME##_exp(NAME##_f *xp) {                \
        const float log2e = 1.44269504088896341f, ln2hi = 0.693145751953125f;                          \
        const float ln2lo = 1.428606765330187e-06f;                                                    \
        const NAME##_f x = *xp, zero = {0}, lim = zero - 87.3f;                                        \
        NAME##_i under = x < lim; /* all ones where x < -87.3 (and -inf); false for NaN */            \
        NAME##_f xc = (NAME##_f)(((NAME##_i)x & ~under) | ((NAME##_i)lim & under));                    \
        NAME##_i n = __builtin_convertvector(xc * log2e - 0.5f, NAME##_i); /* truncation, as (int) */ \
        NAME##_f fn = __builtin_convertvector(n, NAME##_f);                                            \
        NAME##_f r = (xc - fn * ln2hi) - fn * ln2lo;                                                   \
        NAME##_f p = zero + 1.0f / 720;                                                                \
        p = p * r + 1.0f / 120;                                                                        \
        p = p * r + 1.0f / 24;                                                                         \
        p = p * r + 1.0f / 6;                                                                          \
        p = p * r + 0.5f;                                                                              \
        p = p * r + 1.0f;                                                                              \
        p = p * r + 1.0f;                                                                              \
        NAME##_f e = p * (NAME##_f)((n + 127) << 23);                                                  \
        *xp = (NAME##_f)((NAME##_i)e & ~under);                                                        \
    }                                                                                                  \
    TARGET static void NAME(float *row, int n) {                                                       \
        float m = -INFINITY;                                                                           \
        int j = 0;                                                                                     \
        if (n >= W) {                                                                                  \
            const NAME##_f zero = {0};                                                                 \
            NAME##_f mv = zero - INFINITY;                                                             \
            for (; j + W <= n; j += W) {                                                               \
                NAME##_f v = *(const NAME##_u *)(row + j);                                             \
                NAME##_i gt = v > mv;                                                                  \
                mv = (NAME##_f)(((NAME##_i)v & gt) | ((NAME##_i)mv & ~gt));                            \
            }                                                                                          \
            for (int l = 0; l < W; l++) m = mv[l] > m ? mv[l] : m;                                     \
        }                                                                                              \
        for (; j < n; j++) m = row[j] > m ? row[j] : m;                                                \
        if (m == -INFINITY) {                                                                          \
            memset(row, 0, (size_t)n * sizeof(float));                                                 \
            return;                                                                                    \
        }                                                                                              \
        NAME##_f sv = {0};                                                                             \
        for (j = 0; j + W <= n; j += W) {                                                              \
            NAME##_f e = *(const NAME##_u *)(row + j) - m;                                             \
            NAME##_exp(&e);                                                                            \
            *(NAME##_u *)(row + j) = e;                                                                \
            sv += e;                                                                                   \
        }                                                                                              \
        float sum = 0;                                                                                 \
        for (int l = 0; l < W; l++) sum += sv[l];                                                      \
        for (; j < n; j++) {                                                                           \
            float e = exp_nonpos(row[j] - m);                                                          \
            row[j] = e;                                                                                \
            sum += e;                                                                                  \
        }                                                                                              \
        float inv = 1.0f / sum;                                                                        \
        for (j = 0; j + W <= n; j += W) *(NAME##_u *)(row + j) = *(const NAME##_u *)(row + j) * inv;   \
        for (; j < n; j++) row[j] *= inv;                                                              \
    }

SOFTMAX_ROW(softmax_row_avx512, 16, __attribute__((target("avx512f,fma"))))
SOFTMAX_ROW(softmax_row_avx2, 8, __attribute__((target("avx2,fma"))))
SOFTMAX_ROW(softmax_row_base, 8, )

// softmax_row turns row[0:n] into probabilities in place; a row whose
// maximum is -inf (every key masked out) becomes zeros. NaN scores are not
// the maximum (as row[j] > m is false) and make the row NaN.
static void softmax_row(float *row, int n) {
    switch (gk_nn_isa()) {
    case GK_ISA_AVX512: softmax_row_avx512(row, n); break;
    case GK_ISA_AVX2: softmax_row_avx2(row, n); break;
    default: softmax_row_base(row, n); break;
    }
}

CLONES static void add_row(float *row, const float *m, int n) {
    for (int j = 0; j < n; j++) {
        row[j] += m[j];
    }
}

static void copy_qk(const gk_attn_head *a, int mode, int i, const float *row) {
    if (a->qk != NULL && a->qk_mode == mode) {
        memcpy(a->qk + (long)i * a->skv, row, (size_t)a->skv * sizeof(float));
    }
}

void gk_attention_head(const gk_attn_head *a) {
    const int sq = a->sq, skv = a->skv;
    float *s = a->scores;
    if (sq == 0) {
        return;
    }
    if (skv == 0 || a->dv == 0) {
        for (int i = 0; i < sq; i++) {
            memset(a->y + (long)i * a->ldy, 0, (size_t)a->dv * sizeof(float));
        }
        return;
    }
    if (a->d == 0) {
        memset(s, 0, (size_t)sq * skv * sizeof(float));
    } else {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, sq, skv, a->d, a->scale, a->q, a->ldq, a->k, a->ldk,
                    0.0f, s, skv);
    }
    for (int i = 0; i < sq; i++) {
        float *row = s + (long)i * skv;
        copy_qk(a, 0, i, row);
        if (a->softcap > 0) {
            const float c = a->softcap, ic = 1.0f / a->softcap;
            for (int j = 0; j < skv; j++) {
                row[j] = c * tanhf(row[j] * ic);
            }
        }
        copy_qk(a, 1, i, row);
        int limit = a->kv_valid < skv ? a->kv_valid : skv;
        if (a->mask_f != NULL || a->mask_b != NULL) {
            limit = limit < a->mask_cols ? limit : a->mask_cols;
        }
        if (a->causal) {
            long c = (long)i + a->causal_off + 1;
            if (c < limit) {
                limit = c < 0 ? 0 : (int)c;
            }
        }
        if (a->mask_f != NULL) {
            add_row(row, a->mask_f + (long)i * a->mask_ld, limit);
        } else if (a->mask_b != NULL) {
            const unsigned char *mb = a->mask_b + (long)i * a->mask_ld;
            for (int j = 0; j < limit; j++) {
                if (!mb[j]) {
                    row[j] = -INFINITY;
                }
            }
        }
        for (int j = limit; j < skv; j++) {
            row[j] = -INFINITY;
        }
        copy_qk(a, 2, i, row);
        softmax_row(row, skv);
        copy_qk(a, 3, i, row);
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, sq, a->dv, skv, 1.0f, s, skv, a->v, a->ldv, 0.0f, a->y,
                a->ldy);
}
