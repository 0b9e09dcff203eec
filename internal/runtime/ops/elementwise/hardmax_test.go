package elementwise

import (
	"math"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

func TestCumProd(t *testing.T) {
	x := f32(sh(2, 3), 1, 2, 3, 4, 5, 6)
	y := ir.NewTensor(ir.Float32, sh(2, 3))
	for _, tc := range []struct {
		name  string
		attrs ir.Attrs
		axis  int64
		want  []float64
	}{
		{"axis 1", nil, 1, []float64{1, 2, 6, 4, 20, 120}},
		{"negative axis", nil, -2, []float64{1, 2, 3, 4, 10, 18}},
		{"exclusive", ir.Attrs{"exclusive": ir.IntAttr(1)}, 1, []float64{1, 1, 2, 1, 4, 20}},
		{"reverse", ir.Attrs{"reverse": ir.IntAttr(1)}, 1, []float64{6, 6, 3, 120, 30, 6}},
		{"reverse exclusive", ir.Attrs{"reverse": ir.IntAttr(1), "exclusive": ir.IntAttr(1)}, 0, []float64{4, 5, 6, 1, 1, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := run(t, "CumProd", tc.attrs, []*ir.Tensor{x, i64(sh(), tc.axis)}, y); err != nil {
				t.Fatal(err)
			}
			wantF(t, y, tc.want, 0)
		})
	}
	// int32, and CumSum still sums on the shared scan
	yi := ir.NewTensor(ir.Int32, sh(3))
	if err := run(t, "CumProd", ir.Attrs{"reverse": ir.IntAttr(1), "exclusive": ir.IntAttr(1)}, []*ir.Tensor{i32(sh(3), 2, 3, 4), i32(sh(1), 0)}, yi); err != nil {
		t.Fatal(err)
	}
	wantF(t, yi, []float64{12, 4, 1}, 0)
	if err := run(t, "CumSum", ir.Attrs{"exclusive": ir.IntAttr(1)}, []*ir.Tensor{i32(sh(3), 2, 3, 4), i32(sh(1), 0)}, yi); err != nil {
		t.Fatal(err)
	}
	wantF(t, yi, []float64{0, 2, 5}, 0)
	// empty
	if err := run(t, "CumProd", nil, []*ir.Tensor{f32(sh(0, 3)), i64(sh(), 0)}, ir.NewTensor(ir.Float32, sh(0, 3))); err != nil {
		t.Fatal(err)
	}
	if err := run(t, "CumProd", nil, []*ir.Tensor{x, i64(sh(), 2)}, y); err == nil {
		t.Error("axis 2 of rank 2: no error")
	}
}

func TestHardmax(t *testing.T) {
	nan := float32(math.NaN())
	y := ir.NewTensor(ir.Float32, sh(2, 3))
	// ties go to the first maximum; NaN counts as the maximum (numpy argmax)
	if err := run(t, "Hardmax", nil, []*ir.Tensor{f32(sh(2, 3), 1, 3, 3, 0, nan, 1)}, y); err != nil {
		t.Fatal(err)
	}
	wantF(t, y, []float64{0, 1, 0, 0, 1, 0}, 0)
	if err := run(t, "Hardmax", ir.Attrs{"axis": ir.IntAttr(-2)}, []*ir.Tensor{f32(sh(2, 3), 1, 3, 3, 4, 0, 3)}, y); err != nil {
		t.Fatal(err)
	}
	wantF(t, y, []float64{0, 1, 1, 1, 0, 0}, 0)
	// bfloat16 through float32
	xb, yb := ir.NewTensor(ir.BFloat16, sh(3)), ir.NewTensor(ir.BFloat16, sh(3))
	opkernel.F32ToHalf(xb, []float32{-1, 2, -3})
	if err := run(t, "Hardmax", nil, []*ir.Tensor{xb}, yb); err != nil {
		t.Fatal(err)
	}
	wantF(t, yb, []float64{0, 1, 0}, 0)
	y64 := ir.NewTensor(ir.Float64, sh(0, 2))
	if err := run(t, "Hardmax", nil, []*ir.Tensor{ir.NewTensor(ir.Float64, sh(0, 2))}, y64); err != nil {
		t.Fatal(err)
	}
}

func TestShrinkSwish(t *testing.T) {
	x := f32(sh(5), -2, -1, 0, 1, 2)
	y := ir.NewTensor(ir.Float32, sh(5))
	if err := run(t, "Shrink", ir.Attrs{"lambd": ir.FloatAttr(1), "bias": ir.FloatAttr(0.5)}, []*ir.Tensor{x}, y); err != nil {
		t.Fatal(err)
	}
	wantF(t, y, []float64{-1.5, 0, 0, 0, 1.5}, 0)
	if err := run(t, "Shrink", nil, []*ir.Tensor{x}, y); err != nil { // lambd 0.5, bias 0
		t.Fatal(err)
	}
	wantF(t, y, []float64{-2, -1, 0, 1, 2}, 0)
	if err := run(t, "Swish", ir.Attrs{"alpha": ir.FloatAttr(2)}, []*ir.Tensor{x}, y); err != nil {
		t.Fatal(err)
	}
	sw := func(v float64) float64 { return v / (1 + math.Exp(-2*v)) }
	wantF(t, y, []float64{sw(-2), sw(-1), 0, sw(1), sw(2)}, 1e-6)
}
