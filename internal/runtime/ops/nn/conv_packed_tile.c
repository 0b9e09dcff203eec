// Helpers of the packed-weight convolution (conv_packed.go): per-tile
// im2col and the transpose of the pixel-major GEMM tile into NCHW.
#include <immintrin.h>
#include <string.h>

#include "conv_packed_tile.h"
#include "conv_stem.h"
#include "isa.h"
#include "conv_act.h"


GK_ISA_BODY void im2col_tile_generic_f32_body(const float *x, float *col, int C, int H, int W, int KH, int KW,
                                      int SH, int SW, int PH, int PW, int DH, int DW, int OW, int p0, int mt, int ld) {
    for (int c = 0; c < C; c++) {
        const float *xc = x + (long)c * H * W;
        for (int kh = 0; kh < KH; kh++)
            for (int kw = 0; kw < KW; kw++) {
                float *d = col;
                col += ld;
                int oh = p0 / OW, ow = p0 % OW;
                for (int q = 0; q < mt;) {
                    // one output row segment: pixels (oh, ow .. ow+n-1)
                    int n = OW - ow < mt - q ? OW - ow : mt - q;
                    int ih = oh * SH - PH + kh * DH;
                    if (ih < 0 || ih >= H) {
                        memset(d + q, 0, (size_t)n * sizeof(float));
                    } else {
                        const float *xr = xc + (long)ih * W;
                        int iw0 = ow * SW - PW + kw * DW;
                        // valid ow range: 0 <= iw0 + j*SW < W
                        int j0 = 0, j1 = n;
                        if (iw0 < 0) j0 = (-iw0 + SW - 1) / SW;
                        if (j0 > n) j0 = n;
                        int last = W - 1 - iw0; // j*SW <= last
                        if (last < 0) j1 = 0;
                        else if (last / SW + 1 < n) j1 = last / SW + 1;
                        if (j1 < j0) j1 = j0;
                        float *dq = d + q;
                        for (int j = 0; j < j0; j++) dq[j] = 0;
                        if (SW == 1) {
                            memcpy(dq + j0, xr + iw0 + j0, (size_t)(j1 - j0) * sizeof(float));
                        } else if (SW == 2) { // constant stride: gcc vectorises it with permutes (a 3x3 stride-2
                                              // stem spent 42% of its time here with the generic loop)
                            const float *s = xr + iw0;
                            for (int j = j0; j < j1; j++) dq[j] = s[2 * j];
                        } else {
                            const float *s = xr + iw0;
                            for (int j = j0; j < j1; j++) dq[j] = s[(long)j * SW];
                        }
                        for (int j = j1; j < n; j++) dq[j] = 0;
                    }
                    q += n;
                    ow += n;
                    if (ow == OW) { ow = 0; oh++; }
                }
            }
    }
}
GK_ISA_VARIANTS(gk_nn_isa(), im2col_tile_generic_f32, (const float *x, float *col, int C, int H, int W, int KH, int KW,
                int SH, int SW, int PH, int PW, int DH, int DW, int OW, int p0, int mt, int ld),
                (x, col, C, H, W, KH, KW, SH, SW, PH, PW, DH, DW, OW, p0, mt, ld))

// The stride-2 unfold. Column tap kw of output column ow reads input column
// 2*ow + kw - PW: with the input rows split into their even and odd columns
// (conv_fill_phases), that is index ow + kw/2 of phase kw%2, so each row
// segment of the unfold is a plain copy, and each input row is split once
// per channel and tile instead of gathered by stride KH*KW times. resnet50's
// 3x3 stride-2 convs spent 27% of their time in the strided unfold (AVX-512;
// at the AVX2 level, where the GEMM takes twice as long, the split made no
// measurable difference: 2.81-2.99 against 2.91-3.09 ms on 128 -> 128 onto
// 28x28).
#define S2_SCRATCH 8192 // floats of split rows per channel (the stack buffer)
#define S2_MIN_OW 12 // output rows of 7 (resnet50 onto 7x7) were faster gathered: 1.52-1.56 against 1.80 ms

static int s2_geometry(int KH, int KW, int SH, int PH, int DH, int OW, int p0, int mt, int *ih0, int *rows, int *wq) {
    int oh0 = p0 / OW, oh1 = (p0 + mt - 1) / OW;
    *ih0 = oh0 * SH - PH;
    *rows = (oh1 - oh0) * SH + (KH - 1) * DH + 1;
    *wq = (OW + (KW - 1) / 2 + 15) & ~15; // the phase rows' stride: whole vectors for split2_512
    return (long)*rows * 2 * *wq <= S2_SCRATCH;
}

#define AVX512 __attribute__((target("avx512f")))
#define AVX2 __attribute__((target("avx2,fma")))

// split2_512 is conv_fill_phases for one channel, stride 2, 16 columns at a
// time: the 32 padded columns 2j .. 2j+31 (masked loads, zeros outside the
// row) go to 16 even and 16 odd ones by two permutes. wq16 is wq rounded up
// to 16, the phase rows' stride.
static AVX512 void split2_512(const float *xc, float *ph, int H, int W, int PW, int ih0, int rows, int wq16) {
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    for (int r = 0; r < rows; r++) {
        int ih = ih0 + r;
        float *e = ph + (long)r * 2 * wq16, *o = e + wq16;
        if (ih < 0 || ih >= H) { // a padding row reads as zeros
            memset(e, 0, sizeof(float) * 2 * wq16);
            continue;
        }
        const float *xr = xc + (long)ih * W;
        for (int j = 0; j < wq16; j += 16) {
            int c0 = 2 * j - PW; // input column of padded column 2j
            // lanes i with 0 <= c0 + i < W
            __m512i lo = _mm512_set1_epi32(-c0), hi = _mm512_set1_epi32(W - c0);
            __m512i l1 = _mm512_add_epi32(lane, _mm512_set1_epi32(16));
            __mmask16 m0 = _mm512_cmpge_epi32_mask(lane, lo) & _mm512_cmplt_epi32_mask(lane, hi);
            __mmask16 m1 = _mm512_cmpge_epi32_mask(l1, lo) & _mm512_cmplt_epi32_mask(l1, hi);
            __m512 v0 = _mm512_maskz_loadu_ps(m0, xr + c0), v1 = _mm512_maskz_loadu_ps(m1, xr + c0 + 16);
            _mm512_storeu_ps(e + j, _mm512_permutex2var_ps(v0, even, v1));
            _mm512_storeu_ps(o + j, _mm512_permutex2var_ps(v0, odd, v1));
        }
    }
}

static inline AVX512 void copy512(float *d, const float *s, int n) {
    for (int i = 0; i < n; i += 16) {
        __mmask16 m = n - i >= 16 ? 0xFFFF : (__mmask16)((1u << (n - i)) - 1);
        _mm512_mask_storeu_ps(d + i, m, _mm512_maskz_loadu_ps(m, s + i));
    }
}

static inline AVX2 void copy2(float *d, const float *s, int n) {
    int i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(d + i, _mm256_loadu_ps(s + i));
    for (; i < n; i++) d[i] = s[i];
}

// IM2COL_S2_BODY is the unfold with the split rows of s2_geometry (ih0,
// rows, wq), with the level's row copy and row split.
#define IM2COL_S2_BODY(COPY, SPLIT)                                                                            \
    float ph[S2_SCRATCH];                                                                                      \
    for (int c = 0; c < C; c++) {                                                                              \
        SPLIT(x + (long)c * H * W, ph, H, W, PW, ih0, rows, wq);                                               \
        for (int kh = 0; kh < KH; kh++)                                                                        \
            for (int kw = 0; kw < KW; kw++) {                                                                  \
                float *d = col;                                                                                \
                col += ld;                                                                                     \
                const float *src = ph + (kw & 1) * wq + (kw >> 1);                                             \
                int oh = p0 / OW, ow = p0 % OW;                                                                \
                for (int q = 0; q < mt;) {                                                                     \
                    int n = OW - ow < mt - q ? OW - ow : mt - q;                                               \
                    COPY(d + q, src + (long)((oh - p0 / OW) * SH + kh * DH) * 2 * wq + ow, n);                 \
                    q += n;                                                                                    \
                    ow = 0;                                                                                    \
                    oh++;                                                                                      \
                }                                                                                              \
            }                                                                                                  \
    }

// split2_2 is split2_512 at the AVX2 level: conv_fill_phases for one
// channel, with the padding rows zeroed.
static void split2_2(const float *xc, float *ph, int H, int W, int PW, int ih0, int rows, int wq) {
    conv_fill_phases(xc, ph, 1, H, W, PW, 2, ih0, rows, wq);
    for (int r = 0; r < rows; r++)
        if (ih0 + r < 0 || ih0 + r >= H) memset(ph + (long)r * 2 * wq, 0, sizeof(float) * 2 * wq);
}

static AVX512 void im2col_s2_512(const float *x, float *col, int C, int H, int W, int KH, int KW, int SH,
                                 int PW, int DH, int OW, int p0, int mt, int ld, int ih0, int rows, int wq) {
    IM2COL_S2_BODY(copy512, split2_512)
}

static AVX2 void im2col_s2_2(const float *x, float *col, int C, int H, int W, int KH, int KW, int SH,
                             int PW, int DH, int OW, int p0, int mt, int ld, int ih0, int rows, int wq) {
    IM2COL_S2_BODY(copy2, split2_2)
}

void im2col_tile_f32(const float *x, float *col, int C, int H, int W, int KH, int KW, int SH, int SW, int PH, int PW,
                     int DH, int DW, int OW, int p0, int mt, int ld) {
    int level = gk_nn_isa(), ih0, rows, wq;
    // Kernels at least 2 wide reuse a split row (a 1x1 stride-2 conv
    // gathers each input once either way).
    if (SW == 2 && DW == 1 && KW >= 2 && OW >= S2_MIN_OW && mt > 0 && level >= GK_ISA_AVX2 &&
        s2_geometry(KH, KW, SH, PH, DH, OW, p0, mt, &ih0, &rows, &wq)) {
        if (level >= GK_ISA_AVX512) im2col_s2_512(x, col, C, H, W, KH, KW, SH, PW, DH, OW, p0, mt, ld, ih0, rows, wq);
        else im2col_s2_2(x, col, C, H, W, KH, KW, SH, PW, DH, OW, p0, mt, ld, ih0, rows, wq);
        return;
    }
    im2col_tile_generic_f32(x, col, C, H, W, KH, KW, SH, SW, PH, PW, DH, DW, OW, p0, mt, ld);
}

// t16x16_512 transposes a full 16 x 16 block (tile rows i0.., columns c0..)
// in registers: 2 x 32 shuffles instead of 256 scalar strided moves.
__attribute__((target("avx512f"))) static void t16x16_512(const float *t, long ldt, float *y, long ldy,
                                                          const float *bias, const float *z) {
    __m512 r[16], a[16], b[16];
    for (int i = 0; i < 16; i++) r[i] = _mm512_loadu_ps(t + (long)i * ldt);
    for (int k = 0; k < 8; k++) {
        a[2 * k] = _mm512_unpacklo_ps(r[2 * k], r[2 * k + 1]);
        a[2 * k + 1] = _mm512_unpackhi_ps(r[2 * k], r[2 * k + 1]);
    }
    // b[4k+j], 128-bit lane L: column 4L+j of rows 4k..4k+3
    for (int k = 0; k < 4; k++) {
        b[4 * k + 0] = _mm512_shuffle_ps(a[4 * k + 0], a[4 * k + 2], 0x44);
        b[4 * k + 1] = _mm512_shuffle_ps(a[4 * k + 0], a[4 * k + 2], 0xEE);
        b[4 * k + 2] = _mm512_shuffle_ps(a[4 * k + 1], a[4 * k + 3], 0x44);
        b[4 * k + 3] = _mm512_shuffle_ps(a[4 * k + 1], a[4 * k + 3], 0xEE);
    }
    for (int j = 0; j < 4; j++) {
        __m512 c0 = _mm512_shuffle_f32x4(b[j], b[4 + j], 0x88);
        __m512 c1 = _mm512_shuffle_f32x4(b[j], b[4 + j], 0xDD);
        __m512 c2 = _mm512_shuffle_f32x4(b[8 + j], b[12 + j], 0x88);
        __m512 c3 = _mm512_shuffle_f32x4(b[8 + j], b[12 + j], 0xDD);
        __m512 o[4] = {_mm512_shuffle_f32x4(c0, c2, 0x88), _mm512_shuffle_f32x4(c1, c3, 0x88),
                       _mm512_shuffle_f32x4(c0, c2, 0xDD), _mm512_shuffle_f32x4(c1, c3, 0xDD)};
        for (int l = 0; l < 4; l++) {
            int c = 4 * l + j;
            __m512 v = o[l];
            if (bias) v = _mm512_add_ps(v, _mm512_set1_ps(bias[c]));
            if (z) v = _mm512_add_ps(v, _mm512_loadu_ps(z + (long)c * ldy));
            _mm512_storeu_ps(y + (long)c * ldy, v);
            __builtin_prefetch(y + (long)c * ldy + 16, 1, 3); // next block's line of this row: 16 rows are too many streams to prefetch
        }
    }
}

static void tile_scalar(const float *tile, int ldt, float *y, const float *bias, const float *z, int i0, int i1,
                        int c0, int c1, long ldy, long p0) {
    for (int c = c0; c < c1; c++) {
        float bv = bias ? bias[c] : 0.0f;
        float *yr = y + (long)c * ldy + p0;
        const float *t = tile + c;
        if (z) {
            const float *zr = z + (long)c * ldy + p0;
            for (int i = i0; i < i1; i++) yr[i] = t[(long)i * ldt] + bv + zr[i];
        } else {
            for (int i = i0; i < i1; i++) yr[i] = t[(long)i * ldt] + bv;
        }
    }
}

// Transposes in 16 x 16 blocks so both the tile rows and the output rows are
// touched a cache line at a time.
void tile_to_nchw_f32(const float *tile, int ldt, float *y, const float *bias, const float *z, int mt, int m, long ldy, long p0,
                      int act) {
    enum { B = 16 };
    const int avx512 = gk_nn_isa() >= GK_ISA_AVX512;
    for (int c0 = 0; c0 < m; c0 += B) {
        int c1 = c0 + B < m ? c0 + B : m;
        for (int i0 = 0; i0 < mt; i0 += B) {
            int i1 = i0 + B < mt ? i0 + B : mt;
            if (avx512 && c1 - c0 == B && i1 - i0 == B)
                t16x16_512(tile + (long)i0 * ldt + c0, ldt, y + (long)c0 * ldy + p0 + i0, ldy, bias ? bias + c0 : 0,
                           z ? z + (long)c0 * ldy + p0 + i0 : 0);
            else
                tile_scalar(tile, ldt, y, bias, z, i0, i1, c0, c1, ldy, p0);
        }
        if (act) epi_rows_f32(y + (long)c0 * ldy + p0, 0, c1 - c0, mt, ldy, act); // these rows are in L1
    }
}
