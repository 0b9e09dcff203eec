package elementwise

import (
	"errors"
	"math"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

func u8(shape []int64, v ...uint8) *ir.Tensor {
	t := ir.NewTensor(ir.Uint8, shape)
	copy(t.Data, v)
	return t
}

func i16(shape []int64, v ...int16) *ir.Tensor {
	t := ir.NewTensor(ir.Int16, shape)
	copy(t.I16(), v)
	return t
}

// bitCase is a kernel call: out is the expected output, or the output
// tensor of a call that must fail (unsupported: as opkernel.Unsupported).
type bitCase struct {
	name, op    string
	attrs       ir.Attrs
	in          []*ir.Tensor
	out         *ir.Tensor
	unsupported bool
}

func TestBitOps(t *testing.T) {
	cases := []bitCase{
		{"and broadcast int16", "BitwiseAnd", nil, []*ir.Tensor{i16(sh(2, 2), -1, 6, 5, 0x7f00), i16(sh(2), 0x0ff0, 3)},
			i16(sh(2, 2), 0x0ff0, 2, 0, 3&0x7f00), false},
		{"or signed", "BitwiseOr", nil, []*ir.Tensor{i32(sh(2), -8, 1), i32(sh(2), 3, 2)}, i32(sh(2), -5, 3), false},
		{"xor uint8 scalar", "BitwiseXor", nil, []*ir.Tensor{u8(sh(3), 0, 0xff, 0x0f), u8(nil, 0xf0)}, u8(sh(3), 0xf0, 0x0f, 0xff), false},
		{"xor empty", "BitwiseXor", nil, []*ir.Tensor{i64(sh(0)), i64(sh(1), 5)}, i64(sh(0)), false},
		{"not int64", "BitwiseNot", nil, []*ir.Tensor{i64(sh(3), 0, -1, math.MaxInt64)}, i64(sh(3), -1, 0, math.MinInt64), false},
		{"shift left past the width", "BitShift", ir.Attrs{"direction": ir.StringAttr("LEFT")},
			[]*ir.Tensor{u8(sh(4), 1, 0x81, 3, 1), u8(sh(4), 7, 1, 8, 200)}, u8(sh(4), 0x80, 0x02, 0, 0), false},
		{"shift right broadcast", "BitShift", ir.Attrs{"direction": ir.StringAttr("RIGHT")},
			[]*ir.Tensor{u8(sh(2, 1), 0xf0, 0x0f), u8(sh(3), 0, 4, 9)}, u8(sh(2, 3), 0xf0, 0x0f, 0, 0x0f, 0, 0), false},
		{"bitcast float32 to int32", "BitCast", ir.Attrs{"to": ir.IntAttr(int64(ir.Int32))}, []*ir.Tensor{f32(sh(2), 1, -2.5)},
			i32(sh(2), 0x3f800000, int32(math.Float32bits(-2.5))), false},
		{"bitcast int8 to uint8 empty", "BitCast", ir.Attrs{"to": ir.IntAttr(int64(ir.Uint8))}, []*ir.Tensor{ir.NewTensor(ir.Int8, sh(0, 2))}, u8(sh(0, 2)), false},
		{"castlike float to int32", "CastLike", nil, []*ir.Tensor{f32(sh(3), 1.9, -2.5, 7), i32(sh(1), 0)}, i32(sh(3), 1, -2, 7), false},
		{"castlike int64 to float16", "CastLike", nil, []*ir.Tensor{i64(sh(2), 3, -1), ir.NewTensor(ir.Float16, nil)},
			func() *ir.Tensor {
				h := ir.NewTensor(ir.Float16, sh(2))
				h.U16()[0], h.U16()[1] = ir.F32ToF16(3), ir.F32ToF16(-1)
				return h
			}(), false},
	}
	for _, c := range cases {
		out := ir.NewTensor(c.out.DType, c.out.Shape)
		for i := range out.Data {
			out.Data[i] = 0xcd
		}
		if err := run(t, c.op, c.attrs, c.in, out); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if string(out.Data) != string(c.out.Data) {
			t.Errorf("%s: got bytes %x, want %x", c.name, out.Data, c.out.Data)
		}
	}
}

func TestBitOpErrors(t *testing.T) {
	cases := []bitCase{
		{"and on floats", "BitwiseAnd", nil, []*ir.Tensor{f32(sh(1), 1), f32(sh(1), 1)}, f32(sh(1), 0), true},
		{"and mixed dtypes", "BitwiseAnd", nil, []*ir.Tensor{i32(sh(1), 1), i64(sh(1), 1)}, i32(sh(1), 0), false},
		{"shift signed", "BitShift", ir.Attrs{"direction": ir.StringAttr("LEFT")}, []*ir.Tensor{i32(sh(1), 1), i32(sh(1), 1)}, i32(sh(1), 0), true},
		{"shift no direction", "BitShift", nil, []*ir.Tensor{u8(sh(1), 1), u8(sh(1), 1)}, u8(sh(1), 0), false},
		{"bitcast size change", "BitCast", ir.Attrs{"to": ir.IntAttr(int64(ir.Int64))}, []*ir.Tensor{f32(sh(2), 1, 2)}, i64(sh(1), 0), false},
		{"castlike wrong output dtype", "CastLike", nil, []*ir.Tensor{f32(sh(1), 1), i32(sh(1), 0)}, i64(sh(1), 0), false},
	}
	var u *opkernel.Unsupported
	for _, c := range cases {
		if err := run(t, c.op, c.attrs, c.in, c.out); err == nil {
			t.Errorf("%s: no error", c.name)
		} else if errors.As(err, &u) != c.unsupported {
			t.Errorf("%s: %v is not unsupported=%v", c.name, err, c.unsupported)
		}
	}
}
