package convert

import (
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/mindir"
	ob "gkconv/internal/onnx/onnxbuild"
	"gkconv/internal/runtime"
)

func strs(s ...string) []string { return s }

// loopModel: a Loop of 3 trips whose body reads an outer graph input (w) and
// an outer initializer (b): x = sigmoid(relu(x*w + b)) - 0.25, scanning -x.
func loopModel(t *testing.T) string {
	body := ob.New("body", 17).Input("i", ob.Int64).Input("c", ob.Bool).Input("x_in", ob.Float, 4).
		Output("c_out", ob.Float, 4).Output("x_out", ob.Float, 4).Output("x_scan", ob.Float, 4)
	bg := body.Graph()
	bg.Output[0] = ob.ValueInfo("c_out", ob.Bool)
	body.Init(ob.Scalar("quarter", 0.25))
	body.Node("mul", "Mul", strs("x_in", "w"), strs("t1"))
	body.Node("add", "Add", strs("t1", "b"), strs("t2"))
	body.Node("relu", "Relu", strs("t2"), strs("t3"))
	body.Node("sig", "Sigmoid", strs("t3"), strs("t4"))
	body.Node("sub", "Sub", strs("t4", "quarter"), strs("x_out"))
	body.Node("neg", "Neg", strs("x_out"), strs("x_scan"))
	body.Node("keep", "Identity", strs("c"), strs("c_out"))
	m := ob.New("g", 17).Input("x", ob.Float, 4).Input("w", ob.Float, 4).
		Output("xf", ob.Float, 4).Output("scan", ob.Float, 3, 4).
		Init(ob.Float32s("b", []int64{4}, []float32{0.5, -1, 0, 2}), ob.Int64s("M", nil, []int64{3}), ob.Raw("cond", ob.Bool, nil, []byte{1}))
	m.Node("loop", "Loop", strs("M", "cond", "x"), strs("xf", "scan"), ob.Graph("body", bg))
	return writeModel(t, m)
}

func writeModel(t *testing.T, m *ob.Model) string {
	t.Helper()
	path := t.TempDir() + "/model.onnx"
	if err := m.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

func loopReference(x, w []float32) (xf []float32, scan []float32) {
	b := []float32{0.5, -1, 0, 2}
	cur := append([]float32(nil), x...)
	for range 3 {
		for j := range cur {
			v := float64(cur[j]*w[j] + b[j])
			v = math.Max(v, 0)
			cur[j] = float32(1/(1+math.Exp(-v))) - 0.25
			scan = append(scan, -cur[j])
		}
	}
	return cur, scan
}

// TestLoopOuterScopeFused converts a Loop whose body reads outer values at
// opt_level 0 and 2: at 2 the body's elementwise chain becomes a fused
// kernel inside the body (the outer values are kernel inputs, the kernel
// never crosses the body's boundary), and both files compute the loop.
func TestLoopOuterScopeFused(t *testing.T) {
	model := loopModel(t)
	x := []float32{1, -2, 0.5, 3}
	w := []float32{0.5, 1, -1, 2}
	wantXF, wantScan := loopReference(x, w)
	for _, level := range []int{0, 2} {
		out, m := convertAt(t, model, level)
		var loop *ir.Node
		for _, n := range m.Graph.Nodes {
			if n.Op == "Loop" {
				loop = n
			}
		}
		if loop == nil {
			t.Fatalf("level %d: no Loop node read back", level)
		}
		if k := loop.Attrs.Int(ir.CapturedInputs, 0); k != 1 || len(loop.Inputs) != 4 || loop.Inputs[3].Name != "w" {
			t.Errorf("level %d: captured_inputs=%d, inputs %v; want w captured", level, k, loop.Inputs)
		}
		rebuild, err := RebuildKernels(m.Graph, kernelCache)
		if err != nil {
			t.Fatal(err)
		}
		fused := 0
		for _, n := range loop.Attrs.Graph("body").Nodes {
			if n.Op == ir.OpGraphKernel {
				fused++
				// `benchmark --rebuildKernels` finds the bodies' kernels too.
				if _, _, err := rebuild(n); err != nil {
					t.Errorf("rebuilding %s in the body: %v", n.Name, err)
				}
			}
		}
		if (level == 2) != (fused > 0) {
			t.Errorf("level %d: %d fused kernels in the body", level, fused)
		}
		m.Close()
		got := runMindIR(t, out, []*ir.Tensor{ir.Float32Tensor([]int64{4}, x...), ir.Float32Tensor([]int64{4}, w...)})
		if !close32(got[0].F32(), wantXF) || !close32(got[1].F32(), wantScan) || len(got[1].Shape) != 2 || got[1].Shape[0] != 3 {
			t.Errorf("level %d: got %v %v%v, want %v %v", level, got[0].F32(), got[1].F32(), got[1].Shape, wantXF, wantScan)
		}
	}
}

// convertAt converts model at opt_level 0 (--optimize=none) or 2 and opens
// the file written.
func convertAt(t *testing.T, model string, level int) (string, *mindir.Model) {
	o := onnxOptions(t, model)
	if level == 0 {
		o.Optimize = "none"
	} else {
		o.ConfigFile = writeConfig(t, "[graph_kernel_param]\nopt_level=2\n")
	}
	out, _ := convertOK(t, o)
	m, err := mindir.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	return out, m
}

func close32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(float64(a[i]-b[i])) > 1e-5 {
			return false
		}
	}
	return true
}

// TestBadSubgraphs: a malformed body fails the conversion with a message
// naming the file, the node and the reason, and writes no file.
func TestBadSubgraphs(t *testing.T) {
	branch := func(outs ...string) *ob.Model {
		b := ob.New("br", 17)
		for _, o := range outs {
			b.Output(o, ob.Float, 2)
			b.Node("", "Relu", strs("x"), strs(o))
		}
		return b
	}
	intBranch := ob.New("br", 17).Output("y1", ob.Int64, 2)
	intBranch.Node("", "Cast", strs("x"), strs("y1"), ob.Int("to", 7))
	cases := []struct {
		name      string
		then, els *ob.Model
		outs      []string
		want      string
	}{
		{name: "missing else", then: branch("y1"), outs: strs("y"), want: "no graph attribute else_branch"},
		{name: "branch output counts", then: branch("y1"), els: branch("y1", "y2"), outs: strs("y"), want: "else_branch has 2 outputs, the node 1"},
		{name: "branch types", then: branch("y1"), els: intBranch, outs: strs("y"), want: "output 0 is float32 in then_branch and int64 in else_branch"},
	}
	for _, c := range cases {
		m := ob.New("g", 17).Input("x", ob.Float, 2).Input("c", ob.Bool).Output("y", ob.Float, 2)
		node := m.Node("the_if", "If", strs("c"), c.outs, ob.Graph("then_branch", c.then.Graph()))
		if c.els != nil {
			node.Attribute = append(node.Attribute, ob.Graph("else_branch", c.els.Graph()))
		}
		path := writeModel(t, m)
		o := onnxOptions(t, path)
		_, err := Convert(t.Context(), o)
		if err == nil || Code(err) != CodeError {
			t.Errorf("%s: err = %v (code %d), want a failure with code %d", c.name, err, Code(err), CodeError)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, "node the_if (If)") || !strings.Contains(msg, c.want) {
			t.Errorf("%s: message %q lacks the file, node or %q", c.name, msg, c.want)
		}
		if _, serr := os.Stat(o.OutputFile + ".mindir"); !errors.Is(serr, os.ErrNotExist) {
			t.Errorf("%s: an output file was written", c.name)
		}
	}
}

// TestControlFlowModels converts the exported models of
// scripts/models/export_control_flow.py (a TorchScript If with a
// data-dependent branch; a greedy decoder whose Loop stops early and grows
// its tokens each step) at opt_level 0 and 2 and matches onnxruntime's
// outputs on every test set (the sets take different branches and stop
// after different numbers of steps).
func TestControlFlowModels(t *testing.T) {
	for _, name := range []string{"cf_if", "cf_loop"} {
		dir := testdataModel(t, name)
		for _, level := range []int{0, 2} {
			out, m := convertAt(t, dir+"/model.onnx", level)
			g := m.Graph
			for s := range 2 {
				set := fmt.Sprintf("%s/test_data_set_%d", dir, s)
				matchSet(t, fmt.Sprintf("%s level %d set %d", name, level, s), out, g, set, 1e-4, 1e-3, 0)
			}
			m.Close()
		}
	}
}

// TestControlFlowMindIRReconvert converts the written .mindir again with
// --fmk=MINDIR (at opt_level 2, so the bodies read back are fused again)
// and checks the result still matches onnxruntime.
func TestControlFlowMindIRReconvert(t *testing.T) {
	dir := testdataModel(t, "cf_loop")
	first, m := convertAt(t, dir+"/model.onnx", 0)
	m.Close()
	o := DefaultOptions()
	o.FMK, o.ModelFile, o.OutputFile, o.KernelCacheDir = "MINDIR", first, t.TempDir()+"/again", kernelCache
	o.ConfigFile = writeConfig(t, "[graph_kernel_param]\nopt_level=2\n")
	out, _ := convertOK(t, o)
	for s := range 2 {
		set := fmt.Sprintf("%s/test_data_set_%d", dir, s)
		ins, err := readSet(set, "input", []*ir.Value{{Name: "h0"}})
		if err != nil {
			t.Fatal(err)
		}
		want, err := readSet(set, "output", []*ir.Value{{Name: "tokens"}, {Name: "h"}})
		if err != nil {
			t.Fatal(err)
		}
		got := runMindIR(t, out, ins)
		for i := range want {
			acc, err := runtime.Compare(fmt.Sprint(i), got[i], want[i], 1e-4, 1e-3, 0)
			if err != nil || !acc.Pass {
				t.Errorf("set %d output %d: %v %s", s, i, err, acc.FirstMismatch)
			}
		}
	}
}

// TestIfsNotMerged: two If nodes on the same condition and captured values
// but with different branches stay two nodes through the passes (CSE does
// not see the bodies, so it leaves control flow alone).
func TestIfsNotMerged(t *testing.T) {
	branch := func(op string) *ob.Model {
		b := ob.New("br", 17).Output("o", ob.Float, 2)
		b.Node("", op, strs("x"), strs("o"))
		return b
	}
	m := ob.New("g", 17).Input("c", ob.Bool).Input("x", ob.Float, 2).Output("y1", ob.Float, 2).Output("y2", ob.Float, 2)
	m.Node("if1", "If", strs("c"), strs("o1"), ob.Graph("then_branch", branch("Relu").Graph()), ob.Graph("else_branch", branch("Neg").Graph()))
	m.Node("if2", "If", strs("c"), strs("o2"), ob.Graph("then_branch", branch("Neg").Graph()), ob.Graph("else_branch", branch("Relu").Graph()))
	m.Node("sub1", "Sub", strs("o1", "x"), strs("y1"))
	m.Node("sub2", "Sub", strs("o2", "x"), strs("y2"))
	out, mm := convertAt(t, writeModel(t, m), 2)
	mm.Close()
	yes := ir.NewTensor(ir.Bool, []int64{})
	yes.Data[0] = 1
	got := runMindIR(t, out, []*ir.Tensor{yes, ir.Float32Tensor([]int64{2}, -1, 2)})
	if !slices.Equal(got[0].F32(), []float32{1, 0}) || !slices.Equal(got[1].F32(), []float32{2, -4}) {
		t.Errorf("y1 %v, y2 %v; want [1 0] and [2 -4]", got[0].F32(), got[1].F32())
	}
}

// TestIfTwoOutputsNestedLoop: an If with two outputs (a tuple call and
// TupleGetItem in MindIR) whose then branch holds a Loop reading a main
// graph input, converted at opt_level 0 and 2 and read back.
func TestIfTwoOutputsNestedLoop(t *testing.T) {
	body := ob.New("body", 17).Input("i", ob.Int64).Input("c", ob.Bool).Input("acc", ob.Float, 2).
		Output("c_out", ob.Bool).Output("acc_out", ob.Float, 2)
	body.Node("keep", "Identity", strs("c"), strs("c_out"))
	body.Node("add", "Add", strs("acc", "x"), strs("acc_out")) // x: two graphs out
	then := ob.New("then", 17).Output("a", ob.Float, 2).Output("b", ob.Float, 2).Init(ob.Int64s("M", nil, []int64{3}))
	then.Node("loop", "Loop", strs("M", "", "x"), strs("a"), ob.Graph("body", body.Graph()))
	then.Node("neg", "Neg", strs("x"), strs("b"))
	els := ob.New("else", 17).Output("a2", ob.Float, 2).Output("b2", ob.Float, 2)
	els.Node("relu", "Relu", strs("x"), strs("a2"))
	els.Node("abs", "Abs", strs("x"), strs("b2"))
	m := ob.New("g", 17).Input("c", ob.Bool).Input("x", ob.Float, 2).Output("y1", ob.Float, 2).Output("y2", ob.Float, 2)
	m.Node("if", "If", strs("c"), strs("y1", "y2"), ob.Graph("then_branch", then.Graph()), ob.Graph("else_branch", els.Graph()))
	model := writeModel(t, m)
	x := ir.Float32Tensor([]int64{2}, -1, 2)
	for _, level := range []int{0, 2} {
		out, mm := convertAt(t, model, level)
		mm.Close()
		for _, c := range []struct {
			cond   byte
			y1, y2 []float32
		}{{1, []float32{-4, 8}, []float32{1, -2}}, {0, []float32{0, 2}, []float32{1, 2}}} {
			cond := ir.NewTensor(ir.Bool, []int64{})
			cond.Data[0] = c.cond
			got := runMindIR(t, out, []*ir.Tensor{cond, x})
			if !slices.Equal(got[0].F32(), c.y1) || !slices.Equal(got[1].F32(), c.y2) {
				t.Errorf("level %d cond %d: %v %v, want %v %v", level, c.cond, got[0].F32(), got[1].F32(), c.y1, c.y2)
			}
		}
	}
}
