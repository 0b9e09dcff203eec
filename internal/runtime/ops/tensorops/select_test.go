package tensorops

import (
	"errors"
	"math"
	"reflect"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
	"gkconv/internal/runtime/ops/opstest"
)

// TestMiscONNXBackendNodes runs the backend node tests of Compress,
// CenterCropPad, ReverseSequence, OneHot and Unique.
func TestMiscONNXBackendNodes(t *testing.T) {
	cases := opstest.Select(opstest.Manifest(t), opstest.Filter{
		Suites: []string{"node"},
		Ops:    opstest.OpSet("Compress", "CenterCropPad", "ReverseSequence", "OneHot", "Unique"),
	})
	if len(cases) < 20 {
		t.Fatalf("only %d backend tests selected", len(cases))
	}
	opstest.RunAll(t, cases, opstest.Check{Threads: []int{1}, Exact: true})
}

func bools(v ...bool) *ir.Tensor {
	t := ir.NewTensor(ir.Bool, []int64{int64(len(v))})
	for i, b := range v {
		if b {
			t.Data[i] = 1
		}
	}
	return t
}

// runMisc runs each case and compares every output with its want (NaN
// equal to NaN; -0 equal to +0).
func runMisc(t *testing.T, cases []tcase) {
	t.Helper()
	for _, c := range cases {
		outs := make([]*ir.Tensor, len(c.want))
		for i, w := range c.want {
			outs[i] = ir.NewTensor(w.DType, w.Shape)
		}
		if err := call(t, 1, c.op, c.attrs, c.in, outs...); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		for i, w := range c.want {
			if outs[i].DType != w.DType || !reflect.DeepEqual(outs[i].Shape, w.Shape) ||
				!equalNaN(vals(outs[i]).([]float64), vals(w).([]float64)) {
				t.Errorf("%s: output %d is %s %v, want %s %v", c.name, i, outs[i], vals(outs[i]), w, vals(w))
			}
		}
	}
}

func TestMiscOps(t *testing.T) {
	nan, negZero := float32(math.NaN()), float32(math.Copysign(0, -1))
	i8s := func(shape []int64, v ...int8) *ir.Tensor { return i8(shape, v...) }
	runMisc(t, []tcase{
		{"compress axis 1, short condition", "Compress", ir.Attrs{"axis": ir.IntAttr(-1)}, []*ir.Tensor{iota32(2, 3), bools(false, true)},
			[]*ir.Tensor{f32([]int64{2, 1}, 1, 4)}},
		{"compress flat, long condition", "Compress", nil, []*ir.Tensor{iota32(3), bools(true, false, true, true, true)},
			[]*ir.Tensor{f32([]int64{2}, 0, 2)}},
		{"compress nothing", "Compress", ir.Attrs{"axis": ir.IntAttr(0)}, []*ir.Tensor{iota32(2, 2), bools(false, false)},
			[]*ir.Tensor{f32([]int64{0, 2})}},
		{"center crop odd", "CenterCropPad", nil, []*ir.Tensor{i8s([]int64{5}, 1, 2, 3, 4, 5), i64(2)},
			[]*ir.Tensor{i8s([]int64{2}, 2, 3)}},
		{"center pad odd", "CenterCropPad", nil, []*ir.Tensor{i8s([]int64{2}, 7, 8), i64(5)},
			[]*ir.Tensor{i8s([]int64{5}, 0, 7, 8, 0, 0)}},
		{"center crop+pad negative axis", "CenterCropPad", ir.Attrs{"axes": ir.IntsAttr(-1)}, []*ir.Tensor{iota32(2, 3), i64(1)},
			[]*ir.Tensor{f32([]int64{2, 1}, 1, 4)}},
		{"center crop to empty", "CenterCropPad", ir.Attrs{"axes": ir.IntsAttr(0)}, []*ir.Tensor{iota32(3, 2), i64(0)},
			[]*ir.Tensor{f32([]int64{0, 2})}},
		{"reverse time-major", "ReverseSequence", nil, []*ir.Tensor{iota32(3, 2, 2), i64(3, 0)},
			[]*ir.Tensor{f32([]int64{3, 2, 2}, 8, 9, 2, 3, 4, 5, 6, 7, 0, 1, 10, 11)}},
		{"reverse batch-major", "ReverseSequence", ir.Attrs{"batch_axis": ir.IntAttr(0), "time_axis": ir.IntAttr(1)},
			[]*ir.Tensor{iota32(2, 3), i64(2, 1)}, []*ir.Tensor{f32([]int64{2, 3}, 1, 0, 2, 3, 4, 5)}},
		{"one hot float indices, axis -2", "OneHot", ir.Attrs{"axis": ir.IntAttr(-2)},
			[]*ir.Tensor{f32([]int64{2}, 1.7, -1), f32(nil, 3), i32([]int64{2}, 0, 9)},
			[]*ir.Tensor{i32([]int64{3, 2}, 0, 0, 9, 0, 0, 9)}},
		{"one hot out of range", "OneHot", nil, []*ir.Tensor{i64(3, -4), i64s(3), f32([]int64{2}, -1, 1)},
			[]*ir.Tensor{f32([]int64{2, 3}, -1, -1, -1, -1, -1, -1)}},
		{"unique sorted, NaN last, -0 is 0", "Unique", nil, []*ir.Tensor{f32([]int64{5}, nan, 2, 0, negZero, nan)},
			[]*ir.Tensor{f32([]int64{3}, 0, 2, nan), i64(2, 1, 0), i64(2, 1, 0, 0, 2), i64(2, 1, 2)}},
		{"unique rows, first occurrence order", "Unique", ir.Attrs{"axis": ir.IntAttr(0), "sorted": ir.IntAttr(0)},
			[]*ir.Tensor{i32([]int64{3, 2}, 5, 1, 0, 0, 5, 1)},
			[]*ir.Tensor{i32([]int64{2, 2}, 5, 1, 0, 0), i64(0, 1), i64(0, 1, 0), i64(2, 1)}},
		{"unique columns sorted", "Unique", ir.Attrs{"axis": ir.IntAttr(-1)},
			[]*ir.Tensor{i32([]int64{2, 3}, 2, 1, 2, 0, 5, 0)},
			[]*ir.Tensor{i32([]int64{2, 2}, 1, 2, 5, 0), i64(1, 0), i64(1, 0, 1), i64(1, 2)}},
		{"unique empty", "Unique", nil, []*ir.Tensor{iota32(0)},
			[]*ir.Tensor{f32([]int64{0}), i64(), i64(), i64()}},
	})
}

func TestMiscErrors(t *testing.T) {
	// Each call must fail; the bool says whether as opkernel.Unsupported.
	type failing struct {
		tcase
		unsupported bool
	}
	out := func(dt ir.DType, shape ...int64) []*ir.Tensor { return []*ir.Tensor{ir.NewTensor(dt, shape)} }
	var u *opkernel.Unsupported
	for _, c := range []failing{
		{tcase{"compress strings", "Compress", nil, []*ir.Tensor{strs([]int64{1}, "a"), bools(true)}, out(ir.String, 1)}, true},
		{tcase{"compress wrong output", "Compress", nil, []*ir.Tensor{iota32(2), bools(true, true)}, out(ir.Float32, 1)}, false},
		{tcase{"reverse length past the steps", "ReverseSequence", nil, []*ir.Tensor{iota32(2, 1), i64(3)}, out(ir.Float32, 2, 1)}, false},
		{tcase{"reverse same axes", "ReverseSequence", ir.Attrs{"batch_axis": ir.IntAttr(0)}, []*ir.Tensor{iota32(2, 2), i64(1, 1)}, out(ir.Float32, 2, 2)}, false},
		{tcase{"one hot wrong rank", "OneHot", nil, []*ir.Tensor{i64(0), i64s(2), f32([]int64{2}, 0, 1)}, out(ir.Float32, 2)}, false},
		{tcase{"center crop shape count", "CenterCropPad", nil, []*ir.Tensor{iota32(2, 2), i64(1)}, out(ir.Float32, 1, 2)}, false},
		{tcase{"unique wrong count", "Unique", nil, []*ir.Tensor{iota32(3)}, out(ir.Float32, 2)}, false},
	} {
		err := call(t, 1, c.op, c.attrs, c.in, c.want...)
		switch {
		case err == nil:
			t.Errorf("%s: no error", c.name)
		case errors.As(err, &u) != c.unsupported:
			t.Errorf("%s: %v is not unsupported=%v", c.name, err, c.unsupported)
		}
	}
}
