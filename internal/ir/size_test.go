package ir

import (
	"math"
	"strings"
	"testing"
)

func TestSizeOverflow(t *testing.T) {
	if n := NumElements([]int64{4294967296, 4294967296}); n != math.MaxInt64 {
		t.Errorf("NumElements saturates: got %d", n)
	}
	if n, ok := CheckedNumElements([]int64{2, -1, 3}); !ok || n != -1 {
		t.Errorf("unknown dim: %d %v", n, ok)
	}
	if n, ok := CheckedNumElements([]int64{0, math.MaxInt64, 3}); !ok || n != 0 {
		t.Errorf("zero dim: %d %v", n, ok)
	}
	for _, shape := range [][]int64{{4294967296, 4294967296}, {math.MaxInt64, 2}, {1 << 38, 8}} {
		g := NewGraph("g")
		x := &Value{Name: "x", DType: Float32, Shape: []int64{-1, -1}}
		g.Inputs = []*Value{x}
		g.Outputs = []*Value{g.AddNode("r", "ReLU", []*Value{x}, "y").Outputs[0]}
		err := g.FixInputShapes(map[string][]int64{"x": shape})
		if err == nil || !strings.Contains(err.Error(), "input x") {
			t.Errorf("%v: got %v, want a size error naming the input", shape, err)
		}
	}
	// Inference refuses an output that would overflow.
	g := NewGraph("g")
	x := &Value{Name: "x", DType: Float32, Shape: []int64{1 << 20, 1 << 20}}
	ex := g.AddNode("e", "BroadcastTo", []*Value{x, g.AddConst("s", Int64Tensor([]int64{3}, 1<<30, 1<<20, 1<<20))}, "y")
	if err := InferNode(ex); err == nil || !strings.Contains(err.Error(), "node e (BroadcastTo): output 0") {
		t.Errorf("got %v", err)
	}
}
