package ir

import (
	"slices"
	"testing"
)

func TestPackBLayout(t *testing.T) {
	// B [3, 5], panels of 2: ceil(5/2) = 3 panels of [3][2], last half zero.
	b := make([]float32, 15)
	for i := range b {
		b[i] = float32(i + 1)
	}
	got := PackB(b, 3, 5, 2, false)
	want := []float32{1, 2, 6, 7, 11, 12, 3, 4, 8, 9, 13, 14, 5, 0, 10, 0, 15, 0}
	if !slices.Equal(got, want) {
		t.Fatalf("PackB = %v, want %v", got, want)
	}
	bt := make([]float32, 15) // B^T [5, 3]
	for q := 0; q < 3; q++ {
		for j := 0; j < 5; j++ {
			bt[j*3+q] = b[q*5+j]
		}
	}
	if got := PackB(bt, 3, 5, 2, true); !slices.Equal(got, want) {
		t.Fatalf("PackB(transB) = %v, want %v", got, want)
	}
	if PackedLen(3, 5, 2) != 18 || PackedLen(0, 5, 2) != 0 {
		t.Error("PackedLen")
	}
}

func TestPackableMatMul(t *testing.T) {
	f32 := func(shape ...int64) *Value { return &Value{Name: "a", DType: Float32, Shape: shape} }
	w := func(shape ...int64) *Value {
		return &Value{Name: "w", DType: Float32, Shape: shape, Const: NewTensor(Float32, shape)}
	}
	mm := func(attrs Attrs, ins ...*Value) *Node {
		return &Node{Name: "mm", Op: "MatMul", Attrs: attrs, Inputs: ins, Outputs: []*Value{{Name: "y"}}}
	}
	tb, ta := Attrs{"transpose_b": IntAttr(1)}, Attrs{"transpose_a": IntAttr(1)}
	cases := []struct {
		name     string
		n        *Node
		ok       bool
		k, nn    int
		wantTran bool
	}{
		{"plain", mm(nil, f32(2, 5, 12), w(12, 40)), true, 12, 40, false},
		{"transpose_b", mm(tb, f32(5, 40), w(24, 40)), true, 40, 24, true},
		{"transpose_a", mm(ta, f32(12, 7), w(12, 40)), true, 12, 40, false},
		{"1-D A", mm(nil, f32(12), w(12, 3)), true, 12, 3, false},
		{"dynamic K", mm(nil, f32(-1, -1), w(12, 3)), true, 12, 3, false},
		{"row bias", mm(nil, f32(4, 12), w(12, 3), w(1, 3)), true, 12, 3, false},
		{"bias not a row", mm(nil, f32(4, 12), w(12, 3), w(3, 1)), false, 0, 0, false},
		{"bias not const", mm(nil, f32(4, 12), w(12, 3), f32(3)), false, 0, 0, false},
		{"B rank 3", mm(nil, f32(3, 8), w(2, 8, 4)), false, 0, 0, false},
		{"B not const", mm(nil, f32(3, 8), f32(8, 4)), false, 0, 0, false},
		{"K mismatch", mm(nil, f32(3, 7), w(8, 4)), false, 0, 0, false},
		{"K mismatch transpose_a", mm(ta, f32(7, 8), w(8, 4)), false, 0, 0, false},
		{"float16 A", mm(nil, &Value{DType: Float16, Shape: []int64{3, 8}}, w(8, 4)), false, 0, 0, false},
		{"scalar A", mm(nil, f32(), w(8, 4)), false, 0, 0, false},
		{"not MatMul", &Node{Op: "Gemm", Inputs: []*Value{f32(3, 8), w(8, 4)}, Outputs: []*Value{{}}}, false, 0, 0, false},
	}
	for _, c := range cases {
		k, nn, tr, ok := PackableMatMul(c.n)
		if ok != c.ok || (ok && (k != c.k || nn != c.nn || tr != c.wantTran)) {
			t.Errorf("%s: PackableMatMul = %d, %d, %v, %v; want %d, %d, %v, %v", c.name, k, nn, tr, ok, c.k, c.nn, c.wantTran, c.ok)
		}
	}
	n := mm(nil, f32(2, 12), w(12, 4))
	if PackBMarked(n) {
		t.Error("unmarked MatMul reported marked")
	}
	n.Attrs = Attrs{AttrPackB: IntAttr(1)}
	if !PackBMarked(n) {
		t.Error("pack_b=1 not seen")
	}
	n.Attrs[AttrPackB] = IntAttr(0)
	if PackBMarked(n) {
		t.Error("pack_b=0 reported marked")
	}
}
