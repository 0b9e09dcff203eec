package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gkconv/internal/onnx/onnxbuild"
	"gkconv/internal/onnx/onnxpb"
)

// Issue 33 item 1: an If chosen by an input value whose other branch cannot
// take the shapes --inputShape fixes (a voice model's 8 kHz branch under a
// 16 kHz chunk) converts, with one warning naming the branch; the run that
// takes the good branch matches, the run that takes the other fails naming
// its node. Both branches impossible is still an error.
func TestIfBranchThatCannotTakeTheShapes(t *testing.T) {
	tmp := t.TempDir()
	branch := func(name string, shape []int64) *onnxpb.GraphProto {
		g := &onnxpb.GraphProto{Name: &name}
		g.Initializer = append(g.Initializer, onnxbuild.Int64s(name+"_shape", []int64{int64(len(shape))}, shape))
		out := name + "_y"
		op := "Reshape"
		g.Node = append(g.Node, &onnxpb.NodeProto{Name: &name, OpType: &op, Input: []string{"x", name + "_shape"}, Output: []string{out}})
		g.Output = append(g.Output, onnxbuild.ValueInfo(out, 1))
		return g
	}
	model := func(file string, elseShape []int64) string {
		m := onnxbuild.New("if_shapes", 13)
		m.Input("x", 1, 1, "n")
		m.Input("flag", 7)
		m.Output("y", 1)
		m.Init(onnxbuild.Int64s("one", nil, []int64{1}))
		m.Node("is_one", "Equal", []string{"flag", "one"}, []string{"cond"})
		m.Node("pick", "If", []string{"cond"}, []string{"y"},
			onnxbuild.Graph("then_branch", branch("four_by_four", []int64{4, 4})),
			onnxbuild.Graph("else_branch", branch("three_by_five", elseShape)))
		p := filepath.Join(tmp, file)
		if err := m.WriteFile(p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	writePB := func(name string, tp *onnxpb.TensorProto) string {
		b, err := onnxbuild.Marshal(tp)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(tmp, name)
		os.WriteFile(p, b, 0o644)
		return p
	}
	xs := make([]float32, 16)
	for i := range xs {
		xs[i] = float32(i)
	}
	x := writePB("x.pb", onnxbuild.Float32s("x", []int64{1, 16}, xs))
	flag1 := writePB("flag1.pb", onnxbuild.Int64s("flag", nil, []int64{1}))
	flag0 := writePB("flag0.pb", onnxbuild.Int64s("flag", nil, []int64{0}))
	ref := writePB("ref.pb", onnxbuild.Float32s("y", []int64{4, 4}, xs))

	out := filepath.Join(tmp, "m")
	r := runCLI(t, nil, "--fmk=ONNX", "--modelFile="+model("one_bad.onnx", []int64{3, 5}), "--outputFile="+out, "--inputShape=x:1,16")
	if r.code != 0 || lastLine(r.stdout) != "CONVERT RESULT SUCCESS:0" {
		t.Fatalf("convert: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "else_branch cannot take the given input shapes") {
		t.Errorf("no warning about the branch:\n%s", r.stderr)
	}
	b := runCLI(t, nil, "benchmark", "--modelFile="+out+".mindir", "--inDataFile="+x+","+flag1, "--benchmarkDataFile="+ref,
		"--atol=0", "--rtol=0", "--loopCount=1", "--warmUpLoopCount=0")
	wantSuccess(t, "the branch the shapes fit", b)
	b = runCLI(t, nil, "benchmark", "--modelFile="+out+".mindir", "--inDataFile="+x+","+flag0, "--loopCount=1", "--warmUpLoopCount=0")
	if b.code == 0 || !strings.Contains(lastLine(b.stdout), "Failed.") || !strings.Contains(b.stdout+b.stderr, "three_by_five") {
		t.Errorf("the other branch: exit %d\n%s%s", b.code, b.stdout, b.stderr)
	}

	// 15 elements: neither 4x4 nor 2x7; every run would fail
	r = runCLI(t, nil, "--fmk=ONNX", "--modelFile="+model("both_bad.onnx", []int64{2, 7}), "--outputFile="+filepath.Join(tmp, "n"), "--inputShape=x:1,15")
	if r.code == 0 || !strings.Contains(r.stdout+r.stderr, "cannot reshape") {
		t.Fatalf("both branches impossible: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
