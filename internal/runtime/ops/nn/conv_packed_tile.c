// Helpers of the packed-weight convolution (conv_packed.go): per-tile
// im2col and the transpose of the pixel-major GEMM tile into NCHW.
#include <string.h>

#include "conv_packed_tile.h"
#include "isa.h"
#include "conv_act.h"


GK_ISA_BODY void im2col_tile_f32_body(const float *x, float *col, int C, int H, int W, int KH, int KW,
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
GK_ISA_VARIANTS(gk_nn_isa(), im2col_tile_f32, (const float *x, float *col, int C, int H, int W, int KH, int KW,
                int SH, int SW, int PH, int PW, int DH, int DW, int OW, int p0, int mt, int ld),
                (x, col, C, H, W, KH, KW, SH, SW, PH, PW, DH, DW, OW, p0, mt, ld))

#include <immintrin.h>

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
