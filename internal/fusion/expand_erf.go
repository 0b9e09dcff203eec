package fusion

import (
	"fmt"

	"gkconv/internal/akgcfg"
	"gkconv/internal/ir"
)

// Erf from basic ops the CPU clusters (Abs, Mul, Add, Sub, RealDiv, Exp,
// Neg, Minimum, Sign, Less, Select), evaluated in float32:
//
//	|x| <  erfSplit: erf(x) = x * Ps(x²)
//	|x| >= erfSplit: erf(x) = sign(x) * (1 - exp(-x²) * Pl(z)/Ql(z)),  z = min(|x|, erfClamp)
//
// Ps is a degree-5 polynomial in t = x² approximating erf(√t)/√t on
// [0, 0.875²] (minimax relative error); Pl/Ql is a (2,2) rational in z
// approximating erfc(z)·exp(z²) on [0.875, 4], minimax for the absolute
// error of erfc (weight exp(-z²)). Ql has no real roots, so the unselected
// branch never divides by zero.
//
// Why two branches: the single odd rational x·P(x²)/Q(x²) clamped to
// [-4, 4] reaches about 3e-8 before rounding, but its float32 Horner
// evaluation loses 3-4 ulp in each of P and Q where erf is near 1, so the
// result is off by 3e-7 to 5e-7 for every degree pair tried; in the
// 1 - erfc form the rounding of the tail is scaled by erfc ≤ 0.22.
//
// Provenance: fitted for this project (not taken from a library) by
// linearised least squares (Loeb reweighting by 1/Q) followed by Lawson
// iterations toward minimax, against Python's math.erf/math.erfc, then the
// coefficients were rounded to float32 one at a time (Ps's constant term
// fixed to float32(2/√π) first so tiny x keep full relative accuracy),
// refitting the remaining ones after each rounding. Before rounding the fit
// errors are 8.6e-9 (relative, Ps) and 2.6e-8 (absolute on erfc, Pl/Ql);
// with float32 coefficients 5.2e-8 and 2.6e-8. Checked over every float32
// x against double erf: the generated C kernel (gcc -O3 -march=native, with
// and without FMA contraction) is within 9.6e-8 absolute, the runtime's op
// library within 1.0e-7, and both within 1.65e-7 relative for 0 < |x| < 1
// (subnormal results within one subnormal ulp, the best float32 can do).
//
// Special values: erf(±0) = ±0 (small branch), erf(±Inf) = ±1 (exp(-Inf)
// = 0 and the clamp keeps Pl/Ql finite), NaN propagates through Abs,
// Minimum (NaN as first operand wins in the runtime and in the C code
// generator), Exp and the arithmetic, and Less(NaN, c) picks the tail.
const (
	erfSplit = 0.875
	erfClamp = 4 // erfc(4) = 1.5e-8 < 2⁻²⁵: 1 - erfc rounds to 1 in float32
)

var (
	// erfSmall are Ps's coefficients, constant term first.
	erfSmall = []float64{1.1283792, -0.3761272, 0.112836696, -0.02682696, 0.0050778, -0.0006417158}
	// erfTailP, erfTailQ are Pl's and Ql's coefficients, constant term first.
	erfTailP = []float64{0.99533945, 0.39241925, 0.0038897172}
	erfTailQ = []float64{1, 1.493763, 0.76091874}
)

// ErfApprox emits erf(x) as basic ops, computed in float32; a float16 x is
// cast to float32 and the result back.
func (b *Builder) ErfApprox(x *ir.Value) *ir.Value {
	if b.err != nil {
		return nil
	}
	if x == nil {
		return b.fail("%s: nil input to Erf", b.src.Name)
	}
	dt := x.DType
	if dt != ir.Float32 && dt != ir.Float16 {
		return b.fail("%s: Erf is expanded for float32/float16 only, not %s", b.src.Name, dt)
	}
	c := func(v float64) *ir.Value { return b.ConstOf(v, ir.Float32) }
	x = b.Cast(x, ir.Float32)
	ax := b.Abs(x)
	t := b.Mul(x, x)
	small := b.Mul(x, b.horner(t, erfSmall))
	z := b.Minimum(ax, c(erfClamp)) // ax first: NaN propagates
	s := b.Div(b.horner(z, erfTailP), b.horner(z, erfTailQ))
	tail := b.Sub(c(1), b.Mul(b.Exp(b.Neg(t)), s))
	y := b.Select(b.Less(ax, c(erfSplit)), small, b.Mul(tail, b.Sign(x)))
	return b.Cast(y, dt)
}

// horner evaluates the polynomial with coefficients cs (constant term
// first, at least two) at v.
func (b *Builder) horner(v *ir.Value, cs []float64) *ir.Value {
	n := len(cs) - 1
	acc := b.Add(b.Mul(v, b.ConstOf(cs[n], v.DType)), b.ConstOf(cs[n-1], v.DType))
	for i := n - 2; i >= 0; i-- {
		acc = b.Add(b.Mul(acc, v), b.ConstOf(cs[i], v.DType))
	}
	return acc
}

// expandErf replaces Erf by ErfApprox so that GeLU's Div->Erf->Add->Mul->Mul
// chain clusters into one CPU kernel (the CPU cluster list has no Erf).
func expandErf(b *Builder, n *ir.Node, _ akgcfg.Backend) ([]*ir.Value, error) {
	x := b.In(0)
	if x == nil {
		return nil, fmt.Errorf("Erf without input")
	}
	if x.DType != ir.Float32 && x.DType != ir.Float16 {
		return nil, fmt.Errorf("input dtype %s is not float32/float16", x.DType)
	}
	return one(b.ErfApprox(x), b)
}
