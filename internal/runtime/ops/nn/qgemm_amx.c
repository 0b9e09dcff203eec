// The 8-bit GEMM on AMX (Intel's tile unit, Sapphire Rapids on): TDPBUSD
// multiplies a 16x64 tile of uint8 A by a 64x16 tile of int8 B into 16x16
// int32 sums, the same wrapping sums as vpdpbusd (qgemm.c's VNNI kernel), so
// the integers are unchanged; only the speed is (16 times the multiply-adds
// per instruction). Packed B's strips (qgemm.h: groups of 4 k, 16 columns,
// 64 bytes per group) are already AMX's B layout, and packed A's rows (kp
// bytes) its A layout with stride kp.
// (no contraction: the float epilogue is a multiply, then an add, as the
// separate Cast, Mul and Add compute it)
#pragma GCC optimize("fp-contract=off")
#include "qgemm.h"
#include "isa.h"
#include <cpuid.h>
#include <immintrin.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

// Linux hands out the tile state only on request (arch_prctl
// ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA), once per process: the
// permission covers every thread. GKCONV_INT8_AMX=0 turns the path off (to
// measure the VNNI kernel on an AMX machine).
static int amx_state; // 0 not probed, 1 usable, 2 not

int gk_qgemm_amx_ok(void) {
    int s = __atomic_load_n(&amx_state, __ATOMIC_ACQUIRE);
    if (s) return s == 1;
    int ok = 0;
    unsigned a, b, c, d;
    const char *env = getenv("GKCONV_INT8_AMX");
    if (gk_nn_isa() >= GK_ISA_AVX512 && !(env && strcmp(env, "0") == 0) && __get_cpuid_count(7, 0, &a, &b, &c, &d) &&
        (d >> 24 & 1) && (d >> 25 & 1))
        ok = syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XFEATURE_XTILEDATA */) == 0;
    __atomic_store_n(&amx_state, ok ? 1 : 2, __ATOMIC_RELEASE);
    return ok;
}

void gk_qgemm_amx_allow(int allow) { __atomic_store_n(&amx_state, allow ? 0 : 2, __ATOMIC_RELEASE); }

typedef struct {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} __attribute__((packed)) amx_cfg;

// zp_identity is one row's 16 sums v with the zero points taken out:
// v - zb*rowsum - za*colsum + K*za*zb (kzb = K*zb), wrapping int32.
__attribute__((target("avx512f"), always_inline)) static inline __m512i zp_identity(__m512i v, __m512i zbv, __m512i csv,
                                                                                  __m512i kzb, int32_t rowsum,
                                                                                  int32_t za) {
    const __m512i zar = _mm512_set1_epi32(za);
    v = _mm512_sub_epi32(v, _mm512_mullo_epi32(zbv, _mm512_set1_epi32(rowsum)));
    v = _mm512_sub_epi32(v, _mm512_mullo_epi32(zar, csv));
    return _mm512_add_epi32(v, _mm512_mullo_epi32(zar, kzb));
}

// finish writes the zero-point identity of a 16 x 64 tile of sums (row
// stride 64) to c, the columns past ncols left alone:
// C = dot - zb*rowsum - za*colsum + K*za*zb (wrapping int32, store_strip's).
__attribute__((target("avx512f"))) static void finish(const int32_t *acc, int rows, int ncols, int K,
                                                      const int32_t *rowsum, const int32_t *za, const int32_t *colsum,
                                                      const int32_t *zb, int32_t *c, int ldc) {
    for (int j = 0; j < ncols; j += 16) {
        const int nc = ncols - j;
        const __mmask16 m = nc >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << nc) - 1);
        const __m512i zbv = _mm512_maskz_loadu_epi32(m, zb + j), csv = _mm512_maskz_loadu_epi32(m, colsum + j);
        const __m512i kzb = _mm512_mullo_epi32(_mm512_set1_epi32(K), zbv);
        for (int r = 0; r < rows; r++) {
            __m512i v = zp_identity(_mm512_loadu_si512(acc + r * 64 + j), zbv, csv, kzb, rowsum[r], za[r]);
            // whole rows stored plainly: the epilogue reads them right back,
            // and loads wait for masked stores (no forwarding)
            if (nc >= 16)
                _mm512_storeu_si512(c + (int64_t)r * ldc + j, v);
            else
                _mm512_mask_storeu_epi32(c + (int64_t)r * ldc + j, m, v);
        }
    }
}

// finish_float is finish followed by the float form of e (gk_qepilogue_rows
// on the stored sums, qconv_direct.c) in registers: (float)v * scale, then
// + bias (not fused into one rounding), then the ReLU form; the float32
// written over c. r0 and col0 number the tile's first row and column for
// e's per-row and per-column values. Storing int32 and reading it back
// for a second pass was as long as the 768-deep tile products themselves.
__attribute__((target("avx512f"))) static void finish_float(const int32_t *acc, int rows, int ncols, int K,
                                                            const int32_t *rowsum, const int32_t *za,
                                                            const int32_t *colsum, const int32_t *zb,
                                                            const gk_qepi *e, int r0, int col0, float *y, int ldy) {
    const int hasb = e->bias_mode != GK_QEPI_NONE;
    for (int j = 0; j < ncols; j += 16) {
        const int nc = ncols - j;
        const __mmask16 m = nc >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << nc) - 1);
        const __m512i zbv = _mm512_maskz_loadu_epi32(m, zb + j), csv = _mm512_maskz_loadu_epi32(m, colsum + j);
        const __m512i kzb = _mm512_mullo_epi32(_mm512_set1_epi32(K), zbv);
        const __m512 scol = e->scale_mode == GK_QEPI_PER_COL ? _mm512_maskz_loadu_ps(m, e->scale + col0 + j)
                                                             : _mm512_setzero_ps();
        const __m512 bcol = e->bias_mode == GK_QEPI_PER_COL ? _mm512_maskz_loadu_ps(m, e->bias + col0 + j)
                                                            : _mm512_setzero_ps();
        for (int r = 0; r < rows; r++) {
            const int ri = r0 + r;
            __m512i v = zp_identity(_mm512_loadu_si512(acc + r * 64 + j), zbv, csv, kzb, rowsum[r], za[r]);
            const __m512 sv = e->scale_mode == GK_QEPI_PER_COL   ? scol
                              : e->scale_mode == GK_QEPI_PER_ROW ? _mm512_set1_ps(e->scale[ri])
                                                                 : _mm512_set1_ps(e->scale[0]);
            __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(v), sv);
            if (hasb) {
                const __m512 bv = e->bias_mode == GK_QEPI_PER_COL   ? bcol
                                  : e->bias_mode == GK_QEPI_PER_ROW ? _mm512_set1_ps(e->bias[ri])
                                                                    : _mm512_set1_ps(e->bias[0]);
                f = _mm512_add_ps(f, bv);
            }
            if (e->relu == 1) // ReLU's: f > 0 or NaN stays, else +0
                f = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(f, _mm512_setzero_ps(), _CMP_NLE_UQ), f);
            else if (e->relu == 2) // Maximum(x, +0)'s: only f < 0 becomes +0
                f = _mm512_mask_mov_ps(f, _mm512_cmp_ps_mask(f, _mm512_setzero_ps(), _CMP_LT_OQ), _mm512_setzero_ps());
            _mm512_mask_storeu_ps(y + (int64_t)r * ldy + j, m, f);
        }
    }
}

// finish_requant is finish followed by e's requantizing form (qout) in
// registers, as gk_qepilogue_rows and gk_requant compute it: + qbias of the
// row (int32, wrapping), (float)v * scale (scalar or per row), rounded half
// to even, + zero point, clamped to [qlo, qhi], the low byte written at the
// sum's own index. Storing the int32 tile, adding the bias in a pass and
// requantizing each 64-column row in a call of its own was a tenth of QDQ
// resnet18's time.
__attribute__((target("avx512f,avx512bw,avx512vl"))) static void finish_requant(
    const int32_t *acc, int rows, int ncols, int K, const int32_t *rowsum, const int32_t *za, const int32_t *colsum,
    const int32_t *zb, const gk_qepi *e, int r0, int32_t *c, int ldc) {
    const __m512 flo = _mm512_set1_ps((float)e->qlo), fhi = _mm512_set1_ps((float)e->qhi),
                 fz = _mm512_set1_ps((float)e->qzp);
    uint8_t *out = e->qout + (c - e->cbase);
    for (int j = 0; j < ncols; j += 16) {
        const int nc = ncols - j;
        const __mmask16 m = nc >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << nc) - 1);
        const __m512i zbv = _mm512_maskz_loadu_epi32(m, zb + j), csv = _mm512_maskz_loadu_epi32(m, colsum + j);
        const __m512i kzb = _mm512_mullo_epi32(_mm512_set1_epi32(K), zbv);
        for (int r = 0; r < rows; r++) {
            const int ri = r0 + r;
            __m512i v = zp_identity(_mm512_loadu_si512(acc + r * 64 + j), zbv, csv, kzb, rowsum[r], za[r]);
            if (e->qbias) v = _mm512_add_epi32(v, _mm512_set1_epi32(e->qbias[ri]));
            const __m512 sv = _mm512_set1_ps(e->scale[e->scale_mode == GK_QEPI_PER_ROW ? ri : 0]);
            __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(v), sv);
            f = _mm512_add_ps(_mm512_roundscale_ps(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), fz);
            f = _mm512_min_ps(_mm512_max_ps(f, flo), fhi);
            const __m128i b = _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(f)); // clamped: the low byte is the value
            _mm_mask_storeu_epi8(out + (int64_t)r * ldc + j, m, b);
        }
    }
}

// gk_qgemm_amx does gk_qgemm's work for rows [0, rows) of packed A (ap,
// stride kp; arows rows readable from ap) against strips [s0, s1) of packed
// B, 16 rows by 4 strips per step, the tail of K through zero-padded copies.
__attribute__((target("amx-tile,amx-int8,avx512f"))) void gk_qgemm_amx(
    const uint8_t *ap, int rows, int arows, int kp, int K, int N, const int8_t *bp, int s0, int s1,
    const int32_t *rowsum, const int32_t *zar, const int32_t *colsum, const int32_t *zb, int32_t *c, int ldc,
    const gk_qepi *e, int i0) {
    amx_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int t = 0; t < 8; t++) cfg.rows[t] = 16, cfg.colsb[t] = 64;
    _tile_loadconfig(&cfg);
    const int kfull = kp / 64 * 64, kt = kp - kfull;
    int32_t *acc = aligned_alloc(64, 16 * 64 * 4);
    uint8_t *atail = aligned_alloc(64, 16 * 64), *apad = NULL;
    int8_t *btail = aligned_alloc(64, 4 * 16 * 64);
    for (int s = s0; s < s1; s += 4) {
        const int nst = s1 - s < 4 ? s1 - s : 4, j0 = s * QG_NR;
        const int ncols = N - j0 < nst * QG_NR ? N - j0 : nst * QG_NR;
        const int8_t *bs = bp + (int64_t)s * kp * QG_NR;
        if (kt) { // the strips' last k groups, zero-padded to 64 bytes of k
            memset(btail, 0, 4 * 16 * 64);
            for (int t = 0; t < nst; t++) memcpy(btail + t * 1024, bs + (int64_t)t * kp * QG_NR + (int64_t)kfull * QG_NR, (size_t)kt * QG_NR);
        }
        for (int r0 = 0; r0 < rows; r0 += 16) {
            const int mr = rows - r0 < 16 ? rows - r0 : 16;
            const uint8_t *a = ap + (int64_t)r0 * kp;
            if (r0 + 16 > arows) { // rows past A's end: a padded copy
                if (!apad) apad = aligned_alloc(64, ((size_t)16 * kp + 63) / 64 * 64);
                memset(apad, 0, (size_t)16 * kp);
                memcpy(apad, a, (size_t)mr * kp);
                a = apad;
            }
            _tile_zero(0);
            _tile_zero(1);
            _tile_zero(2);
            _tile_zero(3);
            for (int k0 = 0; k0 < kfull + (kt ? 64 : 0); k0 += 64) {
                const int tail = k0 == kfull;
                if (tail) {
                    memset(atail, 0, 16 * 64);
                    for (int r = 0; r < 16; r++) memcpy(atail + r * 64, a + (int64_t)r * kp + kfull, (size_t)kt);
                    _tile_loadd(4, atail, 64);
                } else {
                    _tile_loadd(4, a + k0, kp);
                }
                const int8_t *b0 = tail ? btail : bs + (int64_t)k0 * QG_NR;
                const int64_t bstep = tail ? 1024 : (int64_t)kp * QG_NR;
                _tile_loadd(5, b0, 64);
                _tile_dpbusd(0, 4, 5);
                if (nst > 1) {
                    _tile_loadd(6, b0 + bstep, 64);
                    _tile_dpbusd(1, 4, 6);
                }
                if (nst > 2) {
                    _tile_loadd(7, b0 + 2 * bstep, 64);
                    _tile_dpbusd(2, 4, 7);
                }
                if (nst > 3) {
                    _tile_loadd(5, b0 + 3 * bstep, 64);
                    _tile_dpbusd(3, 4, 5);
                }
            }
            _tile_stored(0, acc, 256);
            if (nst > 1) _tile_stored(1, acc + 16, 256);
            if (nst > 2) _tile_stored(2, acc + 32, 256);
            if (nst > 3) _tile_stored(3, acc + 48, 256);
            int32_t *cc = c + (int64_t)r0 * ldc + j0;
            if (e && !e->qout) {
                finish_float(acc, mr, ncols, K, rowsum + r0, zar + r0, colsum + j0, zb + j0, e, i0 + r0, j0, (float *)cc, ldc);
                continue;
            }
            if (e && e->qout && e->scale_mode != GK_QEPI_PER_COL) {
                finish_requant(acc, mr, ncols, K, rowsum + r0, zar + r0, colsum + j0, zb + j0, e, i0 + r0, cc, ldc);
                continue;
            }
            finish(acc, mr, ncols, K, rowsum + r0, zar + r0, colsum + j0, zb + j0, cc, ldc);
            if (e) gk_qepilogue_rows(cc, mr, ncols, ldc, e, i0 + r0, j0, (float *)cc, ldc);
        }
    }
    _tile_release();
    free(acc);
    free(atail);
    free(apad);
    free(btail);
}
