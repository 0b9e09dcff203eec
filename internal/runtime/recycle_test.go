package runtime

import (
	"slices"
	"testing"

	"gkconv/internal/ir"
)

// Recycle: a given-back output buffer carries the next Run's output (same
// memory, right values); a graph input or constant returned as an output,
// a foreign tensor, and a tensor given back twice are ignored, so the
// session never writes into memory it does not own; only the latest Run's
// outputs are taken back.
func TestRecycleOutputs(t *testing.T) {
	s := negSession(t, Options{Threads: 1}, func(g *ir.Graph, x, neg *ir.Value) []*ir.Value {
		return []*ir.Value{neg, x, g.AddConst("k", ir.Float32Tensor([]int64{3}, 10, 20, 30))}
	})
	xs := ir.Float32Tensor([]int64{3}, 1, 2, 3)
	out, err := s.Run([]*ir.Tensor{xs})
	if err != nil {
		t.Fatal(err)
	}
	first := &out[0].Data[0]
	s.Recycle(out)
	s.Recycle(out) // twice: no effect
	s.Recycle([]*ir.Tensor{ir.Float32Tensor([]int64{3}, 7, 8, 9), nil})
	if out[0].Data != nil {
		t.Error("a given-back tensor still reaches its buffer")
	}
	xs2 := ir.Float32Tensor([]int64{3}, 4, 5, 6)
	out2, err := s.Run([]*ir.Tensor{xs2})
	if err != nil {
		t.Fatal(err)
	}
	if &out2[0].Data[0] != first {
		t.Error("the given-back buffer was not reused")
	}
	if !slices.Equal(out2[0].F32(), []float32{-4, -5, -6}) {
		t.Errorf("output %v, want [-4 -5 -6]", out2[0].F32())
	}
	if !slices.Equal(xs.F32(), []float32{1, 2, 3}) || !slices.Equal(xs2.F32(), []float32{4, 5, 6}) {
		t.Errorf("an input returned as an output was written: %v %v", xs.F32(), xs2.F32())
	}
	if !slices.Equal(out2[2].F32(), []float32{10, 20, 30}) {
		t.Errorf("the constant returned as an output became %v", out2[2].F32())
	}
	// Without Recycle every Run allocates its own outputs.
	out3, err := s.Run([]*ir.Tensor{xs2})
	if err != nil {
		t.Fatal(err)
	}
	if &out3[0].Data[0] == &out2[0].Data[0] || !slices.Equal(out2[0].F32(), []float32{-4, -5, -6}) {
		t.Error("a Run wrote into an output the caller still holds")
	}
	// Only the latest Run's outputs can be given back.
	s.Recycle(out2)
	if out2[0].Data == nil {
		t.Error("an earlier Run's output was taken back")
	}
}
