package elementwise

import (
	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// Bit ops (ONNX BitwiseAnd/Or/Xor/Not, BitShift, BitCast) and CastLike.
// And, or, xor, not and shifts of unsigned operands do not depend on the
// sign, so every integer dtype runs as the unsigned type of its size.

type unsigned interface {
	~uint8 | ~uint16 | ~uint32 | ~uint64
}

func bitFunc[T unsigned](op string) func(x, y T) T {
	switch op {
	case "BitwiseAnd":
		return func(x, y T) T { return x & y }
	case "BitwiseOr":
		return func(x, y T) T { return x | y }
	case "BitwiseXor":
		return func(x, y T) T { return x ^ y }
	case "LEFT":
		// Go shifts past the width give 0, as the reference does.
		return func(x, y T) T { return x << y }
	case "RIGHT":
		return func(x, y T) T { return x >> y }
	}
	return nil
}

// bitBinary runs BitwiseAnd/Or/Xor and BitShift (op is its direction).
func bitBinary(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := checkArity(n, in, out, 2, 2, 1); err != nil {
		return err
	}
	a, b, o := in[0], in[1], out[0]
	if a.DType != b.DType || o.DType != a.DType {
		return nodeErr(n, "dtypes %s, %s -> %s; want one integer dtype", a.DType, b.DType, o.DType)
	}
	if !a.DType.IsInt() {
		return opkernel.Unsupportedf(n, "dtype %s", a.DType)
	}
	op := n.Op
	if op == "BitShift" {
		op = n.Attrs.String("direction", "")
		if op != "LEFT" && op != "RIGHT" {
			return nodeErr(n, "direction %q, want LEFT or RIGHT", op)
		}
		if a.DType.IsSigned() {
			return opkernel.Unsupportedf(n, "dtype %s (BitShift takes unsigned integers)", a.DType)
		}
	}
	var err error
	switch a.DType.Size() {
	case 1:
		err = binaryFunc(ctx, o, a, b, bitFunc[uint8](op))
	case 2:
		err = binaryFunc(ctx, o, a, b, bitFunc[uint16](op))
	case 4:
		err = binaryFunc(ctx, o, a, b, bitFunc[uint32](op))
	case 8:
		err = binaryFunc(ctx, o, a, b, bitFunc[uint64](op))
	}
	return nodeErrIf(n, err)
}

func notAll[T unsigned](d, s []T) {
	for i := range d {
		d[i] = ^s[i]
	}
}

func bitwiseNot(_ *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := checkArity(n, in, out, 1, 1, 1); err != nil {
		return err
	}
	x, o := in[0], out[0]
	if o.DType != x.DType || o.NumElements() != x.NumElements() {
		return nodeErr(n, "input %s, output %s", x, o)
	}
	if !x.DType.IsInt() {
		return opkernel.Unsupportedf(n, "dtype %s", x.DType)
	}
	cnt := int(x.NumElements())
	switch x.DType.Size() {
	case 1:
		notAll(data[uint8](o)[:cnt], data[uint8](x))
	case 2:
		notAll(data[uint16](o)[:cnt], data[uint16](x))
	case 4:
		notAll(data[uint32](o)[:cnt], data[uint32](x))
	case 8:
		notAll(data[uint64](o)[:cnt], data[uint64](x))
	}
	return nil
}

// bitCast copies the bytes: input and output dtypes have one element size.
func bitCast(_ *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := checkArity(n, in, out, 1, 1, 1); err != nil {
		return err
	}
	x, o := in[0], out[0]
	if x.DType == ir.String || o.DType == ir.String || x.DType.Size() != o.DType.Size() ||
		x.NumElements() != o.NumElements() || ir.DType(n.Attrs.Int("to", 0)) != o.DType {
		return nodeErr(n, "cannot bitcast %s to %s (attr to=%d)", x, o, n.Attrs.Int("to", 0))
	}
	size := int(x.NumElements()) * x.DType.Size()
	if len(x.Data) < size || len(o.Data) < size {
		return nodeErr(n, "tensors hold %d and %d bytes, want %d", len(x.Data), len(o.Data), size)
	}
	copy(o.Data[:size], x.Data)
	return nil
}

// castLike is Cast to the dtype of input 1 (the output's, from inference).
func castLike(_ *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := checkArity(n, in, out, 2, 2, 1); err != nil {
		return err
	}
	if out[0].DType != in[1].DType || in[0].NumElements() != out[0].NumElements() {
		return nodeErr(n, "input %s, target %s, output %s", in[0], in[1], out[0])
	}
	if err := castInto(out[0], in[0]); err != nil {
		return opkernel.Unsupportedf(n, "%v", err)
	}
	return nil
}

func init() {
	for _, op := range []string{"BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitShift"} {
		opkernel.Register(op, bitBinary)
	}
	opkernel.Register("BitwiseNot", bitwiseNot)
	opkernel.Register("BitCast", bitCast)
	opkernel.Register("CastLike", castLike)
}
