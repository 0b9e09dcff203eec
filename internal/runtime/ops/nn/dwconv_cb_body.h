// The channel-blocked depthwise kernel, written once for both vector
// widths: dwconv_cb16.c includes it for AVX-512 (16 planes per group),
// dwconv_cb8.c for AVX2 (8). The includer defines
//   CB_L                lanes (planes per group)
//   CB_V, CB_FN         the vector type, the functions' target attribute
//   CB_SYM(name)        name with the width appended (internal functions)
//   CB_ENTRY            the entry's name (dw_cb16_f32, dw_cb8_f32)
//   CB_LOAD, CB_STORE   aligned vector load and store; CB_STOREU unaligned
//   CB_FMA(a, b, c)     a*b + c
//   CB_LOADN(p, n)      n <= CB_L floats from p, the other lanes 0
//   CB_STOREN(p, n, v)  the first n lanes of v to p
//   CB_TR(r)            transpose the CB_L x CB_L block r in place
//   CB_ACT(v, act)      the activation act on v (any act512_ok takes)
// and includes <string.h>.
#define CB_INL static inline __attribute__((always_inline))

// cb_geom is the padded buffer's extent: HP rows (those the taps reach) of
// WB positions, WB >= both the columns the taps reach and PW + W, so the
// CB_L-position stores of a row (zero past its end) stay in its row or
// reach the next row before that row is filled.
static void cb_geom(int K, int S, int W, int PW, int OH, int OW, int *HP, int *WB) {
    *HP = (OH - 1) * S + K;
    *WB = (OW - 1) * S + K;
    if (PW + W > *WB) *WB = PW + W;
}

// CB_BLOCK computes NB (<= 4) adjacent outputs of output row oh from column ow.
#define CB_BLOCK(NB)                                                                                \
    {                                                                                               \
        CB_V acc[NB];                                                                             \
        for (int j = 0; j < NB; j++) acc[j] = bv;                                                   \
        for (int kh = 0; kh < K; kh++) {                                                            \
            const float *row = buf + (long)CB_L * ((long)(oh * S + kh) * WP + ow * S);                     \
            for (int kw = 0; kw < K; kw++) {                                                        \
                const CB_V wv = CB_LOAD(wt + CB_L * (kh * K + kw));                          \
                for (int j = 0; j < NB; j++)                                                        \
                    acc[j] = CB_FMA(CB_LOAD(row + CB_L * (j * S + kw)), wv, acc[j]);  \
            }                                                                                       \
        }                                                                                           \
        for (int j = 0; j < NB; j++) {                                                              \
            CB_STORE(out + (long)CB_L * (oh * OW + ow + j), acc[j]);                                    \
        }                                                                                           \
    }

// CB_BLOCK1 computes NB (<= 8) adjacent outputs of output row oh from
// column ow at stride 1: the NB + K - 1 input positions of each kernel row
// are loaded once and each serves every output of the block it reaches
// (NB*K FMAs for NB + 2K - 1 loads, where CB_BLOCK loads one input per FMA).
#define CB_BLOCK1(NB)                                                                               \
    {                                                                                               \
        CB_V acc[NB];                                                                             \
        for (int j = 0; j < NB; j++) acc[j] = bv;                                                   \
        _Pragma("GCC unroll 7") for (int kh = 0; kh < K; kh++) {                                    \
            const float *row = buf + (long)CB_L * ((long)(oh + kh) * WP + ow);                             \
            CB_V in[NB + K - 1];                                                                  \
            _Pragma("GCC unroll 16") for (int i = 0; i < NB + K - 1; i++) in[i] = CB_LOAD(row + CB_L * i); \
            _Pragma("GCC unroll 7") for (int kw = 0; kw < K; kw++) {                                \
                const CB_V wv = CB_LOAD(wt + CB_L * (kh * K + kw));                          \
                _Pragma("GCC unroll 8") for (int j = 0; j < NB; j++) acc[j] = CB_FMA(in[j + kw], wv, acc[j]); \
            }                                                                                       \
        }                                                                                           \
        for (int j = 0; j < NB; j++) {                                                              \
            CB_STORE(out + (long)CB_L * (oh * OW + ow + j), acc[j]);                                    \
        }                                                                                           \
    }

CB_FN CB_INL void CB_SYM(cb_group)(const float *x, const float *w, const float *bias, float *y, int C,
                               int H, int W, int K, int S, int PH, int PW, int OH, int OW, int c0,
                               int act, float *buf, float *out, float *wt) {
    int HP, WP;
    cb_geom(K, S, W, PW, OH, OW, &HP, &WP);
    const long HW = (long)H * W, OHW = (long)OH * OW;
    // weights and bias, channel-last
    for (int i = 0; i < CB_L; i++) {
        const int c = (c0 + i) % C;
        for (int t = 0; t < K * K; t++) wt[CB_L * t + i] = w[(long)c * K * K + t];
        wt[CB_L * K * K + i] = bias ? bias[c] : 0.0f;
    }
    // input rows, CB_L columns x CB_L planes per transpose, into the padded
    // buffer (zero outside the input since the caller cleared it: the
    // lanes past the row's end store zeros)
    for (int h = 0; h < H; h++) {
        const int ph = h + PH;
        if (ph < 0 || ph >= HP) continue;
        for (int w0 = 0; w0 < W; w0 += CB_L) {
            const int n = W - w0 < CB_L ? W - w0 : CB_L;
            CB_V r[CB_L];
            _Pragma("GCC unroll 16") for (int i = 0; i < CB_L; i++) r[i] = CB_LOADN(x + i * HW + (long)h * W + w0, n);
            CB_TR(r);
            float *d = buf + (long)CB_L * ((long)ph * WP + PW + w0);
            _Pragma("GCC unroll 16") for (int j = 0; j < CB_L; j++) CB_STOREU(d + CB_L * j, r[j]);
        }
    }
    const CB_V bv = CB_LOAD(wt + CB_L * K * K);
    for (int oh = 0; oh < OH; oh++) {
        int ow = 0;
        if (S == 1) {
#if CB_L == 16
            for (; ow + 8 <= OW; ow += 8) CB_BLOCK1(8)
#endif
            for (; ow + 4 <= OW; ow += 4) CB_BLOCK1(4)
            for (; ow < OW; ow++) CB_BLOCK1(1)
            continue;
        }
        for (; ow + 4 <= OW; ow += 4) CB_BLOCK(4)
        for (; ow < OW; ow++) CB_BLOCK(1)
    }
    // outputs back to the CB_L planes
    for (long p0 = 0; p0 < OHW; p0 += CB_L) {
        const int n = OHW - p0 < CB_L ? (int)(OHW - p0) : CB_L;
        CB_V r[CB_L];
        _Pragma("GCC unroll 16") for (int j = 0; j < CB_L; j++) r[j] = CB_ACT(CB_LOAD(out + CB_L * (p0 + j)), act);
        CB_TR(r);
        _Pragma("GCC unroll 16") for (int i = 0; i < CB_L; i++) CB_STOREN(y + i * OHW + p0, n, r[i]);
    }
}

#define CB_CASE(KK, SS)                                                                             \
    case KK * 10 + SS:                                                                              \
        CB_SYM(cb_group)(xg, w, bias, yg, C, H, W, KK, SS, PH, PW, OH, OW, (c0 + g) % C, act, buf, out, wt); \
        break;

// CB_ENTRY is dwconv_f32 for the first NC/CB_L*CB_L of NC planes; pad
// holds dw_cb16_floats(...) floats. It returns how many planes it did.
CB_FN int CB_ENTRY(const float *x, const float *w, const float *bias, float *y, int NC, int C,
                          int H, int W, int K, int S, int PH, int PW, int OH, int OW, int c0, int act,
                          float *pad) {
    int HP, WP;
    cb_geom(K, S, W, PW, OH, OW, &HP, &WP);
    float *buf = (float *)(((unsigned long)pad + 63) & ~63UL); // 64-byte aligned
    float *out = buf + (long)CB_L * ((long)HP * WP + CB_L);
    float *wt = out + (long)CB_L * ((OH * OW + CB_L - 1) / CB_L * CB_L);
    const long HW = (long)H * W, OHW = (long)OH * OW;
    if (NC < CB_L) return 0;
    memset(buf, 0, sizeof(float) * (long)CB_L * ((long)HP * WP + CB_L));
    int g = 0;
    for (; g + CB_L <= NC; g += CB_L) {
        const float *xg = x + g * HW;
        float *yg = y + g * OHW;
        switch (K * 10 + S) {
            CB_CASE(3, 1)
            CB_CASE(5, 1)
            CB_CASE(7, 1)
            CB_CASE(3, 2)
            CB_CASE(5, 2)
            CB_CASE(7, 2)
        }
    }
    return g;
}
