package elementwise

import (
	"math"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

func i8Tensor(shape []int64, vals ...int8) *ir.Tensor {
	t := ir.NewTensor(ir.Int8, shape)
	for i, v := range vals {
		t.Data[i] = byte(v)
	}
	return t
}

// TestQuantizeLinearRounding: halves round to even, values saturate, the
// default output is uint8 without a zero point.
func TestQuantizeLinearRounding(t *testing.T) {
	x := ir.Float32Tensor([]int64{8}, 0.5, 1.5, 2.5, -0.5, -1.5, 1000, -1000, float32(math.NaN()))
	y := ir.NewTensor(ir.Int8, []int64{8})
	n := &ir.Node{Name: "q", Op: "QuantizeLinear"}
	if err := quantizeLinear(opkernel.DefaultCtx(), n, []*ir.Tensor{x, ir.Float32Tensor(nil, 1), i8Tensor(nil, 1)}, []*ir.Tensor{y}); err != nil {
		t.Fatal(err)
	}
	want := []int8{1, 3, 3, 1, -1, 127, -128, 1}
	for i, w := range want {
		if got := int8(y.Data[i]); got != w {
			t.Errorf("y[%d] = %d, want %d", i, got, w)
		}
	}
	u := ir.NewTensor(ir.Uint8, []int64{8})
	if err := quantizeLinear(opkernel.DefaultCtx(), n, []*ir.Tensor{x, ir.Float32Tensor(nil, 1)}, []*ir.Tensor{u}); err != nil {
		t.Fatal(err)
	}
	for i, w := range []uint8{0, 2, 2, 0, 0, 255, 0, 0} {
		if u.Data[i] != w {
			t.Errorf("uint8 y[%d] = %d, want %d", i, u.Data[i], w)
		}
	}
}

// TestQuantizeLinearAxisBlocked: per-axis with a negative axis, blocked
// along axis 1 with a partial last block, int16 output.
func TestQuantizeLinearAxisBlocked(t *testing.T) {
	x := ir.Float32Tensor([]int64{2, 3}, 1, 2, 3, 4, 5, 6)
	y := ir.NewTensor(ir.Int16, []int64{2, 3})
	zp := ir.NewTensor(ir.Int16, []int64{3})
	copy(zp.I16(), []int16{0, 10, -10})
	n := &ir.Node{Name: "q", Op: "QuantizeLinear", Attrs: ir.Attrs{"axis": ir.IntAttr(-1)}}
	if err := quantizeLinear(opkernel.DefaultCtx(), n, []*ir.Tensor{x, ir.Float32Tensor([]int64{3}, 1, 0.5, 0.25), zp}, []*ir.Tensor{y}); err != nil {
		t.Fatal(err)
	}
	for i, w := range []int16{1, 14, 2, 4, 20, 14} {
		if got := y.I16()[i]; got != w {
			t.Errorf("per-axis y[%d] = %d, want %d", i, got, w)
		}
	}
	// blocks of 2 along axis 1: scales [2, 2]
	b := ir.NewTensor(ir.Uint8, []int64{2, 3})
	nb := &ir.Node{Name: "qb", Op: "QuantizeLinear", Attrs: ir.Attrs{"axis": ir.IntAttr(1), "block_size": ir.IntAttr(2)}}
	if err := quantizeLinear(opkernel.DefaultCtx(), nb, []*ir.Tensor{x, ir.Float32Tensor([]int64{2, 2}, 1, 0.5, 2, 4)}, []*ir.Tensor{b}); err != nil {
		t.Fatal(err)
	}
	for i, w := range []uint8{1, 2, 6, 2, 2, 2} {
		if b.Data[i] != w {
			t.Errorf("blocked y[%d] = %d, want %d", i, b.Data[i], w)
		}
	}
}

// TestDequantizeLinear: per-tensor uint8 (table path), per-axis int8,
// float16 output, an empty tensor.
func TestDequantizeLinear(t *testing.T) {
	x := ir.NewTensor(ir.Uint8, []int64{3})
	copy(x.Data, []byte{0, 128, 255})
	zp := ir.NewTensor(ir.Uint8, []int64{})
	zp.Data[0] = 128
	y := ir.NewTensor(ir.Float32, []int64{3})
	n := &ir.Node{Name: "dq", Op: "DequantizeLinear"}
	if err := dequantizeLinear(opkernel.DefaultCtx(), n, []*ir.Tensor{x, ir.Float32Tensor(nil, 0.5), zp}, []*ir.Tensor{y}); err != nil {
		t.Fatal(err)
	}
	for i, w := range []float32{-64, 0, 63.5} {
		if y.F32()[i] != w {
			t.Errorf("y[%d] = %v, want %v", i, y.F32()[i], w)
		}
	}
	xa := i8Tensor([]int64{2, 2}, -1, 2, 3, -4)
	ya := ir.NewTensor(ir.Float16, []int64{2, 2})
	na := &ir.Node{Name: "dq", Op: "DequantizeLinear", Attrs: ir.Attrs{"axis": ir.IntAttr(0)}}
	if err := dequantizeLinear(opkernel.DefaultCtx(), na, []*ir.Tensor{xa, ir.Float32Tensor([]int64{2}, 2, 3), i8Tensor([]int64{2}, 1, -1)}, []*ir.Tensor{ya}); err != nil {
		t.Fatal(err)
	}
	for i, w := range []float32{-4, 2, 12, -9} {
		if got := ir.F16ToF32(ya.U16()[i]); got != w {
			t.Errorf("per-axis y[%d] = %v, want %v", i, got, w)
		}
	}
	empty := ir.NewTensor(ir.Int8, []int64{0, 2})
	if err := dequantizeLinear(opkernel.DefaultCtx(), n, []*ir.Tensor{empty, ir.Float32Tensor(nil, 1)}, []*ir.Tensor{ir.NewTensor(ir.Float32, []int64{0, 2})}); err != nil {
		t.Fatal(err)
	}
}

// TestDynamicQuantizeLinear: the range includes 0; an all-zero input gets
// scale 1 (not a division by zero).
func TestDynamicQuantizeLinear(t *testing.T) {
	run := func(vals ...float32) (*ir.Tensor, float32, uint8) {
		x := ir.Float32Tensor([]int64{int64(len(vals))}, vals...)
		y, s, z := ir.NewTensor(ir.Uint8, x.Shape), ir.NewTensor(ir.Float32, []int64{}), ir.NewTensor(ir.Uint8, []int64{})
		if err := dynamicQuantizeLinear(opkernel.DefaultCtx(), &ir.Node{Name: "d"}, []*ir.Tensor{x}, []*ir.Tensor{y, s, z}); err != nil {
			t.Fatal(err)
		}
		return y, s.F32()[0], z.Data[0]
	}
	y, s, z := run(1, 2, 3)
	if s != 3.0/255 || z != 0 || y.Data[2] != 255 {
		t.Errorf("positive input: scale %v zp %d y %v", s, z, y.Data)
	}
	// float32: 1 / (2/255) is 127.49999, so the zero point is 127, not 128
	y, s, z = run(-1, 1)
	if z != 127 || y.Data[0] != 0 || y.Data[1] != 254 {
		t.Errorf("symmetric input: scale %v zp %d y %v", s, z, y.Data)
	}
	y, s, z = run(0, 0)
	if s != 1 || z != 0 || y.Data[0] != 0 {
		t.Errorf("zero input: scale %v zp %d y %v", s, z, y.Data)
	}
}
