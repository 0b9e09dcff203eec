#ifndef GKCONV_NN_PACKED_GEMM_H
#define GKCONV_NN_PACKED_GEMM_H
// C[m, n] = op(A)[m, k] * B[k, n] with B pre-packed as panels of nr columns
// ([ceil(n/nr)][k][nr], zero padded; see internal/ir/packed_layout.go).
// op(A) is A (row-major, leading dimension lda) or, with trans_a, A^T where A
// is [k, m] with leading dimension lda. Only panels [p0, p1) are computed, so
// callers can split the work over threads by panel. bias (NULL = none) is
// added to every row after the product, so C = op(A)*B + bias rounds exactly
// as a MatMul followed by an Add; then act (0 none, 1 RELU, 3 RELU6:
// MindSpore's ActivationType) is applied, as a ReLU after that Add. Returns
// 0, or -1 when the scratch buffer for packed A cannot be allocated.
int packed_sgemm(int m, int n, int k, const float *a, int lda, int trans_a,
                 const float *bp, int nr, const float *bias, int act, float *c, int ldc, int p0, int p1);
// packed_sgemm_isa names the code path packed_sgemm takes on this CPU.
const char *packed_sgemm_isa(void);
// packed_sgemm_set_isa forces a code path for tests: 1 portable, 2 AVX2,
// 3 AVX-512 (0 or a path the CPU lacks: back to the best; returns 0).
int packed_sgemm_set_isa(int isa);
#endif
