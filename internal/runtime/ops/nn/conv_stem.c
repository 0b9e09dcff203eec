// Direct convolution for convs with few input channels (the RGB stems of
// CNNs: resnet50's 3 -> 64 7x7 stride 2, mobilenet_v2's and efficientnet's
// 3 -> 32 3x3 stride 2). Their im2col + GEMM has K = C*KH*KW of only 27-147,
// so the GEMM spends its time loading and storing the output, and the
// strided im2col copies every input value KH*KW/(SH*SW) times.
//
// Here the output is computed in registers, 16 pixels of a row per zmm (8 per
// ymm), 8 output channels at once, summing over the C*KH*KW taps: each tap is
// one load of 16 input pixels and 8 FMAs with broadcast weights. So that the
// pixels of a strided tap are contiguous, a band of input rows is first copied
// into a buffer split by column phase: phase p of a row holds padded columns
// p, p+SW, p+2*SW, ... (zeros where the padding is), so tap kw of output
// column ow reads phase (kw*DW) % SW at index ow + (kw*DW) / SW.
#include <immintrin.h>
#include <string.h>

#include "conv_act.h"
#include "conv_stem.h"
#include "isa.h"

#define CB STEM_BLOCK // output channels per block (the packed weights' unit)
#define NVMAX 3 // pixel vectors per micro-kernel call

static int phase_width(int OW, int KW, int SW, int DW) { return (OW + 15) / 16 * 16 + (KW - 1) * DW / SW; }

long conv_stem_buf_floats(int C, int KH, int KW, int SH, int SW, int DH, int DW, int OW, int band) {
    long rows = (long)(band - 1) * SH + (long)(KH - 1) * DH + 1;
    return (long)C * rows * SW * phase_width(OW, KW, SW, DW);
}

int conv_stem_supported(int KW, int SW) { return KW >= 1 && KW <= STEM_MAX_KW && SW >= 1 && SW <= STEM_MAX_KW; }

// conv_fill_phases (conv_stem.h), compiled per ISA level by GK_ISA_VARIANTS.
GK_ISA_BODY void conv_fill_phases_body(const float *x, float *buf, int C, int H, int W, int PW, int SW, int ih0,
                                       int rows, int wq) {
    for (int c = 0; c < C; c++)
        for (int r = 0; r < rows; r++) {
            int ih = ih0 + r;
            if (ih < 0 || ih >= H) continue;
            const float *xr = x + ((long)c * H + ih) * W;
            float *d = buf + ((long)c * rows + r) * SW * wq;
            for (int p = 0; p < SW; p++, d += wq) {
                // padded column j*SW + p is input column j*SW + p - PW
                int off = p - PW, j0 = 0, j1 = wq;
                if (off < 0) j0 = (-off + SW - 1) / SW;
                if (j0 > wq) j0 = wq;
                if (W - 1 - off < 0) j1 = 0;
                else if ((W - 1 - off) / SW + 1 < wq) j1 = (W - 1 - off) / SW + 1;
                if (j1 < j0) j1 = j0;
                for (int j = 0; j < j0; j++) d[j] = 0;
                const float *s = xr + off;
                if (SW == 1) memcpy(d + j0, s + j0, (size_t)(j1 - j0) * sizeof(float));
                else if (SW == 2) for (int j = j0; j < j1; j++) d[j] = s[2 * j]; // vectorised with permutes
                else for (int j = j0; j < j1; j++) d[j] = s[(long)j * SW];
                for (int j = j1; j < wq; j++) d[j] = 0;
            }
        }
}
GK_ISA_VARIANTS(gk_nn_isa(), conv_fill_phases, (const float *x, float *buf, int C, int H, int W, int PW, int SW,
                int ih0, int rows, int wq), (x, buf, C, H, W, PW, SW, ih0, rows, wq))

#define AVX512 __attribute__((target("avx512f")))
#define AVX2 __attribute__((target("avx2,fma")))
#define INLINE static inline __attribute__((always_inline))

// The taps of one output row: for each input channel and each valid kernel
// row, the band row to read; for each kernel column, its offset in a row.
typedef struct {
    const float *buf;
    long chan;              // floats between channels of the band
    long row;               // floats between band rows (SW phases)
    int C, KH, KW, kh0, kh1; // kernel rows [kh0, kh1) fall inside the image
    int r0, DH;             // band row of kernel row 0, and the step per kernel row
    int kwoff[STEM_MAX_KW]; // offset of kernel column kw: its phase's row plus (kw*DW)/SW
} taps;

// ukr512 computes output channels [8) of a block, pixels ow0 .. ow0+16*nv of
// one row, from bias, and stores the first mv channels (the last vector
// masked by last).
INLINE AVX512 void ukr512(const int nv, const taps *t, const float *wb, const float *bias, int ow0, float *y,
                          long plane, int mv, __mmask16 last, int act) {
    __m512 acc[CB][NVMAX];
#pragma GCC unroll 8
    for (int o = 0; o < CB; o++) {
        __m512 b = bias ? _mm512_set1_ps(bias[o]) : _mm512_setzero_ps();
#pragma GCC unroll 3
        for (int n = 0; n < nv; n++) acc[o][n] = b;
        // The lines the next call stores, for writing: in a model the
        // output is not in cache, and 8 channel planes are too many
        // streams for the hardware prefetcher (see conv_packed_gemm.c).
        if (o < mv) {
            float *next = y + o * plane + ow0 + 16 * nv;
#pragma GCC unroll 3
            for (int n = 0; n < NVMAX; n++) __builtin_prefetch(next + 16 * n, 1, 3);
        }
    }
    for (int c = 0; c < t->C; c++)
        for (int kh = t->kh0; kh < t->kh1; kh++) {
            const float *row = t->buf + c * t->chan + (long)(t->r0 + kh * t->DH) * t->row + ow0;
            const float *w = wb + (long)(c * t->KH + kh) * t->KW * CB;
            for (int kw = 0; kw < t->KW; kw++, w += CB) {
                const float *s = row + t->kwoff[kw];
                __m512 v[NVMAX];
#pragma GCC unroll 3
                for (int n = 0; n < nv; n++) v[n] = _mm512_loadu_ps(s + 16 * n);
#pragma GCC unroll 8
                for (int o = 0; o < CB; o++) {
                    __m512 wv = _mm512_set1_ps(w[o]);
#pragma GCC unroll 3
                    for (int n = 0; n < nv; n++) acc[o][n] = _mm512_fmadd_ps(v[n], wv, acc[o][n]);
                }
            }
        }
    if (act == STEM_ACT_RELU || act == STEM_ACT_RELU6) {
        __m512 zero = _mm512_setzero_ps(), six = _mm512_set1_ps(6.0f);
#pragma GCC unroll 8
        for (int o = 0; o < CB; o++)
#pragma GCC unroll 3
            for (int n = 0; n < nv; n++) {
                acc[o][n] = _mm512_max_ps(zero, acc[o][n]);
                if (act == STEM_ACT_RELU6) acc[o][n] = _mm512_min_ps(six, acc[o][n]);
            }
    }
#pragma GCC unroll 8
    for (int o = 0; o < CB; o++) {
        if (o >= mv) break;
        float *yo = y + o * plane + ow0;
#pragma GCC unroll 3
        for (int n = 0; n < nv; n++) {
            if (n == nv - 1) _mm512_mask_storeu_ps(yo + 16 * n, last, acc[o][n]);
            else _mm512_storeu_ps(yo + 16 * n, acc[o][n]);
        }
    }
}

// ukr2 is ukr512 for AVX2 on half a block (4 channels at wb/bias/y, which
// the caller offsets), 8 pixels per ymm: 12 accumulators, 3 inputs and a
// broadcast fill the 16 registers.
#define CB2 4
INLINE AVX2 void ukr2(const int nv, const taps *t, const float *wb, const float *bias, int ow0, float *y, long plane,
                      int mv, __m256i last, int act) {
    __m256 acc[CB2][NVMAX];
#pragma GCC unroll 4
    for (int o = 0; o < CB2; o++) {
        __m256 b = bias ? _mm256_set1_ps(bias[o]) : _mm256_setzero_ps();
#pragma GCC unroll 3
        for (int n = 0; n < nv; n++) acc[o][n] = b;
        if (o < mv) {
            float *next = y + o * plane + ow0 + 8 * nv;
            __builtin_prefetch(next, 1, 3);
            __builtin_prefetch(next + 16, 1, 3);
        }
    }
    for (int c = 0; c < t->C; c++)
        for (int kh = t->kh0; kh < t->kh1; kh++) {
            const float *row = t->buf + c * t->chan + (long)(t->r0 + kh * t->DH) * t->row + ow0;
            const float *w = wb + (long)(c * t->KH + kh) * t->KW * CB;
            for (int kw = 0; kw < t->KW; kw++, w += CB) {
                const float *s = row + t->kwoff[kw];
                __m256 v[NVMAX];
#pragma GCC unroll 3
                for (int n = 0; n < nv; n++) v[n] = _mm256_loadu_ps(s + 8 * n);
#pragma GCC unroll 4
                for (int o = 0; o < CB2; o++) {
                    __m256 wv = _mm256_broadcast_ss(w + o);
#pragma GCC unroll 3
                    for (int n = 0; n < nv; n++) acc[o][n] = _mm256_fmadd_ps(v[n], wv, acc[o][n]);
                }
            }
        }
    if (act == STEM_ACT_RELU || act == STEM_ACT_RELU6) {
        __m256 zero = _mm256_setzero_ps(), six = _mm256_set1_ps(6.0f);
#pragma GCC unroll 4
        for (int o = 0; o < CB2; o++)
#pragma GCC unroll 3
            for (int n = 0; n < nv; n++) {
                acc[o][n] = _mm256_max_ps(zero, acc[o][n]);
                if (act == STEM_ACT_RELU6) acc[o][n] = _mm256_min_ps(six, acc[o][n]);
            }
    }
#pragma GCC unroll 4
    for (int o = 0; o < CB2; o++) {
        if (o >= mv) break;
        float *yo = y + o * plane + ow0;
#pragma GCC unroll 3
        for (int n = 0; n < nv; n++) {
            if (n == nv - 1) _mm256_maskstore_ps(yo + 8 * n, last, acc[o][n]);
            else _mm256_storeu_ps(yo + 8 * n, acc[o][n]);
        }
    }
}

// block_bias is the bias of output channels [mb, mb+CB) (NULL: none), the
// micro-kernels reading all CB: a partial last block's is copied into pad,
// zero filled.
static const float *block_bias(const float *bias, int mb, int M, float *pad) {
    if (!bias || M - mb >= CB) return bias ? bias + mb : 0;
    for (int o = 0; o < CB; o++) pad[o] = mb + o < M ? bias[mb + o] : 0;
    return pad;
}

static AVX512 void row512(const taps *t, const float *wp, const float *bias, float *y, int M, int OW, long plane,
                          int act) {
    int vecs = (OW + 15) / 16;
    for (int mb = 0; mb < M; mb += CB) {
        const float *wb = wp + (long)mb * t->C * t->KH * t->KW;
        float bpad[CB];
        const float *bb = block_bias(bias, mb, M, bpad);
        int mv = M - mb < CB ? M - mb : CB;
        float *yb = y + mb * plane;
        for (int v = 0; v < vecs; v += NVMAX) {
            int nv = vecs - v < NVMAX ? vecs - v : NVMAX;
            int tail = OW - (v + nv - 1) * 16; // pixels in the last vector
            __mmask16 last = tail >= 16 ? 0xFFFF : (__mmask16)((1u << tail) - 1);
            switch (nv) {
            case 3: ukr512(3, t, wb, bb, v * 16, yb, plane, mv, last, act); break;
            case 2: ukr512(2, t, wb, bb, v * 16, yb, plane, mv, last, act); break;
            default: ukr512(1, t, wb, bb, v * 16, yb, plane, mv, last, act); break;
            }
        }
    }
}

static AVX2 void row2(const taps *t, const float *wp, const float *bias, float *y, int M, int OW, long plane,
                      int act) {
    int vecs = (OW + 7) / 8;
    __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for (int mb = 0; mb < M; mb += CB) {
        float bpad[CB];
        const float *bb = block_bias(bias, mb, M, bpad);
        for (int h = 0; h < CB && mb + h < M; h += CB2) {
            const float *wb = wp + (long)mb * t->C * t->KH * t->KW + h;
            int mv = M - mb - h < CB2 ? M - mb - h : CB2;
            float *yb = y + (mb + h) * plane;
            const float *bh = bb ? bb + h : 0;
            for (int v = 0; v < vecs; v += NVMAX) {
                int nv = vecs - v < NVMAX ? vecs - v : NVMAX;
                __m256i last = _mm256_cmpgt_epi32(_mm256_set1_epi32(OW - (v + nv - 1) * 8), lane);
                switch (nv) {
                case 3: ukr2(3, t, wb, bh, v * 8, yb, plane, mv, last, act); break;
                case 2: ukr2(2, t, wb, bh, v * 8, yb, plane, mv, last, act); break;
                default: ukr2(1, t, wb, bh, v * 8, yb, plane, mv, last, act); break;
                }
            }
        }
    }
}

int conv_stem_f32(const float *x, const float *wp, const float *bias, const float *z, float *y, int C, int H, int W,
                  int M, int KH, int KW, int SH, int SW, int PH, int PW, int DH, int DW, int OH, int OW, int oh0,
                  int oh1, int act, float *buf) {
    int level = gk_nn_isa();
    if (level < GK_ISA_AVX2 || !conv_stem_supported(KW, SW)) return -1;
    // ReLU and ReLU6 in registers, unless a residual must be added first;
    // then, and for the other activations, the epilogue on each output row
    // of all M channels (OW*M floats, in L1) right after it is written.
    int kact = !z && (act == STEM_ACT_RELU || act == STEM_ACT_RELU6) ? act : 0;
    int epi = z || (act != 0 && !kact);
    if (oh1 <= oh0) return 0;
    int wq = phase_width(OW, KW, SW, DW);
    int ih0 = oh0 * SH - PH, rows = (oh1 - oh0 - 1) * SH + (KH - 1) * DH + 1;
    conv_fill_phases(x, buf, C, H, W, PW, SW, ih0, rows, wq);
    taps t = {.buf = buf, .chan = (long)rows * SW * wq, .row = (long)SW * wq, .C = C, .KH = KH, .KW = KW, .DH = DH};
    for (int kw = 0; kw < KW; kw++) t.kwoff[kw] = (kw * DW) % SW * wq + (kw * DW) / SW;
    long plane = (long)OH * OW;
    for (int oh = oh0; oh < oh1; oh++) {
        // kernel rows whose input row ih = oh*SH - PH + kh*DH is inside the image
        int top = oh * SH - PH, kh0 = 0, kh1 = KH;
        if (top < 0) kh0 = (-top + DH - 1) / DH;
        if (H - 1 - top < 0) kh1 = 0;
        else if ((H - 1 - top) / DH + 1 < KH) kh1 = (H - 1 - top) / DH + 1;
        t.kh0 = kh0, t.kh1 = kh1 > kh0 ? kh1 : kh0;
        t.r0 = (oh - oh0) * SH;
        float *yr = y + (long)oh * OW;
        if (level >= GK_ISA_AVX512) row512(&t, wp, bias, yr, M, OW, plane, kact);
        else row2(&t, wp, bias, yr, M, OW, plane, kact);
        if (epi) epi_rows_f32(yr, z ? z + (long)oh * OW : 0, M, OW, plane, act);
    }
    return 0;
}
