package tensorops

import (
	"slices"
	"testing"

	"gkconv/internal/ir"
)

func TestEyeLike(t *testing.T) {
	in := f32([]int64{2, 3}, 9, 9, 9, 9, 9, 9)
	for _, tc := range []struct {
		name string
		dt   ir.DType
		k    int64
		want []float64
	}{
		{"float k=1", ir.Float32, 1, []float64{0, 1, 0, 0, 0, 1}},
		{"int32 k=-1", ir.Int32, -1, []float64{0, 0, 0, 1, 0, 0}},
		{"float16 main", ir.Float16, 0, []float64{1, 0, 0, 0, 1, 0}},
		{"int64 off the matrix", ir.Int64, 3, []float64{0, 0, 0, 0, 0, 0}},
		{"bool", ir.Bool, 0, []float64{1, 0, 0, 0, 1, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			y := ir.NewTensor(tc.dt, []int64{2, 3})
			if err := call(t, 1, "EyeLike", ir.Attrs{"k": ir.IntAttr(tc.k), "dtype": ir.IntAttr(int64(tc.dt))}, []*ir.Tensor{in}, y); err != nil {
				t.Fatal(err)
			}
			got, err := y.Float64s()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
	if err := call(t, 1, "EyeLike", nil, []*ir.Tensor{f32([]int64{4}, 0, 0, 0, 0)}, ir.NewTensor(ir.Float32, []int64{4})); err == nil {
		t.Error("1-D input: no error")
	}
}
