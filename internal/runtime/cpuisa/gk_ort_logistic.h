// gk_ort_logistic: onnxruntime's float32 Sigmoid (MLAS
// MlasLogisticKernelFma3, its x86-64 kernel where FMA exists): Eigen's
// rational polynomial p(t)/q(t) + 0.5 on t = x clamped to [-18, 18] with
// fused multiply-adds, clamped below at 0; NaN stays NaN. Shared by the
// runtime's Sigmoid and the convolution epilogue so both give onnxruntime's
// bits (the generated kernels carry their own copy in their prelude).
#ifndef GK_ORT_LOGISTIC_H
#define GK_ORT_LOGISTIC_H
#include <math.h>

static inline float gk_ort_logistic(float x) {
	float t = x == x ? (x < -18.0f ? -18.0f : (x > 18.0f ? 18.0f : x)) : x;
	float t2 = t * t;
	float p = fmaf(t2, 4.37031012579801e-11f, 1.15627324459942e-07f);
	p = fmaf(t2, p, 6.08574864600143e-05f);
	p = fmaf(t2, p, 8.51377133304701e-03f);
	p = fmaf(t2, p, 2.48287947061529e-01f);
	float q = fmaf(t2, 6.10247389755681e-13f, 5.76102136993427e-09f);
	q = fmaf(t2, q, 6.29106785017040e-06f);
	q = fmaf(t2, q, 1.70198817374094e-03f);
	q = fmaf(t2, q, 1.16817656904453e-01f);
	q = fmaf(t2, q, 9.93151921023180e-01f);
	float r = (t * p) / q + 0.5f;
	return r < 0.0f ? 0.0f : r;
}
#endif
