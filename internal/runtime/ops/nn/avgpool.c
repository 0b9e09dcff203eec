// 2-D float32 AveragePool with avgPoolT's rounding: per output the window's
// in-bounds taps are summed from +0 row by row, left to right, then divided
// by the count. Rows are accumulated across a whole output row at once
// (acc[OW]) so the interior vectorises; each output still sees its taps in
// the same order, so the bits are the Go loop's. No contraction into FMAs.
#pragma GCC optimize("fp-contract=off", "no-trapping-math") // no-trapping-math: the guarded division if-converts (values unchanged)
#include "avgpool.h"
#include <string.h>
#include "isa.h"

// tap_range: the taps [k0, k1) of a window starting at start (stride
// applied, padding subtracted) with dilation d that land in [lo, hi).
static inline void tap_range(int start, int k, int d, int lo, int hi, int *k0, int *k1) {
    int a = 0, b = k;
    while (a < b && start + a * d < lo) a++;
    while (b > a && start + (b - 1) * d >= hi) b--;
    *k0 = a;
    *k1 = b;
}

typedef float ap_v16f __attribute__((vector_size(64)));
typedef float ap_v8f __attribute__((vector_size(32)));
typedef float ap_v4f __attribute__((vector_size(16)));

// AP_INTERIOR_S1 defines NAME, the interior columns [lo, hi) (at least VW)
// of one output row of a stride-1 pool, in VW-wide vectors V whose sums stay
// in registers across the window (the last block shifted back to end at hi,
// recomputing a few outputs with the same bits). Each output sums its taps
// from +0 row by row, left to right, and divides by its count, as the
// general loop does. One width per level, the register's: gcc lowers a
// wider vector through the stack (16 floats on AVX2: 8x slower than 8).
#define AP_INTERIOR_S1(NAME, ATTR, V, VW)                                                                      \
    ATTR void NAME(const float *restrict xc, float *restrict o, int W, int KW, int PH, int PW, int DH, int DW,  \
                   int oh, int h0, int h1, int cnt, int lo, int hi) {                                          \
        const V zero = {0}, nans = zero + __builtin_nanf("");                                                  \
        for (int ow = lo; ow < hi; ow += VW) {                                                                 \
            if (ow + VW > hi) ow = hi - VW;                                                                    \
            V a = {0};                                                                                         \
            for (int kh = h0; kh < h1; kh++) {                                                                 \
                const float *row = xc + (long)(oh - PH + kh * DH) * W + ow - PW;                               \
                for (int kw = 0; kw < KW; kw++) {                                                              \
                    V u;                                                                                       \
                    memcpy(&u, row + kw * DW, sizeof u);                                                       \
                    a += u;                                                                                    \
                }                                                                                              \
            }                                                                                                  \
            const V r = cnt > 0 ? a / (float)cnt : nans;                                                       \
            memcpy(o + ow, &r, sizeof r);                                                                      \
        }                                                                                                      \
    }
AP_INTERIOR_S1(ap_interior16_avx512, __attribute__((target("avx512f"))) static, ap_v16f, 16)
AP_INTERIOR_S1(ap_interior8_avx2, __attribute__((target("avx2"))) static, ap_v8f, 8)
AP_INTERIOR_S1(ap_interior4, static inline, ap_v4f, 4)

// avgpool_row_s1 is one output row of a stride-1 pool whose interior
// columns [lo, hi) (at least 16) see whole windows: those as vectors
// (AP_INTERIOR_S1), the edge columns one by one, with the same sums.
// (Tried: edge blocks as vectors over a zero-filled copy of the row, twice
// as slow, the copy's scalar stores stalling the vector loads that follow;
// as AVX-512 masked loads of +0 taps, no faster than the scalar edges.)
static inline void avgpool_row_s1(const float *restrict xc, float *restrict o, int W, int KW, int PH, int PW,
                                  int DH, int DW, int OW, int oh, int h0, int h1, int hcnt, int lo, int hi,
                                  const int *restrict wlo, const int *restrict whi, const int *restrict wcnt) {
    for (int ow = 0; ow < OW; ow++) {
        if (ow == lo) ow = hi;
        if (ow >= OW) break;
        float s = 0.0f;
        for (int kh = h0; kh < h1; kh++) {
            const float *row = xc + (long)(oh - PH + kh * DH) * W + ow - PW;
            for (int kw = wlo[ow]; kw < whi[ow]; kw++) s += row[kw * DW];
        }
        const int cnt = hcnt * wcnt[ow];
        o[ow] = cnt > 0 ? s / (float)cnt : __builtin_nanf("");
    }
    const int cnt = hcnt * KW; // the interior columns' count, padded or not
    switch (gk_nn_isa()) {
    case GK_ISA_AVX512: ap_interior16_avx512(xc, o, W, KW, PH, PW, DH, DW, oh, h0, h1, cnt, lo, hi); break;
    case GK_ISA_AVX2: ap_interior8_avx2(xc, o, W, KW, PH, PW, DH, DW, oh, h0, h1, cnt, lo, hi); break;
    default: ap_interior4(xc, o, W, KW, PH, PW, DH, DW, oh, h0, h1, cnt, lo, hi); break;
    }
}

GK_ISA_BODY void avgpool2d_f32_body(const float *restrict x, float *restrict y, int NC, int H, int W, int KH,
                                    int KW, int SH, int SW, int PH, int PW, int PEH, int PEW, int DH, int DW,
                                    int OH, int OW, int count_pad, float *restrict acc, int *restrict wlo,
                                    int *restrict whi, int *restrict wcnt) {
    // per output column: its in-bounds taps and the count it divides by
    int lo = OW, hi = 0; // [lo, hi): columns whose window is wholly inside
    for (int ow = 0; ow < OW; ow++) {
        int a, b;
        tap_range(ow * SW - PW, KW, DW, 0, W, &a, &b);
        wlo[ow] = a;
        whi[ow] = b;
        if (count_pad) {
            int c, e;
            tap_range(ow * SW - PW, KW, DW, -PW, W + PEW, &c, &e);
            wcnt[ow] = e - c;
        } else {
            wcnt[ow] = b - a;
        }
        if (a == 0 && b == KW) {
            if (ow < lo) lo = ow;
            hi = ow + 1;
        }
    }
    if (hi <= lo) lo = hi = OW; // no interior column: the first edge loop takes them all
    for (int ow = lo; ow < hi; ow++)
        if (wlo[ow] != 0 || whi[ow] != KW) { lo = hi; break; } // not one block: the edge loops take them all
    for (int nc = 0; nc < NC; nc++) {
        const float *xc = x + (long)nc * H * W;
        float *yc = y + (long)nc * OH * OW;
        for (int oh = 0; oh < OH; oh++) {
            int h0, h1, c0, c1;
            tap_range(oh * SH - PH, KH, DH, 0, H, &h0, &h1);
            int hcnt = h1 - h0;
            if (count_pad) {
                tap_range(oh * SH - PH, KH, DH, -PH, H + PEH, &c0, &c1);
                hcnt = c1 - c0;
            }
            if (SW == 1 && hi - lo >= 16) {
                avgpool_row_s1(xc, yc + (long)oh * OW, W, KW, PH, PW, DH, DW, OW, oh * SH, h0, h1, hcnt, lo,
                               hi, wlo, whi, wcnt);
                continue;
            }
            for (int ow = 0; ow < OW; ow++) acc[ow] = 0.0f;
            // interior columns of a stride-1 pool: blocks of 32 outputs keep
            // their sums in registers over the whole window (taps still
            // row by row, left to right for each output)
            const int blocked = SW == 1;
            for (int kh = h0; kh < h1; kh++) {
                const float *row = xc + (long)(oh * SH - PH + kh * DH) * W;
                for (int kw = 0; kw < KW; kw++) {
                    const int off = kw * DW - PW;
                    for (int ow = 0; ow < lo; ow++)
                        if (kw >= wlo[ow] && kw < whi[ow]) acc[ow] += row[ow * SW + off];
                    if (!blocked)
                        for (int ow = lo; ow < hi; ow++) acc[ow] += row[ow * SW + off];
                    for (int ow = hi; ow < OW; ow++)
                        if (kw >= wlo[ow] && kw < whi[ow]) acc[ow] += row[ow * SW + off];
                }
            }
            if (blocked) {
                int ow = lo;
                for (; ow + 32 <= hi; ow += 32) {
                    float a[32];
                    for (int j = 0; j < 32; j++) a[j] = 0.0f;
                    for (int kh = h0; kh < h1; kh++) {
                        const float *restrict row = xc + (long)(oh * SH - PH + kh * DH) * W + ow - PW;
                        for (int kw = 0; kw < KW; kw++)
                            for (int j = 0; j < 32; j++) a[j] += row[kw * DW + j];
                    }
                    for (int j = 0; j < 32; j++) acc[ow + j] = a[j];
                }
                for (int kh = h0; kh < h1; kh++) {
                    const float *restrict row = xc + (long)(oh * SH - PH + kh * DH) * W - PW;
                    for (int kw = 0; kw < KW; kw++)
                        for (int o = ow; o < hi; o++) acc[o] += row[kw * DW + o];
                }
            }
            float *o = yc + (long)oh * OW;
            for (int ow = 0; ow < OW; ow++) {
                const int cnt = hcnt * wcnt[ow];
                o[ow] = cnt > 0 ? acc[ow] / (float)cnt : __builtin_nanf("");
            }
        }
    }
}
GK_ISA_VARIANTS(gk_nn_isa(), avgpool2d_f32, (const float *x, float *y, int NC, int H, int W, int KH, int KW,
    int SH, int SW, int PH, int PW, int PEH, int PEW, int DH, int DW, int OH, int OW, int count_pad,
    float *acc, int *wlo, int *whi, int *wcnt),
    (x, y, NC, H, W, KH, KW, SH, SW, PH, PW, PEH, PEW, DH, DW, OH, OW, count_pad, acc, wlo, whi, wcnt))

// gk_global_means_f32 sums each plane as MLAS does (one 4-lane accumulator
// from +0 over the plane 4 values at a time from its first, the lanes
// reduced as (l0 + l2) + (l1 + l3), the last 0-3 values added one by one,
// the sum divided by the plane size) with eight planes interleaved: their
// accumulators are independent, so the adds no longer wait on each other's
// latency (the Go loop, one plane at a time, was 2.5x onnxruntime's NCHWc
// pooling on efficientnet_b0's squeeze-excite blocks). Same bits.
typedef float gp_v4f __attribute__((vector_size(16)));

static inline gp_v4f gp_ld4(const float *p) {
    gp_v4f v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline float gp_finish(gp_v4f a, const float *x, long i, long plane) {
    float s = (a[0] + a[2]) + (a[1] + a[3]);
    for (; i < plane; i++) s += x[i];
    return s / (float)plane;
}

void gk_global_means_f32(const float *x, float *y, long nc, long plane) {
    long p = 0;
    for (; p + 8 <= nc; p += 8) {
        const float *xp = x + p * plane;
        gp_v4f a[8] = {{0}};
        long i = 0;
        for (; i + 4 <= plane; i += 4) {
#pragma GCC unroll 8
            for (int k = 0; k < 8; k++) a[k] += gp_ld4(xp + k * plane + i);
        }
        for (int k = 0; k < 8; k++) y[p + k] = gp_finish(a[k], xp + k * plane, i, plane);
    }
    for (; p < nc; p++) {
        const float *xp = x + p * plane;
        gp_v4f a = {0};
        long i = 0;
        for (; i + 4 <= plane; i += 4) a += gp_ld4(xp + i);
        y[p] = gp_finish(a, xp, i, plane);
    }
}
