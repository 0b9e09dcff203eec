package runtime

import (
	"testing"
	"time"

	"gkconv/internal/ir"
)

// Profile gives each node's mean and median over the runs since
// ResetProfile; the median ignores one outlier run that the mean carries.
func TestProfileMedian(t *testing.T) {
	s := negSession(t, Options{Threads: 1, Profile: true}, func(g *ir.Graph, x, neg *ir.Value) []*ir.Value {
		return []*ir.Value{neg}
	})
	if _, err := s.Run([]*ir.Tensor{ir.Float32Tensor([]int64{3}, 1, 2, 3)}); err != nil {
		t.Fatal(err)
	}
	s.ResetProfile()
	if p := s.Profile(); len(p) != 1 || p[0].Total != 0 || p[0].Median != 0 {
		t.Fatalf("after ResetProfile: %+v", p)
	}
	for _, d := range []time.Duration{3, 1, 100, 2} {
		s.timed(0, d*time.Millisecond)
		s.runs++
	}
	p := s.Profile()[0]
	if p.Node != "neg" || p.Total != 106*time.Millisecond || p.PerRun != 26500*time.Microsecond || p.Median != 2500*time.Microsecond {
		t.Errorf("profile %+v, want total 106ms, mean 26.5ms, median 2.5ms", p)
	}
}

// negSession is a session of y = Neg(x) (x float32 [3]) whose outputs
// outputs picks from the graph, x and y.
func negSession(t *testing.T, opts Options, outputs func(g *ir.Graph, x, neg *ir.Value) []*ir.Value) *Session {
	t.Helper()
	x := input("x", ir.Float32, 3)
	g := ir.NewGraph("main")
	g.Inputs = []*ir.Value{x}
	g.Outputs = outputs(g, x, g.AddNode("neg", "Neg", []*ir.Value{x}, "y").Outputs[0])
	if err := ir.InferShapes(g); err != nil {
		t.Fatal(err)
	}
	s, err := NewSession(g, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
