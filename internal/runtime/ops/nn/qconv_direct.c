// Direct 8-bit integer convolutions (no unfold) and the dequantizing
// epilogue of the fused ConvInteger -> Cast -> Mul -> Add [-> Relu] chain.
// See qgemm.h. Integer sums are exact in int32; the epilogue is one float32
// conversion, one multiply and one add per value, never contracted into a
// fused multiply-add (gcc's avx512f target implies fma, and -ffp-contract
// defaults to fast): the pragma covers every function of this file.
#pragma GCC optimize("fp-contract=off")
#include "qgemm.h"
#include "isa.h"
#include "qpack4.h"
#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

#define QD_W 16
// (a .h, included once per vector width: go build rehashes headers, not .inc files)
#define QD_TARGET __attribute__((target("avx512f")))
#include "qconv_direct_w_body.h"
#undef QD_W
#undef QD_TARGET
#define QD_W 8
#define QD_TARGET __attribute__((target("avx2")))
#include "qconv_direct_w_body.h"
#undef QD_W
#undef QD_TARGET
#define QD_W 4
#define QD_TARGET
#include "qconv_direct_w_body.h"
#undef QD_W
#undef QD_TARGET

// gk_u8_to_f32: out[i] = v[i] - z as float32, for n bytes in rows of len
// (rows cycling through nz zero points: one per channel; len 0: one row).
GK_ISA_BODY void gk_u8_to_f32_body(const uint8_t *v, int vsigned, const int32_t *z, int len, int nz, float *out, long n) {
    const long row = len > 0 ? len : n;
    for (long r0 = 0, zi = 0; r0 < n; r0 += row, zi = (zi + 1) % nz) {
        const int32_t zp = z[zi];
        const long e = r0 + row < n ? r0 + row : n;
        if (vsigned)
            for (long i = r0; i < e; i++) out[i] = (float)((int32_t)(int8_t)v[i] - zp);
        else
            for (long i = r0; i < e; i++) out[i] = (float)((int32_t)v[i] - zp);
    }
}
GK_ISA_VARIANTS(gk_nn_isa(), gk_u8_to_f32, (const uint8_t *v, int vsigned, const int32_t *z, int len, int nz, float *out, long n),
                (v, vsigned, z, len, nz, out, n))

// gk_f32_to_i32 converts float32 integers to int32.
GK_ISA_BODY void gk_f32_to_i32_body(const float *y, int32_t *a, long n) {
    for (long i = 0; i < n; i++) a[i] = (int32_t)y[i];
}
GK_ISA_VARIANTS(gk_nn_isa(), gk_f32_to_i32, (const float *y, int32_t *a, long n), (y, a, n))

static void qd_epi_row(const int32_t *acc, int n, float s, int hasb, float b, int relu, float *y) {
    switch (gk_nn_isa()) {
    case GK_ISA_AVX512: qd_epi_row16(acc, n, s, hasb, b, relu, y); break;
    case GK_ISA_AVX2: qd_epi_row8(acc, n, s, hasb, b, relu, y); break;
    default: qd_epi_row4(acc, n, s, hasb, b, relu, y); break;
    }
}

static void qd_epi_cols(const int32_t *acc, int n, const float *s, int scol, const float *b, int bmode, int relu,
                        float *y) {
    switch (gk_nn_isa()) {
    case GK_ISA_AVX512: qd_epi_cols16(acc, n, s, scol, b, bmode, relu, y); break;
    case GK_ISA_AVX2: qd_epi_cols8(acc, n, s, scol, b, bmode, relu, y); break;
    default: qd_epi_cols4(acc, n, s, scol, b, bmode, relu, y); break;
    }
}

static void qd_dw2d(const uint8_t *x, int xsigned, const uint8_t *w, int wsigned, const int32_t *wz, int xz,
                    const int *geo, int c0, int c1, int32_t *yacc, const gk_qepi *e, float *yf) {
    switch (gk_nn_isa()) {
    case GK_ISA_AVX512: qd_dw2d16(x, xsigned, w, wsigned, wz, xz, geo, c0, c1, yacc, e, yf); break;
    case GK_ISA_AVX2: qd_dw2d8(x, xsigned, w, wsigned, wz, xz, geo, c0, c1, yacc, e, yf); break;
    default: qd_dw2d4(x, xsigned, w, wsigned, wz, xz, geo, c0, c1, yacc, e, yf); break;
    }
}

void gk_qepilogue_rows(const int32_t *acc, int rows, int n, int ld, const gk_qepi *e, int r0, int col0, float *y,
                       int ldy) {
    if (e->qout) {
        // requantize in place of the float epilogue: the tile is in L1
        // right after the kernel stored it
        for (int r = 0; r < rows; r++) {
            int32_t *ar = (int32_t *)acc + (int64_t)r * ld;
            int ri = r0 + r;
            if (e->qbias) {
                const uint32_t b = (uint32_t)e->qbias[ri];
                for (int j = 0; j < n; j++) ar[j] = (int32_t)((uint32_t)ar[j] + b);
            }
            gk_requant(ar, n, e->scale + (e->scale_mode == GK_QEPI_PER_ROW ? ri : 0), 0, e->qzp, e->qlo, e->qhi,
                       e->qout + (ar - e->cbase), e->qsigned);
        }
        return;
    }
    for (int r = 0; r < rows; r++) {
        const int32_t *ar = acc + (int64_t)r * ld;
        float *yr = y + (int64_t)r * ldy;
        int ri = r0 + r;
        if (e->scale_mode == GK_QEPI_PER_COL || e->bias_mode == GK_QEPI_PER_COL) {
            // per column (a MatMul's): the other one per tensor or per row
            const int scol = e->scale_mode == GK_QEPI_PER_COL;
            const float *s = scol ? e->scale + col0 : e->scale + (e->scale_mode == GK_QEPI_PER_ROW ? ri : 0);
            const float *b = e->bias;
            if (e->bias_mode == GK_QEPI_PER_COL) b += col0;
            else if (e->bias_mode == GK_QEPI_PER_ROW) b += ri;
            int bm = e->bias_mode == GK_QEPI_PER_ROW ? GK_QEPI_SCALAR : e->bias_mode;
            qd_epi_cols(ar, n, s, scol, b, bm, e->relu, yr);
            continue;
        }
        float s = e->scale[e->scale_mode == GK_QEPI_PER_ROW ? ri : 0];
        int hasb = e->bias_mode != GK_QEPI_NONE;
        float b = hasb ? e->bias[e->bias_mode == GK_QEPI_PER_ROW ? ri : 0] : 0.0f;
        qd_epi_row(ar, n, s, hasb, b, e->relu, yr);
    }
}

void gk_qdw_conv_epi(const uint8_t *x, int xsigned, const uint8_t *w, int wsigned, const int32_t *wz, int xz,
                     const int *geo, int c0, int c1, int32_t *yacc, const gk_qepi *e, float *yf) {
    // the 2-D windows (depth 1 everywhere) directly; others by the generic
    // loop, then the epilogue
    // (qd_dw2d's float32 sums are exact up to 256 taps); e->qout: yacc is
    // the scratch the bytes' indices count in
    if (!yf && gk_qdw3x3_vnni(x, xsigned, w, wsigned, wz, xz, geo, c0, c1, e, yacc)) return;
    if (geo[0] == 1 && geo[3] == 1 && geo[15] == 1 && geo[4] * geo[5] <= 256) {
        qd_dw2d(x, xsigned, w, wsigned, wz, xz, geo, c0, c1, yacc, e, yf);
        return;
    }
    const long ov = (long)geo[15] * geo[16] * geo[17];
    if (!yf) {
        gk_qdw_conv(x, xsigned, w, wsigned, wz, xz, geo, c0, c1, yacc);
        if (e && e->qout)
            for (int c = c0; c < c1; c++) gk_qepilogue_rows(yacc + c * ov, 1, (int)ov, (int)ov, e, c, 0, NULL, (int)ov);
        return;
    }
    // y's float memory holds the int32 sums first, converted in place row
    // by row (same size, each value read before it is written)
    gk_qdw_conv(x, xsigned, w, wsigned, wz, xz, geo, c0, c1, (int32_t *)yf);
    for (int c = c0; c < c1; c++)
        gk_qepilogue_rows((const int32_t *)(yf + c * ov), 1, (int)ov, (int)ov, e, c, 0, yf + c * ov, (int)ov);
}

// ---- Direct VNNI convolution: no unfold ----------------------------------
//
// x of one image and group is laid out once as int8 (uint8 x xor 0x80, as
// packed B) in stride phase images of channel quads: byte t of position
// (phase, quad q, row r, column j) is channel 4q + t at padded row r*sh +
// ph, column j*sw + pw (padding: x's zero point; channels past cg: 0). A
// window tap (a, e) then reads, for 16 consecutive output columns of one
// output row, 64 contiguous bytes of one phase image: exactly a vpdpbusd
// operand. The weights are reordered to k = (tap, quad, t). The sums are
// gk_qgemm's, with the same zero-point epilogue, so the integers are the
// unfold-and-GEMM path's.

static void qdv_dims(int cg, const int *geo, int M, int *c4, int *kv, int *np, int *pr, int *pc, int *kp, int64_t *off) {
    const int kh = geo[4], kw = geo[5], sh = geo[7], sw = geo[8], dh = geo[13], dw = geo[14], oh = geo[16], ow = geo[17];
    *c4 = (cg + 3) / 4;
    *kv = kh * kw;
    *np = sh * sw;
    *pr = oh + ((kh - 1) * dh) / sh;
    *pc = ow + ((kw - 1) * dw) / sw;
    *kp = *kv * *c4 * 4;
    int64_t img = (int64_t)*np * *c4 * *pr * *pc * 4;
    int64_t sums = (int64_t)*np * *pr * *pc * 4;
    int mp = (M + 3) & ~3;
    int64_t a = (int64_t)mp * *kp;
    off[0] = 0;
    off[1] = (img + 63) & ~63;
    off[2] = off[1] + ((sums + 63) & ~63);
    off[3] = off[2] + ((a + 63) & ~63);
    off[4] = off[3] + (int64_t)mp * 4;
}

int64_t gk_qconv_vnni_size(int cg, const int *geo, int M) {
    int c4, kv, np, pr, pc, kp;
    int64_t off[5];
    qdv_dims(cg, geo, M, &c4, &kv, &np, &pr, &pc, &kp, off);
    return off[4];
}

int gk_qconv_vnni_ok(void) {
    __builtin_cpu_init();
    return gk_nn_isa() >= GK_ISA_AVX512 && __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw");
}

void gk_qconv_vnni_prep(const uint8_t *x, int xsigned, int cg, const int *geo, int xz, const uint8_t *w, int wsigned,
                        int M, uint8_t *buf) {
    int c4, kv, np, pr, pc, kp;
    int64_t off[5];
    qdv_dims(cg, geo, M, &c4, &kv, &np, &pr, &pc, &kp, off);
    const int ih = geo[1], iw = geo[2], sh = geo[7], sw = geo[8], pt = geo[10], pl = geo[11];
    const uint8_t flip = xsigned ? 0 : 0x80;
    const int8_t padv = (int8_t)((uint8_t)xz ^ flip);
    int8_t *img = (int8_t *)(buf + off[0]);
    int32_t *sums = (int32_t *)(buf + off[1]);
    uint8_t *ap = buf + off[2];
    int32_t *rowsum = (int32_t *)(buf + off[3]);
    const int64_t iv = (int64_t)ih * iw, qstride = (int64_t)pr * pc * 4;
    for (int p = 0; p < np; p++) {
        const int ph = p / sw, pw = p % sw;
        int32_t *sp = sums + (int64_t)p * pr * pc;
        for (int64_t i = 0; i < (int64_t)pr * pc; i++) sp[i] = 0;
        // valid phase columns: 0 <= j*sw + pw - pl < iw
        int lo = pl - pw <= 0 ? 0 : (pl - pw + sw - 1) / sw;
        int hi = iw + pl - pw <= 0 ? 0 : (iw + pl - pw + sw - 1) / sw;
        if (lo > pc) lo = pc;
        if (hi > pc) hi = pc;
        if (hi < lo) hi = lo;
        for (int q = 0; q < c4; q++) {
            int8_t *iq = img + ((int64_t)p * c4 + q) * qstride;
            for (int r = 0; r < pr; r++) {
                const int yy = r * sh + ph - pt;
                uint32_t *ir = (uint32_t *)(iq + (int64_t)r * pc * 4);
                int32_t *sr = sp + (int64_t)r * pc;
                // the quad's word at a padded position, and its byte sum
                uint32_t padw = 0;
                int32_t pads = 0;
                const uint8_t *xr[4];
                for (int t = 0; t < 4; t++) {
                    const int ch = 4 * q + t;
                    xr[t] = NULL;
                    if (ch < cg) {
                        padw |= (uint32_t)(uint8_t)padv << (8 * t);
                        pads += padv;
                        if (yy >= 0 && yy < ih) xr[t] = x + ch * iv + (int64_t)yy * iw + pw - pl;
                    }
                }
                if (yy < 0 || yy >= ih) {
                    for (int j = 0; j < pc; j++) {
                        ir[j] = padw;
                        sr[j] += pads;
                    }
                    continue;
                }
                for (int j = 0; j < lo; j++) {
                    ir[j] = padw;
                    sr[j] += pads;
                }
                for (int j = hi; j < pc; j++) {
                    ir[j] = padw;
                    sr[j] += pads;
                }
                static const uint8_t zero[1] = {0};
                const uint8_t *x0 = xr[0] ? xr[0] : zero, *x1 = xr[1] ? xr[1] : zero;
                const uint8_t *x2 = xr[2] ? xr[2] : zero, *x3 = xr[3] ? xr[3] : zero;
                const int s0 = xr[0] ? sw : 0, s1 = xr[1] ? sw : 0, s2 = xr[2] ? sw : 0, s3 = xr[3] ? sw : 0;
                const uint8_t f0 = xr[0] ? flip : 0, f1 = xr[1] ? flip : 0, f2 = xr[2] ? flip : 0, f3 = xr[3] ? flip : 0;
                int j = lo;
                if (sw == 1 && xr[0] && xr[1] && xr[2] && xr[3]) {
                    // 16 columns per step: the four channel rows interleaved
                    // into words (SSE2), their signed bytes summed
                    const __m128i vf = _mm_set1_epi8((char)flip);
                    for (; j + 16 <= hi; j += 16) {
                        __m128i a = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(x0 + j)), vf);
                        __m128i b = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(x1 + j)), vf);
                        __m128i d = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(x2 + j)), vf);
                        __m128i f = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(x3 + j)), vf);
                        gk_interleave4x16(a, b, d, f, ir + j, sr + j);
                    }
                }
                for (; j < hi; j++) {
                    uint8_t b0 = x0[(int64_t)j * s0] ^ f0, b1 = x1[(int64_t)j * s1] ^ f1;
                    uint8_t b2 = x2[(int64_t)j * s2] ^ f2, b3 = x3[(int64_t)j * s3] ^ f3;
                    ir[j] = (uint32_t)b0 | (uint32_t)b1 << 8 | (uint32_t)b2 << 16 | (uint32_t)b3 << 24;
                    sr[j] += (int8_t)b0 + (int8_t)b1 + (int8_t)b2 + (int8_t)b3;
                }
            }
        }
    }
    if (!w) return; // the AVX2 rows read weights split at load
    const uint8_t aflip = wsigned ? 0x80 : 0;
    const int mp = (M + 3) & ~3;
    for (int m = 0; m < mp; m++) {
        uint8_t *am = ap + (int64_t)m * kp;
        int32_t s = 0;
        for (int t = 0; t < kv; t++)
            for (int q = 0; q < c4; q++)
                for (int l = 0; l < 4; l++) {
                    const int ch = 4 * q + l;
                    uint8_t v = 0;
                    if (m < M && ch < cg) v = w[((int64_t)m * cg + ch) * kv + t] ^ aflip;
                    am[(t * c4 + q) * 4 + l] = v;
                    s += v;
                }
        rowsum[m] = s;
    }
}

// qdv_requant_tile finishes a 4x64 tile of sums as gk_qepilogue_rows's
// requantizing form computes it (gk_requant's float32 multiply, rounding
// half to even, zero point, clamp), the bytes stored at y (row stride ld).
__attribute__((target("avx512f,avx512bw"))) static inline void qdv_requant_tile(
    __m512i q[4][4], int mr, int ns, const __mmask16 *mk, __m512i zbv, const int32_t *rv, const int32_t *zar,
    const int32_t *cs, int r0, const gk_qepi *e, uint8_t *y, int ld) {
    const __m512 flo = _mm512_set1_ps((float)e->qlo), fhi = _mm512_set1_ps((float)e->qhi);
    const __m512 fz = _mm512_set1_ps((float)e->qzp);
    __m512i csv[4];
    for (int s = 0; s < ns; s++) csv[s] = _mm512_maskz_loadu_epi32(mk[s], cs + 16 * s);
    for (int r = 0; r < mr; r++) {
        const int ri = r0 + r;
        const __m512 sv = _mm512_set1_ps(e->scale[e->scale_mode == GK_QEPI_PER_ROW ? ri : 0]);
        const __m512i off = _mm512_add_epi32(_mm512_mullo_epi32(zbv, _mm512_set1_epi32(rv[r])),
                                             _mm512_set1_epi32((int32_t)(0u - (uint32_t)(e->qbias ? e->qbias[ri] : 0))));
        const __m512i za = _mm512_set1_epi32(zar[r]);
        for (int s = 0; s < ns; s++) {
            __m512i v = _mm512_sub_epi32(_mm512_sub_epi32(q[r][s], off), _mm512_mullo_epi32(csv[s], za));
            __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(v), sv);
            f = _mm512_add_ps(_mm512_roundscale_ps(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), fz);
            f = _mm512_min_ps(_mm512_max_ps(f, flo), fhi);
            _mm512_mask_cvtepi32_storeu_epi8(y + (int64_t)r * ld + 16 * s, mk[s], _mm512_cvtps_epi32(f));
        }
    }
}

__attribute__((target("avx512f,avx512bw,avx512vnni"))) void gk_qconv_vnni_rows(
    const uint8_t *buf, int xsigned, int cg, const int *geo, int xz, int wsigned, const int32_t *wz, int M, int o0,
    int o1, int32_t *c, int ldc, const gk_qepi *e) {
    int c4, kv, np, pr, pc, kp;
    int64_t off[5];
    qdv_dims(cg, geo, M, &c4, &kv, &np, &pr, &pc, &kp, off);
    const int kh = geo[4], kw = geo[5], sh = geo[7], sw = geo[8], dh = geo[13], dw = geo[14], ow = geo[17];
    const int8_t *img = (const int8_t *)(buf + off[0]);
    const int32_t *sums = (const int32_t *)(buf + off[1]);
    const uint8_t *ap = buf + off[2];
    const int32_t *rowsum = (const int32_t *)(buf + off[3]);
    const int64_t qstride = (int64_t)pr * pc * 4;
    const int K = cg * kv;
    const int32_t zb = xz - (xsigned ? 0 : 128);
    // per tap: its phase image's start and the row/column offsets
    int64_t *tbase = malloc(sizeof(int64_t) * (size_t)kv);
    int *trow = malloc(sizeof(int) * (size_t)kv), *tcol = malloc(sizeof(int) * (size_t)kv);
    const int32_t **tsum = malloc(sizeof(int32_t *) * (size_t)kv);
    int32_t *cs = malloc(sizeof(int32_t) * (size_t)(ow + 64));
    for (int a = 0; a < kh; a++)
        for (int b = 0; b < kw; b++) {
            int t = a * kw + b, p = ((a * dh) % sh) * sw + (b * dw) % sw;
            tbase[t] = (int64_t)p * c4 * qstride;
            trow[t] = (a * dh) / sh;
            tcol[t] = (b * dw) / sw;
            tsum[t] = sums + (int64_t)p * pr * pc;
        }
    int32_t zar[4], rv[4];
    for (int o = o0; o < o1; o++) {
        // column sums of this output row: the window's channel sums
        for (int j = 0; j < ow; j++) cs[j] = 0;
        for (int t = 0; t < kv; t++) {
            const int32_t *s = tsum[t] + (int64_t)(o + trow[t]) * pc + tcol[t];
            for (int j = 0; j < ow; j++) cs[j] += s[j];
        }
        for (int m0 = 0; m0 < M; m0 += 4) {
            const int mr = M - m0 < 4 ? M - m0 : 4;
            for (int r = 0; r < 4; r++) {
                int m = m0 + (r < mr ? r : 0);
                zar[r] = wz[m] + (wsigned ? 128 : 0);
                rv[r] = (int32_t)((uint32_t)rowsum[m] - (uint32_t)K * (uint32_t)zar[r]);
            }
            const uint8_t *a0 = ap + (int64_t)m0 * kp;
            for (int j0 = 0; j0 < ow; j0 += 64) {
                const int ncols = ow - j0 < 64 ? ow - j0 : 64;
                const int ns = (ncols + 15) / 16;
                __mmask16 mk[4];
                for (int s = 0; s < 4; s++) {
                    int nc = ncols - 16 * s;
                    mk[s] = nc >= 16 ? (__mmask16)0xFFFF : nc <= 0 ? 0 : (__mmask16)((1u << nc) - 1);
                }
                __m512i q[4][4];
#pragma GCC unroll 4
                for (int r = 0; r < 4; r++)
#pragma GCC unroll 4
                    for (int s = 0; s < 4; s++) q[r][s] = _mm512_setzero_si512();
                for (int t = 0; t < kv; t++) {
                    const int8_t *bt = img + tbase[t] + ((int64_t)(o + trow[t]) * pc + j0 + tcol[t]) * 4;
                    const uint8_t *at = a0 + (int64_t)t * c4 * 4;
                    for (int g = 0; g < c4; g++) {
                        const int8_t *bg = bt + (int64_t)g * qstride;
                        __m512i wv[4];
#pragma GCC unroll 4
                        for (int s = 0; s < 4; s++) wv[s] = _mm512_maskz_loadu_epi32(mk[s], bg + 64 * s);
#pragma GCC unroll 4
                        for (int r = 0; r < 4; r++) {
                            int32_t xa;
                            memcpy(&xa, at + (int64_t)r * kp + g * 4, 4);
                            __m512i av = _mm512_set1_epi32(xa);
#pragma GCC unroll 4
                            for (int s = 0; s < 4; s++) q[r][s] = _mm512_dpbusd_epi32(q[r][s], av, wv[s]);
                        }
                    }
                }
                __m512i zbv = _mm512_set1_epi32(zb);
                if (e && e->qout && e->scale_mode != GK_QEPI_PER_COL) {
                    // requantized in registers: storing the int32 tile with
                    // masked stores and reading it back stalled every load
                    // (no store forwarding from masked stores), 3x the
                    // convolution's own time on the shallow 1x1 convs
                    qdv_requant_tile(q, mr, ns, mk, zbv, rv, zar, cs + j0, m0, e,
                                     e->qout + ((c + (int64_t)m0 * ldc + (int64_t)o * ow + j0) - e->cbase), ldc);
                    continue;
                }
#pragma GCC unroll 4
                for (int s = 0; s < 4; s++) {
                    if (s >= ns) break;
                    __m512i csv = _mm512_maskz_loadu_epi32(mk[s], cs + j0 + 16 * s);
#pragma GCC unroll 4
                    for (int r = 0; r < 4; r++) {
                        if (r >= mr) break;
                        __m512i v = _mm512_sub_epi32(q[r][s], _mm512_mullo_epi32(zbv, _mm512_set1_epi32(rv[r])));
                        v = _mm512_sub_epi32(v, _mm512_mullo_epi32(csv, _mm512_set1_epi32(zar[r])));
                        _mm512_mask_storeu_epi32(c + (int64_t)(m0 + r) * ldc + (int64_t)o * ow + j0 + 16 * s, mk[s], v);
                    }
                }
                if (e) {
                    int32_t *cc = c + (int64_t)m0 * ldc + (int64_t)o * ow + j0;
                    gk_qepilogue_rows(cc, mr, ncols, ldc, e, m0, 0, (float *)cc, ldc);
                }
            }
        }
    }
    free(tbase);
    free(trow);
    free(tcol);
    free(tsum);
    free(cs);
}

// ---- Direct AVX2 convolution: vpmaddubsw, no unfold -----------------------
//
// The VNNI layout above (gk_qconv_vnni_prep's phase images of channel quads,
// weights given as NULL) read by vpmaddubsw tiles of 6 output channels x 16
// output columns: a window tap's 16 columns are 64 contiguous bytes, the
// int8 b' turned into b'' = b' + 128 by one xor. The weights are reordered
// to the same k = (tap, quad, t) and split once per session into a safe part
// and residuals (gk_qconv_direct_split; gk_qgemm_split_a's rule, qgemm.c),
// so the sums are exact and the zero-point identity is qgemm.c's:
//   sum a' b' = sum a'' b'' - 128 rowsum + 128 colsum + 16384 K.

int gk_qconv_avx2_ok(void) { return gk_nn_isa() >= GK_ISA_AVX2 && !gk_qconv_vnni_ok(); }

int gk_qconv_direct_split(const uint8_t *w, int wsigned, int M, int cg, int kv, int8_t *sa, int32_t *rowsum,
                          int32_t *roff, int32_t *rk, int16_t *rv, int cap) {
    const int c4 = (cg + 3) / 4, kp = kv * c4 * 4;
    const uint8_t aflip = wsigned ? 0x80 : 0;
    int n = 0;
    for (int m = 0; m < M; m++) {
        int8_t *sm = sa + (int64_t)m * kp;
        int32_t sum = 0;
        roff[m] = n;
        for (int k = 0; k < kp; k += 2) {
            int val[2];
            for (int h = 0; h < 2; h++) {
                const int kk = k + h, t = kk / (c4 * 4), ch = kk % (c4 * 4);
                val[h] = 0;
                if (ch < cg) {
                    uint8_t a1 = w[((int64_t)m * cg + ch) * kv + t] ^ aflip;
                    sum += a1;
                    val[h] = (int)a1 - 128;
                }
            }
            int u = val[0], v = val[1], second;
            int ex = gk_qsplit_pair(&u, &v, &second), at = k + second;
            if (ex) {
                if (n >= cap) return -1;
                rk[n] = at; // int32: k passes 32767 at 3x3 x 3641 channels
                rv[n] = (int16_t)ex;
                n++;
            }
            sm[k] = (int8_t)u;
            sm[k + 1] = (int8_t)v;
        }
        rowsum[m] = sum;
    }
    roff[M] = n;
    return n;
}

// qda_tile: the main sums of 6 rows (ar) x 16 consecutive flat positions
// from img (flat position f of a phase image is f*4 bytes in), into out.
__attribute__((target("avx2"), noinline)) static void qda_tile(const int8_t *img, const int64_t *toff, int kv, int c4,
                                                               int64_t qstride, const int8_t *const *ar,
                                                               __m256i out[6][2]) {
    const __m256i ones = _mm256_set1_epi16(1);
    // local accumulators: stores through out could alias the byte loads,
    // and gcc then kept the sums in memory
    __m256i q[6][2];
#pragma GCC unroll 6
    for (int r = 0; r < 6; r++) q[r][0] = q[r][1] = _mm256_setzero_si256();
    for (int t = 0; t < kv; t++) {
        const int8_t *bt = img + toff[t];
        const int64_t at = (int64_t)t * c4 * 4;
        if (c4 == 1) { // one quad (a stem's channels): no inner loop
            __m256i b0 = _mm256_loadu_si256((const __m256i *)bt), b1 = _mm256_loadu_si256((const __m256i *)(bt + 32));
#pragma GCC unroll 6
            for (int r = 0; r < 6; r++) {
                int32_t xa;
                memcpy(&xa, ar[r] + at, 4);
                __m256i av = _mm256_set1_epi32(xa);
                q[r][0] = _mm256_add_epi32(q[r][0], _mm256_madd_epi16(_mm256_maddubs_epi16(b0, av), ones));
                q[r][1] = _mm256_add_epi32(q[r][1], _mm256_madd_epi16(_mm256_maddubs_epi16(b1, av), ones));
            }
            continue;
        }
        for (int g = 0; g < c4; g++) {
            const int8_t *bg = bt + (int64_t)g * qstride;
            __m256i b0 = _mm256_loadu_si256((const __m256i *)bg), b1 = _mm256_loadu_si256((const __m256i *)(bg + 32));
#pragma GCC unroll 6
            for (int r = 0; r < 6; r++) {
                int32_t xa;
                memcpy(&xa, ar[r] + at + g * 4, 4);
                __m256i av = _mm256_set1_epi32(xa);
                q[r][0] = _mm256_add_epi32(q[r][0], _mm256_madd_epi16(_mm256_maddubs_epi16(b0, av), ones));
                q[r][1] = _mm256_add_epi32(q[r][1], _mm256_madd_epi16(_mm256_maddubs_epi16(b1, av), ones));
            }
        }
    }
#pragma GCC unroll 6
    for (int r = 0; r < 6; r++) out[r][0] = q[r][0], out[r][1] = q[r][1];
}

// gk_qconv_avx2_u8 turns the laid-out image of gk_qconv_vnni_prep into
// b'' bytes (xor 0x80) in place; its sums stay those of b'.
__attribute__((target("avx2"))) void gk_qconv_avx2_u8(uint8_t *buf, int cg, const int *geo) {
    int c4, kv, np, pr, pc, kp;
    int64_t off[5];
    qdv_dims(cg, geo, 0, &c4, &kv, &np, &pr, &pc, &kp, off);
    const int64_t n = (int64_t)np * c4 * pr * pc * 4;
    for (int64_t i = 0; i < n; i++) buf[i] ^= 0x80;
}

// The output is computed at flat positions f = o * pc + j of the phase
// images' padded width pc (j >= ow are wasted lanes, not stored): a tap then
// reads 16 consecutive flat positions as 64 contiguous bytes, across output
// rows, so planes narrower than 16 (and 1x1 convolutions: a plain GEMM) need
// no unfold and no partial tiles but the last. Reads run at most a tile and
// a row past a phase image, into the next one or the sums after the last.
// qda_requant8 is gk_requant's arithmetic on 8 sums: float32(v) * mult,
// rounded half to even, + zero point, clamped, as int32.
__attribute__((target("avx2"), always_inline)) static inline __m256i qda_requant8(__m256i v, __m256 mult, __m256 fz,
                                                                                  __m256 flo, __m256 fhi) {
    __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(v), mult);
    __m256 r = _mm256_add_ps(_mm256_round_ps(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), fz);
    return _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(r, flo), fhi));
}

__attribute__((target("avx2"))) void gk_qconv_avx2_rows(const uint8_t *buf, int xsigned, int cg, const int *geo,
                                                        int xz, int wsigned, const int32_t *wz, int M,
                                                        const int8_t *sa, const int32_t *rowsum, const int32_t *roff,
                                                        const int32_t *rk, const int16_t *rvals, int o0, int o1,
                                                        int32_t *c, int ldc, const gk_qepi *e) {
    int c4, kv, np, pr, pc, kp;
    int64_t off[5];
    qdv_dims(cg, geo, M, &c4, &kv, &np, &pr, &pc, &kp, off);
    const int kh = geo[4], kw = geo[5], sh = geo[7], sw = geo[8], dh = geo[13], dw = geo[14], ow = geo[17];
    if (o1 <= o0) return;
    const int8_t *img = (const int8_t *)(buf + off[0]);
    const int32_t *sums = (const int32_t *)(buf + off[1]);
    const int64_t qstride = (int64_t)pr * pc * 4;
    const int K = cg * kv;
    const int32_t zb = xz - (xsigned ? 0 : 128);
    // per tap: the byte offset of flat position 0 and its sums' index
    int64_t *toff = malloc(sizeof(int64_t) * (size_t)kv), *tsum = malloc(sizeof(int64_t) * (size_t)kv);
    for (int a = 0; a < kh; a++)
        for (int b = 0; b < kw; b++) {
            int t = a * kw + b, p = ((a * dh) % sh) * sw + (b * dw) % sw;
            int64_t rc = (int64_t)((a * dh) / sh) * pc + (b * dw) / sw;
            toff[t] = (int64_t)p * c4 * qstride + rc * 4;
            tsum[t] = (int64_t)p * pr * pc + rc;
        }
    const int f0 = o0 * pc, f1 = (o1 - 1) * pc + ow, nf = f1 - f0, nfp = (nf + 15) & ~15;
    // column sums of the flat positions: the window's channel sums
    int32_t *cs = calloc((size_t)nfp, sizeof(int32_t));
    for (int t = 0; t < kv; t++) {
        const int32_t *st = sums + tsum[t] + f0;
        int i = 0;
        for (; i + 8 <= nf; i += 8)
            _mm256_storeu_si256((__m256i *)(cs + i), _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(cs + i)),
                                                                      _mm256_loadu_si256((const __m256i *)(st + i))));
        for (; i < nf; i++) cs[i] += st[i];
    }
    const int rbase = roff[0], nres = roff[M] - roff[0];
    int64_t *roffs = malloc(sizeof(int64_t) * (size_t)(nres > 0 ? nres : 1));
    for (int i = 0; i < nres; i++) {
        const int k = rk[rbase + i], t = k / (c4 * 4), g = (k / 4) % c4;
        roffs[i] = toff[t] + (int64_t)g * qstride;
    }
    const __m256i low = _mm256_set1_epi32(0xFF);
    // a QLinearConv's requantization on the tile in registers (the int32
    // sums of a wide, shallow 1x1 conv went out to memory and back)
    const int rq = e && e->qout && e->scale_mode != GK_QEPI_PER_COL;
    const __m256 flo = _mm256_set1_ps(rq ? (float)e->qlo : 0), fhi = _mm256_set1_ps(rq ? (float)e->qhi : 0);
    const __m256 fzp = _mm256_set1_ps(rq ? (float)e->qzp : 0);
    for (int m0 = 0; m0 < M; m0 += 6) {
        const int mr = M - m0 < 6 ? M - m0 : 6;
        const int8_t *ar[6];
        int32_t rsv[6], kz[6];
        for (int r = 0; r < 6; r++) {
            int m = m0 + (r < mr ? r : 0);
            ar[r] = sa + (int64_t)m * kp;
            int32_t zar = wz[m] + (wsigned ? 128 : 0);
            // v = q'' - (zb + 128) rowsum - (zar - 128) cs + K (zar zb + 16384)
            rsv[r] = (int32_t)((uint32_t)K * ((uint32_t)zar * (uint32_t)zb + 16384u) -
                               ((uint32_t)zb + 128u) * (uint32_t)rowsum[m]);
            kz[r] = zar - 128;
            // a requantized sum's bias is one more per-row constant
            if (rq && e->qbias) rsv[r] = (int32_t)((uint32_t)rsv[r] + (uint32_t)e->qbias[m]);
        }
        // symmetric int8 weights (zero point 0): no column-sum term
        int anykz = 0;
        for (int r = 0; r < mr; r++) anykz |= kz[r];
        for (int fb = f0; fb < f1; fb += 16) {
            const int nc = f1 - fb < 16 ? f1 - fb : 16;
            const int8_t *org = img + (int64_t)fb * 4;
            __m256i q[6][2];
            qda_tile(org, toff, kv, c4, qstride, ar, q);
            const __m256i cs0 = _mm256_loadu_si256((const __m256i *)(cs + fb - f0));
            const __m256i cs1 = _mm256_loadu_si256((const __m256i *)(cs + fb - f0 + 8));
            // the positions' output row and column; one run of a row when
            // the 16 lie in one
            const int o = fb / pc, j = fb % pc, run = j + nc <= ow;
            for (int r = 0; r < mr; r++) {
                const int m = m0 + r;
                for (int i = roff[m]; i < roff[m + 1]; i++) {
                    const int8_t *bg = org + roffs[i - rbase];
                    const __m128i sh8 = _mm_cvtsi32_si128(8 * (rk[i] & 3));
                    const __m256i vv = _mm256_set1_epi32((int32_t)(uint16_t)rvals[i]);
                    __m256i x0 = _mm256_and_si256(_mm256_srl_epi32(_mm256_loadu_si256((const __m256i *)bg), sh8), low);
                    __m256i x1 = _mm256_and_si256(_mm256_srl_epi32(_mm256_loadu_si256((const __m256i *)(bg + 32)), sh8), low);
                    q[r][0] = _mm256_add_epi32(q[r][0], _mm256_madd_epi16(x0, vv));
                    q[r][1] = _mm256_add_epi32(q[r][1], _mm256_madd_epi16(x1, vv));
                }
                const __m256i rc = _mm256_set1_epi32(rsv[r]);
                __m256i v0 = _mm256_add_epi32(q[r][0], rc), v1 = _mm256_add_epi32(q[r][1], rc);
                if (anykz) {
                    const __m256i kzv = _mm256_set1_epi32(kz[r]);
                    v0 = _mm256_sub_epi32(v0, _mm256_mullo_epi32(cs0, kzv));
                    v1 = _mm256_sub_epi32(v1, _mm256_mullo_epi32(cs1, kzv));
                }
                int32_t *cm = c + (int64_t)m * ldc;
                if (rq) {
                    const __m256 mu = _mm256_set1_ps(e->scale[e->scale_mode == GK_QEPI_PER_ROW ? m : 0]);
                    __m256i y0 = qda_requant8(v0, mu, fzp, flo, fhi);
                    __m256i y1 = qda_requant8(v1, mu, fzp, flo, fhi);
                    __m256i w16 = _mm256_permute4x64_epi64(_mm256_packs_epi32(y0, y1), 0xD8);
                    __m128i lo16 = _mm256_castsi256_si128(w16), hi16 = _mm256_extracti128_si256(w16, 1);
                    __m128i by = e->qsigned ? _mm_packs_epi16(lo16, hi16) : _mm_packus_epi16(lo16, hi16);
                    uint8_t *qm = e->qout + (cm - e->cbase);
                    if (run && nc == 16) {
                        _mm_storeu_si128((__m128i *)(qm + (int64_t)o * ow + j), by);
                    } else {
                        uint8_t tb[16];
                        _mm_storeu_si128((__m128i *)tb, by);
                        int oo = o, jj = j;
                        for (int l = 0; l < nc; l++) {
                            if (jj < ow) qm[(int64_t)oo * ow + jj] = tb[l];
                            if (++jj == pc) jj = 0, oo++;
                        }
                    }
                    continue;
                }
                if (run && nc == 16) { // (vpmaskmovd stores are slow on AMD)
                    int32_t *dst = cm + (int64_t)o * ow + j;
                    _mm256_storeu_si256((__m256i *)dst, v0);
                    _mm256_storeu_si256((__m256i *)(dst + 8), v1);
                } else {
                    int32_t tmp[16];
                    _mm256_storeu_si256((__m256i *)tmp, v0);
                    _mm256_storeu_si256((__m256i *)(tmp + 8), v1);
                    int oo = o, jj = j;
                    for (int l = 0; l < nc; l++) {
                        if (jj < ow) cm[(int64_t)oo * ow + jj] = tmp[l];
                        if (++jj == pc) jj = 0, oo++;
                    }
                }
            }
        }
        if (e && !rq) {
            int32_t *cc = c + (int64_t)m0 * ldc + (int64_t)o0 * ow;
            gk_qepilogue_rows(cc, mr, (o1 - o0) * ow, ldc, e, m0, 0, (float *)cc, ldc);
        }
    }
    free(toff);
    free(tsum);
    free(cs);
    free(roffs);
}
