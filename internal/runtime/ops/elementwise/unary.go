package elementwise

import (
	"math"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// floatUnary builds the scalar function of a float unary op from its attrs;
// float32 inputs are computed in float64 and rounded once.
var floatUnary = map[string]func(a ir.Attrs) func(x float64) float64{
	"Abs":   fn(math.Abs),
	"ACos":  fn(math.Acos),
	"Acosh": fn(math.Acosh),
	"Asin":  fn(math.Asin),
	"Asinh": fn(math.Asinh),
	"Atan":  fn(math.Atan),
	"Atanh": fn(math.Atanh),
	"Ceil":  fn(math.Ceil),
	"CeLU": func(a ir.Attrs) func(float64) float64 {
		alpha := a.Float("alpha", 1)
		return func(x float64) float64 { return math.Max(0, x) + math.Min(0, alpha*(math.Exp(x/alpha)-1)) }
	},
	"Cos":  fn(math.Cos),
	"Cosh": fn(math.Cosh),
	"Elu": func(a ir.Attrs) func(float64) float64 {
		alpha := a.Float("alpha", 1)
		return func(x float64) float64 {
			if x < 0 {
				return alpha * (math.Exp(x) - 1)
			}
			return x
		}
	},
	"Erf":   fn(math.Erf),
	"Exp":   fn(math.Exp),
	"Floor": fn(math.Floor),
	"GeLU": func(a ir.Attrs) func(float64) float64 {
		if a.String("approximate", "none") == "tanh" {
			return geluTanh64
		}
		return gelu64
	},
	"HSigmoid": func(a ir.Attrs) func(float64) float64 {
		alpha, beta := a.Float("alpha", 0.2), a.Float("beta", 0.5)
		return func(x float64) float64 { return math.Max(0, math.Min(1, alpha*x+beta)) }
	},
	"HSwish": fn(func(x float64) float64 { return x * math.Max(0, math.Min(1, x/6+0.5)) }),
	"LeakyReLU": func(a ir.Attrs) func(float64) float64 {
		alpha := a.Float("alpha", 0.01)
		return func(x float64) float64 {
			if x < 0 {
				return alpha * x
			}
			return x
		}
	},
	"Log":        fn(math.Log),
	"Mish":       fn(func(x float64) float64 { return x * math.Tanh(softplus64(x)) }),
	"Neg":        fn(func(x float64) float64 { return -x }),
	"Reciprocal": fn(func(x float64) float64 { return 1 / x }),
	"ReLU":       fn(func(x float64) float64 { return relu64(x) }),
	"ReLU6":      fn(func(x float64) float64 { return math.Min(relu64(x), 6) }),
	"Round":      fn(math.RoundToEven),
	"SeLU": func(a ir.Attrs) func(float64) float64 {
		alpha := a.Float("alpha", 1.67326319217681884765625)
		gamma := a.Float("gamma", 1.05070102214813232421875)
		return func(x float64) float64 {
			if x > 0 {
				return gamma * x
			}
			return gamma * (alpha*math.Exp(x) - alpha)
		}
	},
	"Sigmoid":  fn(sigmoid64),
	"Sign":     fn(sign64),
	"Sin":      fn(math.Sin),
	"Sinh":     fn(math.Sinh),
	"Softplus": fn(softplus64),
	"Softsign": fn(func(x float64) float64 { return x / (1 + math.Abs(x)) }),
	"Sqrt":     fn(math.Sqrt),
	"Rsqrt":    fn(func(x float64) float64 { return 1 / math.Sqrt(x) }),
	"Square":   fn(func(x float64) float64 { return x * x }),
	"Tan":      fn(math.Tan),
	"Tanh":     fn(math.Tanh),
	"ThresholdedReLU": func(a ir.Attrs) func(float64) float64 {
		alpha := a.Float("alpha", 1)
		return func(x float64) float64 {
			if x > alpha {
				return x
			}
			return 0
		}
	},
}

func fn(f func(float64) float64) func(ir.Attrs) func(float64) float64 {
	return func(ir.Attrs) func(float64) float64 { return f }
}

func relu64(x float64) float64 {
	if x < 0 {
		return 0
	}
	return x
}

func sign64(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return x // 0 and NaN
}

// softplus64 is log(1+e^x) without overflow for large x.
func softplus64(x float64) float64 {
	if x > 0 {
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}

// f32UnaryCode lists the float32 ops with a C kernel.
func f32UnaryCode(n *ir.Node) (int, bool) {
	switch n.Op {
	case "ReLU":
		return uReLU, true
	case "Sigmoid":
		return uSigmoid, true
	case "Tanh":
		return uTanh, true
	case "Exp":
		return uExp, true
	case "Erf":
		return uErf, true
	case "Log":
		return uLog, true
	case "Mish":
		return uMish, true
	case "Sin":
		return uSin, true
	case "Cos":
		return uCos, true
	case "GeLU":
		if n.Attrs.String("approximate", "none") == "tanh" {
			return uGeLUTanh, true
		}
		return uGeLU, true
	}
	return 0, false
}

// f32ParamUnaryCode lists the float32 ops with attributes that have a C
// kernel (gk_unary_param_f32), with their attribute values.
func f32ParamUnaryCode(n *ir.Node) (int, float32, float32, bool) {
	switch n.Op {
	case "Elu":
		return upElu, float32(n.Attrs.Float("alpha", 1)), 0, true
	case "SeLU":
		return upSelu, float32(n.Attrs.Float("alpha", 1.67326319217681884765625)),
			float32(n.Attrs.Float("gamma", 1.05070102214813232421875)), true
	case "CeLU":
		return upCelu, float32(n.Attrs.Float("alpha", 1)), 0, true
	}
	return 0, 0, 0, false
}

func mapFloat[T float](ctx *opkernel.Ctx, d, s []T, f func(float64) float64) {
	opkernel.ParallelFor(ctx, len(d), grain/4, func(lo, hi int) {
		src := s[lo:hi]
		dst := d[lo:hi]
		for i, x := range src {
			dst[i] = T(f(float64(x)))
		}
	})
}

func mapInt[T integer](ctx *opkernel.Ctx, d, s []T, f func(T) T) {
	opkernel.ParallelFor(ctx, len(d), grain, func(lo, hi int) {
		src := s[lo:hi]
		dst := d[lo:hi]
		for i, x := range src {
			dst[i] = f(x)
		}
	})
}

// intUnary is the integer form of the unary ops ONNX defines on integers.
func intUnary[T integer](op string) func(T) T {
	var zero T
	signed := zero-1 < 0
	switch op {
	case "Abs":
		return func(x T) T {
			if signed && x < 0 {
				return -x
			}
			return x
		}
	case "Neg":
		return func(x T) T { return -x }
	case "Sign":
		return func(x T) T {
			switch {
			case x > 0:
				return 1
			case x < 0:
				return zero - 1
			}
			return 0
		}
	case "ReLU":
		return func(x T) T { return max(x, 0) }
	case "ReLU6":
		return func(x T) T { return min(max(x, 0), 6) }
	case "Square":
		return func(x T) T { return x * x }
	case "Ceil", "Floor", "Round":
		return func(x T) T { return x }
	}
	return nil
}

func intUnaryRun[T integer](ctx *opkernel.Ctx, n *ir.Node, d, s []T) error {
	f := intUnary[T](n.Op)
	if f == nil {
		return opkernel.Unsupportedf(n, "integer input")
	}
	mapInt(ctx, d, s, f)
	return nil
}

func unary(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := checkArity(n, in, out, 1, 1, 1); err != nil {
		return err
	}
	x, y := in[0], out[0]
	if x.DType != y.DType || x.NumElements() != y.NumElements() {
		return nodeErr(n, "input %s does not match output %s", x, y)
	}
	switch x.DType {
	case ir.Float32:
		if code, ok := f32UnaryCode(n); ok {
			d, s := y.F32(), x.F32()
			opkernel.ParallelFor(ctx, len(d), grain/4, func(lo, hi int) { f32Unary(code, d[lo:hi], s[lo:hi]) })
			return nil
		}
		if code, a, b, ok := f32ParamUnaryCode(n); ok {
			d, s := y.F32(), x.F32()
			opkernel.ParallelFor(ctx, len(d), grain/4, func(lo, hi int) { f32UnaryParam(code, d[lo:hi], s[lo:hi], a, b) })
			return nil
		}
		if f, ok := exactUnaryF32(n, len(x.F32())); ok {
			d, s := y.F32(), x.F32()
			opkernel.ParallelFor(ctx, len(d), grain/4, func(lo, hi int) { f(d[lo:hi], s[lo:hi]) })
			return nil
		}
		if n.Op == "HSigmoid" || n.Op == "Softsign" {
			f := ortSoftsign
			if n.Op == "HSigmoid" {
				f = ortHardSigmoid(float32(n.Attrs.Float("alpha", 0.2)), float32(n.Attrs.Float("beta", 0.5)))
			}
			d, s := y.F32(), x.F32()
			opkernel.ParallelFor(ctx, len(d), grain/4, func(lo, hi int) {
				for i, v := range s[lo:hi] {
					d[lo+i] = f(v)
				}
			})
			return nil
		}
		mapFloat(ctx, y.F32(), x.F32(), floatUnary[n.Op](n.Attrs))
	case ir.Float64:
		mapFloat(ctx, y.F64(), x.F64(), floatUnary[n.Op](n.Attrs))
	case ir.Float16, ir.BFloat16:
		w, flush := halfOut(y)
		if err := unary(ctx, n, []*ir.Tensor{opkernel.HalfToF32(x)}, []*ir.Tensor{w}); err != nil {
			return err
		}
		flush()
	case ir.Int8:
		return intUnaryRun(ctx, n, y.I8(), x.I8())
	case ir.Int16:
		return intUnaryRun(ctx, n, y.I16(), x.I16())
	case ir.Int32:
		return intUnaryRun(ctx, n, y.I32(), x.I32())
	case ir.Int64:
		return intUnaryRun(ctx, n, y.I64(), x.I64())
	case ir.Uint8:
		return intUnaryRun(ctx, n, y.U8(), x.U8())
	case ir.Uint16:
		return intUnaryRun(ctx, n, y.U16(), x.U16())
	case ir.Uint32:
		return intUnaryRun(ctx, n, y.U32(), x.U32())
	case ir.Uint64:
		return intUnaryRun(ctx, n, y.U64(), x.U64())
	default:
		return opkernel.Unsupportedf(n, "dtype %s", x.DType)
	}
	return nil
}

// floatPredicate runs a float test (IsInf, IsNaN) into a bool output.
func floatPredicate(n *ir.Node, in, out []*ir.Tensor, f func(float64) bool) error {
	if err := checkArity(n, in, out, 1, 1, 1); err != nil {
		return err
	}
	x, y := widen(in[0]), out[0]
	if y.DType != ir.Bool {
		return nodeErr(n, "output dtype %s, want bool", y.DType)
	}
	d := y.U8()
	switch x.DType {
	case ir.Float32:
		for i, v := range x.F32()[:len(d)] {
			d[i] = b2u(f(float64(v)))
		}
	case ir.Float64:
		for i, v := range x.F64()[:len(d)] {
			d[i] = b2u(f(v))
		}
	default:
		return opkernel.Unsupportedf(n, "dtype %s", in[0].DType)
	}
	return nil
}

func isInf(_ *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	neg := n.Attrs.Int("detect_negative", 1) != 0
	pos := n.Attrs.Int("detect_positive", 1) != 0
	return floatPredicate(n, in, out, func(v float64) bool {
		return pos && math.IsInf(v, 1) || neg && math.IsInf(v, -1)
	})
}

func isNaN(_ *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	return floatPredicate(n, in, out, math.IsNaN)
}

func logicalNot(_ *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := checkArity(n, in, out, 1, 1, 1); err != nil {
		return err
	}
	if in[0].DType != ir.Bool || out[0].DType != ir.Bool {
		return opkernel.Unsupportedf(n, "dtype %s", in[0].DType)
	}
	d := out[0].Data
	for i, v := range in[0].Data[:len(d)] {
		d[i] = b2u(v == 0)
	}
	return nil
}

// clipT clamps in place semantics: d = min(max(s, lo), hi).
func clipT[T number](ctx *opkernel.Ctx, d, s []T, lo, hi T) {
	opkernel.ParallelFor(ctx, len(d), grain, func(a, b int) {
		src := s[a:b]
		dst := d[a:b]
		for i, x := range src {
			if x < lo {
				x = lo
			}
			if x > hi {
				x = hi
			}
			dst[i] = x
		}
	})
}

// bound reads the optional scalar bound t as T, or returns def.
func bound[T number](t *ir.Tensor, def T) T {
	if t == nil || t.NumElements() < 1 {
		return def
	}
	v := data[T](t)
	if len(v) == 0 {
		return def
	}
	return v[0]
}

func clipInt[T integer](ctx *opkernel.Ctx, x, y, lo, hi *ir.Tensor) {
	var z T
	clipT(ctx, data[T](y), data[T](x), bound(lo, minOf(z)), bound(hi, maxOf(z)))
}

func clip(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := checkArity(n, in, out, 1, 3, 1); err != nil {
		return err
	}
	x, y := in[0], out[0]
	var lo, hi *ir.Tensor
	if len(in) > 1 {
		lo = in[1]
	}
	if len(in) > 2 {
		hi = in[2]
	}
	for _, b := range []*ir.Tensor{lo, hi} {
		if b != nil && b.DType != x.DType {
			return nodeErr(n, "bound dtype %s differs from input %s", b.DType, x.DType)
		}
	}
	// Opset < 11 form: bounds as attributes.
	if lo == nil && n.Attrs.Has("min") || hi == nil && n.Attrs.Has("max") {
		if !x.DType.IsFloat() {
			return opkernel.Unsupportedf(n, "attribute bounds on %s", x.DType)
		}
		if lo == nil && n.Attrs.Has("min") {
			lo = ir.NewTensor(x.DType, nil)
			lo.PutFloat(0, n.Attrs.Float("min", 0))
		}
		if hi == nil && n.Attrs.Has("max") {
			hi = ir.NewTensor(x.DType, nil)
			hi.PutFloat(0, n.Attrs.Float("max", 0))
		}
	}
	switch x.DType {
	case ir.Float32:
		// C fast path: the Go loop's data-dependent branches mispredict on
		// activations (ReLU6 is the hot case).
		d, s := y.F32(), x.F32()
		l, h := bound(lo, float32(math.Inf(-1))), bound(hi, float32(math.Inf(1)))
		opkernel.ParallelFor(ctx, len(d), grain, func(a, b int) { f32Clip(d[a:b], s[a:b], l, h) })
	case ir.Float64:
		clipT(ctx, y.F64(), x.F64(), bound(lo, math.Inf(-1)), bound(hi, math.Inf(1)))
	case ir.Float16, ir.BFloat16:
		w, flush := halfOut(y)
		if err := clip(ctx, n, []*ir.Tensor{opkernel.HalfToF32(x), widen(lo), widen(hi)}, []*ir.Tensor{w}); err != nil {
			return err
		}
		flush()
	case ir.Int8:
		clipInt[int8](ctx, x, y, lo, hi)
	case ir.Int16:
		clipInt[int16](ctx, x, y, lo, hi)
	case ir.Int32:
		clipInt[int32](ctx, x, y, lo, hi)
	case ir.Int64:
		clipInt[int64](ctx, x, y, lo, hi)
	case ir.Uint8:
		clipInt[uint8](ctx, x, y, lo, hi)
	case ir.Uint16:
		clipInt[uint16](ctx, x, y, lo, hi)
	case ir.Uint32:
		clipInt[uint32](ctx, x, y, lo, hi)
	case ir.Uint64:
		clipInt[uint64](ctx, x, y, lo, hi)
	default:
		return opkernel.Unsupportedf(n, "dtype %s", x.DType)
	}
	return nil
}

func init() {
	for name := range floatUnary {
		opkernel.Register(name, unary)
	}
	opkernel.Register("IsInf", isInf)
	opkernel.Register("IsNan", isNaN)
	opkernel.Register("LogicalNot", logicalNot)
	opkernel.Register("Clip", clip)
}
