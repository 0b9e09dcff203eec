// 3x3 depthwise QLinearConv on AVX-512 VNNI: integer sums with vpdpbusd,
// requantized in registers. See gk_qdw3x3_vnni in qgemm.h.
//
// One channel at a time, its bytes are copied once into a padded plane
// (the padding is x's zero point, signed bytes flipped to unsigned with the
// zero point shifted alike), so that every window reads real bytes and the
// zero point comes off as one constant per channel: sum (x - xz) * w' =
// sum x * w' - xz * sum w'. A vpdpbusd lane adds four byte products; its
// four bytes are one column of four consecutive plane rows, the weight
// dword the three row taps of one column tap (and a zero). At stride 1 the
// same four rows serve two output rows (taps 0-2 and 1-3), so two output
// rows of 16 columns cost one image vector (two more by valignd) and six
// vpdpbusd, where the float kernels spend nine fused multiply-adds per row. At stride 2 the rows'
// even and odd columns go to two images (column tap 0 and 2 read the even
// one, tap 1 the odd one): three vpdpbusd per 16 outputs.
#include "qgemm.h"
#include "isa.h"
#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

#define QDV_T __attribute__((target("avx512f,avx512bw,avx512vnni")))

// qdv_rq requantizes 16 int32 sums (bias and zero-point correction already
// in b) as requant_avx512 does and stores the first n bytes.
QDV_T static inline __attribute__((always_inline)) void qdv_rq(__m512i acc, __m512i b, __m512 m, __m512 fz, __m512 flo,
                                                               __m512 fhi, __mmask16 k, uint8_t *y) {
    __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(acc, b)), m);
    __m512 r = _mm512_add_ps(_mm512_roundscale_ps(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), fz);
    r = _mm512_min_ps(_mm512_max_ps(r, flo), fhi);
    _mm512_mask_cvtepi32_storeu_epi8(y, k, _mm512_cvtps_epi32(r));
}

// qdv_quad: columns j..j+15 of plane rows 0-3 from p0 as dwords, byte t
// from row t (what vpdpbusd multiplies by a weight dword).
QDV_T static inline __attribute__((always_inline)) __m512i qdv_quad(const uint8_t *p0, int pw, int j) {
    __m512i q = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(p0 + j)));
    q = _mm512_or_si512(q, _mm512_slli_epi32(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(p0 + pw + j))), 8));
    q = _mm512_or_si512(q, _mm512_slli_epi32(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(p0 + 2 * pw + j))), 16));
    return _mm512_or_si512(q, _mm512_slli_epi32(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(p0 + 3 * pw + j))), 24));
}

// qdv_pairs: the stride-2 form, output columns j..j+15: *ev the four rows'
// even columns 2j.., *od the odd ones (16 byte pairs of each row widened
// to dwords: the low byte is the even column, the high byte the odd one).
QDV_T static inline __attribute__((always_inline)) void qdv_pairs(const uint8_t *p0, int pw, int j, __m512i lowb,
                                                                  __m512i *ev, __m512i *od) {
    __m512i e = _mm512_setzero_si512(), o = _mm512_setzero_si512();
    for (int t = 0; t < 4; t++) {
        __m512i u = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(p0 + (size_t)t * pw + 2 * j)));
        e = _mm512_or_si512(e, _mm512_slli_epi32(_mm512_and_si512(u, lowb), 8 * t));
        o = _mm512_or_si512(o, _mm512_slli_epi32(_mm512_srli_epi32(u, 8), 8 * t));
    }
    *ev = e;
    *od = o;
}

static int qdv_weights_fit(const uint8_t *w, int wsigned, const int32_t *wz, int c0, int c1) {
    for (int c = c0; c < c1; c++)
        for (int t = 0; t < 9; t++) {
            int v = (wsigned ? (int)(int8_t)w[c * 9 + t] : (int)w[c * 9 + t]) - wz[c];
            if (v < -128 || v > 127) return 0;
        }
    return 1;
}

static int qdv_geometry(const int *geo) {
    return gk_qconv_vnni_ok() && geo[0] == 1 && geo[3] == 1 && geo[15] == 1 && geo[4] == 3 && geo[5] == 3 &&
           geo[13] == 1 && geo[14] == 1 && (geo[7] == 1 || geo[7] == 2) && geo[8] == geo[7];
}


QDV_T static void qdv_channels(const uint8_t *x, int xsigned, const uint8_t *w, int wsigned, const int32_t *wz, int xz,
                               const int *geo, int c0, int c1, const gk_qepi *e, int32_t *yacc) {
    const int ih = geo[1], iw = geo[2], s = geo[7], pt = geo[10], pl = geo[11], oh = geo[16], ow = geo[17];
    const int owp = (ow + 15) & ~15;
    const int rows = (oh - 1) * s + 4; // the last block's fourth row included
    int pw = s * (owp + 16) + 64;
    if (pw < pl + iw) pw = pl + iw;
    const int flip = xsigned ? 0x80 : 0;
    const int xzu = xz + flip;
    const long iv = (long)ih * iw, ov = (long)oh * ow;
    uint8_t *pp = malloc((size_t)rows * (size_t)pw);
    memset(pp, xzu, (size_t)rows * (size_t)pw);
    const __m512 fz = _mm512_set1_ps((float)e->qzp), flo = _mm512_set1_ps((float)e->qlo),
                 fhi = _mm512_set1_ps((float)e->qhi);
    const __m512i lowb = _mm512_set1_epi32(0xFF);
    for (int c = c0; c < c1; c++) {
        const uint8_t *xc = x + c * iv;
        int wv[9], wsum = 0;
        for (int t = 0; t < 9; t++) {
            wv[t] = (wsigned ? (int)(int8_t)w[c * 9 + t] : (int)w[c * 9 + t]) - wz[c];
            wsum += wv[t];
        }
        // weight dwords per column tap b: bytes (w'[0][b], w'[1][b], w'[2][b], 0),
        // and shifted one row down for the second output row of a block
        __m512i wlo[3], whi[3];
        for (int b = 0; b < 3; b++) {
            uint32_t d = (uint32_t)(uint8_t)wv[b] | (uint32_t)(uint8_t)wv[3 + b] << 8 | (uint32_t)(uint8_t)wv[6 + b] << 16;
            wlo[b] = _mm512_set1_epi32((int)d);
            whi[b] = _mm512_set1_epi32((int)(d << 8));
        }
        const __m512i bv = _mm512_set1_epi32((int32_t)((uint32_t)(e->qbias ? e->qbias[c] : 0) - (uint32_t)(xzu * wsum)));
        const __m512 mv = _mm512_set1_ps(e->scale[e->scale_mode == GK_QEPI_PER_ROW ? c : 0]);
        uint8_t *yc = e->qout + ((yacc + c * ov) - e->cbase);
        // (the padding rows and columns were filled once: only x's bytes change)
        for (int r = 0; r < rows; r++) {
            uint8_t *pr = pp + (size_t)r * pw;
            const int yy = r - pt;
            if (yy < 0 || yy >= ih) continue;
            const uint8_t *xr = xc + (long)yy * iw;
            if (flip)
                for (int i = 0; i < iw; i++) pr[pl + i] = xr[i] ^ 0x80;
            else
                memcpy(pr + pl, xr, (size_t)iw);
        }
        if (s == 1) {
            for (int o = 0; o < oh; o += 2) {
                const uint8_t *p0 = pp + (size_t)o * pw;
                const int two = o + 1 < oh;
                __m512i cur = qdv_quad(p0, pw, 0);
                for (int j = 0; j < ow; j += 16) {
                    // column taps 1 and 2 from registers (valignd): loads
                    // from an image just stored, one and two dwords off,
                    // missed store forwarding (15% of a 14x14 plane's time)
                    const __m512i nxt = qdv_quad(p0, pw, j + 16);
                    const __m512i v1 = _mm512_alignr_epi32(nxt, cur, 1), v2 = _mm512_alignr_epi32(nxt, cur, 2);
                    __m512i a0 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), cur, wlo[0]);
                    __m512i a1 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), cur, whi[0]);
                    a0 = _mm512_dpbusd_epi32(a0, v1, wlo[1]);
                    a1 = _mm512_dpbusd_epi32(a1, v1, whi[1]);
                    a0 = _mm512_dpbusd_epi32(a0, v2, wlo[2]);
                    a1 = _mm512_dpbusd_epi32(a1, v2, whi[2]);
                    const __mmask16 k = ow - j >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (ow - j)) - 1);
                    qdv_rq(a0, bv, mv, fz, flo, fhi, k, yc + (long)o * ow + j);
                    if (two) qdv_rq(a1, bv, mv, fz, flo, fhi, k, yc + (long)(o + 1) * ow + j);
                    cur = nxt;
                }
            }
        } else {
            for (int o = 0; o < oh; o++) {
                const uint8_t *p0 = pp + (size_t)(2 * o) * pw;
                __m512i ev, od, ev2, od2;
                qdv_pairs(p0, pw, 0, lowb, &ev, &od);
                for (int j = 0; j < ow; j += 16) {
                    qdv_pairs(p0, pw, j + 16, lowb, &ev2, &od2);
                    __m512i a = _mm512_dpbusd_epi32(_mm512_setzero_si512(), ev, wlo[0]);
                    a = _mm512_dpbusd_epi32(a, od, wlo[1]);
                    a = _mm512_dpbusd_epi32(a, _mm512_alignr_epi32(ev2, ev, 1), wlo[2]);
                    const __mmask16 k = ow - j >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (ow - j)) - 1);
                    qdv_rq(a, bv, mv, fz, flo, fhi, k, yc + (long)o * ow + j);
                    ev = ev2;
                    od = od2;
                }
            }
        }
    }
    free(pp);
}

int gk_qdw3x3_vnni_ok(const int *geo, const uint8_t *w, int wsigned, const int32_t *wz, int c) {
    return qdv_geometry(geo) && qdv_weights_fit(w, wsigned, wz, 0, c);
}

int gk_qdw3x3_vnni(const uint8_t *x, int xsigned, const uint8_t *w, int wsigned, const int32_t *wz, int xz,
                   const int *geo, int c0, int c1, const gk_qepi *e, int32_t *yacc) {
    if (!e || !e->qout || !qdv_geometry(geo) || !qdv_weights_fit(w, wsigned, wz, c0, c1)) return 0;
    qdv_channels(x, xsigned, w, wsigned, wz, xz, geo, c0, c1, e, yacc);
    return 1;
}
