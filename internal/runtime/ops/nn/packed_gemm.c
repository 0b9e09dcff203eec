// Packed-B SGEMM: C = op(A) * B where B is a constant weight packed offline
// (internal/ir/packed_layout.go) as panels of nr columns, [ceil(n/nr)][k][nr],
// zero padded. GotoBLAS blocking: K in blocks of KC so one kc x 32 slice of a
// panel (32 KiB) stays in L1 while every MR-row sliver of the packed A block
// (MC x KC, in L2) streams past it.
//
// Code paths, picked once at run time: AVX-512F (12x32 micro-kernel, 24 zmm
// accumulators, A broadcast from the packed sliver by the FMA's memory
// operand), AVX2+FMA (3x32 micro-kernel, 12 ymm accumulators),
// and a portable loop for other CPUs and for panel widths other than 32.
// While a panel slice is in use the first two slivers prefetch the next one
// into L2 (weights stream from L3/DRAM; measured +10-20% on bert shapes).
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "packed_gemm.h"
#include "isa.h"
#include "gk_actvec.h"
#include "conv_act.h"

#define NR 32   // panel width of the SIMD paths
#define KC 256  // K block: a KC x NR slice of B is 32 KiB
#define MC 240  // M block (multiple of both MRs): packed A block <= 240 KiB
#define MR512 12
#define MR256 3

// Per-OS-thread buffer for packed A. A cgo call runs on one OS thread from
// start to end, so the buffer is never shared; it only grows.
static __thread float *abuf;
static __thread size_t abuf_cap;

static float *get_abuf(size_t n) {
    if (n > abuf_cap) {
        free(abuf);
        size_t bytes = (n * sizeof(float) + 63) & ~(size_t)63;
        abuf = aligned_alloc(64, bytes);
        abuf_cap = abuf ? n : 0;
    }
    return abuf;
}

// Per-OS-thread, cache-line aligned copy of one KC x NR slice of B. Weights
// in a .mindir mapping sit at any byte offset (protobuf raw_data), so every
// 64-byte load of B straddles two cache lines and the micro-kernel's B loads
// run at half speed (bert: ~150 instead of ~185 GFLOP/s). A slice is copied
// once and then read by every MR-row sliver of the packed A block.
static __thread float *bbuf;

static float *get_bbuf(void) {
    if (!bbuf) bbuf = aligned_alloc(64, (size_t)KC * NR * sizeof(float));
    return bbuf;
}

// aligned_slice returns bs (kc rows of NR floats) or, when bs is not 64-byte
// aligned and a scratch buffer exists, an aligned copy of it.
static const float *aligned_slice(const float *bs, int kc) {
    if (((uintptr_t)bs & 63) == 0) return bs;
    float *d = get_bbuf();
    if (!d) return bs;
    memcpy(d, bs, (size_t)kc * NR * sizeof(float));
    return d;
}

// pack_a copies rows [i0, i0+mc) x cols [k0, k0+kc) of op(A) into slivers of
// mr rows, [ceil(mc/mr)][kc][mr], zero padding the last sliver's rows.
static void pack_a(int mr, const float *a, int lda, int trans, int i0, int mc,
                   int k0, int kc, float *dst) {
    for (int ib = 0; ib < mc; ib += mr) {
        int rows = mc - ib < mr ? mc - ib : mr;
        if (!trans) {
            for (int r = 0; r < rows; r++) {
                const float *src = a + (size_t)(i0 + ib + r) * lda + k0;
                float *d = dst + r;
                for (int p = 0; p < kc; p++) d[(size_t)p * mr] = src[p];
            }
            for (int r = rows; r < mr; r++)
                for (int p = 0; p < kc; p++) dst[(size_t)p * mr + r] = 0;
        } else {
            for (int p = 0; p < kc; p++) {
                const float *src = a + (size_t)(k0 + p) * lda + i0 + ib;
                float *d = dst + (size_t)p * mr;
                int r = 0;
                for (; r < rows; r++) d[r] = src[r];
                for (; r < mr; r++) d[r] = 0;
            }
        }
        dst += (size_t)kc * mr;
    }
}


// sliver_kernel multiplies an mr x kc sliver of packed A by a kc x NR slice
// of a B panel into C (acc: add to C; bias and act after the last K block
// where the kernel applies them, else ignored); pf: one line to prefetch
// per k step.
typedef void (*sliver_kernel)(int mr, int kc, const float *ap, const float *bp, float *c, int ldc,
                              int acc, const float *bias, int act, int ncols, const char *pf);

// sliver_pf is the line sliver s of a K block prefetches per k step: the
// first two prefetch the next B slice (next; NULL: none) into L2, one line
// each per k step (2*kc lines = kc x 32 floats); the others their own,
// cached, A sliver ap.
static inline const char *sliver_pf(const float *next, int s, int kc, const float *ap) {
    return next && s < 2 ? (const char *)(next + (size_t)s * kc * 16) : (const char *)ap;
}

// gemm_panels is the order for m <= MC (every transformer GEMM at batch 1):
// all of op(A) is packed once, then each B panel is walked from top to bottom
// (K blocks innermost), so the weights stream through memory in address
// order and the hardware prefetcher sees one sequential read of B, and each
// C tile is written once, not once per K block (for an M=64 GEMM with
// 50257 columns, 13 MB of C: 18% faster than the K-block-outer order at
// AVX2).
static int gemm_panels(int mr_max, sliver_kernel ukr, int m, int n, int k, const float *a, int lda,
                       int trans_a, const float *bp, const float *bias, int act, float *c, int ldc,
                       int p0, int p1) {
    size_t mp = (size_t)(m + mr_max - 1) / mr_max * mr_max;
    float *pa = get_abuf(mp * (size_t)k);
    if (!pa) return -1;
    for (int pc = 0; pc < k; pc += KC) {
        int kc = k - pc < KC ? k - pc : KC;
        pack_a(mr_max, a, lda, trans_a, 0, m, pc, kc, pa + mp * (size_t)pc);
    }
    const float *bend = bp + (size_t)p1 * k * NR;
    for (int p = p0; p < p1; p++) {
        int j0 = p * NR;
        int ncols = n - j0 < NR ? n - j0 : NR;
        for (int pc = 0; pc < k; pc += KC) {
            int kc = k - pc < KC ? k - pc : KC;
            const float *bs = bp + (size_t)p * k * NR + (size_t)pc * NR;
            const float *bsa = m > mr_max ? aligned_slice(bs, kc) : bs;
            const float *next = bs + (size_t)KC * NR;
            if (next >= bend) next = NULL;
            const float *pab = pa + mp * (size_t)pc;
            for (int ir = 0, s = 0; ir < m; ir += mr_max, s++) {
                int mr = m - ir < mr_max ? m - ir : mr_max;
                const float *ap = pab + (size_t)ir * kc;
                ukr(mr, kc, ap, bsa, c + (size_t)ir * ldc + j0, ldc, pc > 0,
                    bias && pc + kc == k ? bias + j0 : NULL, pc + kc == k ? act : 0, ncols,
                    sliver_pf(next, s, kc, ap));
            }
        }
    }
    return 0;
}

// gemm_blocked is GotoBLAS's order for m > MC: per K block, per block of MC
// rows of A (packed), every B panel's slice of that K block.
static int gemm_blocked(int mr_max, sliver_kernel ukr, int m, int n, int k, const float *a, int lda,
                        int trans_a, const float *bp, const float *bias, int act, float *c, int ldc,
                        int p0, int p1) {
    int kcmax = k < KC ? k : KC;
    float *pa = get_abuf((size_t)((MC + mr_max - 1) / mr_max * mr_max) * kcmax);
    if (!pa) return -1;
    for (int pc = 0; pc < k; pc += KC) {
        int kc = k - pc < KC ? k - pc : KC;
        for (int ic = 0; ic < m; ic += MC) {
            int mc = m - ic < MC ? m - ic : MC;
            pack_a(mr_max, a, lda, trans_a, ic, mc, pc, kc, pa);
            for (int p = p0; p < p1; p++) {
                const float *bs = bp + (size_t)p * k * NR + (size_t)pc * NR;
                const float *bsa = mc > mr_max ? aligned_slice(bs, kc) : bs;
                int j0 = p * NR;
                int ncols = n - j0 < NR ? n - j0 : NR;
                const float *next = p + 1 < p1 ? bs + (size_t)k * NR
                                  : pc + KC < k ? bp + (size_t)p0 * k * NR + (size_t)(pc + KC) * NR
                                  : NULL;
                for (int ir = 0, s = 0; ir < mc; ir += mr_max, s++) {
                    int mr = mc - ir < mr_max ? mc - ir : mr_max;
                    const float *ap = pa + (size_t)ir * kc;
                    ukr(mr, kc, ap, bsa, c + (size_t)(ic + ir) * ldc + j0, ldc, pc > 0,
                        bias && pc + kc == k ? bias + j0 : NULL, pc + kc == k ? act : 0, ncols,
                        sliver_pf(next, s, kc, ap));
                }
            }
        }
    }
    return 0;
}

// gemm_slivers runs the GEMM on sliver kernel ukr of mr_max rows in the
// order for its m.
static int gemm_slivers(int mr_max, sliver_kernel ukr, int m, int n, int k, const float *a, int lda,
                        int trans_a, const float *bp, const float *bias, int act, float *c, int ldc,
                        int p0, int p1) {
    return (m <= MC ? gemm_panels : gemm_blocked)(mr_max, ukr, m, n, k, a, lda, trans_a, bp, bias, act, c,
                                                  ldc, p0, p1);
}

// ---------------------------------------------------------------- AVX-512

#define AVX512 __attribute__((target("avx512f")))
#define INLINE static inline __attribute__((always_inline))

// ukr512 multiplies an mr x kc sliver of packed A (row stride MR512) by a
// kc x 32 slice of a B panel into C rows [0, mr) and the columns in m0/m1.
// mr is a constant at every call site so the accumulators become registers.
// wide: the panel has more than 16 columns left (both zmm of each row);
// otherwise only the first, so a last panel of 16 or fewer columns (80 or
// 112 output channels) costs one FMA per row and k step, not two.
INLINE AVX512 void ukr512(const int mr, const int wide, int kc, const float *ap, const float *bp,
                          float *c, int ldc, int acc, const float *bias,
                          __mmask16 m0, __mmask16 m1, const char *pf) {
    __m512 c0[MR512], c1[MR512];
#pragma GCC unroll 12
    for (int r = 0; r < mr; r++) {
        c0[r] = _mm512_setzero_ps();
        c1[r] = _mm512_setzero_ps();
    }
#pragma GCC unroll 4
    for (int p = 0; p < kc; p++) {
        __m512 b0 = _mm512_loadu_ps(bp);
        __m512 b1 = wide ? _mm512_loadu_ps(bp + 16) : b0;
        // Keep B in registers: otherwise gcc folds the B loads into all 2*mr
        // FMAs and the loop becomes bound by loads, not FMAs.
        __asm__("" : "+v"(b0), "+v"(b1));
        _mm_prefetch(pf + (size_t)p * 64, _MM_HINT_T1);
#pragma GCC unroll 12
        for (int r = 0; r < mr; r++) {
            __m512 av = _mm512_set1_ps(ap[r]);
            c0[r] = _mm512_fmadd_ps(av, b0, c0[r]);
            if (wide) c1[r] = _mm512_fmadd_ps(av, b1, c1[r]);
        }
        ap += MR512;
        bp += NR;
    }
    __m512 bias0 = _mm512_setzero_ps(), bias1 = _mm512_setzero_ps();
    if (bias) {
        bias0 = _mm512_maskz_loadu_ps(m0, bias);
        bias1 = _mm512_maskz_loadu_ps(m1, bias + 16);
    }
#pragma GCC unroll 12
    for (int r = 0; r < mr; r++) {
        float *cr = c + (size_t)r * ldc;
        if (acc) {
            c0[r] = _mm512_add_ps(c0[r], _mm512_maskz_loadu_ps(m0, cr));
            if (wide) c1[r] = _mm512_add_ps(c1[r], _mm512_maskz_loadu_ps(m1, cr + 16));
        }
        if (bias) { // after the last K block: (A*B) + bias, as MatMul then Add
            c0[r] = _mm512_add_ps(c0[r], bias0);
            if (wide) c1[r] = _mm512_add_ps(c1[r], bias1);
        }
        _mm512_mask_storeu_ps(cr, m0, c0[r]);
        if (wide) _mm512_mask_storeu_ps(cr + 16, m1, c1[r]);
    }
}

static AVX512 void ukr512_any(int mr, int kc, const float *ap, const float *bp,
                              float *c, int ldc, int acc, const float *bias, int act, int ncols,
                              const char *pf) {
    __mmask16 m0 = ncols >= 16 ? 0xFFFF : (__mmask16)((1u << ncols) - 1);
    __mmask16 m1 = ncols >= 32 ? 0xFFFF : ncols <= 16 ? 0 : (__mmask16)((1u << (ncols - 16)) - 1);
#define UKR(R) (m1 ? ukr512(R, 1, kc, ap, bp, c, ldc, acc, bias, m0, m1, pf) \
                   : ukr512(R, 0, kc, ap, bp, c, ldc, acc, bias, m0, m1, pf))
    GK_SWITCH_MR12(mr, UKR)
#undef UKR
    // The fused activation (MatMulActivationFusion: RELU, RELU6; act512 of
    // gk_actvec.h) after the last K block, on the rows just stored (in L1), so
    // the micro-kernel itself is the same code with and without one.
    if (act)
        for (int r = 0; r < mr; r++) {
            float *cr = c + (size_t)r * ldc;
            _mm512_mask_storeu_ps(cr, m0, act512(_mm512_maskz_loadu_ps(m0, cr), act));
            if (m1) _mm512_mask_storeu_ps(cr + 16, m1, act512(_mm512_maskz_loadu_ps(m1, cr + 16), act));
        }
}

// ---------------------------------------------------------------- AVX2

#define AVX2 __attribute__((target("avx2,fma")))

// ukr256: mr (<= 3) rows x 8*nv (<= 32) columns as nv ymm per row: with nv
// = 4, 12 accumulators and 4 B registers fill the 16 ymm registers. Full
// panels only; the caller routes partial panels through a scratch tile, with
// nv the vectors that hold their columns (80 or 112 output channels end in a
// panel of 16: half the FMAs).
INLINE AVX2 void ukr256(const int mr, const int nv, int kc, const float *ap, const float *bp,
                        float *c, int ldc, int acc, const char *pf) {
    __m256 cc[MR256][4];
#pragma GCC unroll 3
    for (int r = 0; r < mr; r++)
        for (int j = 0; j < nv; j++) cc[r][j] = _mm256_setzero_ps();
    for (int p = 0; p < kc; p++) {
        __m256 b[4];
        for (int j = 0; j < nv; j++) b[j] = _mm256_loadu_ps(bp + 8 * j);
        _mm_prefetch(pf + (size_t)p * 64, _MM_HINT_T1);
#pragma GCC unroll 3
        for (int r = 0; r < mr; r++) {
            __m256 av = _mm256_broadcast_ss(ap + r);
            for (int j = 0; j < nv; j++) cc[r][j] = _mm256_fmadd_ps(av, b[j], cc[r][j]);
        }
        ap += MR256;
        bp += NR;
    }
#pragma GCC unroll 3
    for (int r = 0; r < mr; r++) {
        float *cr = c + (size_t)r * ldc;
        for (int j = 0; j < nv; j++) {
            __m256 v = cc[r][j];
            if (acc) v = _mm256_add_ps(v, _mm256_loadu_ps(cr + 8 * j));
            _mm256_storeu_ps(cr + 8 * j, v);
        }
    }
}

// ukr256_any leaves bias and act to epilogue(), after the whole GEMM.
static AVX2 void ukr256_any(int mr, int kc, const float *ap, const float *bp, float *c, int ldc,
                            int acc, const float *bias, int act, int ncols, const char *pf) {
    (void)bias, (void)act;
    float tmp[MR256 * NR];
    float *dst = c;
    int ld = ldc;
    if (ncols < NR) { // partial panel: compute into a scratch tile
        dst = tmp;
        ld = NR;
        if (acc)
            for (int r = 0; r < mr; r++) memcpy(tmp + r * NR, c + (size_t)r * ldc, ncols * sizeof(float));
    }
    int nv = (ncols + 7) / 8;
#define UKR(R) (nv == 4 ? ukr256(R, 4, kc, ap, bp, dst, ld, acc, pf)   \
                : nv == 3 ? ukr256(R, 3, kc, ap, bp, dst, ld, acc, pf) \
                : nv == 2 ? ukr256(R, 2, kc, ap, bp, dst, ld, acc, pf) \
                          : ukr256(R, 1, kc, ap, bp, dst, ld, acc, pf))
    switch (mr) {
    case 3: UKR(3); break;
    case 2: UKR(2); break;
    default: UKR(1); break;
    }
#undef UKR
    if (dst == tmp)
        for (int r = 0; r < mr; r++) memcpy(c + (size_t)r * ldc, tmp + r * NR, ncols * sizeof(float));
}

// ---------------------------------------------------------------- portable

// gemm_any handles every panel width and CPU: one row of C times one panel at
// a time, accumulated in a stack row (vectorised by gcc where it can).
static int gemm_any(int m, int n, int k, const float *a, int lda, int trans_a,
                     const float *bp, int nr, float *c, int ldc, int p0, int p1) {
    float stack[256];
    float *row = nr <= 256 ? stack : malloc((size_t)nr * sizeof(float));
    if (!row) return -1;
    for (int p = p0; p < p1; p++) {
        const float *panel = bp + (size_t)p * k * nr;
        int j0 = p * nr;
        int ncols = n - j0 < nr ? n - j0 : nr;
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < nr; j++) row[j] = 0;
            for (int q = 0; q < k; q++) {
                float av = trans_a ? a[(size_t)q * lda + i] : a[(size_t)i * lda + q];
                const float *b = panel + (size_t)q * nr;
                for (int j = 0; j < nr; j++) row[j] += av * b[j];
            }
            memcpy(c + (size_t)i * ldc + j0, row, ncols * sizeof(float));
        }
    }
    if (row != stack) free(row);
    return 0;
}

// ISA_ANY, ISA_AVX2 and ISA_AVX512 are isa.h's levels plus one.
enum { ISA_UNKNOWN, ISA_ANY, ISA_AVX2, ISA_AVX512 };
static int isa;

static int detect(void) {
    int v = __atomic_load_n(&isa, __ATOMIC_RELAXED);
    if (v != ISA_UNKNOWN) return v;
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) v = ISA_AVX512;
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) v = ISA_AVX2;
    else v = ISA_ANY;
    __atomic_store_n(&isa, v, __ATOMIC_RELAXED);
    return v;
}

int packed_sgemm_set_isa(int want) {
    __atomic_store_n(&isa, ISA_UNKNOWN, __ATOMIC_RELAXED);
    int best = detect();
    if (want <= ISA_UNKNOWN || want > best) return 0;
    __atomic_store_n(&isa, want, __ATOMIC_RELAXED);
    return 1;
}

const char *packed_sgemm_isa(void) {
    int v = detect();
    if (v > gk_nn_isa() + 1) v = gk_nn_isa() + 1;
    switch (v) {
    case ISA_AVX512: return "avx512f";
    case ISA_AVX2: return "avx2";
    default: return "portable";
    }
}

// epilogue adds bias[j] (NULL: none) to columns [p0*nr, min(p1*nr, n)) of
// every row of C, then applies act (1 RELU, 3 RELU6) with the convolution
// epilogue (conv_act.c), in that order: MatMul, Add, ReLU. The AVX-512 path
// does both per micro-kernel block instead (act512, the same bits).
static void epilogue(int m, int n, const float *bias, int act, int nr, float *c, int ldc, int p0, int p1) {
    int j0 = p0 * nr, j1 = p1 * nr < n ? p1 * nr : n;
    if (bias)
        for (int i = 0; i < m; i++) {
            float *cr = c + (size_t)i * ldc;
            for (int j = j0; j < j1; j++) cr[j] += bias[j];
        }
    if (act && j1 > j0) epi_rows_f32(c + j0, NULL, m, j1 - j0, ldc, act);
}

int packed_sgemm(int m, int n, int k, const float *a, int lda, int trans_a,
                 const float *bp, int nr, const float *bias, int act, float *c, int ldc, int p0, int p1) {
    if (m <= 0 || p1 <= p0) return 0;
    if (k <= 0) {
        for (int i = 0; i < m; i++)
            for (int p = p0; p < p1; p++) {
                int j0 = p * nr, j1 = j0 + nr < n ? j0 + nr : n;
                memset(c + (size_t)i * ldc + j0, 0, (size_t)(j1 - j0) * sizeof(float));
            }
        epilogue(m, n, bias, act, nr, c, ldc, p0, p1);
        return 0;
    }
    int v = nr == NR ? detect() : ISA_ANY, rc;
    if (v > gk_nn_isa() + 1) v = gk_nn_isa() + 1; // a level forced by GKCONV_CPU_ISA (isa.h)
    switch (v) {
    case ISA_AVX512: return gemm_slivers(MR512, ukr512_any, m, n, k, a, lda, trans_a, bp, bias, act, c, ldc, p0, p1);
    case ISA_AVX2: rc = gemm_slivers(MR256, ukr256_any, m, n, k, a, lda, trans_a, bp, NULL, 0, c, ldc, p0, p1); break;
    default: rc = gemm_any(m, n, k, a, lda, trans_a, bp, nr, c, ldc, p0, p1); break;
    }
    if (rc == 0) epilogue(m, n, bias, act, nr, c, ldc, p0, p1);
    return rc;
}
