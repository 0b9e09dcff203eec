package ir

import (
	"slices"
	"testing"
)

func TestInferPackedMatMul(t *testing.T) {
	cases := []struct {
		a      []int64
		transA int64
		k, n   int64
		bLen   int64
		want   []int64
		ok     bool
	}{
		{[]int64{2, 128, 768}, 0, 768, 2304, int64(PackedLen(768, 2304, 32)), []int64{2, 128, 2304}, true},
		{[]int64{768}, 0, 768, 40, int64(PackedLen(768, 40, 32)), []int64{40}, true},
		{[]int64{768}, 1, 768, 40, int64(PackedLen(768, 40, 32)), []int64{40}, true},
		{[]int64{3, 17, 11}, 1, 17, 45, int64(PackedLen(17, 45, 32)), []int64{3, 11, 45}, true},
		{[]int64{-1, 17}, 0, 17, 5, int64(PackedLen(17, 5, 32)), []int64{-1, 5}, true},
		{[]int64{4, 16}, 0, 17, 5, int64(PackedLen(17, 5, 32)), nil, false}, // K mismatch
		{[]int64{4, 17}, 0, 17, 5, 17 * 5, nil, false},                      // unpacked length
		{[]int64{}, 0, 17, 5, int64(PackedLen(17, 5, 32)), nil, false},      // scalar A
	}
	for _, c := range cases {
		n := &Node{Name: "p", Op: OpPackedMatMul, Attrs: Attrs{"k": IntAttr(c.k), "n": IntAttr(c.n), "nr": IntAttr(32), "transpose_a": IntAttr(c.transA)},
			Inputs:  []*Value{{Name: "a", DType: Float32, Shape: c.a}, {Name: "b", DType: Float32, Shape: []int64{c.bLen}}},
			Outputs: []*Value{{Name: "y"}}}
		err := InferNode(n)
		if (err == nil) != c.ok {
			t.Errorf("A %v transA=%d k=%d: err %v, want ok=%v", c.a, c.transA, c.k, err, c.ok)
			continue
		}
		if c.ok && (!slices.Equal(n.Outputs[0].Shape, c.want) || n.Outputs[0].DType != Float32) {
			t.Errorf("A %v transA=%d: got %s%v, want %v", c.a, c.transA, n.Outputs[0].DType, n.Outputs[0].Shape, c.want)
		}
	}
	missing := &Node{Name: "p", Op: OpPackedMatMul, Attrs: Attrs{},
		Inputs: []*Value{{DType: Float32, Shape: []int64{2}}, {DType: Float32, Shape: []int64{64}}}, Outputs: []*Value{{}}}
	if InferNode(missing) == nil {
		t.Error("missing attrs accepted")
	}
}

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
	if got := PackBTensor(bt, 3, 5, 2, true).F32(); !slices.Equal(got, want) {
		t.Fatalf("PackBTensor(transB) = %v, want %v", got, want)
	}
	if PackedLen(3, 5, 2) != 18 || PackedLen(0, 5, 2) != 0 {
		t.Error("PackedLen")
	}
}
