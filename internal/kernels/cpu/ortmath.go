package cpu

// ortMath is the body of internal/runtime/cpuisa/gk_ort_math.h (onnxruntime's
// float32 Sigmoid, Tanh and Erf, and its ReduceSum row order), which the runtime compiles; a generated kernel
// is compiled on its own, so it carries the text. TestPreludeCarriesORTMath
// keeps the two equal.
const ortMath = `
// gk_ort_logistic: Eigen's rational polynomial p(t)/q(t) + 0.5 on t = x
// clamped to [-18, 18] with fused multiply-adds, clamped below at 0; NaN
// stays NaN.
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
// gk_ort_tanh: onnxruntime's float32 Tanh (MLAS MlasTanhKernelFma3 on
// x86-64 with FMA): Eigen's odd rational polynomial x p(x^2) / q(x^2) on x
// clamped to [-9, 9] (tanh(9) rounds to 1), Horner steps as fused
// multiply-adds and one division, so a Tanh gives onnxruntime's bits and
// runs at the speed of a few FMAs. NaN passes the clamps (the compares
// are false) and the arithmetic. Within 2 ulps of the float64 tanh for
// |x| >= 2^-126; below that the product alpha_1 x is subnormal and the
// error is at most 2^-149 absolute (TestTanhExpAccuracy).
static inline float gk_ort_tanh(float x) {
	float v = x < -9.0f ? -9.0f : x;
	v = v > 9.0f ? 9.0f : v;
	float v2 = v * v;
	float p = fmaf(v2, -2.76076847742355e-16f, 2.00018790482477e-13f);
	p = fmaf(p, v2, -8.60467152213735e-11f);
	p = fmaf(p, v2, 5.12229709037114e-08f);
	p = fmaf(p, v2, 1.48572235717979e-05f);
	p = fmaf(p, v2, 6.37261928875436e-04f);
	p = fmaf(p, v2, 4.89352455891786e-03f);
	p = p * v;
	float q = fmaf(v2, 1.19825839466702e-06f, 1.18534705686654e-04f);
	q = fmaf(q, v2, 2.26843463243900e-03f);
	q = fmaf(q, v2, 4.89352518554385e-03f);
	return p / q;
}
// gk_ort_erf: onnxruntime's float32 erf (MLAS MlasErfKernelFma3, the
// kernel it runs on x86-64 with FMA): the same polynomials, fused
// multiply-adds and exp reconstruction, element for element, so a model
// that quantizes after an Erf (GeLU blocks) sees the same levels (ort_erf.go).
static inline float gk_ort_erf(float x) {
	union { float f; unsigned u; int i; } bx = { x }, sign, ab;
	sign.u = bx.u & 0x80000000u;
	ab.u = bx.u & 0x7fffffffu;
	float a = ab.f < 3.925f ? ab.f : 3.925f; // vminps: NaN gives the bound
	float sq = a * a;
	float r = -5.99104969e-4f;
	r = fmaf(r, sq, 4.99339588e-3f);
	r = fmaf(r, sq, -2.67667342e-2f);
	r = fmaf(r, sq, 1.12818025e-1f);
	r = fmaf(r, sq, -3.76124859e-1f);
	r = fmaf(r, sq, 1.28379151e-1f);
	r = fmaf(r, a, a);
	int big = 0.921875f <= a;
	float small = big ? 0.0f : r;
	float b = big ? a : 0.0f;
	float q = 1.72948930e-5f;
	q = fmaf(q, b, -3.83208680e-4f);
	q = fmaf(q, b, 3.88393435e-3f);
	q = fmaf(q, b, -2.42545605e-2f);
	q = fmaf(q, b, 1.06777847e-1f);
	q = fmaf(q, b, 6.34846687e-1f);
	q = fmaf(q, b, 1.28717512e-1f);
	q = fmaf(q, b, b);
	q = -q;
	q = q > -88.3762626647949f ? q : -88.3762626647949f;
	float t = fmaf(1.44269504088896341f, q, 1.25829120e+7f);
	t = t - 1.25829120e+7f;
	float f = fmaf(-6.93145752e-1f, t, q);
	f = fmaf(t, -1.42860677e-6f, f);
	float y = 1.38319808e-3f;
	y = fmaf(y, f, 8.37550033e-3f);
	y = fmaf(y, f, 4.16689515e-2f);
	y = fmaf(y, f, 1.66664466e-1f);
	y = fmaf(y, f, 4.99999851e-1f);
	y = fmaf(y, f, 1.0f);
	y = fmaf(y, f, 1.0f);
	union { float f; int i; } p2;
	p2.i = ((int)t + 127) << 23;
	y = y * p2.f;
	y = 1.0f - y;
	union { float f; unsigned u; } out = { y }, sm = { small };
	out.u = (out.u | sm.u) | sign.u;
	return out.f;
}
// gk_ort_sum_row_f32: the float32 sum of x[0..n) in onnxruntime's order
// for a ReduceSum/ReduceMean over trailing axes (Eigen 3.4's vectorised
// redux with 4-float SSE packets, ort_sum.go): off is the row's element
// offset in its tensor (onnxruntime's buffers are 16-byte aligned), so the
// 0-3 elements before the first aligned one are held back; two packet
// accumulators take alternate packets, are added, take one more packet if
// one is left, and are reduced as (p0+p2)+(p1+p3); then the held-back head
// and the tail are added one by one. A row shorter than a packet after the
// head is summed left to right. n >= 1.
static inline float gk_ort_sum_row_f32(const float *x, long n, long off) {
	long start = (4 - (off & 3)) & 3;
	if (start > n) start = n;
	long m = n - start, a1 = m / 4 * 4, a2 = m / 8 * 8;
	float res;
	if (a1 == 0) {
		res = x[0];
		for (long i = 1; i < n; i++) res += x[i];
		return res;
	}
	const float *y = x + start;
	float p0[4], p1[4];
	for (int j = 0; j < 4; j++) p0[j] = y[j];
	if (a1 > 4) {
		for (int j = 0; j < 4; j++) p1[j] = y[4 + j];
		for (long i = 8; i < a2; i += 8)
			for (int j = 0; j < 4; j++) { p0[j] += y[i + j]; p1[j] += y[i + 4 + j]; }
		for (int j = 0; j < 4; j++) p0[j] += p1[j];
		if (a1 > a2)
			for (int j = 0; j < 4; j++) p0[j] += y[a2 + j];
	}
	res = (p0[0] + p0[2]) + (p0[1] + p0[3]);
	for (long i = 0; i < start; i++) res += x[i];
	for (long i = start + a1; i < n; i++) res += x[i];
	return res;
}
`
