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
#if QD_W == 16
#define QD_EVEN 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30
#define QD_ODD 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31
#elif QD_W == 8
#define QD_EVEN 0, 2, 4, 6, 8, 10, 12, 14
#define QD_ODD 1, 3, 5, 7, 9, 11, 13, 15
#else
#define QD_EVEN 0, 2, 4, 6
#define QD_ODD 1, 3, 5, 7
#endif
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

// qd_dw2d: depthwise 2-D windows for channels [c0, c1) of at most 256
// taps. Each channel's x - xz is laid out once as float32 in stride phase
// planes with the padding as zeros (a padded tap adds (xz - xz) * w = 0, as
// the unfold's padding with xz does): q[p][r][j] = x[r - pt][j*sw + p - pl]
// - xz. Output column ox of tap column e then reads plane (e*dw) % sw at
// ox + (e*dw) / sw, QD_W outputs per vector load. float32 is exact here:
// each product is at most 255 * 255 and a sum of 256 of them stays under
// 2^24, so the sums are the integers in any order (int32 multiplies were
// slower, and the byte-to-int32 layout ran scalar). The row then gets the
// float epilogue (yf), the requantization (e->qout) or is stored as int32.
// qd_rq: a QLinearConv depthwise channel's requantization, for
// qd_dw3x3_rows to apply to its sums in registers (gk_requant_b's
// arithmetic; y: the channel's output bytes, rows of ow).
typedef struct {
    uint32_t bias;
    float scale, zp, lo, hi;
    uint8_t *y;
} QD_NAME(qd_rq);
typedef uint32_t QD_NAME(qd_vu) __attribute__((vector_size(QD_W * 4)));
typedef uint8_t QD_NAME(qd_vb) __attribute__((vector_size(QD_W)));

// qd_u8 widens QD_W bytes at p to int32 lanes (gcc scalarised a generic
// byte-to-int32 vector conversion).
QD_TARGET __attribute__((always_inline)) static inline QD_VI QD_NAME(qd_u8)(const uint8_t *p) {
#if QD_W == 16
    return (QD_VI)_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)p));
#elif QD_W == 8
    return (QD_VI)_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)p));
#else
    int32_t v;
    memcpy(&v, p, sizeof v);
    const __m128i z = _mm_setzero_si128();
    return (QD_VI)_mm_unpacklo_epi16(_mm_unpacklo_epi8(_mm_cvtsi32_si128(v), z), z);
#endif
}

// qd_rq_store requantizes nr rows of QD_W float32 sums (exact integers)
// at column j and stores the first n bytes of each: + bias wrapping in
// int32, * scale, rounded half to even (vrndscaleps / vroundps; on the
// SSE2 baseline the 1.5 * 2^23 shift: exact below 2^22, and beyond it the
// clamp decides), + zero point, clamped as maxps/minps clamp (NaN: lo), as
// bytes. With a rounding instruction between the multiply and the add
// nothing can be contracted, so it inlines into the sums' loop (a call per
// four vectors was a quarter of a 56x56 plane's time); the shift's
// multiply and add must not be, so that copy stays out of line.
#if QD_W == 4
#define QD_RQ_ATTR __attribute__((noinline, optimize("fp-contract=off")))
#else
#define QD_RQ_ATTR __attribute__((always_inline)) inline
#endif
QD_TARGET QD_RQ_ATTR static void QD_NAME(qd_rq_store)(
    const QD_VF *acc, int nr, int n, const QD_NAME(qd_rq) *rq, uint8_t *y, int ld) {
#if QD_W == 4
    const float shift = 12582912.0f;
#endif
    for (int r = 0; r < nr; r++) {
        QD_NAME(qd_vu) u = (QD_NAME(qd_vu))__builtin_convertvector(acc[r], QD_VI) + rq->bias;
        QD_VF f = __builtin_convertvector((QD_VI)u, QD_VF) * rq->scale;
#if QD_W == 16
        f = (QD_VF)_mm512_roundscale_ps((__m512)f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
#elif QD_W == 8
        f = (QD_VF)_mm256_round_ps((__m256)f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
#else
        f = (f + shift) - shift;
#endif
        f = f + rq->zp;
        const QD_VF lo = (QD_VF){0} + rq->lo, hi = (QD_VF){0} + rq->hi;
        QD_VI k = f > lo; // maxps(f, lo): f where f > lo, else lo (NaN too)
        f = (QD_VF)(((QD_VI)f & k) | ((QD_VI)lo & ~k));
        k = f < hi; // minps(f, hi)
        f = (QD_VF)(((QD_VI)f & k) | ((QD_VI)hi & ~k));
        QD_NAME(qd_vb) b = __builtin_convertvector(__builtin_convertvector(f, QD_VI), QD_NAME(qd_vb));
        uint8_t *yr = y + (int64_t)r * ld;
        if (n == QD_W) { // a whole vector: a plain store, not a libc call
            memcpy(yr, &b, sizeof b);
            continue;
        }
        // a row's last part: stores of fixed sizes (a variable-length
        // memcpy went through the stack and a byte loop)
        uint8_t bb[QD_W];
        memcpy(bb, &b, sizeof b);
        int at = 0;
#if QD_W > 8
        if (n & 8) memcpy(yr, bb, 8), at = 8;
#endif
        if (n & 4) memcpy(yr + at, bb + at, 4), at += 4;
        if (n & 2) memcpy(yr + at, bb + at, 2), at += 2;
        if (n & 1) yr[at] = bb[at];
    }
}

// qd_dw3x3_rows: qd_dw2d's sums for a 3x3 window of stride sh (1 or 2, the
// same both ways) and dilation 1, four output rows per step with the nine
// weights in registers: each input vector loaded once serves every output
// row whose window covers it (18 or 27 loads for 36 multiply-adds, not 45).
// Rows past oh are computed from the plane's slack and dropped.
QD_TARGET __attribute__((optimize("fp-contract=fast"), always_inline)) static inline void QD_NAME(qd_dw3x3_rows_sh)(
    const float *q, int64_t plane, int qw, int oh, int owp, const int sh, const float *wt, int32_t *row,
    const QD_NAME(qd_rq) *rq, int ow) {
    QD_VF w[9];
    for (int t = 0; t < 9; t++) w[t] = (QD_VF){0} + wt[t];
    // column tap b reads phase plane b % sh at column offset b / sh
    int64_t cb[3];
    for (int b = 0; b < 3; b++) cb[b] = (b % sh) * plane + b / sh;
    for (int o0 = 0; o0 < oh; o0 += 4) {
        const int nr = oh - o0 < 4 ? oh - o0 : 4;
        for (int j = 0; j < owp; j += QD_W) {
            QD_VF a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
#define QD_ROW(i)                                                                                                     \
    do {                                                                                                              \
        const float *qi = q + (int64_t)(o0 * sh + (i)) * qw + j;                                                      \
        for (int b = 0; b < 3; b++) {                                                                                 \
            QD_VF v;                                                                                                  \
            memcpy(&v, qi + cb[b], sizeof v);                                                                         \
            if ((i) < 3) a0 += v * w[(i) * 3 + b];                                                                    \
            if ((i) - sh >= 0 && (i) - sh < 3) a1 += v * w[((i) - sh) * 3 + b];                                       \
            if ((i) - 2 * sh >= 0 && (i) - 2 * sh < 3) a2 += v * w[((i) - 2 * sh) * 3 + b];                           \
            if ((i) - 3 * sh >= 0 && (i) - 3 * sh < 3) a3 += v * w[((i) - 3 * sh) * 3 + b];                           \
        }                                                                                                             \
    } while (0)
            if (sh == 1) {
                QD_ROW(0); QD_ROW(1); QD_ROW(2); QD_ROW(3); QD_ROW(4); QD_ROW(5);
            } else {
                QD_ROW(0); QD_ROW(1); QD_ROW(2); QD_ROW(3); QD_ROW(4); QD_ROW(5); QD_ROW(6); QD_ROW(7); QD_ROW(8);
            }
#undef QD_ROW
            if (rq) { // requantized here: no int32 rows, no second pass
                const QD_VF a[4] = {a0, a1, a2, a3};
                QD_NAME(qd_rq_store)(a, nr, ow - j < QD_W ? ow - j : QD_W, rq, rq->y + (int64_t)o0 * ow + j, ow);
                continue;
            }
            QD_VI i0 = __builtin_convertvector(a0, QD_VI), i1 = __builtin_convertvector(a1, QD_VI);
            QD_VI i2 = __builtin_convertvector(a2, QD_VI), i3 = __builtin_convertvector(a3, QD_VI);
            memcpy(row + (int64_t)o0 * owp + j, &i0, sizeof i0);
            if (nr > 1) memcpy(row + (int64_t)(o0 + 1) * owp + j, &i1, sizeof i1);
            if (nr > 2) memcpy(row + (int64_t)(o0 + 2) * owp + j, &i2, sizeof i2);
            if (nr > 3) memcpy(row + (int64_t)(o0 + 3) * owp + j, &i3, sizeof i3);
        }
    }
}

// (the stride a constant in each copy: the row tests fold away)
QD_TARGET __attribute__((optimize("fp-contract=fast"))) static void QD_NAME(qd_dw3x3_rows)(
    const float *q, int64_t plane, int qw, int oh, int owp, int sh, const float *wt, int32_t *row,
    const QD_NAME(qd_rq) *rq, int ow) {
    if (sh == 1)
        QD_NAME(qd_dw3x3_rows_sh)(q, plane, qw, oh, owp, 1, wt, row, rq, ow);
    else
        QD_NAME(qd_dw3x3_rows_sh)(q, plane, qw, oh, owp, 2, wt, row, rq, ow);
}

// (contracted into fused multiply-adds: exact sums, so the same integers)
QD_TARGET __attribute__((optimize("fp-contract=fast", "no-tree-loop-distribute-patterns"))) static void QD_NAME(qd_dw2d)(const uint8_t *x, int xsigned, const uint8_t *w, int wsigned, const int32_t *wz, int xz,
                              const int *geo, int c0, int c1, int32_t *yacc, const gk_qepi *e, float *yf) {
    const int ih = geo[1], iw = geo[2], kh = geo[4], kw = geo[5], sh = geo[7], sw = geo[8], pt = geo[10], pl = geo[11];
    const int dh = geo[13], dw = geo[14], oh = geo[16], ow = geo[17];
    const int ph = (oh - 1) * sh + (kh - 1) * dh + 1;
    const int owp = (ow + QD_W - 1) / QD_W * QD_W;
    const int qw = owp + ((kw - 1) * dw) / sw + 1;
    // (QD_W slack per plane: the stride-2 layout's last vector of a row
    // spills past it, into the next row or this slack, never the next plane)
    const int64_t plane = (int64_t)ph * qw + QD_W;
    const int rq = e && e->qout;
    // (slack: the 3x3 kernel's last block of rows reads up to 3*sh rows
    // past the last plane, for outputs it drops)
    float *q = malloc(sizeof(float) * (size_t)(plane * sw + (int64_t)(3 * sh + 1) * qw + QD_W));
    float *wt = malloc(sizeof(float) * (size_t)(kh * kw));
    int *toff = malloc(sizeof(int) * (size_t)(kh * kw));
    int32_t *row = malloc(sizeof(int32_t) * (size_t)owp * (size_t)oh);
    // one input row's bytes at xb[pl ..], every other byte the zero point,
    // signed bytes flipped to unsigned (and xz with them): the plane columns
    // then convert without bounds, the padding to (xz - xz) = 0; room for the
    // last vectors of each phase (up to QD_W columns past qw, into the next
    // row or the plane's slack)
    const int flip = xsigned ? 0x80 : 0;
    const int32_t xzu = xz + flip;
    const int xbn = sw * (qw + QD_W) + 2 * QD_W > pl + iw ? sw * (qw + QD_W) + 2 * QD_W : pl + iw;
    uint8_t *xb = malloc((size_t)xbn);
    memset(xb, (uint8_t)xzu, (size_t)xbn);
    const QD_VF zf = (QD_VF){0} + (float)xzu;
    for (int a = 0; a < kh; a++)
        for (int b = 0; b < kw; b++) {
            int o = b * dw;
            toff[a * kw + b] = (int)((o % sw) * plane + (int64_t)a * dh * qw + o / sw);
        }
    const long iv = (long)ih * iw, ov = (long)oh * ow;
    for (int c = c0; c < c1; c++) {
        const uint8_t *xc = x + c * iv, *wc = w + (long)c * kh * kw;
        for (int t = 0; t < kh * kw; t++) wt[t] = (float)((wsigned ? (int32_t)(int8_t)wc[t] : (int32_t)wc[t]) - wz[c]);
        for (int r = 0; r < ph; r++) {
            int yy = r - pt;
            if (yy < 0 || yy >= ih) {
                for (int p = 0; p < sw; p++) memset(q + p * plane + (int64_t)r * qw, 0, sizeof(float) * (size_t)qw);
                continue;
            }
            const uint8_t *xr = xc + (long)yy * iw;
            if (flip)
                for (int i = 0; i < iw; i++) xb[pl + i] = xr[i] ^ 0x80;
            else
                memcpy(xb + pl, xr, (size_t)iw);
            float *qr = q + (int64_t)r * qw;
            if (sw == 1) // straight into the plane
                for (int j = 0; j < qw; j += QD_W) {
                    QD_VF f = __builtin_convertvector(QD_NAME(qd_u8)(xb + j), QD_VF) - zf;
                    memcpy(qr + j, &f, sizeof f);
                }
            else if (sw == 2) // the even bytes to phase 0, the odd to phase 1
                for (int j = 0; j < qw; j += QD_W) {
                    // (widened first: byte shuffles need AVX-512 BW)
                    QD_VI a = QD_NAME(qd_u8)(xb + 2 * j), b = QD_NAME(qd_u8)(xb + 2 * j + QD_W);
                    QD_VF f0 = __builtin_convertvector(__builtin_shufflevector(a, b, QD_EVEN), QD_VF) - zf;
                    QD_VF f1 = __builtin_convertvector(__builtin_shufflevector(a, b, QD_ODD), QD_VF) - zf;
                    memcpy(qr + j, &f0, sizeof f0);
                    memcpy(qr + plane + j, &f1, sizeof f1);
                }
            else
                for (int p = 0; p < sw; p++)
                    for (int j = 0; j < qw; j++) qr[p * plane + j] = (float)((int32_t)xb[j * sw + p] - xzu);
        }
        const float sc = yf ? e->scale[e->scale_mode == GK_QEPI_PER_ROW ? c : 0] : 0.0f;
        const int hasb = yf && e->bias_mode != GK_QEPI_NONE;
        const float b = hasb ? e->bias[e->bias_mode == GK_QEPI_PER_ROW ? c : 0] : 0.0f;
        if (kh == 3 && kw == 3 && dh == 1 && dw == 1 && (sh == 1 || sh == 2) && sw == sh) {
            if (rq) {
                QD_NAME(qd_rq) r = {(uint32_t)(e->qbias ? e->qbias[c] : 0),
                                    e->scale[e->scale_mode == GK_QEPI_PER_ROW ? c : 0], (float)e->qzp, (float)e->qlo,
                                    (float)e->qhi, e->qout + ((yacc + c * ov) - e->cbase)};
                QD_NAME(qd_dw3x3_rows)(q, plane, qw, oh, owp, sh, wt, row, &r, ow);
                continue;
            }
            QD_NAME(qd_dw3x3_rows)(q, plane, qw, oh, owp, sh, wt, row, NULL, ow);
            goto finish;
        }
        // the plane's output vectors four at a time (any rows): four
        // independent sums hide the add latency a tap loop per vector waited on
        const int nvec = owp / QD_W, tv = oh * nvec;
        for (int v0 = 0; v0 < tv; v0 += 4) {
            int64_t vb[4];
            for (int k = 0; k < 4; k++) {
                const int v = v0 + k < tv ? v0 + k : v0;
                vb[k] = (int64_t)(v / nvec) * sh * qw + (v % nvec) * QD_W;
            }
            QD_VF a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
            for (int t = 0; t < kh * kw; t++) {
                const float *qt = q + toff[t], wv = wt[t];
                QD_VF u0, u1, u2, u3;
                memcpy(&u0, qt + vb[0], sizeof u0);
                memcpy(&u1, qt + vb[1], sizeof u1);
                memcpy(&u2, qt + vb[2], sizeof u2);
                memcpy(&u3, qt + vb[3], sizeof u3);
                a0 += u0 * wv;
                a1 += u1 * wv;
                a2 += u2 * wv;
                a3 += u3 * wv;
            }
            QD_VI i0 = __builtin_convertvector(a0, QD_VI), i1 = __builtin_convertvector(a1, QD_VI);
            QD_VI i2 = __builtin_convertvector(a2, QD_VI), i3 = __builtin_convertvector(a3, QD_VI);
            const int nv = tv - v0 < 4 ? tv - v0 : 4;
            memcpy(row + (int64_t)v0 * QD_W, &i0, sizeof i0);
            if (nv > 1) memcpy(row + (int64_t)(v0 + 1) * QD_W, &i1, sizeof i1);
            if (nv > 2) memcpy(row + (int64_t)(v0 + 2) * QD_W, &i2, sizeof i2);
            if (nv > 3) memcpy(row + (int64_t)(v0 + 3) * QD_W, &i3, sizeof i3);
        }
    finish:
        for (int o = 0; o < oh; o++) {
            const long at = c * ov + (long)o * ow;
            if (yf)
                QD_NAME(qd_epi_row)(row + (int64_t)o * owp, ow, sc, hasb, b, e->relu, yf + at);
            else
                memcpy(yacc + at, row + (int64_t)o * owp, sizeof(int32_t) * (size_t)ow);
        }
        if (rq) // the channel's sums are still in cache: one call per plane, not per row
            gk_requant_b(yacc + c * ov, e->qbias ? e->qbias[c] : 0, (int)ov,
                         e->scale + (e->scale_mode == GK_QEPI_PER_ROW ? c : 0), 0, e->qzp, e->qlo, e->qhi,
                         e->qout + ((yacc + c * ov) - e->cbase), e->qsigned);
    }
    free(q);
    free(wt);
    free(toff);
    free(row);
    free(xb);
}
#undef QD_VI
#undef QD_EVEN
#undef QD_ODD
#undef QD_RQ_ATTR
#undef QD_VF
#undef QD_NAME
#undef QD_CAT
#undef QD_CAT2
