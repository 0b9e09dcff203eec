package elementwise

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unsafe"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// castTensor returns t converted to dtype to (t itself when already so).
func castTensor(t *ir.Tensor, to ir.DType) (*ir.Tensor, error) {
	if t.DType == to {
		return t, nil
	}
	o := ir.NewTensor(to, t.Shape)
	return o, castInto(o, t)
}

func convert[S, D number](d []D, s []S) {
	s = s[:len(d)]
	for i, v := range s {
		d[i] = D(v)
	}
}

// floatToInt truncates toward zero like C's static_cast; NaN gives 0 and
// out-of-range values saturate, so results never depend on the platform.
func floatToInt[S float, D integer](d []D, s []S) {
	var zero D
	lo, hi := float64(minOf(zero)), float64(maxOf(zero))
	s = s[:len(d)]
	for i, v := range s {
		f := float64(v)
		switch {
		case f != f:
			d[i] = 0
		case f <= lo:
			d[i] = minOf(zero)
		case f >= hi:
			d[i] = maxOf(zero)
		default:
			d[i] = D(f)
		}
	}
}

func minOf[T integer](T) T {
	var z T
	if z-1 > 0 { // unsigned
		return 0
	}
	return T(1) << (8*sizeOf(z) - 1)
}

func maxOf[T integer](z T) T { return ^minOf(z) }

func sizeOf[T integer](T) int {
	var z T
	return int(unsafe.Sizeof(z))
}

func toBool[S number](d []uint8, s []S) {
	s = s[:len(d)]
	for i, v := range s {
		d[i] = b2u(v != 0)
	}
}

// castFrom converts the numeric slice s into dst of any numeric or bool dtype.
func castFrom[S number](dst *ir.Tensor, s []S, srcFloat bool) error {
	if srcFloat {
		switch dst.DType {
		case ir.Int8:
			floatToIntF(dst.I8(), s)
			return nil
		case ir.Int16:
			floatToIntF(dst.I16(), s)
			return nil
		case ir.Int32:
			floatToIntF(dst.I32(), s)
			return nil
		case ir.Int64:
			floatToIntF(dst.I64(), s)
			return nil
		case ir.Uint8:
			floatToIntF(dst.U8(), s)
			return nil
		case ir.Uint16:
			floatToIntF(dst.U16(), s)
			return nil
		case ir.Uint32:
			floatToIntF(dst.U32(), s)
			return nil
		case ir.Uint64:
			floatToIntF(dst.U64(), s)
			return nil
		}
	}
	switch dst.DType {
	case ir.Float32:
		convert(dst.F32(), s)
	case ir.Float64:
		convert(dst.F64(), s)
	case ir.Float16, ir.BFloat16:
		tmp := make([]float32, len(dst.U16()))
		convert(tmp, s)
		opkernel.F32ToHalf(dst, tmp)
	case ir.Int8:
		convert(dst.I8(), s)
	case ir.Int16:
		convert(dst.I16(), s)
	case ir.Int32:
		convert(dst.I32(), s)
	case ir.Int64:
		convert(dst.I64(), s)
	case ir.Uint8:
		convert(dst.U8(), s)
	case ir.Uint16:
		convert(dst.U16(), s)
	case ir.Uint32:
		convert(dst.U32(), s)
	case ir.Uint64:
		convert(dst.U64(), s)
	case ir.Bool:
		toBool(dst.U8(), s)
	case ir.String:
		for i, v := range s[:len(dst.Strings)] {
			dst.Strings[i] = formatNumber(float64(v), srcFloat)
		}
	default:
		return errorf("cast to %s not supported", dst.DType)
	}
	return nil
}

// floatToIntF dispatches floatToInt on a float source of static type S.
func floatToIntF[D integer, S number](d []D, s []S) {
	switch v := any(s).(type) {
	case []float32:
		floatToInt(d, v)
	case []float64:
		floatToInt(d, v)
	default:
		convert(d, s)
	}
}

// formatNumber writes a number the way ONNX's reference Cast to string does
// (numpy str: shortest round-trip, "NaN"/"INF" spellings for specials).
func formatNumber(v float64, isFloat bool) string {
	if !isFloat {
		return strconv.FormatInt(int64(v), 10)
	}
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "INF"
	case math.IsInf(v, -1):
		return "-INF"
	}
	return strconv.FormatFloat(v, 'g', -1, 32)
}

func parseNumber(s string) float64 {
	s = strings.TrimSpace(s)
	switch strings.ToLower(strings.TrimPrefix(s, "+")) {
	case "nan":
		return math.NaN()
	case "inf", "infinity":
		if strings.HasPrefix(s, "-") {
			return math.Inf(-1)
		}
		return math.Inf(1)
	case "-inf", "-infinity":
		return math.Inf(-1)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

// castInto converts src into dst (same element count), any supported pair.
func castInto(dst, src *ir.Tensor) error {
	if dst.DType == src.DType {
		if src.DType == ir.String {
			copy(dst.Strings, src.Strings)
		} else {
			copy(dst.Data, src.Data)
		}
		return nil
	}
	// The float16 model's Casts (onnxruntime's float32 runs begin and end
	// with them) convert in place, with F16C where the CPU has it.
	switch {
	case src.DType == ir.Float32 && (dst.DType == ir.Float16 || dst.DType == ir.BFloat16):
		opkernel.F32ToHalf(dst, src.F32())
		return nil
	case (src.DType == ir.Float16 || src.DType == ir.BFloat16) && dst.DType == ir.Float32:
		opkernel.HalfToF32Into(dst.F32(), src)
		return nil
	}
	switch src.DType {
	case ir.Float32:
		return castFrom(dst, src.F32(), true)
	case ir.Float64:
		return castFrom(dst, src.F64(), true)
	case ir.Float16, ir.BFloat16:
		if dst.DType == ir.Float16 || dst.DType == ir.BFloat16 {
			opkernel.F32ToHalf(dst, opkernel.HalfToF32(src).F32())
			return nil
		}
		return castFrom(dst, opkernel.HalfToF32(src).F32(), true)
	case ir.Int8:
		return castFrom(dst, src.I8(), false)
	case ir.Int16:
		return castFrom(dst, src.I16(), false)
	case ir.Int32:
		return castFrom(dst, src.I32(), false)
	case ir.Int64:
		return castFrom(dst, src.I64(), false)
	case ir.Uint8, ir.Bool:
		if dst.DType == ir.String && src.DType == ir.Bool {
			for i, v := range src.Data[:len(dst.Strings)] {
				dst.Strings[i] = strconv.Itoa(int(v))
			}
			return nil
		}
		return castFrom(dst, src.U8(), false)
	case ir.Uint16:
		return castFrom(dst, src.U16(), false)
	case ir.Uint32:
		return castFrom(dst, src.U32(), false)
	case ir.Uint64:
		if dst.DType == ir.String {
			for i, v := range src.U64()[:len(dst.Strings)] {
				dst.Strings[i] = strconv.FormatUint(v, 10)
			}
			return nil
		}
		return castFrom(dst, src.U64(), false)
	case ir.String:
		f := make([]float64, len(src.Strings))
		ints := dst.DType.IsInt()
		for i, s := range src.Strings {
			if ints {
				if v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
					f[i] = float64(v)
					continue
				}
			}
			f[i] = parseNumber(s)
		}
		return castFrom(dst, f, true)
	}
	return errorf("cast from %s not supported", src.DType)
}

func castOp(_ *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := checkArity(n, in, out, 1, 1, 1); err != nil {
		return err
	}
	to := ir.DType(n.Attrs.Int("to", int64(out[0].DType)))
	if to != out[0].DType {
		return nodeErr(n, "attr to=%s but output is %s", to, out[0].DType)
	}
	if in[0].NumElements() != out[0].NumElements() {
		return nodeErr(n, "input %v and output %v sizes differ", in[0].Shape, out[0].Shape)
	}
	if err := castInto(out[0], in[0]); err != nil {
		return opkernel.Unsupportedf(n, "%v", err)
	}
	return nil
}

func identity(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := checkArity(n, in, out, 1, -1, 1); err != nil {
		return err
	}
	if in[0].DType != out[0].DType || in[0].NumElements() != out[0].NumElements() {
		return nodeErr(n, "input %s does not match output %s", in[0], out[0])
	}
	if in[0].DType == ir.String {
		copy(out[0].Strings, in[0].Strings)
	} else {
		copy(out[0].Data, in[0].Data)
	}
	if n.Op == "Dropout" && len(in) > 2 && in[2] != nil && len(in[2].Data) > 0 && in[2].Data[0] != 0 {
		// Training mode is random unless the ratio is 0.
		ratio := 0.5
		if len(in) > 1 && in[1] != nil {
			if r, err := in[1].Float64s(); err == nil && len(r) == 1 {
				ratio = r[0]
			}
		}
		if ratio != 0 {
			return opkernel.Unsupportedf(n, "training_mode=true with ratio %g (random dropout)", ratio)
		}
	}
	// Dropout's optional mask: all true at inference.
	if n.Op == "Dropout" && len(out) > 1 && out[1] != nil {
		for i := range out[1].Data {
			out[1].Data[i] = 1
		}
	}
	return nil
}

func init() {
	opkernel.Register("Cast", castOp)
	opkernel.Register("Identity", identity)
	opkernel.Register("Dropout", identity)
}
