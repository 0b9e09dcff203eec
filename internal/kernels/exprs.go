package kernels

import (
	"fmt"
	"math"
	"slices"

	"gkconv/internal/ir"
)

// Pattern classes of the body ops the generator understands. The unary
// ops that are one libm call are libmUnary's rows (device_math.go) and
// join unaryOps at init.
var unaryOps = map[string]bool{
	"Abs": true, "CeLU": true, "Elu": true, "Erf": true, "Exp": true,
	"GeLU": true, "HSigmoid": true, "HSwish": true, "IsInf": true, "IsNan": true,
	"LeakyReLU": true, "LogicalNot": true, "Mish": true, "Neg": true, "Reciprocal": true,
	"ReLU": true, "ReLU6": true, "Round": true, "SeLU": true, "Sigmoid": true, "Sign": true,
	"Softplus": true, "Softsign": true, "Rsqrt": true, "Square": true,
	"ThresholdedReLU": true, "Cast": true, "Identity": true, "Dropout": true,
}

func init() {
	for op := range libmUnary {
		unaryOps[op] = true
	}
}

var binaryOps = map[string]bool{
	"Add": true, "Sub": true, "Mul": true, "RealDiv": true, "Pow": true, "SquaredDifference": true,
	"Equal": true, "Greater": true, "GreaterEqual": true, "Less": true, "LessEqual": true,
	"LogicalAnd": true, "LogicalOr": true, "LogicalXor": true, "PReLU": true,
}

var variadicOps = map[string]bool{"Maximum": true, "Minimum": true, "AddN": true, "Mean": true}

// IsReduce reports whether op is a reduction the generators understand:
// every REDUCE op of the IR table but ReduceLogSumExp.
func IsReduce(op string) bool { return ir.LookupOp(op).IsReduce() && op != "ReduceLogSumExp" }

// IsReshape reports whether op only reinterprets its input's shape.
func IsReshape(op string) bool { return ir.LookupOp(op).IsReshape() }

// Supported reports whether the generators can compile op inside a body.
func Supported(op string) bool {
	return unaryOps[op] || binaryOps[op] || variadicOps[op] || IsReduce(op) || IsReshape(op) ||
		op == "Select" || op == "Clip" || op == "BiasAdd" || op == "BroadcastTo"
}

// ExprOps lists the ops the expression tables name (Supported also takes
// every REDUCE and RESHAPE op of the IR table but ReduceLogSumExp), sorted;
// internal/optables checks that each is an IR op.
func ExprOps() []string {
	ops := []string{"Select", "Clip", "BiasAdd", "BroadcastTo"}
	for _, t := range []map[string]bool{unaryOps, binaryOps, variadicOps} {
		for op := range t {
			ops = append(ops, op)
		}
	}
	slices.Sort(ops)
	return ops
}

// OpCost estimates the price of recomputing an op (the CPU generator's
// row-buffer choice; device targets refuse float64 ops of cost >= 3).
func OpCost(op string) int {
	switch op {
	case "Exp", "Erf", "Sigmoid", "GeLU", "Pow", "Softplus", "Mish", "Elu", "SeLU", "CeLU":
		return 10
	case "RealDiv", "Rsqrt", "Reciprocal", "Softsign":
		return 3
	}
	if f, ok := libmUnary[op]; ok {
		return f.Cost
	}
	return 1
}

// mathFn returns the libm function name for the compute type (float or double).
func mathFn(name string, ct string) string {
	if ct == "double" {
		return name
	}
	return name + "f"
}

// ShiftedByMax reports v = x - ReduceMax(x) with the reduced dims kept (the
// softmax shift): every element is <= 0, or NaN.
func ShiftedByMax(v *ir.Value) bool {
	d := v.Producer
	if d == nil || d.Op != "Sub" || len(d.Inputs) != 2 {
		return false
	}
	m := d.Inputs[1].Producer
	return m != nil && m.Op == "ReduceMax" && m.Inputs[0] == d.Inputs[0] && len(m.Outputs[0].Shape) == len(d.Inputs[0].Shape)
}

// unaryExpr builds the C expression of a unary op over operand a.
func unaryExpr(n *ir.Node, a string, inDT, outDT ir.DType) (string, error) {
	ct := ComputeType(outDT)
	if !outDT.IsFloat() && inDT.IsFloat() && n.Op != "Cast" && n.Op != "IsInf" && n.Op != "IsNan" {
		ct = ComputeType(inDT)
	}
	f := func(name string) string { return mathFn(name, ct) + "(" + a + ")" }
	exp := "GK_EXPF"
	if ct == "double" {
		exp = "exp"
	}
	lit := func(v float64) string { return Literal(outDT, v) }
	alpha := func(def float64) string { return lit(n.Attrs.Float("alpha", def)) }
	isFloat := outDT.IsFloat()
	switch n.Op {
	case "Identity", "Dropout":
		return a, nil
	case "Abs":
		if isFloat {
			return f("fabs"), nil
		}
		return fmt.Sprintf("(%s < 0 ? -%s : %s)", a, a, a), nil
	case "Neg":
		return "(-" + a + ")", nil
	case "Sign":
		return fmt.Sprintf("(%s)((%s > 0) - (%s < 0))", ct, a, a), nil
	case "Square":
		return fmt.Sprintf("(%s * %s)", a, a), nil
	case "ReLU":
		return fmt.Sprintf("(%s > 0 ? %s : %s)", a, a, lit(0)), nil
	case "ReLU6":
		return fmt.Sprintf("(%s > 0 ? (%s < %s ? %s : %s) : %s)", a, a, lit(6), a, lit(6), lit(0)), nil
	case "LogicalNot":
		return "(!" + a + ")", nil
	case "IsNan":
		return fmt.Sprintf("(%s != %s)", a, a), nil
	case "IsInf":
		neg, pos := n.Attrs.Int("detect_negative", 1) != 0, n.Attrs.Int("detect_positive", 1) != 0
		in := Literal(inDT, math.Inf(1))
		switch {
		case neg && pos:
			return fmt.Sprintf("(%s == %s || %s == -%s)", a, in, a, in), nil
		case pos:
			return fmt.Sprintf("(%s == %s)", a, in), nil
		case neg:
			return fmt.Sprintf("(%s == -%s)", a, in), nil
		}
		return "0", nil
	case "Cast":
		to := ir.DType(n.Attrs.Int("to", int64(outDT)))
		if to == ir.Bool {
			return fmt.Sprintf("(%s != 0)", a), nil
		}
		if to == ir.Float16 || to == ir.BFloat16 {
			// Half values are carried as float inside a kernel, but a Cast
			// to half rounds there as it does unfused: a float32 -> float16
			// -> float32 round trip is a rounding, not a no-op.
			if to == ir.Float16 {
				return "gk_round_h((float)" + a + ")", nil
			}
			return "gk_round_bf((float)" + a + ")", nil
		}
		return fmt.Sprintf("((%s)%s)", ComputeType(to), a), nil
	}
	if !isFloat {
		return "", fmt.Errorf("op %s on %s is not supported by the C generator", n.Op, outDT)
	}
	if n.Op == "Tanh" && ct == "float" {
		// the runtime's Tanh: onnxruntime's rational form (gk_ort_tanh in
		// the CPU prelude), so a fused Tanh gives the unfused op's bits
		return "GK_TANHF(" + a + ")", nil
	}
	if fn, ok := libmUnary[n.Op]; ok {
		return f(fn.Name), nil
	}
	switch n.Op {
	case "Exp":
		if exp == "GK_EXPF" && ShiftedByMax(n.Inputs[0]) {
			exp = "GK_EXPF_NONPOS" // no upper clamp: the argument is <= 0 or NaN
		}
		return exp + "(" + a + ")", nil
	case "Erf":
		if ct == "float" {
			return "GK_ERFF(" + a + ")", nil
		}
		return f("erf"), nil
	case "Round":
		return f("rint"), nil // default rounding mode: half to even
	case "Rsqrt":
		return fmt.Sprintf("(%s / %s)", lit(1), f("sqrt")), nil
	case "Reciprocal":
		return fmt.Sprintf("(%s / %s)", lit(1), a), nil
	case "Sigmoid":
		if ct == "float" {
			return "GK_SIGMOIDF(" + a + ")", nil
		}
		return fmt.Sprintf("(%s / (%s + %s(-%s)))", lit(1), lit(1), exp, a), nil
	case "Softplus":
		// log(1+e^x) without overflow: x + log1p(e^-x) for x > 0.
		return fmt.Sprintf("(%s > 0 ? %s + %s(%s(-%s)) : %s(%s(%s)))", a, a, mathFn("log1p", ct), mathFn("exp", ct), a,
			mathFn("log1p", ct), mathFn("exp", ct), a), nil
	case "Softsign":
		// x * (1 / (1 + |x|)): onnxruntime's form, as the runtime computes it
		return fmt.Sprintf("(%s * (%s / (%s + %s)))", a, lit(1), lit(1), f("fabs")), nil
	case "Mish":
		sp := fmt.Sprintf("(%s > 0 ? %s + %s(%s(-%s)) : %s(%s(%s)))", a, a, mathFn("log1p", ct), mathFn("exp", ct), a,
			mathFn("log1p", ct), mathFn("exp", ct), a)
		return fmt.Sprintf("(%s * %s(%s))", a, mathFn("tanh", ct), sp), nil
	case "GeLU":
		if n.Attrs.String("approximate", "none") == "tanh" {
			return fmt.Sprintf("(%s * %s * (%s + %s(%s * (%s + %s * %s * %s * %s))))", lit(0.5), a, lit(1), mathFn("tanh", ct),
				lit(math.Sqrt(2/math.Pi)), a, lit(0.044715), a, a, a), nil
		}
		erf := mathFn("erf", ct)
		if ct == "float" {
			erf = "GK_ERFF"
		}
		return fmt.Sprintf("(%s * %s * (%s + %s(%s * %s)))", lit(0.5), a, lit(1), erf, a, lit(1/math.Sqrt2)), nil
	case "LeakyReLU":
		return fmt.Sprintf("(%s >= 0 ? %s : %s * %s)", a, a, alpha(0.01), a), nil
	case "Elu":
		return fmt.Sprintf("(%s >= 0 ? %s : %s * %s(%s))", a, a, alpha(1), mathFn("expm1", ct), a), nil
	case "CeLU":
		al := n.Attrs.Float("alpha", 1)
		return fmt.Sprintf("(%s >= 0 ? %s : %s * %s(%s / %s))", a, a, lit(al), mathFn("expm1", ct), a, lit(al)), nil
	case "SeLU":
		al, g := n.Attrs.Float("alpha", 1.67326319217681884765625), n.Attrs.Float("gamma", 1.05070102214813232421875)
		return fmt.Sprintf("(%s * (%s > 0 ? %s : %s * %s(%s)))", lit(g), a, a, lit(al), mathFn("expm1", ct), a), nil
	case "ThresholdedReLU":
		return fmt.Sprintf("(%s > %s ? %s : %s)", a, alpha(1), a, lit(0)), nil
	case "HSigmoid":
		be := n.Attrs.Float("beta", 0.5)
		t := fmt.Sprintf("(%s * %s + %s)", alpha(0.2), a, lit(be))
		return fmt.Sprintf("(%s < 0 ? %s : (%s > 1 ? %s : %s))", t, lit(0), t, lit(1), t), nil
	case "HSwish":
		t := fmt.Sprintf("(%s / %s + %s)", a, lit(6), lit(0.5))
		return fmt.Sprintf("(%s * (%s < 0 ? %s : (%s > 1 ? %s : %s)))", a, t, lit(0), t, lit(1), t), nil
	}
	return "", fmt.Errorf("op %s is not supported by the C generator", n.Op)
}

// infixOps are the binary ops that are one C operator.
var infixOps = map[string]string{
	"Add": "+", "Sub": "-", "Mul": "*", "RealDiv": "/", "Equal": "==", "Greater": ">", "GreaterEqual": ">=",
	"Less": "<", "LessEqual": "<=", "LogicalAnd": "&&", "LogicalOr": "||",
}

// binaryExpr builds the C expression of a binary op. powConst is the value of
// a scalar constant exponent (Pow), used to avoid powf for small integers.
func binaryExpr(op string, a, b string, inDT, outDT ir.DType, powConst *float64) (string, error) {
	ct := ComputeType(inDT)
	if o, ok := infixOps[op]; ok {
		return "(" + a + " " + o + " " + b + ")", nil
	}
	switch op {
	case "SquaredDifference":
		return fmt.Sprintf("((%s - %s) * (%s - %s))", a, b, a, b), nil
	case "LogicalXor":
		return "((" + a + " != 0) != (" + b + " != 0))", nil
	case "PReLU":
		return fmt.Sprintf("(%s < 0 ? %s * %s : %s)", a, b, a, a), nil
	case "Pow":
		if powConst != nil {
			switch *powConst {
			case 1:
				return a, nil
			case 2:
				return fmt.Sprintf("(%s * %s)", a, a), nil
			case 3:
				return fmt.Sprintf("(%s * %s * %s)", a, a, a), nil
			case 4:
				return fmt.Sprintf("((%s * %s) * (%s * %s))", a, a, a, a), nil
			case 0.5:
				if inDT.IsFloat() {
					return mathFn("sqrt", ct) + "(" + a + ")", nil
				}
			case -1:
				if inDT.IsFloat() {
					return fmt.Sprintf("(%s / %s)", Literal(inDT, 1), a), nil
				}
			}
		}
		if !inDT.IsFloat() {
			return "", fmt.Errorf("Pow on %s is not supported by the C generator", inDT)
		}
		return mathFn("pow", ct) + "(" + a + ", " + b + ")", nil
	}
	return "", fmt.Errorf("op %s is not supported by the C generator", op)
}

// powConstOf is the exponent of a Pow node when it is a scalar constant
// (binaryExpr's powConst), else nil.
func powConstOf(n *ir.Node) *float64 {
	if n.Op != "Pow" {
		return nil
	}
	if c := n.Inputs[1].Const; c != nil && c.NumElements() == 1 {
		if f, err := c.Float64s(); err == nil {
			return &f[0]
		}
	}
	return nil
}

// The expression rules below are shared by the C and the device generators;
// operand(i) evaluates input i, spill binds an expression to a new const
// temporary of the result's compute type and returns its name (it keeps the
// nesting shallow where an operand is repeated).

// variadicExpr folds Maximum/Minimum/AddN/Mean over n's inputs.
func variadicExpr(n *ir.Node, outDT ir.DType, operand func(int) (string, error), spill func(string) string) (string, error) {
	var acc string
	for i := range n.Inputs {
		a, err := operand(i)
		if err != nil {
			return "", err
		}
		switch {
		case i == 0:
			acc = a
		case n.Op == "Maximum":
			acc = fmt.Sprintf("(%s > %s ? %s : %s)", a, acc, a, acc)
		case n.Op == "Minimum":
			acc = fmt.Sprintf("(%s < %s ? %s : %s)", a, acc, a, acc)
		default:
			acc = "(" + acc + " + " + a + ")"
		}
		if i > 0 && i < len(n.Inputs)-1 {
			acc = spill(acc)
		}
	}
	if n.Op == "Mean" {
		acc = fmt.Sprintf("(%s / %s)", acc, Literal(outDT, float64(len(n.Inputs))))
	}
	return acc, nil
}

// selectExpr is Select(cond, a, b).
func selectExpr(operand func(int) (string, error)) (string, error) {
	var ops [3]string
	for i := range ops {
		e, err := operand(i)
		if err != nil {
			return "", err
		}
		ops[i] = e
	}
	return fmt.Sprintf("(%s ? %s : %s)", ops[0], ops[1], ops[2]), nil
}

// clipExpr is Clip(x, min?, max?).
func clipExpr(n *ir.Node, operand func(int) (string, error), spill func(string) string) (string, error) {
	e, err := operand(0)
	if err != nil {
		return "", err
	}
	if n.Input(1) != nil {
		lo, err := operand(1)
		if err != nil {
			return "", err
		}
		e = spill(fmt.Sprintf("%s < %s ? %s : %s", e, lo, lo, e))
	}
	if n.Input(2) != nil {
		hi, err := operand(2)
		if err != nil {
			return "", err
		}
		e = fmt.Sprintf("(%s > %s ? %s : %s)", e, hi, hi, e)
	}
	return e, nil
}

// biasChannelAxis is the axis of a BiasAdd's output that its bias runs along.
func biasChannelAxis(n *ir.Node, rank int) int {
	switch n.Attrs.String("format", n.Attrs.String("data_format", "NCHW")) {
	case "NHWC", "NDHWC", "NWC":
		return rank - 1
	}
	return 1
}
