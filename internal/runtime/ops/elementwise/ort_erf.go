package elementwise

import "math"

// Float32 Erf, Sigmoid and HardSigmoid as onnxruntime's CPU kernels compute them, so
// that a quantizer after them (DynamicQuantizeLinear after a GeLU or a
// squeeze-excite gate) picks the same levels. Erf is MLAS's
// MlasErfKernelFma3 (the x86-64 kernel where FMA exists; its element
// results do not depend on the lane): a polynomial in a² below 0.921875,
// else 1 − exp(−poly(a)) with MLAS's exp reconstruction; gk_ort_erf in
// fast_cgo.go is the same in C. Sigmoid is MLAS's MlasLogisticKernelFma3:
// Eigen's rational polynomial on x clamped to ±18, p/q + 0.5 with fused
// multiply-adds, clamped below at 0 (gk_ort_logistic). HardSigmoid is Eigen's alpha·x + beta
// rounded after the product and after the sum (no fused multiply-add),
// clamped to [0, 1].

// fma32 is the float32 fused multiply-add a·b + c rounded once. The product
// is exact in float64; the sum is rounded to odd in float64 (53 ≥ 24+2 bits)
// so the final rounding to float32 is correct.
func fma32(a, b, c float32) float32 {
	p := float64(a) * float64(b)
	cc := float64(c)
	s := p + cc
	// TwoSum: the exact error of s
	bb := s - p
	err := (p - (s - bb)) + (cc - bb)
	if err != 0 && !math.IsInf(s, 0) {
		bits := math.Float64bits(s)
		if bits&1 == 0 {
			if (err > 0) == (s > 0) {
				bits++ // away from zero
			} else {
				bits--
			}
			s = math.Float64frombits(bits)
		}
	}
	return float32(s)
}

// ortErf is gk_ort_erf in Go.
func ortErf(x float32) float32 {
	bx := math.Float32bits(x)
	sign := bx & 0x80000000
	ab := math.Float32frombits(bx & 0x7fffffff)
	a := float32(3.925)
	if ab < 3.925 { // vminps: NaN gives the bound
		a = ab
	}
	sq := a * a
	r := float32(-5.99104969e-4)
	r = fma32(r, sq, 4.99339588e-3)
	r = fma32(r, sq, -2.67667342e-2)
	r = fma32(r, sq, 1.12818025e-1)
	r = fma32(r, sq, -3.76124859e-1)
	r = fma32(r, sq, 1.28379151e-1)
	r = fma32(r, a, a)
	var small, b float32
	if 0.921875 <= a {
		b = a
	} else {
		small = r
	}
	q := float32(1.72948930e-5)
	q = fma32(q, b, -3.83208680e-4)
	q = fma32(q, b, 3.88393435e-3)
	q = fma32(q, b, -2.42545605e-2)
	q = fma32(q, b, 1.06777847e-1)
	q = fma32(q, b, 6.34846687e-1)
	q = fma32(q, b, 1.28717512e-1)
	q = fma32(q, b, b)
	q = -q
	if !(q > -88.3762626647949) {
		q = -88.3762626647949
	}
	t := fma32(1.44269504088896341, q, 1.25829120e+7)
	t = t - 1.25829120e+7
	f := fma32(-6.93145752e-1, t, q)
	f = fma32(t, -1.42860677e-6, f)
	y := float32(1.38319808e-3)
	y = fma32(y, f, 8.37550033e-3)
	y = fma32(y, f, 4.16689515e-2)
	y = fma32(y, f, 1.66664466e-1)
	y = fma32(y, f, 4.99999851e-1)
	y = fma32(y, f, 1.0)
	y = fma32(y, f, 1.0)
	p2 := math.Float32frombits(uint32((int32(t) + 127) << 23))
	y = float32(y * p2)
	y = 1 - y
	return math.Float32frombits(math.Float32bits(y) | math.Float32bits(small) | sign)
}

// ortHardSigmoid is onnxruntime's float32 HardSigmoid.
func ortHardSigmoid(alpha, beta float32) func(float32) float32 {
	return func(x float32) float32 {
		v := float32(alpha*x) + beta
		return max(0, min(1, v))
	}
}

// ortSoftsign is onnxruntime's float32 Softsign, x * (1 / (1 + |x|)) with
// every operation rounded to float32: its bits on a 64x112x112 check (the
// float64 formula rounded once differed in a third of them, x / (1 + |x|)
// in a fifth).
func ortSoftsign(x float32) float32 {
	return x * (1 / (1 + float32(math.Abs(float64(x)))))
}

// ortLogistic is gk_ort_logistic in Go.
func ortLogistic(x float32) float32 {
	v := x
	if !(v != v) { // vmaxps/vminps keep a NaN input
		v = max(-18, min(18, v))
	}
	x2 := v * v
	p := fma32(x2, 4.37031012579801e-11, 1.15627324459942e-07)
	p = fma32(x2, p, 6.08574864600143e-05)
	p = fma32(x2, p, 8.51377133304701e-03)
	p = fma32(x2, p, 2.48287947061529e-01)
	q := fma32(x2, 6.10247389755681e-13, 5.76102136993427e-09)
	q = fma32(x2, q, 6.29106785017040e-06)
	q = fma32(x2, q, 1.70198817374094e-03)
	q = fma32(x2, q, 1.16817656904453e-01)
	q = fma32(x2, q, 9.93151921023180e-01)
	p = v * p
	r := p/q + 0.5
	if r < 0 { // vmaxps 0: a NaN stays
		r = 0
	}
	return r
}
