package benchmark

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gkconv/internal/ir"
	"gkconv/internal/onnx"
	"gkconv/internal/runtime"
)

// negGraph is y = Neg(x), z = Neg(y) with x float32 [2,2]: two outputs, so
// references can be given for a subset.
func negGraph(t *testing.T) *ir.Graph {
	t.Helper()
	x := &ir.Value{Name: "x", DType: ir.Float32, Shape: []int64{2, 2}}
	g := ir.NewGraph("main")
	g.Inputs = []*ir.Value{x}
	y := g.AddNode("neg1", "Neg", []*ir.Value{x}, "y").Outputs[0]
	z := g.AddNode("neg2", "Neg", []*ir.Value{y}, "z").Outputs[0]
	g.Outputs = []*ir.Value{y, z}
	if err := ir.InferShapes(g); err != nil {
		t.Fatal(err)
	}
	return g
}

func writePB(t *testing.T, dir, file, name string, tensor *ir.Tensor) string {
	t.Helper()
	p := filepath.Join(dir, file)
	if err := onnx.WriteTensorFile(p, name, tensor); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPercentileIsNearestRank(t *testing.T) {
	sorted := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, c := range []struct{ p, want float64 }{{0, 1}, {0.5, 5}, {0.9, 9}, {0.95, 10}, {1, 10}} {
		if got := Percentile(sorted, c.p); got != c.want {
			t.Errorf("Percentile(%g) = %g, want %g", c.p, got, c.want)
		}
	}
	if got := Percentile([]float64{7}, 0.9); got != 7 {
		t.Errorf("one value: %g", got)
	}
}

func TestSplitListDropsEmptyEntries(t *testing.T) {
	if got := SplitList(" a.pb, ,b.bin,"); !slices.Equal(got, []string{"a.pb", "b.bin"}) {
		t.Errorf("SplitList = %q", got)
	}
	if got := SplitList(""); got != nil {
		t.Errorf("SplitList(\"\") = %q", got)
	}
}

// The same seed gives the same inputs (a benchmark without files is
// repeatable); a dynamic input is refused.
func TestRandomInputsAreSeeded(t *testing.T) {
	g := negGraph(t)
	a, err := RandomInputs(g, 7)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := RandomInputs(g, 7)
	c, _ := RandomInputs(g, 8)
	if !slices.Equal(a[0].Data, b[0].Data) || slices.Equal(a[0].Data, c[0].Data) {
		t.Error("inputs do not follow the seed")
	}
	for _, v := range a[0].F32() {
		if v < -1 || v >= 1 {
			t.Errorf("random float %g outside [-1, 1)", v)
		}
	}
	g.Inputs[0].Shape = []int64{-1, 2}
	if _, err := RandomInputs(g, 7); err == nil || !strings.Contains(err.Error(), "input x has dynamic shape") {
		t.Errorf("dynamic input: %v", err)
	}
}

func TestLoadInputsCountsAndChecksRawSize(t *testing.T) {
	g := negGraph(t)
	dir := t.TempDir()
	if _, err := LoadInputs(g, "--inDataFile", []string{"a.pb", "b.pb"}); err == nil || err.Error() != "--inDataFile gives 2 file(s), the model has 1 input(s) (x)" {
		t.Errorf("two files for one input: %v", err)
	}
	raw := filepath.Join(dir, "x.bin")
	if err := os.WriteFile(raw, make([]byte, 15), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadInputs(g, "--inDataFile", []string{raw}); err == nil || !strings.Contains(err.Error(), "15 bytes, input float32[2 2] needs 16") {
		t.Errorf("short .bin: %v", err)
	}
	want := ir.Float32Tensor([]int64{2, 2}, 1, 2, 3, 4)
	if err := os.WriteFile(raw, want.Data, 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := LoadInputs(g, "--inDataFile", []string{raw})
	if err != nil || !slices.Equal(in[0].F32(), want.F32()) {
		t.Errorf("raw input: %v %v", in, err)
	}
	pb := writePB(t, dir, "x.pb", "x", ir.Float32Tensor([]int64{3}, 1, 2, 3))
	if _, err := LoadInputs(g, "--inDataFile", []string{pb}); err == nil || !strings.HasPrefix(err.Error(), pb+": ") {
		t.Errorf("an input of the wrong shape is not refused naming its file: %v", err)
	}
}

// References: all outputs in order or by name, or a subset of .pb files
// each naming its output; the rest are not checked.
func TestLoadReferencesSubsetByName(t *testing.T) {
	g := negGraph(t)
	dir := t.TempDir()
	y := ir.Float32Tensor([]int64{2, 2}, -1, -2, -3, -4)
	z := ir.Float32Tensor([]int64{2, 2}, 1, 2, 3, 4)
	yf, zf := writePB(t, dir, "y.pb", "y", y), writePB(t, dir, "z.pb", "z", z)
	refs, err := LoadReferences(g, "--benchmarkDataFile", []string{zf, yf})
	if err != nil || !slices.Equal(refs[0].F32(), y.F32()) || !slices.Equal(refs[1].F32(), z.F32()) {
		t.Fatalf("both by name: %v", err)
	}
	refs, err = LoadReferences(g, "--benchmarkDataFile", []string{zf})
	if err != nil || refs[0] != nil || refs[1] == nil {
		t.Fatalf("subset: %v %v", refs, err)
	}
	unnamed := writePB(t, dir, "u.pb", "", z)
	other := writePB(t, dir, "o.pb", "x", z)
	for _, c := range []struct {
		files []string
		want  string
	}{
		{[]string{yf, zf, zf}, "--benchmarkDataFile gives 3 file(s), the model has 2 output(s) (y, z)"},
		{[]string{"z.bin"}, "each must be a TensorProto .pb naming its output, z.bin is not"},
		{[]string{unnamed}, "the tensor has no name"},
		{[]string{other}, `names "x", which is not an output of the model (y, z)`},
	} {
		if _, err := LoadReferences(g, "--benchmarkDataFile", c.files); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want %q", c.files, err, c.want)
		}
	}
	if _, err := LoadReferences(negGraph3(t), "--benchmarkDataFile", []string{zf, zf}); err == nil || !strings.Contains(err.Error(), `a second reference for output "z"`) {
		t.Errorf("doubled name: %v", err)
	}
}

// negGraph3 is negGraph with a third output, so two files are a subset.
func negGraph3(t *testing.T) *ir.Graph {
	g := negGraph(t)
	w := g.AddNode("neg3", "Neg", []*ir.Value{g.Outputs[1]}, "w").Outputs[0]
	g.Outputs = append(g.Outputs, w)
	return g
}

// Written outputs read back as references matched by name.
func TestWriteOutputsReadBack(t *testing.T) {
	g := negGraph(t)
	dir := filepath.Join(t.TempDir(), "out")
	outs := []*ir.Tensor{ir.Float32Tensor([]int64{2, 2}, -1, -2, -3, -4), ir.Float32Tensor([]int64{2, 2}, 1, 2, 3, 4)}
	if err := WriteOutputs("--outputDataDir", dir, g, outs); err != nil {
		t.Fatal(err)
	}
	refs, err := LoadReferences(g, "--benchmarkDataFile", []string{filepath.Join(dir, "output_1.pb")})
	if err != nil || refs[0] != nil || !slices.Equal(refs[1].F32(), outs[1].F32()) {
		t.Fatalf("read back: %v %v", refs, err)
	}
	file := filepath.Join(dir, "output_0.pb")
	if err := WriteOutputs("--outputDataDir", file, g, outs); err == nil || err.Error() != "--outputDataDir "+file+": exists and is not a directory" {
		t.Errorf("a file as the folder: %v", err)
	}
}

func TestCompareAndVerdict(t *testing.T) {
	g := negGraph(t)
	outs := []*ir.Tensor{ir.Float32Tensor([]int64{2, 2}, -1, -2, -3, -4), ir.Float32Tensor([]int64{2, 2}, 1, 2, 3, 4)}
	tol := Tolerance{Atol: 1e-4, Rtol: 1e-3, MeanBiasPct: 0.5}
	checks, err := Compare(g, outs, []*ir.Tensor{nil, outs[1]}, tol)
	if err != nil || len(checks) != 2 || checks[0].Checked || !checks[1].Checked || !checks[1].Accuracy.Pass {
		t.Fatalf("checks %+v, %v", checks, err)
	}
	if err := Verdict(checks, tol); err != nil {
		t.Errorf("matching outputs: %v", err)
	}
	off := ir.Float32Tensor([]int64{2, 2}, 1, 2, 3, 5)
	checks, _ = Compare(g, outs, []*ir.Tensor{nil, off}, tol)
	if err := Verdict(checks, tol); err == nil || !strings.HasPrefix(err.Error(), "accuracy check failed for output(s) z (") || !strings.HasSuffix(err.Error(), "(atol 0.0001, rtol 0.001)") {
		t.Errorf("a mismatch: %v", err)
	}
	// An output that cannot be compared: the checks before it come back.
	checks, err = Compare(g, outs, []*ir.Tensor{outs[0], ir.Float32Tensor([]int64{3}, 1, 2, 3)}, tol)
	if err == nil || len(checks) != 1 || checks[0].Name != "y" {
		t.Errorf("shape mismatch: %+v, %v", checks, err)
	}
}

func TestTimeAndProfile(t *testing.T) {
	g := negGraph(t)
	sess, err := runtime.NewSession(g, runtime.Options{Threads: 1, Profile: true})
	if err != nil {
		t.Fatal(err)
	}
	in, _ := RandomInputs(g, 1)
	timing, err := Time(sess, in, 2, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(timing.Sorted) != 5 || !slices.IsSorted(timing.Sorted) || timing.MinMs != timing.Sorted[0] || timing.MedianMs != timing.Sorted[2] || timing.P90Ms != timing.Sorted[4] {
		t.Errorf("timing %+v", timing)
	}
	rows := Profile(sess.Profile())
	if len(rows) != 2 {
		t.Fatalf("profile rows %+v", rows)
	}
	share := 0.0
	for _, r := range rows {
		share += r.Share
	}
	if rows[0].Node == "" || (share != 0 && (share < 0.999 || share > 1.001)) {
		t.Errorf("shares add to %g: %+v", share, rows)
	}
	rows = Profile([]runtime.NodeTime{{Node: "a", Op: "Neg", PerRun: 3 * time.Millisecond, Median: time.Millisecond}, {Node: "b", Op: "Neg", PerRun: time.Millisecond}})
	if rows[0].Ms != 3 || rows[0].MedianMs != 1 || rows[0].Share != 0.75 || rows[1].Share != 0.25 {
		t.Errorf("rows %+v", rows)
	}
}
