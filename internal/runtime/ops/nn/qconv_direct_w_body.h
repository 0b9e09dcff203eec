// The vector bodies of qconv_direct.c, included once per vector width:
// QD_W int32/float lanes (16: AVX-512, 8: AVX2, 4: the SSE2 baseline), each
// compiled for its QD_TARGET. GCC's generic vectors wider than the target's
// registers are lowered element by element where they compare (a 64-byte
// select on the AVX2 path ran scalar), so each level gets its own width.
// The go command does not see this file as an input of the package: after
// changing it, touch qconv_direct.c (or go build -a).
#define QD_CAT2(a, b) a##b
#define QD_CAT(a, b) QD_CAT2(a, b)
#define QD_NAME(n) QD_CAT(n, QD_W)
#define QD_VI QD_NAME(qd_vi)
#define QD_VF QD_NAME(qd_vf)
typedef int32_t QD_VI __attribute__((vector_size(QD_W * 4)));
typedef float QD_VF __attribute__((vector_size(QD_W * 4)));

// qd_epi_row writes y[j] = relu?((float)acc[j] * s + b) for n values (b
// added only when hasb): the rounding of the separate Cast, Mul and Add;
// relu 1 is the runtime's ReLU (x > 0 ? x : NaN stays, else +0), relu 2 a
// fused kernel's Maximum(x, 0) (0 > x ? 0 : x: -0 and NaN stay).
QD_TARGET static void QD_NAME(qd_epi_row)(const int32_t *acc, int n, float s, int hasb, float b, int relu, float *y) {
    int j = 0;
    for (; j + QD_W <= n; j += QD_W) {
        QD_VI a;
        memcpy(&a, acc + j, sizeof a);
        QD_VF f = __builtin_convertvector(a, QD_VF);
        f = f * s;
        if (hasb) f = f + b;
        if (relu == 1) {
            // !(f <= 0) is f > 0 or NaN: one compare (with f != f or'ed
            // in, gcc scalarised the select)
            f = (QD_VF)((QD_VI)f & ~(f <= 0));
        } else if (relu == 2) {
            f = (QD_VF)((QD_VI)f & ~(f < 0));
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
// qd_epi_cols is qd_epi_row with the scale (scol) and/or the bias (bcol)
// one value per column: s and b point at column 0's values then, else at
// the one value.
QD_TARGET static void QD_NAME(qd_epi_cols)(const int32_t *acc, int n, const float *s, int scol, const float *b,
                                           int bmode, int relu, float *y) {
    int j = 0;
    const int hasb = bmode != GK_QEPI_NONE, bcol = bmode == GK_QEPI_PER_COL;
    for (; j + QD_W <= n; j += QD_W) {
        QD_VI a;
        QD_VF sv, bv = {0};
        memcpy(&a, acc + j, sizeof a);
        if (scol)
            memcpy(&sv, s + j, sizeof sv);
        else
            sv = (QD_VF){0} + s[0];
        QD_VF f = __builtin_convertvector(a, QD_VF);
        f = f * sv;
        if (hasb) {
            if (bcol)
                memcpy(&bv, b + j, sizeof bv);
            else
                bv = (QD_VF){0} + b[0];
            f = f + bv;
        }
        if (relu == 1)
            f = (QD_VF)((QD_VI)f & ~(f <= 0));
        else if (relu == 2)
            f = (QD_VF)((QD_VI)f & ~(f < 0));
        memcpy(y + j, &f, sizeof f);
    }
    for (; j < n; j++) {
        float f = (float)acc[j];
        f = f * s[scol ? j : 0];
        if (hasb) f = f + b[bcol ? j : 0];
        if (relu == 1) f = f > 0 ? f : (f != f ? f : 0.0f);
        else if (relu == 2) f = 0.0f > f ? 0.0f : f;
        y[j] = f;
    }
}

// qd_dw2d: depthwise 2-D windows for channels [c0, c1). Each channel's
// x - xz is laid out once as int32 in stride phase planes with the padding
// as zeros (a padded tap adds (xz - xz) * w = 0, as the unfold's padding
// with xz does): q[p][r][j] = x[r - pt][j*sw + p - pl] - xz. Output column
// ox of tap column e then reads plane (e*dw) % sw at ox + (e*dw) / sw, 16
// outputs per vector load.
QD_TARGET static void QD_NAME(qd_dw2d)(const uint8_t *x, int xsigned, const uint8_t *w, int wsigned, const int32_t *wz, int xz,
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
    // per phase p, the plane columns j with 0 <= j*sw + p - pl < iw
    int *plo = malloc(sizeof(int) * (size_t)sw * 2), *phi = plo + sw;
    for (int p = 0; p < sw; p++) {
        int lo = pl - p <= 0 ? 0 : (pl - p + sw - 1) / sw;
        int hi = iw + pl - p <= 0 ? 0 : (iw + pl - p + sw - 1) / sw;
        if (hi > qw) hi = qw;
        if (lo > hi) lo = hi;
        plo[p] = lo;
        phi[p] = hi;
    }
    for (int c = c0; c < c1; c++) {
        const uint8_t *xc = x + c * iv, *wc = w + (long)c * kh * kw;
        for (int t = 0; t < kh * kw; t++) wt[t] = (wsigned ? (int32_t)(int8_t)wc[t] : (int32_t)wc[t]) - wz[c];
        if (sw != 1) { // stride phases: zeroed planes, then the columns
            memset(q, 0, sizeof(int32_t) * (size_t)(plane * sw));
            for (int r = 0; r < ph; r++) {
                int yy = r - pt;
                if (yy < 0 || yy >= ih) continue;
                const uint8_t *xr = xc + (long)yy * iw;
                for (int p = 0; p < sw; p++) {
                    int32_t *qr = q + p * plane + (int64_t)r * qw;
                    const int lo = plo[p], hi = phi[p];
                    if (xsigned)
                        for (int j = lo; j < hi; j++) qr[j] = (int32_t)(int8_t)xr[j * sw + p - pl] - xz;
                    else
                        for (int j = lo; j < hi; j++) qr[j] = (int32_t)xr[j * sw + p - pl] - xz;
                }
            }
        } else {
            // stride 1: only the padding needs zeros (with a memset of the
            // plane first the rows were most of a depthwise conv's time)
            for (int r = 0; r < ph; r++) {
                int yy = r - pt;
                int32_t *qr = q + (int64_t)r * qw;
                const int lo = plo[0], hi = phi[0];
                if (yy < 0 || yy >= ih) {
                    memset(qr, 0, sizeof(int32_t) * (size_t)qw);
                    continue;
                }
                for (int j = 0; j < lo; j++) qr[j] = 0;
                for (int j = hi; j < qw; j++) qr[j] = 0;
                const uint8_t *xs = xc + (long)yy * iw - pl;
                if (xsigned)
                    for (int j = lo; j < hi; j++) qr[j] = (int32_t)(int8_t)xs[j] - xz;
                else
                    for (int j = lo; j < hi; j++) qr[j] = (int32_t)xs[j] - xz;
            }
        }
        for (int o = 0; o < oh; o++) {
            const int32_t *qo = q + (int64_t)o * sh * qw;
            for (int j = 0; j < owp; j += QD_W) {
                QD_VI acc = {0};
                for (int t = 0; t < kh * kw; t++) {
                    QD_VI v;
                    memcpy(&v, qo + toff[t] + j, sizeof v);
                    acc += v * wt[t];
                }
                memcpy(row + j, &acc, sizeof acc);
            }
            if (yf) {
                float s = e->scale[e->scale_mode == GK_QEPI_PER_ROW ? c : 0];
                int hasb = e->bias_mode != GK_QEPI_NONE;
                float b = hasb ? e->bias[e->bias_mode == GK_QEPI_PER_ROW ? c : 0] : 0.0f;
                QD_NAME(qd_epi_row)(row, ow, s, hasb, b, e->relu, yf + c * ov + (long)o * ow);
            } else {
                memcpy(yacc + c * ov + (long)o * ow, row, sizeof(int32_t) * (size_t)ow);
            }
        }
    }
    free(q);
    free(plo);
    free(wt);
    free(toff);
    free(row);
}
#undef QD_VI
#undef QD_VF
#undef QD_NAME
#undef QD_CAT
#undef QD_CAT2
