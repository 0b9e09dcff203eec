// Fused attention for one (batch, head): QK^T and PV on OpenBLAS, the row
// pass (softcap, mask, causal limit, softmax) in one sweep over the score
// row while it is in cache.
#include <cblas.h>
#include <math.h>
#include <string.h>

#include "attention.h"

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

// softmax_row turns row[0:n] into probabilities in place; a row whose
// maximum is -inf (every key masked out) becomes zeros.
CLONES static void softmax_row(float *row, int n) {
    float m = -INFINITY;
    for (int j = 0; j < n; j++) {
        m = row[j] > m ? row[j] : m;
    }
    if (m == -INFINITY) {
        memset(row, 0, (size_t)n * sizeof(float));
        return;
    }
    float sum = 0;
    for (int j = 0; j < n; j++) {
        float e = exp_nonpos(row[j] - m);
        row[j] = e;
        sum += e;
    }
    float inv = 1.0f / sum;
    for (int j = 0; j < n; j++) {
        row[j] *= inv;
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
