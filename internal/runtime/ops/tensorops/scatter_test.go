package tensorops

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"gkconv/internal/ir"
)

// inferCall runs op the way the runtime does: the shape function sees the
// inputs as constants (so data-dependent shapes resolve), the outputs are
// allocated from it and filled with garbage, then the kernel runs.
func inferCall(t *testing.T, op string, attrs ir.Attrs, nout int, in ...*ir.Tensor) ([]*ir.Tensor, error) {
	t.Helper()
	if attrs == nil {
		attrs = ir.Attrs{}
	}
	n := &ir.Node{Name: "n", Op: op, Attrs: attrs}
	for _, x := range in {
		if x == nil {
			n.Inputs = append(n.Inputs, nil)
			continue
		}
		n.Inputs = append(n.Inputs, &ir.Value{DType: x.DType, Shape: x.Shape, Const: x})
	}
	for k := 0; k < nout; k++ {
		n.Outputs = append(n.Outputs, &ir.Value{Name: "y", Producer: n, OutIndex: k})
	}
	if err := ir.InferNode(n); err != nil {
		return nil, err
	}
	outs := make([]*ir.Tensor, nout)
	for k, o := range n.Outputs {
		outs[k] = ir.NewTensor(o.DType, o.Shape)
	}
	return outs, call(t, 1, op, attrs, in, outs...)
}

func wantVals(t *testing.T, name string, got *ir.Tensor, shape []int64, want ...float64) {
	t.Helper()
	if !reflect.DeepEqual(got.Shape, shape) {
		t.Errorf("%s: shape %v, want %v", name, got.Shape, shape)
		return
	}
	g := vals(got).([]float64)
	if len(want) == 0 {
		want = []float64{}
	}
	if !equalNaN(g, want) {
		t.Errorf("%s: got %v, want %v", name, g, want)
	}
}

func f16(shape []int64, v ...float32) *ir.Tensor {
	t := ir.NewTensor(ir.Float16, shape)
	for i, x := range v {
		t.U16()[i] = ir.F32ToF16(x)
	}
	return t
}

func TestScatterElements(t *testing.T) {
	data := func() *ir.Tensor { return f32([]int64{2, 3}, 1, 2, 3, 4, 5, 6) }
	for _, c := range []struct {
		name  string
		attrs ir.Attrs
		in    []*ir.Tensor
		shape []int64
		want  []float64
	}{
		{"axis 1 negative indices", ir.Attrs{"axis": ir.IntAttr(-1)}, []*ir.Tensor{data(), ir.Int64Tensor([]int64{2, 1}, -1, 0), f32([]int64{2, 1}, 10, 20)},
			[]int64{2, 3}, []float64{1, 2, 10, 20, 5, 6}},
		{"axis 0 int32 indices", nil, []*ir.Tensor{data(), i32([]int64{1, 3}, 1, 0, 1), f32([]int64{1, 3}, 7, 8, 9)},
			[]int64{2, 3}, []float64{1, 8, 3, 7, 5, 9}},
		{"add duplicates", ir.Attrs{"axis": ir.IntAttr(1), "reduction": ir.StringAttr("add")},
			[]*ir.Tensor{data(), ir.Int64Tensor([]int64{1, 2}, 1, 1), f32([]int64{1, 2}, 10, 100)}, []int64{2, 3}, []float64{1, 112, 3, 4, 5, 6}},
		{"mul int32", ir.Attrs{"reduction": ir.StringAttr("mul")},
			[]*ir.Tensor{i32([]int64{3}, 2, 3, 4), i64(2, 2), i32([]int64{2}, 5, -1)}, []int64{3}, []float64{2, 3, -20}},
		{"max", ir.Attrs{"reduction": ir.StringAttr("max")},
			[]*ir.Tensor{f32([]int64{3}, 2, 3, 4), i64(0, 0, 2), f32([]int64{3}, 1, 5, 3)}, []int64{3}, []float64{5, 3, 4}},
		{"min float16", ir.Attrs{"reduction": ir.StringAttr("min")},
			[]*ir.Tensor{f16([]int64{3}, 2, 3, 4), i64(1, 1), f16([]int64{2}, 2.5, 0.5)}, []int64{3}, []float64{2, 0.5, 4}},
		{"empty indices", nil, []*ir.Tensor{data(), ir.Int64Tensor([]int64{0, 3}), f32([]int64{0, 3})}, []int64{2, 3}, []float64{1, 2, 3, 4, 5, 6}},
	} {
		out, err := inferCall(t, "ScatterElements", c.attrs, 1, c.in...)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		wantVals(t, c.name, out[0], c.shape, c.want...)
	}
	if _, err := inferCall(t, "ScatterElements", nil, 1, data(), ir.Int64Tensor([]int64{1, 1}, 2), f32([]int64{1, 1}, 0)); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("index 2 on a dim of 2: err = %v", err)
	}
	// Deprecated ONNX Scatter maps to this row.
	if o, ok := ir.OpFromOnnx("Scatter"); !ok || o.Name != "ScatterElements" {
		t.Errorf("ONNX Scatter maps to %v", o)
	}
}

func TestScatterND(t *testing.T) {
	data := func() *ir.Tensor { return iota32(2, 2, 2) }
	for _, c := range []struct {
		name  string
		red   string
		in    []*ir.Tensor
		shape []int64
		want  []float64
	}{
		{"slices", "none", []*ir.Tensor{data(), ir.Int64Tensor([]int64{1, 1}, -1), f32([]int64{1, 2, 2}, 9, 9, 9, 9)},
			[]int64{2, 2, 2}, []float64{0, 1, 2, 3, 9, 9, 9, 9}},
		{"elements add duplicates", "add", []*ir.Tensor{data(), ir.Int64Tensor([]int64{2, 3}, 0, 1, 1, 0, 1, 1), f32([]int64{2}, 10, 20)},
			[]int64{2, 2, 2}, []float64{0, 1, 2, 33, 4, 5, 6, 7}},
		{"rows mul", "mul", []*ir.Tensor{data(), ir.Int64Tensor([]int64{2, 2}, 1, 0, 1, 0), f32([]int64{2, 2}, 2, 3, 2, 1)},
			[]int64{2, 2, 2}, []float64{0, 1, 2, 3, 16, 15, 6, 7}},
		{"max", "max", []*ir.Tensor{data(), ir.Int64Tensor([]int64{1, 3}, 1, 1, 1), f32([]int64{1}, 3)},
			[]int64{2, 2, 2}, []float64{0, 1, 2, 3, 4, 5, 6, 7}},
		{"min int64", "min", []*ir.Tensor{ir.Int64Tensor([]int64{3}, 5, 6, 7), ir.Int64Tensor([]int64{2, 1}, 2, 0), ir.Int64Tensor([]int64{2}, -1, 9)},
			[]int64{3}, []float64{5, 6, -1}},
	} {
		out, err := inferCall(t, "ScatterNdUpdate", ir.Attrs{"reduction": ir.StringAttr(c.red)}, 1, c.in...)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		wantVals(t, c.name, out[0], c.shape, c.want...)
	}
	if _, err := inferCall(t, "ScatterNdUpdate", nil, 1, data(), ir.Int64Tensor([]int64{1, 1}, 0), f32([]int64{1, 2}, 1, 2)); err == nil {
		t.Error("updates of the wrong shape: no error")
	}
}

func TestTensorScatter(t *testing.T) {
	past := func() *ir.Tensor { return iota32(2, 4, 1) } // batch 2, max_seq 4, axis 1
	upd := f32([]int64{2, 2, 1}, 10, 11, 20, 21)
	for _, c := range []struct {
		name  string
		mode  string
		w     *ir.Tensor
		want  []float64
		error string
	}{
		{"no write_indices", "linear", nil, []float64{10, 11, 2, 3, 20, 21, 6, 7}, ""},
		{"linear", "linear", i64(1, 2), []float64{0, 10, 11, 3, 4, 5, 20, 21}, ""},
		{"circular wraps", "circular", i64(3, 0), []float64{11, 1, 2, 10, 20, 21, 6, 7}, ""},
		{"linear past the end", "linear", i64(3, 0), nil, "out of range"},
	} {
		in := []*ir.Tensor{past(), upd}
		if c.w != nil {
			in = append(in, c.w)
		}
		out, err := inferCall(t, "TensorScatter", ir.Attrs{"axis": ir.IntAttr(1), "mode": ir.StringAttr(c.mode)}, 1, in...)
		if c.error != "" {
			if err == nil || !strings.Contains(err.Error(), c.error) {
				t.Errorf("%s: err = %v, want %q", c.name, err, c.error)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		wantVals(t, c.name, out[0], []int64{2, 4, 1}, c.want...)
	}
	// default axis -2 on a 4-D cache [B, H, S, D]
	out, err := inferCall(t, "TensorScatter", nil, 1, iota32(1, 2, 3, 1), f32([]int64{1, 2, 1, 1}, -1, -2), i64(2))
	if err != nil {
		t.Fatal(err)
	}
	wantVals(t, "default axis", out[0], []int64{1, 2, 3, 1}, 0, 1, -1, 3, 4, -2)
}

func TestGatherND(t *testing.T) {
	for _, c := range []struct {
		name  string
		bd    int64
		in    []*ir.Tensor
		shape []int64
		want  []float64
	}{
		{"elements", 0, []*ir.Tensor{iota32(2, 2), ir.Int64Tensor([]int64{2, 2}, 0, 0, 1, -1)}, []int64{2}, []float64{0, 3}},
		{"rows", 0, []*ir.Tensor{iota32(2, 2), ir.Int64Tensor([]int64{2, 1}, 1, 0)}, []int64{2, 2}, []float64{2, 3, 0, 1}},
		{"batch_dims 1", 1, []*ir.Tensor{iota32(2, 2, 2), ir.Int64Tensor([]int64{2, 1}, 1, 0)}, []int64{2, 2}, []float64{2, 3, 4, 5}},
		{"batch_dims 1 int32 elements", 1, []*ir.Tensor{i32([]int64{2, 3}, 1, 2, 3, 4, 5, 6), ir.Int64Tensor([]int64{2, 2, 1}, 2, 0, 1, 1)},
			[]int64{2, 2}, []float64{3, 1, 5, 5}},
		{"no tuples", 0, []*ir.Tensor{iota32(2, 2), ir.Int64Tensor([]int64{0, 1})}, []int64{0, 2}, nil},
	} {
		out, err := inferCall(t, "GatherNd", ir.Attrs{"batch_dims": ir.IntAttr(c.bd)}, 1, c.in...)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		wantVals(t, c.name, out[0], c.shape, c.want...)
	}
	if _, err := inferCall(t, "GatherNd", nil, 1, iota32(2, 2), ir.Int64Tensor([]int64{1, 1}, 2)); err == nil {
		t.Error("index 2 on a dim of 2: no error")
	}
}

func TestNonZero(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	nan := float32(math.NaN())
	for _, c := range []struct {
		name  string
		in    *ir.Tensor
		shape []int64
		want  []float64
	}{
		{"2-D float, -0 is zero, NaN is not", f32([]int64{2, 2}, 1, negZero, nan, 0), []int64{2, 2}, []float64{0, 1, 0, 0}},
		{"int8", i8([]int64{4}, 0, -3, 0, 1), []int64{1, 2}, []float64{1, 3}},
		{"bool 3-D", func() *ir.Tensor {
			b := ir.NewTensor(ir.Bool, []int64{1, 2, 2})
			copy(b.Data, []byte{0, 1, 1, 0})
			return b
		}(), []int64{3, 2}, []float64{0, 0, 0, 1, 1, 0}},
		{"float16 -0", f16([]int64{2}, negZero, 2), []int64{1, 1}, []float64{1}},
		{"empty", f32([]int64{0, 3}), []int64{2, 0}, nil},
		{"all zero", f32([]int64{3}, 0, 0, 0), []int64{1, 0}, nil},
	} {
		out, err := inferCall(t, "NonZero", nil, 1, c.in)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		wantVals(t, c.name, out[0], c.shape, c.want...)
	}
}

func TestNonMaxSuppression(t *testing.T) {
	// three boxes in one class: 0 and 1 overlap (IoU 0.9), 2 is apart
	corner := f32([]int64{1, 3, 4}, 0, 0, 1, 1, 0.1, 0, 1, 1, 5, 5, 6, 6)
	flipped := f32([]int64{1, 3, 4}, 1, 1, 0, 0, 1, 0.1, 0, 1, 6, 6, 5, 5)
	center := f32([]int64{1, 3, 4}, 0.5, 0.5, 1, 1, 0.55, 0.5, 0.9, 1, 5.5, 5.5, 1, 1)
	scores := f32([]int64{1, 1, 3}, 0.9, 0.95, 0.5)
	two := f32([]int64{1, 2, 3}, 0.9, 0.95, 0.5, 0.1, 0.2, 0.3)
	big := ir.Int64Tensor([]int64{1}, math.MaxInt64)
	for _, c := range []struct {
		name   string
		center int64
		in     []*ir.Tensor
		want   []float64
	}{
		{"suppress by IoU", 0, []*ir.Tensor{corner, scores, big, f32([]int64{1}, 0.5)}, []float64{0, 0, 1, 0, 0, 2}},
		{"flipped corners", 0, []*ir.Tensor{flipped, scores, big, f32([]int64{1}, 0.5)}, []float64{0, 0, 1, 0, 0, 2}},
		{"center boxes", 1, []*ir.Tensor{center, scores, big, f32([]int64{1}, 0.5)}, []float64{0, 0, 1, 0, 0, 2}},
		{"IoU threshold above overlap", 0, []*ir.Tensor{corner, scores, big, f32([]int64{1}, 0.95)}, []float64{0, 0, 1, 0, 0, 0, 0, 0, 2}},
		{"score threshold", 0, []*ir.Tensor{corner, scores, big, f32([]int64{1}, 0.5), f32([]int64{1}, 0.6)}, []float64{0, 0, 1}},
		{"limit 1 per class, two classes", 0, []*ir.Tensor{corner, two, i64(1), f32([]int64{1}, 0.5)}, []float64{0, 0, 1, 0, 1, 2}},
		{"max_output absent", 0, []*ir.Tensor{corner, scores}, nil},
		{"max_output 0", 0, []*ir.Tensor{corner, scores, i64(0)}, nil},
	} {
		out, err := inferCall(t, "NonMaxSuppression", ir.Attrs{"center_point_box": ir.IntAttr(c.center)}, 1, c.in...)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		wantVals(t, c.name, out[0], []int64{int64(len(c.want) / 3), 3}, c.want...)
	}
	if _, err := inferCall(t, "NonMaxSuppression", nil, 1, corner, f32([]int64{1, 1, 2}, 1, 2), big); err == nil {
		t.Error("scores for 2 boxes with 3 boxes: no error")
	}
}
