package runtime

import (
	"slices"
	"strings"
	"testing"

	"gkconv/internal/ir"
)

func seqNode(op string, attrs ir.Attrs) *ir.Node { return &ir.Node{Name: "s", Op: op, Attrs: attrs} }

func i64(v int64) *ir.Tensor { return ir.Int64Tensor([]int64{}, v) }

func TestSequenceOps(t *testing.T) {
	a := ir.Float32Tensor([]int64{2}, 1, 2)
	b := ir.Float32Tensor([]int64{2}, 3, 4)
	c := ir.Float32Tensor([]int64{2}, 5, 6)
	call := func(op string, attrs ir.Attrs, in ...*ir.Tensor) (*ir.Tensor, error) {
		return seqOps[op](seqNode(op, attrs), in)
	}
	must := func(x *ir.Tensor, err error) *ir.Tensor {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	s := must(call("SequenceConstruct", nil, a, b))
	// Elements are copies: the source's buffer may be recycled.
	a.F32()[0] = 100
	if s.Seq[0].F32()[0] != 1 {
		t.Errorf("SequenceConstruct shares its input's data")
	}
	s = must(call("SequenceInsert", nil, s, c, i64(-1))) // before the last: a, c, b
	if got := must(call("SequenceAt", nil, s, i64(1))); !slices.Equal(got.F32(), []float32{5, 6}) {
		t.Errorf("insert at -1 then at 1 = %v", got.F32())
	}
	s2 := must(call("SequenceErase", nil, s)) // the last by default: a, c
	if got := must(call("SequenceLength", nil, s2)); got.I64()[0] != 2 {
		t.Errorf("length after erase = %v", got.I64())
	}
	if got := must(call("SequenceAt", nil, s2, i64(-1))); !slices.Equal(got.F32(), []float32{5, 6}) {
		t.Errorf("at -1 after erase = %v", got.F32())
	}
	if _, err := call("SequenceAt", nil, s2, i64(2)); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("at 2 of 2: err = %v", err)
	}
	if _, err := call("SequenceErase", nil, must(call("SequenceEmpty", nil))); err == nil {
		t.Errorf("erase from an empty sequence did not fail")
	}
	// Concatenation along an existing axis and along a new one.
	cat := must(call("ConcatFromSequence", ir.Attrs{"axis": ir.IntAttr(0)}, s2))
	if !slices.Equal(cat.Shape, []int64{4}) || !slices.Equal(cat.F32(), []float32{1, 2, 5, 6}) {
		t.Errorf("concat = %v %v", cat.Shape, cat.F32())
	}
	st := must(call("ConcatFromSequence", ir.Attrs{"axis": ir.IntAttr(-1), "new_axis": ir.IntAttr(1)}, s2))
	if !slices.Equal(st.Shape, []int64{2, 2}) || !slices.Equal(st.F32(), []float32{1, 5, 2, 6}) {
		t.Errorf("stack on the last new axis = %v %v", st.Shape, st.F32())
	}
}

func TestSplitToSequence(t *testing.T) {
	x := ir.Float32Tensor([]int64{2, 5}, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9)
	split := func(attrs ir.Attrs, in ...*ir.Tensor) []*ir.Tensor {
		t.Helper()
		s, err := splitToSequence(seqNode("SplitToSequence", attrs), append([]*ir.Tensor{x}, in...))
		if err != nil {
			t.Fatal(err)
		}
		return s.Seq
	}
	// A scalar split: chunks of 2 along axis 1, the last one shorter.
	got := split(ir.Attrs{"axis": ir.IntAttr(1)}, i64(2))
	if len(got) != 3 || !slices.Equal(got[2].Shape, []int64{2, 1}) || !slices.Equal(got[2].F32(), []float32{4, 9}) {
		t.Errorf("scalar split: %d parts, last %v %v", len(got), got[len(got)-1].Shape, got[len(got)-1].F32())
	}
	// Sizes.
	got = split(ir.Attrs{"axis": ir.IntAttr(-1)}, ir.Int64Tensor([]int64{2}, 1, 4))
	if len(got) != 2 || !slices.Equal(got[1].F32(), []float32{1, 2, 3, 4, 6, 7, 8, 9}) {
		t.Errorf("sizes split: %v", got)
	}
	// No split, keepdims=0: one element per index, the axis removed.
	got = split(ir.Attrs{"keepdims": ir.IntAttr(0)})
	if len(got) != 2 || !slices.Equal(got[1].Shape, []int64{5}) {
		t.Errorf("keepdims=0: %d parts, shape %v", len(got), got[1].Shape)
	}
	if _, err := splitToSequence(seqNode("SplitToSequence", nil), []*ir.Tensor{x, ir.Int64Tensor([]int64{2}, 1, 2)}); err == nil {
		t.Errorf("sizes that do not sum to the dim did not fail")
	}
}
