// Direct 8-bit integer convolutions (no unfold) and the dequantizing
// epilogue of the fused ConvInteger -> Cast -> Mul -> Add [-> Relu] chain.
// See qgemm.h. Integer sums are exact in int32; the epilogue is one float32
// conversion, one multiply and one add per value, never contracted into a
// fused multiply-add (gcc's avx512f target implies fma, and -ffp-contract
// defaults to fast): the pragma covers every function of this file.
#pragma GCC optimize("fp-contract=off")
#include "qgemm.h"
#include "isa.h"
#include <stdlib.h>
#include <string.h>

typedef int32_t qd_vi __attribute__((vector_size(64)));
typedef float qd_vf __attribute__((vector_size(64)));
#define QD_W 16

// qd_epi_row writes y[j] = relu?((float)acc[j] * s + b) for n values (b
// added only when hasb): the rounding of the separate Cast, Mul and Add;
// relu 1 is the runtime's ReLU (x > 0 ? x : NaN stays, else +0), relu 2 a
// fused kernel's Maximum(x, 0) (0 > x ? 0 : x: -0 and NaN stay).
GK_ISA_BODY void qd_epi_row_body(const int32_t *acc, int n, float s, int hasb, float b, int relu, float *y) {
    int j = 0;
    for (; j + QD_W <= n; j += QD_W) {
        qd_vi a;
        memcpy(&a, acc + j, sizeof a);
        qd_vf f = __builtin_convertvector(a, qd_vf);
        f = f * s;
        if (hasb) f = f + b;
        if (relu == 1) {
            // !(f <= 0) is f > 0 or NaN: one compare (with f != f or'ed
            // in, gcc scalarised the select)
            f = (qd_vf)((qd_vi)f & ~(f <= 0));
        } else if (relu == 2) {
            f = (qd_vf)((qd_vi)f & ~(f < 0));
        }
        memcpy(y + j, &f, sizeof f);
    }
    for (; j < n; j++) {
        float f = (float)acc[j];
        f = f * s;
        if (hasb) f = f + b;
        if (relu == 1) f = f > 0 ? f : (f != f ? f : 0.0f);
        else if (relu == 2) f = 0.0f > f ? 0.0f : f;
        y[j] = f;
    }
}
GK_ISA_VARIANTS(gk_nn_isa(), qd_epi_row, (const int32_t *acc, int n, float s, int hasb, float b, int relu, float *y),
                (acc, n, s, hasb, b, relu, y))

void gk_qepilogue_rows(const int32_t *acc, int rows, int n, int ld, const gk_qepi *e, int r0, int col0, float *y,
                       int ldy) {
    for (int r = 0; r < rows; r++) {
        const int32_t *ar = acc + (int64_t)r * ld;
        float *yr = y + (int64_t)r * ldy;
        int ri = r0 + r;
        if (e->scale_mode == GK_QEPI_PER_COL || e->bias_mode == GK_QEPI_PER_COL) {
            for (int j = 0; j < n; j++) {
                int ci = col0 + j;
                float s = e->scale[e->scale_mode == GK_QEPI_PER_COL ? ci : e->scale_mode == GK_QEPI_PER_ROW ? ri : 0];
                float f = (float)ar[j];
                f = f * s;
                if (e->bias_mode != GK_QEPI_NONE)
                    f = f + e->bias[e->bias_mode == GK_QEPI_PER_COL ? ci : e->bias_mode == GK_QEPI_PER_ROW ? ri : 0];
                if (e->relu == 1) f = f > 0 ? f : (f != f ? f : 0.0f);
                else if (e->relu == 2) f = 0.0f > f ? 0.0f : f;
                yr[j] = f;
            }
            continue;
        }
        float s = e->scale[e->scale_mode == GK_QEPI_PER_ROW ? ri : 0];
        int hasb = e->bias_mode != GK_QEPI_NONE;
        float b = hasb ? e->bias[e->bias_mode == GK_QEPI_PER_ROW ? ri : 0] : 0.0f;
        qd_epi_row(ar, n, s, hasb, b, e->relu, yr);
    }
}

// qd_dw2d_body: depthwise 2-D windows for channels [c0, c1). Each channel's
// x - xz is laid out once as int32 in stride phase planes with the padding
// as zeros (a padded tap adds (xz - xz) * w = 0, as the unfold's padding
// with xz does): q[p][r][j] = x[r - pt][j*sw + p - pl] - xz. Output column
// ox of tap column e then reads plane (e*dw) % sw at ox + (e*dw) / sw, 16
// outputs per vector load.
GK_ISA_BODY void qd_dw2d_body(const uint8_t *x, int xsigned, const uint8_t *w, int wsigned, const int32_t *wz, int xz,
                              const int *geo, int c0, int c1, int32_t *yacc, const gk_qepi *e, float *yf) {
    const int ih = geo[1], iw = geo[2], kh = geo[4], kw = geo[5], sh = geo[7], sw = geo[8], pt = geo[10], pl = geo[11];
    const int dh = geo[13], dw = geo[14], oh = geo[16], ow = geo[17];
    const int ph = (oh - 1) * sh + (kh - 1) * dh + 1;
    const int owp = (ow + QD_W - 1) / QD_W * QD_W;
    const int qw = owp + ((kw - 1) * dw) / sw + 1;
    const int64_t plane = (int64_t)ph * qw;
    int32_t *q = malloc(sizeof(int32_t) * (size_t)(plane * sw + QD_W));
    int32_t *wt = malloc(sizeof(int32_t) * (size_t)(kh * kw));
    int *toff = malloc(sizeof(int) * (size_t)(kh * kw));
    int32_t *row = malloc(sizeof(int32_t) * (size_t)owp);
    for (int a = 0; a < kh; a++)
        for (int b = 0; b < kw; b++) {
            int o = b * dw;
            toff[a * kw + b] = (int)((o % sw) * plane + (int64_t)a * dh * qw + o / sw);
        }
    const long iv = (long)ih * iw, ov = (long)oh * ow;
    for (int c = c0; c < c1; c++) {
        const uint8_t *xc = x + c * iv, *wc = w + (long)c * kh * kw;
        for (int t = 0; t < kh * kw; t++) wt[t] = (wsigned ? (int32_t)(int8_t)wc[t] : (int32_t)wc[t]) - wz[c];
        memset(q, 0, sizeof(int32_t) * (size_t)(plane * sw));
        for (int r = 0; r < ph; r++) {
            int yy = r - pt;
            if (yy < 0 || yy >= ih) continue;
            const uint8_t *xr = xc + (long)yy * iw;
            for (int p = 0; p < sw; p++) {
                int32_t *qr = q + p * plane + (int64_t)r * qw;
                // columns j with 0 <= j*sw + p - pl < iw
                int lo = pl - p <= 0 ? 0 : (pl - p + sw - 1) / sw;
                int hi = iw + pl - p <= 0 ? 0 : (iw + pl - p + sw - 1) / sw;
                if (hi > qw) hi = qw;
                if (xsigned)
                    for (int j = lo; j < hi; j++) qr[j] = (int32_t)(int8_t)xr[j * sw + p - pl] - xz;
                else
                    for (int j = lo; j < hi; j++) qr[j] = (int32_t)xr[j * sw + p - pl] - xz;
            }
        }
        for (int o = 0; o < oh; o++) {
            const int32_t *qo = q + (int64_t)o * sh * qw;
            for (int j = 0; j < owp; j += QD_W) {
                qd_vi acc = {0};
                for (int t = 0; t < kh * kw; t++) {
                    qd_vi v;
                    memcpy(&v, qo + toff[t] + j, sizeof v);
                    acc += v * wt[t];
                }
                memcpy(row + j, &acc, sizeof acc);
            }
            if (yf) {
                float s = e->scale[e->scale_mode == GK_QEPI_PER_ROW ? c : 0];
                int hasb = e->bias_mode != GK_QEPI_NONE;
                float b = hasb ? e->bias[e->bias_mode == GK_QEPI_PER_ROW ? c : 0] : 0.0f;
                qd_epi_row_body(row, ow, s, hasb, b, e->relu, yf + c * ov + (long)o * ow);
            } else {
                memcpy(yacc + c * ov + (long)o * ow, row, sizeof(int32_t) * (size_t)ow);
            }
        }
    }
    free(q);
    free(wt);
    free(toff);
    free(row);
}
GK_ISA_VARIANTS(gk_nn_isa(), qd_dw2d,
                (const uint8_t *x, int xsigned, const uint8_t *w, int wsigned, const int32_t *wz, int xz,
                 const int *geo, int c0, int c1, int32_t *yacc, const gk_qepi *e, float *yf),
                (x, xsigned, w, wsigned, wz, xz, geo, c0, c1, yacc, e, yf))

void gk_qdw_conv_epi(const uint8_t *x, int xsigned, const uint8_t *w, int wsigned, const int32_t *wz, int xz,
                     const int *geo, int c0, int c1, int32_t *yacc, const gk_qepi *e, float *yf) {
    // the 2-D windows (depth 1 everywhere) directly; others by the generic
    // loop, then the epilogue
    if (geo[0] == 1 && geo[3] == 1 && geo[15] == 1) {
        qd_dw2d(x, xsigned, w, wsigned, wz, xz, geo, c0, c1, yacc, e, yf);
        return;
    }
    const long ov = (long)geo[15] * geo[16] * geo[17];
    if (!yf) {
        gk_qdw_conv(x, xsigned, w, wsigned, wz, xz, geo, c0, c1, yacc);
        return;
    }
    // y's float memory holds the int32 sums first, converted in place row
    // by row (same size, each value read before it is written)
    gk_qdw_conv(x, xsigned, w, wsigned, wz, xz, geo, c0, c1, (int32_t *)yf);
    for (int c = c0; c < c1; c++)
        gk_qepilogue_rows((const int32_t *)(yf + c * ov), 1, (int)ov, (int)ov, e, c, 0, yf + c * ov, (int)ov);
}
