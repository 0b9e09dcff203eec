package runtime

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"gkconv/internal/ir"
)

func input(name string, dt ir.DType, shape ...int64) *ir.Value {
	return &ir.Value{Name: name, DType: dt, Shape: shape}
}

// body makes a graph with inputs ins whose nodes are added by build, which
// returns the outputs.
func body(name string, ins []*ir.Value, build func(g *ir.Graph) []*ir.Value) *ir.Graph {
	g := ir.NewGraph(name)
	g.Inputs = ins
	g.Outputs = build(g)
	return g
}

func run(t *testing.T, g *ir.Graph, ins ...*ir.Tensor) []*ir.Tensor {
	t.Helper()
	if err := ir.InferShapes(g); err != nil {
		t.Fatal(err)
	}
	s, err := NewSession(g, Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	if p := s.MemoryPlan(); p.Unknown == 0 {
		t.Errorf("memory plan of a graph with control flow has no unknown part")
	}
	out, err := s.Run(ins)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// If's branches give different shapes; the outer value is captured.
func TestIfBranchShapes(t *testing.T) {
	x := input("x", ir.Float32, 3)
	c := input("c", ir.Bool)
	then := body("then", []*ir.Value{input("x", ir.Float32, 3)}, func(g *ir.Graph) []*ir.Value {
		return g.AddNode("neg", "Neg", []*ir.Value{g.Inputs[0]}, "y").Outputs
	})
	els := body("else", []*ir.Value{input("x", ir.Float32, 3)}, func(g *ir.Graph) []*ir.Value {
		k := g.AddConst("k", ir.Float32Tensor([]int64{2, 1}, 10, 20))
		return g.AddNode("add", "Add", []*ir.Value{g.Inputs[0], k}, "y").Outputs
	})
	g := ir.NewGraph("main")
	g.Inputs = []*ir.Value{c, x}
	n := g.AddNode("if", "If", []*ir.Value{c, x}, "y")
	n.Attrs = ir.Attrs{"then_branch": ir.GraphAttr(then), "else_branch": ir.GraphAttr(els), ir.CapturedInputs: ir.IntAttr(1)}
	g.Outputs = n.Outputs
	if err := ir.InferShapes(g); err != nil {
		t.Fatal(err)
	}
	if n.Outputs[0].Shape != nil {
		t.Errorf("If output shape %v, want unknown rank (branches give [3] and [2 3])", n.Outputs[0].Shape)
	}
	xs := ir.Float32Tensor([]int64{3}, 1, 2, 3)
	got := run(t, g, ir.NewTensor(ir.Bool, nil), xs)
	if !slices.Equal(got[0].Shape, []int64{2, 3}) || !slices.Equal(got[0].F32(), []float32{11, 12, 13, 21, 22, 23}) {
		t.Errorf("else: %v %v", got[0].Shape, got[0].F32())
	}
	yes := ir.NewTensor(ir.Bool, nil)
	yes.Data[0] = 1
	got = run(t, g, yes, xs)
	if !slices.Equal(got[0].Shape, []int64{3}) || !slices.Equal(got[0].F32(), []float32{-1, -2, -3}) {
		t.Errorf("then: %v %v", got[0].Shape, got[0].F32())
	}
}

// loop: carried s += i (the iteration number, as float), scan output s;
// stops when the trip count M is reached or the body's cond (i < limit)
// turns false.
func loop(m, cond *ir.Value) *ir.Graph {
	lim := input("lim", ir.Int64)
	b := body("body", []*ir.Value{input("i", ir.Int64), input("c", ir.Bool), input("s", ir.Float32, 1), input("lim", ir.Int64)},
		func(g *ir.Graph) []*ir.Value {
			fi := g.AddNode("cast", "Cast", []*ir.Value{g.Inputs[0]}, "fi")
			fi.Attrs = ir.Attrs{"to": ir.IntAttr(int64(ir.Float32))}
			s := g.AddNode("add", "Add", []*ir.Value{g.Inputs[2], fi.Outputs[0]}, "s_out").Outputs[0]
			one := g.AddConst("one", ir.Int64Tensor(nil, 1))
			next := g.AddNode("next", "Add", []*ir.Value{g.Inputs[0], one}, "next").Outputs[0]
			c := g.AddNode("less", "Less", []*ir.Value{next, g.Inputs[3]}, "c_out").Outputs[0]
			scan := g.AddNode("id", "Identity", []*ir.Value{s}, "scan").Outputs[0]
			return []*ir.Value{c, s, scan}
		})
	g := ir.NewGraph("main")
	s0 := input("s0", ir.Float32, 1)
	g.Inputs = []*ir.Value{s0, lim}
	for _, v := range []*ir.Value{m, cond} {
		if v != nil && v.Const == nil {
			g.Inputs = append(g.Inputs, v)
		}
	}
	n := g.AddNode("loop", "Loop", []*ir.Value{m, cond, s0, lim}, "s_final", "scans")
	n.Attrs = ir.Attrs{"body": ir.GraphAttr(b), ir.CapturedInputs: ir.IntAttr(1)}
	g.Outputs = n.Outputs
	return g
}

func TestLoop(t *testing.T) {
	i64 := func(v int64) *ir.Tensor { return ir.Int64Tensor(nil, v) }
	s0 := ir.Float32Tensor([]int64{1}, 100)
	cases := []struct {
		name      string
		m         int64 // < 0: no M
		lim       int64
		want      []float32 // scan output
		wantFinal float32
	}{
		{"M bounds", 3, 10, []float32{100, 101, 103}, 103},
		{"cond stops", 10, 2, []float32{100, 101}, 101},
		{"cond only", -1, 4, []float32{100, 101, 103, 106}, 106},
		{"M=0", 0, 10, nil, 100},
	}
	for _, c := range cases {
		var mv *ir.Value
		ins := []*ir.Tensor{s0, i64(c.lim)}
		if c.m >= 0 {
			mv = input("M", ir.Int64)
			ins = append(ins, i64(c.m))
		}
		got := run(t, loop(mv, nil), ins...)
		if got[0].F32()[0] != c.wantFinal || !slices.Equal(got[1].F32(), c.want) || got[1].Shape[0] != int64(len(c.want)) ||
			!slices.Equal(got[1].Shape[1:], []int64{1}) {
			t.Errorf("%s: final %v, scans %v%v; want %v, %v", c.name, got[0].F32(), got[1].F32(), got[1].Shape, c.wantFinal, c.want)
		}
	}
}

// Scan over axis 1 in reverse, stacking along axis 1 in reverse: a running
// sum from the end.
// sumScan is a Scan of a [2, steps] input along axis 1 (attrs set the
// axes and directions) whose body adds each column to a running sum and
// outputs the sum.
func sumScan(steps int64, attrs ir.Attrs) (*ir.Graph, *ir.Node) {
	b := body("body", []*ir.Value{input("acc", ir.Float32, 2), input("col", ir.Float32, 2)}, func(g *ir.Graph) []*ir.Value {
		s := g.AddNode("add", "Add", []*ir.Value{g.Inputs[0], g.Inputs[1]}, "acc_out").Outputs[0]
		o := g.AddNode("id", "Identity", []*ir.Value{s}, "out").Outputs[0]
		return []*ir.Value{s, o}
	})
	g := ir.NewGraph("main")
	acc, x := input("acc0", ir.Float32, 2), input("x", ir.Float32, 2, steps)
	g.Inputs = []*ir.Value{acc, x}
	n := g.AddNode("scan", "Scan", []*ir.Value{acc, x}, "acc", "ys")
	attrs["body"] = ir.GraphAttr(b)
	attrs["num_scan_inputs"] = ir.IntAttr(1)
	n.Attrs = attrs
	g.Outputs = n.Outputs
	return g, n
}

func TestScanAxesDirections(t *testing.T) {
	g, n := sumScan(3, ir.Attrs{"scan_input_axes": ir.IntsAttr(-1), "scan_input_directions": ir.IntsAttr(1),
		"scan_output_axes": ir.IntsAttr(1), "scan_output_directions": ir.IntsAttr(1)})
	got := run(t, g, ir.Float32Tensor([]int64{2}, 0, 0), ir.Float32Tensor([]int64{2, 3}, 1, 2, 3, 10, 20, 30))
	if !slices.Equal(got[0].F32(), []float32{6, 60}) {
		t.Errorf("final state %v", got[0].F32())
	}
	// Steps see columns 2, 1, 0 (sums 3, 5, 6); the reversed output puts
	// step 0 last.
	if !slices.Equal(got[1].Shape, []int64{2, 3}) || !slices.Equal(got[1].F32(), []float32{6, 5, 3, 60, 50, 30}) {
		t.Errorf("scan output %v %v", got[1].Shape, got[1].F32())
	}
	if !slices.Equal(n.Outputs[1].Shape, []int64{2, 3}) {
		t.Errorf("inferred scan output shape %v", n.Outputs[1].Shape)
	}
}

// Ops no kernel runs are listed with the path of graphs that holds them.
func TestBodyPreflight(t *testing.T) {
	x := input("x", ir.Float32, 2)
	inner := body("then", []*ir.Value{input("x", ir.Float32, 2)}, func(g *ir.Graph) []*ir.Value {
		return g.AddNode("lstm", "NoSuchOp", []*ir.Value{g.Inputs[0]}, "y").Outputs
	})
	els := body("else", []*ir.Value{input("x", ir.Float32, 2)}, func(g *ir.Graph) []*ir.Value {
		return g.AddNode("neg", "Neg", []*ir.Value{g.Inputs[0]}, "y").Outputs
	})
	g := ir.NewGraph("main")
	c := input("c", ir.Bool)
	g.Inputs = []*ir.Value{c, x}
	n := g.AddNode("if_1", "If", []*ir.Value{c, x}, "y")
	n.Attrs = ir.Attrs{"then_branch": ir.GraphAttr(inner), "else_branch": ir.GraphAttr(els), ir.CapturedInputs: ir.IntAttr(1)}
	g.AddNode("bad", "AlsoNoSuchOp", []*ir.Value{n.Outputs[0]}, "z")
	_, err := NewSession(g, Options{})
	var ue *UnsupportedOpsError
	if !errors.As(err, &ue) || !slices.Equal(ue.Nodes, []string{"if_1/then_branch/lstm: NoSuchOp", "bad: AlsoNoSuchOp"}) {
		t.Errorf("err = %v", err)
	}
	if err != nil && !strings.Contains(err.Error(), "if_1/then_branch/lstm") {
		t.Errorf("message %q", err)
	}
}

// The bodies' pools count in ArenaBytes.
func TestArenaBytesCountsBodies(t *testing.T) {
	g := loop(input("M", ir.Int64), nil)
	if err := ir.InferShapes(g); err != nil {
		t.Fatal(err)
	}
	s, err := NewSession(g, Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run([]*ir.Tensor{ir.Float32Tensor([]int64{1}, 100), ir.Int64Tensor(nil, 10), ir.Int64Tensor(nil, 3)}); err != nil {
		t.Fatal(err)
	}
	if s.pool.peak != 0 || s.ArenaBytes() == 0 {
		t.Errorf("outer pool peak %d, ArenaBytes %d: want the body's pool counted", s.pool.peak, s.ArenaBytes())
	}
}

// A Scan over zero steps gives its initial state and empty scan outputs,
// also with a negative output axis.
func TestScanZeroSteps(t *testing.T) {
	g, _ := sumScan(0, ir.Attrs{"scan_input_axes": ir.IntsAttr(1), "scan_output_axes": ir.IntsAttr(-1)})
	got := run(t, g, ir.Float32Tensor([]int64{2}, 7, 8), ir.NewTensor(ir.Float32, []int64{2, 0}))
	if !slices.Equal(got[0].F32(), []float32{7, 8}) || !slices.Equal(got[1].Shape, []int64{2, 0}) {
		t.Errorf("state %v, scan output shape %v; want [7 8] and [2 0]", got[0].F32(), got[1].Shape)
	}
}
