#ifndef GKCONV_NN_CONV_PACKED_GEMM_H
#define GKCONV_NN_CONV_PACKED_GEMM_H
// conv_pack_w packs weights w[m][k] into slivers of mr rows, [ceil(m/mr)][k][mr]
// (zero padded): with mr 12 the A operand of conv_gemm_f32, with 8 the
// weights of conv_stem_f32.
void conv_pack_w(const float *w, float *ap, int m, int k, int mr);
// conv_gemm_f32: c[m][n] (row stride ldc) = act((A[m][k] x b[k][n] (row
// stride ldb) + bias[m]) + z[m][n]) (bias and z, the residual laid out as
// c, may be NULL), A packed by conv_pack_w; act is ACT_RELU or ACT_RELU6
// (MindSpore's codes; the residual and act are applied in registers before
// the store), anything else none. AVX-512 or AVX2+FMA: returns -1 without
// touching c below the AVX2 level (isa.h), else 0.
#define ACT_RELU 1
#define ACT_RELU6 3
int conv_gemm_f32(int m, int n, int k, const float *ap, const float *b, long ldb, float *c, long ldc,
                  const float *bias, const float *z, int act);
int conv_gemm_available(void);
#endif
