#ifndef GKCONV_QGEMM_H
#define GKCONV_QGEMM_H
#include <stdint.h>
// Exact 8-bit integer GEMM (int32 accumulation) for MatMulInteger,
// QLinearMatMul, ConvInteger and QLinearConv: C[i][j] = sum_k (A[i][k] -
// za[i]) * (B[k][j] - zb[j]), A and B uint8 or int8.
//
// B is packed once (gk_qgemm_pack_b) into strips of QG_NR columns with K
// rounded up to a multiple of 4, as int8 (uint8 B is stored xor 0x80, i.e.
// b - 128, its zero points shifted to match), the layout vpdpbusd reads:
// strip s, group g of 4 k, column c, byte t at ((s*Kp/4 + g)*QG_NR + c)*4 + t.
// A is read as uint8 (int8 A xor 0x80, zero point + 128).
#define QG_NR 16

// gk_qgemm_packed_size is the byte size of packed B.
int64_t gk_qgemm_packed_size(int K, int N);
// gk_qgemm_pack_b packs B [K, N] (row stride ldb); colsum[j] gets the sum
// over k of the packed (int8) column j.
void gk_qgemm_pack_b(const uint8_t *b, int bsigned, int K, int N, int ldb, int8_t *out, int32_t *colsum);
// gk_qgemm computes rows [0, M) and strips [s0, s1) of C (row stride ldc).
// za: M per-row zero points of A as given (int8 or uint8 values); zb: N
// per-column zero points of the packed B (already shifted by -128 when B is
// uint8).
// apk and arow, when not NULL, are A packed by gk_qgemm_pack_a (a and lda
// are then not read). e, when not NULL, is applied to each tile right after
// it is stored, in place: c then holds float32 (gk_qepi below; its rows
// are numbered from 0 at this call's first row).
// sp, when not NULL, is apk split by gk_qgemm_split_a (rows from this
// call's first row; used on the AVX2 level only).
typedef struct gk_qepi gk_qepi;
typedef struct {
    const int8_t *sa;     // the safe part S, rows of kp bytes
    const int32_t *roff;  // row r's residuals are [roff[r], roff[r+1])
    const int32_t *rk;    // their taps k
    const int16_t *rv;    // and values
} gk_qsplit;
void gk_qgemm(int M, int K, int N, const uint8_t *a, int asigned, int lda, const int32_t *za, const int8_t *bp,
              const int32_t *colsum, const int32_t *zb, int s0, int s1, int32_t *c, int ldc, const uint8_t *apk,
              const int32_t *arow, const gk_qepi *e, const gk_qsplit *sp);
// gk_qgemm_split_a splits packed A (M rows of K) for the AVX2 vpmaddubsw
// tiles (see qgemm.c): sa gets M rows of (K+3)&~3 bytes, roff M+1 offsets,
// rk/rv the residuals; -1 when there would be more than cap of them.
int gk_qgemm_split_a(const uint8_t *apk, int M, int K, int8_t *sa, int32_t *roff, int32_t *rk, int16_t *rv, int cap);
// gk_qsplit_pair makes the pair (*u, *v) of signed values safe for
// vpmaddubsw against any unsigned bytes (qgemm.c): the excess of its
// positive part over 128, or of its negative part under -128, comes off the
// larger-magnitude element; it returns that residual (0: none) and sets
// *second when it was taken off *v.
static inline int gk_qsplit_pair(int *u, int *v, int *second) {
    int pos = (*u > 0 ? *u : 0) + (*v > 0 ? *v : 0), neg = (*u < 0 ? *u : 0) + (*v < 0 ? *v : 0), ex = 0;
    *second = 0;
    if (pos > 128) ex = pos - 128;
    else if (neg < -128) ex = neg + 128;
    else return 0;
    if (ex > 0 ? *u >= *v : *u <= *v) *u -= ex;
    else {
        *v -= ex;
        *second = 1;
    }
    return ex;
}
// gk_qgemm_wants_split: whether gk_qgemm at the current level uses a split A.
int gk_qgemm_wants_split(void);
// gk_qgemm_pack_a packs A [M, K] (row stride lda) once: rows of K rounded
// up to a multiple of 4, as uint8 (int8 A xor 0x80), and their sums.
void gk_qgemm_pack_a(const uint8_t *a, int asigned, int M, int K, int lda, uint8_t *out, int32_t *rowsum);
// gk_qgemm_kernel_name names the code path at the current level.
const char *gk_qgemm_kernel_name(void);
// gk_requant: y[j] = clamp(round_half_even(float(acc[j]) * mult[j or 0]) + zp, lo, hi) for n values.
void gk_requant(const int32_t *acc, int n, const float *mult, int per_col, int32_t zp, int lo, int hi, uint8_t *y,
                int ysigned);
// gk_requant_b is gk_requant of acc[j] + bias (wrapping int32 adds).
void gk_requant_b(const int32_t *acc, int32_t bias, int n, const float *mult, int per_col, int32_t zp, int lo, int hi,
                  uint8_t *y, int ysigned);
// gk_qconv_pack unfolds (im2col) the cg channels of an 8-bit x of one image
// and group straight into gk_qgemm's packed-B layout for the output
// positions [p0, p1) (p0 a multiple of QG_NR; out zeroed beforehand): B is
// [cg*kvol, outvol], padding reads pad (x's zero point); colsum as
// gk_qgemm_pack_b's. Geometry: in/k/stride/pad-begin/dilation/out per
// spatial dim (D, H, W).
void gk_qconv_pack(const uint8_t *x, int xsigned, int cg, const int *geo, uint8_t pad, int p0, int p1, int8_t *out,
                   int32_t *colsum);

// gk_qconv_pack_local is gk_qconv_pack writing the strips of [p0, p1) from
// out (its first strip) and their column sums from colsum[0] (p0 a
// multiple of QG_NR): a block of positions packed to be multiplied at once.
void gk_qconv_pack_local(const uint8_t *x, int xsigned, int cg, const int *geo, uint8_t pad, int p0, int p1,
                         int8_t *out, int32_t *colsum);

// The direct VNNI convolution (AVX-512 VNNI level only: gk_qconv_vnni_ok):
// 2-D windows of one image and group with no unfold. gk_qconv_vnni_prep
// lays x out (int8 channel quads in stride phase images) and reorders the
// M weights into buf (gk_qconv_vnni_size bytes); gk_qconv_vnni_rows then
// computes output rows [o0, o1) of all M channels into c (channel stride
// ldc), the same integers as gk_qgemm on the unfold, e applied in place
// when not NULL (rows numbered from 0 at channel 0).
int gk_qconv_vnni_ok(void);
int64_t gk_qconv_vnni_size(int cg, const int *geo, int M);
void gk_qconv_vnni_prep(const uint8_t *x, int xsigned, int cg, const int *geo, int xz, const uint8_t *w, int wsigned,
                        int M, uint8_t *buf);
void gk_qconv_vnni_rows(const uint8_t *buf, int xsigned, int cg, const int *geo, int xz, int wsigned,
                        const int32_t *wz, int M, int o0, int o1, int32_t *c, int ldc, const gk_qepi *e);

// The direct AVX2 convolution (gk_qconv_avx2_ok: AVX2 without VNNI): the
// VNNI layout of x (gk_qconv_vnni_prep with w NULL) and weights reordered
// and split once by gk_qconv_direct_split (sa: M rows of kv*ceil(cg/4)*4
// bytes; rowsum; roff M+1 offsets; rk/rv the residuals; -1 past cap);
// gk_qconv_avx2_rows computes output rows [o0, o1) as gk_qconv_vnni_rows.
int gk_qconv_avx2_ok(void);
void gk_qconv_avx2_u8(uint8_t *buf, int cg, const int *geo);
int gk_qconv_direct_split(const uint8_t *w, int wsigned, int M, int cg, int kv, int8_t *sa, int32_t *rowsum,
                          int32_t *roff, int32_t *rk, int16_t *rv, int cap);
void gk_qconv_avx2_rows(const uint8_t *buf, int xsigned, int cg, const int *geo, int xz, int wsigned,
                        const int32_t *wz, int M, const int8_t *sa, const int32_t *rowsum, const int32_t *roff,
                        const int32_t *rk, const int16_t *rv, int o0, int o1, int32_t *c, int ldc, const gk_qepi *e);

// gk_qdw_conv is a depthwise ConvInteger (one input and one output channel
// per group) for channels [c0, c1) of one image, computed directly:
// y[c] = sum over the window of (x - xz) * (w[c] - wz[c]) in int32, padded
// taps skipped (they contribute (xz - xz) * w = 0), the same integers as the
// unfold-and-GEMM path. geo is gk_qconv_pack's.
void gk_qdw_conv(const uint8_t *x, int xsigned, const uint8_t *w, int wsigned, const int32_t *wz, int xz,
                 const int *geo, int c0, int c1, int32_t *y);

// gk_qepi is the dequantizing epilogue of a fused ConvInteger/MatMulInteger
// -> Cast(float) -> Mul(scale) -> Add(bias) [-> Relu] chain: y =
// relu?((float)acc * scale + bias), rounded as the separate ops (one float32
// multiply, then one add; bias absent: no add). scale and bias hold one
// value (GK_QEPI_SCALAR), one per row (GK_QEPI_PER_ROW: indexed by the row
// number the caller passes) or one per column (GK_QEPI_PER_COL).
enum { GK_QEPI_NONE = 0, GK_QEPI_SCALAR = 1, GK_QEPI_PER_ROW = 2, GK_QEPI_PER_COL = 3 };
struct gk_qepi {
    const float *scale;
    int scale_mode; // SCALAR, PER_ROW or PER_COL
    const float *bias;
    int bias_mode; // NONE, SCALAR, PER_ROW or PER_COL
    int relu; // 0 none, 1 the ReLU op's (-0 -> +0), 2 Maximum(x, +0)'s (0 > x ? 0 : x)
    // The requantizing form (a QLinearConv's own epilogue), when qout is
    // not NULL: no float output; each sum gets qbias of its row (int32,
    // wrapping; NULL: none), then y = clamp(round_half_even((float)v *
    // scale) + qzp, qlo, qhi) as gk_requant computes it (onnxruntime's
    // rounding), written as a byte to qout at the sum's own index in the
    // int32 buffer starting at cbase (the sums are scratch: overwritten).
    uint8_t *qout;
    const int32_t *cbase;
    const int32_t *qbias;
    int qzp, qlo, qhi, qsigned;
};

// gk_u8_to_f32 writes v[i] - z as float32 (n bytes in rows of len, the
// rows taking z[0], z[1], ... z[nz-1] in turn; len 0: one row, z[0]);
// gk_requant_f32_planes is gk_requant_b on planes [t0, t1) of ov float32
// sums (exact integers, below 2^24 in magnitude) each, plane t being output
// channel t % m (its bias and, with perch, its multiplier): the bytes
// gk_f32_to_i32 then gk_requant_b give, with no call per plane.
void gk_requant_f32_planes(const float *acc, int t0, int t1, int m, long ov, const int32_t *bias, const float *mult,
                           int perch, int zp, int ysigned, uint8_t *y);
// gk_f32_to_i32 converts float32 integers to int32 (qconv_direct.c).
void gk_u8_to_f32(const uint8_t *v, int vsigned, const int32_t *z, int len, int nz, float *out, long n);
void gk_f32_to_i32(const float *y, int32_t *a, long n);

// gk_qgemm_amx_ok says whether gk_qgemm runs on AMX tiles (qgemm_amx.c:
// the CPU has AMX-INT8, the level is AVX-512, Linux granted the tile state,
// GKCONV_INT8_AMX is not 0); gk_qgemm_amx is its kernel for one block of
// packed A rows.
int gk_qgemm_amx_ok(void);
void gk_qgemm_amx_allow(int allow); // 0: off; 1: probed again (tests)
void gk_qgemm_amx(const uint8_t *ap, int rows, int arows, int kp, int K, int N, const int8_t *bp, int s0, int s1,
                  const int32_t *rowsum, const int32_t *zar, const int32_t *colsum, const int32_t *zb, int32_t *c,
                  int ldc, const gk_qepi *e, int i0);

// gk_qepilogue_rows applies e to rows [0, rows) of acc (row stride ld), the
// first being row r0 and column col0 of the whole result, writing y (row
// stride ldy); y may be acc itself (in place).
void gk_qepilogue_rows(const int32_t *acc, int rows, int n, int ld, const gk_qepi *e, int r0, int col0, float *y,
                       int ldy);

// gk_qdw3x3_vnni is a QLinearConv's 3x3 depthwise convolution (stride 1 or
// 2, dilation 1, 2-D) requantized into e->qout, for channels [c0, c1), on
// AVX-512 VNNI (qdw_vnni.c): the same bytes as gk_qdw_conv then
// gk_requant_b. It returns 0, having done nothing, where it does not apply
// (no VNNI, another window, no qout, or a weight minus its zero point
// outside int8); gk_qdw3x3_vnni_ok says whether it applies to c channels
// (quant_dw.go: planes of 7x7 and less stay on the float kernels).
int gk_qdw3x3_vnni_ok(const int *geo, const uint8_t *w, int wsigned, const int32_t *wz, int c);
int gk_qdw3x3_vnni(const uint8_t *x, int xsigned, const uint8_t *w, int wsigned, const int32_t *wz, int xz,
                   const int *geo, int c0, int c1, const gk_qepi *e, int32_t *yacc);
// gk_qdw_conv_epi is gk_qdw_conv, direct 2-D windows vectorised (16 outputs
// per step), writing int32 sums to yacc, or, when yf is not NULL, y = e's
// epilogue of them to yf (channel c is e's row c).
void gk_qdw_conv_epi(const uint8_t *x, int xsigned, const uint8_t *w, int wsigned, const int32_t *wz, int xz,
                     const int *geo, int c0, int c1, int32_t *yacc, const gk_qepi *e, float *yf);

#endif
