package kernels

import (
	"errors"
	"fmt"

	"gkconv/internal/ir"
)

// libmFunc is one row of libmUnary.
type libmFunc struct {
	Name string // the libm function, double form; the float form adds "f"
	Cost int    // OpCost: what recomputing the op costs
	// Device: DeviceMath implements the float form, so the CUDA and Ascend
	// generators may emit the op (they have no libm to fall back on).
	Device bool
}

// libmUnary is the one table of the unary ops whose C expression is a
// single libm call. The C generator (unaryExpr), OpCost and both device
// generators (CheckDeviceMath) read it, and TestDeviceMathTable checks
// Device against the #defines in DeviceMath: implementing sinf there means
// setting Device here and nothing else.
var libmUnary = map[string]libmFunc{
	"Log":   {Name: "log", Cost: 10, Device: true},
	"Sqrt":  {Name: "sqrt", Cost: 3, Device: true},
	"Tanh":  {Name: "tanh", Cost: 10, Device: true},
	"Floor": {Name: "floor", Cost: 1, Device: true},
	"Ceil":  {Name: "ceil", Cost: 1, Device: true},
	"Sin":   {Name: "sin", Cost: 10},
	"Cos":   {Name: "cos", Cost: 10},
	"Tan":   {Name: "tan", Cost: 10},
	"Sinh":  {Name: "sinh", Cost: 10},
	"Cosh":  {Name: "cosh", Cost: 10},
	"ACos":  {Name: "acos", Cost: 10},
	"Asin":  {Name: "asin", Cost: 10},
	"Atan":  {Name: "atan", Cost: 10},
	"Acosh": {Name: "acosh", Cost: 10},
	"Asinh": {Name: "asinh", Cost: 10},
	"Atanh": {Name: "atanh", Cost: 10},
}

// CheckDeviceMath reports the nodes of body whose libm call DeviceMath does
// not implement (libmUnary rows without Device); the CUDA and the Ascend
// generators refuse such bodies.
func CheckDeviceMath(body *ir.Graph) error {
	var errs []error
	for _, n := range body.Nodes {
		if f, ok := libmUnary[n.Op]; ok && !f.Device {
			errs = append(errs, fmt.Errorf("node %s: %s has no device implementation", n.Name, n.Op))
		}
	}
	return errors.Join(errs...)
}

// DeviceMath implements the math device kernels use in plain arithmetic
// (no libdevice, no libm on the Ascend scalar unit): Cephes range
// reductions and polynomials in float, with the libm names the expression
// rules emit mapped onto them. The includer defines GK_DEV (the function
// qualifiers) and the fixed-width integer types first. The same text runs
// in the host emulations, so their tests measure exactly this code.
const DeviceMath = `GK_DEV float gk_bits2f(uint32_t u) { float f; __builtin_memcpy(&f, &u, 4); return f; }
GK_DEV uint32_t gk_f2bits(float f) { uint32_t u; __builtin_memcpy(&u, &f, 4); return u; }
GK_DEV float gk_h2f(uint16_t h) {
  uint32_t s = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 0x1f, m = h & 0x3ff, u;
  if (e == 0) { if (m == 0) u = s; else { e = 113; while (!(m & 0x400)) { m <<= 1; e--; } m &= 0x3ff; u = s | (e << 23) | (m << 13); } }
  else if (e == 31) u = s | 0x7f800000u | (m << 13);
  else u = s | ((e + 112) << 23) | (m << 13);
  return gk_bits2f(u);
}
GK_DEV uint16_t gk_f2h(float x) {
  uint32_t b = gk_f2bits(x);
  uint16_t s = (b >> 16) & 0x8000; int32_t e = (int32_t)((b >> 23) & 0xff) - 112; uint32_t m = b & 0x7fffff;
  if (((b >> 23) & 0xff) == 0xff) return s | (m ? 0x7e00 : 0x7c00);
  if (e >= 31) return s | 0x7c00;
  if (e <= 0) { if (e < -10) return s; m |= 0x800000; uint32_t sh = 14 - e, r = m >> sh, rem = m & ((1u << sh) - 1), half = 1u << (sh - 1);
    if (rem > half || (rem == half && (r & 1))) r++; return s | r; }
  uint32_t r = ((uint32_t)e << 10) | (m >> 13), rem = m & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (r & 1))) r++;
  return s | r;
}
GK_DEV float gk_round_h(float x) { return gk_h2f(gk_f2h(x)); }
GK_DEV float gk_bf2f(uint16_t h) { return gk_bits2f((uint32_t)h << 16); }
GK_DEV uint16_t gk_f2bf(float x) {
  uint32_t u = gk_f2bits(x);
  if (x != x) return (uint16_t)((u >> 16) | 0x40);
  u += 0x7fff + ((u >> 16) & 1); return (uint16_t)(u >> 16);
}
GK_DEV float gk_round_bf(float x) { return gk_bf2f(gk_f2bf(x)); }
/* exp: Cephes reduction x = k ln2 + r, degree-6 polynomial; 2^k applied in
   two halves so overflow and gradual underflow come out right. */
GK_DEV float gk_expf(float x) {
  if (x != x) return x;
  x = x < -104.0f ? -104.0f : x;
  x = x > 89.0f ? 89.0f : x;
  const float k = __builtin_rintf(x * 1.44269504088896341f);
  float r = x - k * 0.693359375f;
  r = r - k * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float y = p * r * r + r + 1.0f;
  const int32_t ki = (int32_t)k, k1 = ki >> 1, k2 = ki - k1;
  return y * gk_bits2f((uint32_t)(k1 + 127) << 23) * gk_bits2f((uint32_t)(k2 + 127) << 23);
}
/* log: Cephes logf, mantissa in [sqrt(1/2), sqrt(2)), degree-8 polynomial. */
GK_DEV float gk_logf(float x) {
  if (x != x) return x;
  if (x < 0.0f) return __builtin_nanf("");
  if (x == 0.0f) return -__builtin_inff();
  if (x == __builtin_inff()) return x;
  int32_t e = 0;
  if (x < 1.17549435e-38f) { x *= 8388608.0f; e = -23; }
  uint32_t u = gk_f2bits(x);
  e += (int32_t)((u >> 23) & 0xff) - 126;
  float m = gk_bits2f((u & 0x807fffffu) | 0x3f000000u);
  if (m < 0.707106781186547524f) { e -= 1; m = m + m - 1.0f; } else { m = m - 1.0f; }
  const float z = m * m;
  float y = 7.0376836292e-2f;
  y = y * m - 1.1514610310e-1f;
  y = y * m + 1.1676998740e-1f;
  y = y * m - 1.2420140846e-1f;
  y = y * m + 1.4249322787e-1f;
  y = y * m - 1.6668057665e-1f;
  y = y * m + 2.0000714765e-1f;
  y = y * m - 2.4999993993e-1f;
  y = y * m + 3.3333331174e-1f;
  y = y * m * z;
  const float fe = (float)e;
  y += -2.12194440e-4f * fe;
  y += -0.5f * z;
  return m + y + 0.693359375f * fe;
}
/* tanh: odd polynomial below 0.625, 1 - 2/(e^2x + 1) above. */
GK_DEV float gk_tanhf(float x) {
  const float a = __builtin_fabsf(x);
  if (a >= 0.625f) {
    const float t = 1.0f - 2.0f / (gk_expf(a + a) + 1.0f);
    return x < 0.0f ? -t : t;
  }
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  return p * z * x + x;
}
/* erf: Cephes erff (odd polynomial below 1, 1 - erfc above). */
GK_DEV float gk_erff(float x) {
  const float a = __builtin_fabsf(x);
  if (a > 1.0f) {
    if (a > 9.0f) return x < 0.0f ? -1.0f : 1.0f;
    const float q = 1.0f / a, y = q * q;
    float p;
    if (a < 2.0f) {
      p = 2.326819970068386e-2f;
      p = p * y - 1.387039388740657e-1f;
      p = p * y + 3.687424674597105e-1f;
      p = p * y - 5.824733027278666e-1f;
      p = p * y + 6.210004621745983e-1f;
      p = p * y - 4.944515323274145e-1f;
      p = p * y + 3.404879937665872e-1f;
      p = p * y - 2.741127028184656e-1f;
      p = p * y + 5.638259427386472e-1f;
    } else {
      p = -1.047766399936249e1f;
      p = p * y + 1.297719955372516e1f;
      p = p * y - 7.495518717768503e0f;
      p = p * y + 2.921019019210786e0f;
      p = p * y - 1.015265279202700e0f;
      p = p * y + 4.218463358204948e-1f;
      p = p * y - 2.820767439740514e-1f;
      p = p * y + 5.641895067754075e-1f;
    }
    const float erfc = gk_expf(-a * a) * q * p;
    const float t = 1.0f - erfc;
    return x < 0.0f ? -t : t;
  }
  const float z = x * x;
  float p = 7.853861353153693e-5f;
  p = p * z - 8.010193625184903e-4f;
  p = p * z + 5.188327685732524e-3f;
  p = p * z - 2.685381193529856e-2f;
  p = p * z + 1.128358514861418e-1f;
  p = p * z - 3.761262582423300e-1f;
  p = p * z + 1.128379165726710e0f;
  return x * p;
}
/* log1p and expm1 by Goldberg's and Kahan's corrections of log/exp. */
GK_DEV float gk_log1pf(float x) {
  const float u = 1.0f + x;
  if (u == 1.0f) return x;
  if (u == __builtin_inff()) return u;
  return gk_logf(u) * (x / (u - 1.0f));
}
GK_DEV float gk_expm1f(float x) {
  if (__builtin_fabsf(x) < 1e-5f) return x + 0.5f * x * x;
  const float u = gk_expf(x);
  if (u == 1.0f) return x;
  const float um1 = u - 1.0f;
  if (um1 == -1.0f) return -1.0f;
  if (u == __builtin_inff()) return u;
  return um1 * (x / gk_logf(u));
}
/* pow through exp(y log|x|), with the sign of odd integer powers. */
GK_DEV float gk_powf(float x, float y) {
  if (y == 0.0f) return 1.0f;
  if (x == 1.0f) return 1.0f;
  const float ay = __builtin_fabsf(y);
  if (x == 0.0f) return y > 0.0f ? 0.0f : __builtin_inff();
  if (x < 0.0f) {
    if (__builtin_floorf(y) != y) return __builtin_nanf("");
    const float r = gk_expf(y * gk_logf(-x));
    const int odd = ay < 16777216.0f && ((int64_t)ay & 1);
    return odd ? -r : r;
  }
  return gk_expf(y * gk_logf(x));
}
/* logistic as the expander writes it: 1 / (1 + exp(-x)) */
GK_DEV float gk_sigmoidf(float x) { return 1.0f / (1.0f + gk_expf(-x)); }
#define GK_EXPF gk_expf
#define GK_EXPF_NONPOS gk_expf
#define GK_SIGMOIDF gk_sigmoidf
#define GK_ERFF gk_erff
#define GK_TANHF gk_tanhf
#define expf gk_expf
#define logf gk_logf
#define tanhf gk_tanhf
#define erff gk_erff
#define log1pf gk_log1pf
#define expm1f gk_expm1f
#define powf gk_powf
#define sqrtf __builtin_sqrtf
#define fabsf __builtin_fabsf
#define floorf __builtin_floorf
#define ceilf __builtin_ceilf
#define rintf __builtin_rintf
#define sqrt __builtin_sqrt
#define fabs __builtin_fabs
#define floor __builtin_floor
#define ceil __builtin_ceil
#define rint __builtin_rint
#define log(x) ((double)gk_logf((float)(x)))
`
