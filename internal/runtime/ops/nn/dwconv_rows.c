// Row-oriented direct depthwise convolution for square 3x3, 5x5 and 7x7
// kernels with dilation 1 and stride 1 or 2 (dwconv_f32 in im2col_dwconv.c calls
// it for every such shape but the 3x3 ones its AVX-512 kernels take).
//
// Each input row of a plane is copied once into a zero-padded row buffer,
// split into S phases (phase p holds the padded columns p, p+S, p+2S, ...),
// so that tap kw of output column ow is phase kw%S at index ow + kw/S: a
// plain unaligned vector load for stride 2 as well, with no gather and no
// per-tap de-interleave. Rows in the vertical padding point at one zero
// row. The compute loop is then free of bounds checks: blocks of 4 output
// rows x VL columns (AVX-512: VL = 16, or 8 for planes at most 8 wide;
// AVX2: 8; baseline: 4) accumulate in
// registers, each input row loaded once per block and used by every output
// row of the block it reaches, then get the bias (the accumulators' start),
// the fused activation, and are stored. The code uses GCC vector types, so
// one body gives zmm/ymm code at the AVX-512 level, ymm at AVX2 (both with
// FMA) and SSE at the baseline.
#include <string.h>
#include "dwconv_rows.h"

// The short copy loops below must stay loops, not memcpy calls.
#pragma GCC optimize("no-tree-loop-distribute-patterns")
#include "isa.h"

typedef float f16 __attribute__((vector_size(64)));
typedef float f16u __attribute__((vector_size(64), aligned(4), may_alias));
typedef int i16 __attribute__((vector_size(64)));
typedef float f8 __attribute__((vector_size(32)));
typedef float f8u __attribute__((vector_size(32), aligned(4), may_alias));
typedef int i8 __attribute__((vector_size(32)));
typedef float f4 __attribute__((vector_size(16)));
typedef float f4u __attribute__((vector_size(16), aligned(4), may_alias));
typedef int i4 __attribute__((vector_size(16)));

#define DWR_R 4 // output rows per block
#define AINL static inline __attribute__((always_inline))

int dw_legacy;

int dw_rows_ok(int KH, int KW, int SH, int SW, int DH, int DW) {
    return KH == KW && (KH == 3 || KH == 5 || KH == 7) && SH == SW && (SH == 1 || SH == 2) && DH == 1 &&
           DW == 1;
}

// dwr_ld is the length of one padded row buffer: S phases of PL floats,
// enough for every tap of ceil(OW/VL) full vectors.
static long dwr_pl(int K, int S, int OW, int VL) { return (OW + VL - 1) / VL * VL + (K - 1) / S; }

long dw_rows_floats(int H, int W, int K, int S, int OH, int OW) {
    (void)W, (void)OH;
    if (S < 1) S = 1;
    const long ld = S * dwr_pl(K, S, OW, 16); // VL 16 takes at least as much as 8
    return ld * (H + 1) + 16;
}

// dwr_span is the part [lo, hi) of phase p of a padded row buffer that
// holds input columns: index j is padded column S*j + p, input column
// S*j + p - PW, inside [0, W) for j in [lo, hi). The rest stays zero.
AINL void dwr_span(int p, int S, int W, int PW, long PL, long *lo, long *hi) {
    const long first = PW - p, last = (long)W - 1 + PW - p;
    long l = first <= 0 ? 0 : (first + S - 1) / S, h = last < 0 ? 0 : last / S + 1;
    if (h > PL) h = PL;
    if (l > h) l = h;
    *lo = l, *hi = h;
}

// dwr_fill copies input row src into the spans of the padded row buffer d
// (S phases of PL floats; zero outside the spans since the call began).
AINL void dwr_fill(float *restrict d, const float *restrict src, int W, int PW, long PL, int S) {
    for (int p = 0; p < S; p++) {
        long lo, hi;
        dwr_span(p, S, W, PW, PL, &lo, &hi);
        float *e = d + lo + p * PL;
        const float *s = src + S * lo + p - PW;
        const long n = hi - lo, avail = W - (S * lo + p - PW); // floats readable at s
        long j = 0;
        if (S == 1) {
            for (; j + 8 <= n; j += 8) *(f8u *)(e + j) = *(const f8u *)(s + j);
            for (; j < n; j++) e[j] = s[j];
        } else {
            // 16 consecutive floats -> their 8 even ones (phase p of S = 2)
            const i8 even = {0, 2, 4, 6, 8, 10, 12, 14};
            for (; j + 8 <= n && 2 * j + 16 <= avail; j += 8)
                *(f8u *)(e + j) = __builtin_shuffle(*(const f8u *)(s + 2 * j), *(const f8u *)(s + 2 * j + 8), even);
            for (; j < n; j++) e[j] = s[2 * j];
        }
    }
}

// DWR_ACT applies the fused activation (1 RELU, 3 RELU6) to the vector s
// exactly as act_rows_f32 does: x < 0 ? 0 : x, then v > 6 ? 6 : v (NaN stays).
#define DWR_ACT(VT, VI, s, act, zero, six)                                                         \
    if (act == 1 || act == 3) {                                                                    \
        const VI m = s < zero;                                                                     \
        s = (VT)((VI)s & ~m);                                                                      \
    }                                                                                              \
    if (act == 3) {                                                                                \
        const VI m = s > six;                                                                      \
        s = (VT)(((VI)s & ~m) | ((VI)six & m));                                                    \
    }

// DWR_PLANE defines NAME, one plane of K x K taps, stride S, VL columns per
// vector: rows[i] is padded row i (or the zero row), wk the plane's K*K
// weights, b its bias, yc its OH x OW output, tmp VL floats of scratch.
// Column blocks go right to left and rows top to bottom, so a full-vector
// store of a row's last block may run on into the next rows: those are
// stored later and overwrite it. Only a store that would leave the plane
// goes through tmp.
#define DWR_PLANE(NAME, VT, VTU, VI, VL, K, S)                                                     \
    AINL void NAME(const float *const *rows, long PL, const float *restrict wk, float b,          \
                   float *restrict yc, int OH, int OW, int act, float *restrict tmp) {             \
        const long end = (long)OH * OW;                                                            \
        const VT zero = {0}, six = zero + 6.0f, bv = zero + b;                                     \
        for (int oh0 = 0; oh0 < OH; oh0 += DWR_R) {                                                \
            const float *const *rr = rows + (long)oh0 * S;                                         \
            for (int ow0 = (OW - 1) / VL * VL; ow0 >= 0; ow0 -= VL) {                              \
                VT acc[DWR_R];                                                                     \
                for (int r = 0; r < DWR_R; r++) acc[r] = bv;                                       \
                _Pragma("GCC unroll 16") for (int i = 0; i < (DWR_R - 1) * S + K; i++) {           \
                    const float *p = rr[i] + ow0;                                                  \
                    _Pragma("GCC unroll 8") for (int kw = 0; kw < K; kw++) {                       \
                        const VT v = *(const VTU *)(p + (kw % S) * PL + kw / S);                   \
                        _Pragma("GCC unroll 8") for (int r = 0; r < DWR_R; r++) {                  \
                            const int kh = i - r * S;                                              \
                            if (kh >= 0 && kh < K) acc[r] += v * wk[kh * K + kw];                  \
                        }                                                                          \
                    }                                                                              \
                }                                                                                  \
                for (int r = 0; r < DWR_R && oh0 + r < OH; r++) {                                  \
                    VT s = acc[r];                                                                 \
                    DWR_ACT(VT, VI, s, act, zero, six)                                             \
                    const long at = (long)(oh0 + r) * OW + ow0;                                    \
                    if (at + VL <= end) {                                                          \
                        *(VTU *)(yc + at) = s;                                                     \
                    } else {                                                                       \
                        *(VTU *)tmp = s;                                                           \
                        const int n = OW - ow0 < VL ? OW - ow0 : VL;                               \
                        for (int j = 0; j < n; j++) yc[at + j] = tmp[j];                           \
                    }                                                                              \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

#define DWR_PLANES(K, S)                                                                           \
    DWR_PLANE(dwr16_k##K##_s##S, f16, f16u, i16, 16, K, S)                                         \
    DWR_PLANE(dwr8_k##K##_s##S, f8, f8u, i8, 8, K, S)                                              \
    DWR_PLANE(dwr4_k##K##_s##S, f4, f4u, i4, 4, K, S)
DWR_PLANES(3, 1)
DWR_PLANES(3, 2)
DWR_PLANES(5, 1)
DWR_PLANES(5, 2)
DWR_PLANES(7, 1)
DWR_PLANES(7, 2)

#define DWR_CASE(K, S)                                                                             \
    case K * 10 + S:                                                                               \
        if (VL == 16) dwr16_k##K##_s##S(rows, PL, wc, b, yc, OH, OW, act, tmp);                    \
        else if (VL == 8) dwr8_k##K##_s##S(rows, PL, wc, b, yc, OH, OW, act, tmp);                 \
        else dwr4_k##K##_s##S(rows, PL, wc, b, yc, OH, OW, act, tmp);                              \
        break;

// dw_rows_f32 is dwconv_f32 for the shapes of dw_rows_ok, with the fused
// activation act applied; pad holds dw_rows_floats(...) floats.
GK_ISA_BODY void dw_rows_f32_body(const float *x, const float *w, const float *bias, float *y, int NC,
                                  int C, int H, int W, int K, int S, int PH, int PW, int OH, int OW,
                                  int c0, int act, float *pad) {
    // the level's vector width (no wider types split by GCC), 8 for narrow planes
    const int isa = gk_nn_isa();
    const int VL = isa == GK_ISA_AVX512 ? (OW <= 8 ? 8 : 16) : isa == GK_ISA_AVX2 ? 8 : 4;
    const long PL = dwr_pl(K, S, OW, VL), LD = S * PL;
    const int NR = ((OH + DWR_R - 1) / DWR_R * DWR_R - 1) * S + K; // rows the blocks read
    float *zrow = pad, *tmp = pad + LD, *buf = pad + LD + 16;
    memset(zrow, 0, sizeof(float) * LD);
    // the padding columns of the row buffers are the same for every plane
    memset(buf, 0, sizeof(float) * LD * H);
    const float *rows[NR];
    for (int i = 0; i < NR; i++) {
        const int ih = i - PH;
        rows[i] = ih >= 0 && ih < H ? buf + ih * LD : zrow;
    }
    const int h0 = PH < 0 ? -PH : 0, h1 = NR - PH < H ? NR - PH : H; // input rows read
    for (int nc = 0; nc < NC; nc++) {
        const int c = (c0 + nc) % C;
        const float *xc = x + (long)nc * H * W, *wc = w + (long)c * K * K;
        float *yc = y + (long)nc * OH * OW;
        const float b = bias ? bias[c] : 0.0f;
        for (int h = h0; h < h1; h++) {
            if (S == 1) dwr_fill(buf + h * LD, xc + (long)h * W, W, PW, PL, 1);
            else dwr_fill(buf + h * LD, xc + (long)h * W, W, PW, PL, 2);
        }
        switch (K * 10 + S) {
            DWR_CASE(3, 1)
            DWR_CASE(3, 2)
            DWR_CASE(5, 1)
            DWR_CASE(5, 2)
            DWR_CASE(7, 1)
            DWR_CASE(7, 2)
        }
    }
}
GK_ISA_VARIANTS_FMA(gk_nn_isa(), dw_rows_f32, (const float *x, const float *w, const float *bias, float *y,
                    int NC, int C, int H, int W, int K, int S, int PH, int PW, int OH, int OW, int c0,
                    int act, float *pad),
                    (x, w, bias, y, NC, C, H, W, K, S, PH, PW, OH, OW, c0, act, pad))
