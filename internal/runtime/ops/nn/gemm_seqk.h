#ifndef GKCONV_NN_GEMM_SEQK_H
#define GKCONV_NN_GEMM_SEQK_H
void sgemm_tn_seqk_f32(const float *a, long lda, const float *b, long ldb, float *c, long ldc, long m, long n, long k);
#endif
