package convert

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/mindir"
	"gkconv/internal/mindir/check"
	"gkconv/internal/onnx"
	"gkconv/internal/repotest"
	"gkconv/internal/runtime"
)

// TestMain logs at warn level, as the converter does by default: each
// conversion's info lines would bury the test output.
func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	os.Exit(m.Run())
}

// kernelCache is shared by the fused tests so each kernel compiles once.
var kernelCache = filepath.Join(os.TempDir(), "gkconv-test-kernel-cache")

func repoRoot(t testing.TB) string { return repotest.RepoRoot(t) }

func sharedDir(t testing.TB) string { return repotest.SharedDir(t, "") }

func testdataModel(t testing.TB, name string) string {
	return filepath.Join(repoRoot(t), "testdata", name)
}

func writeConfig(t *testing.T, body string) string {
	p := filepath.Join(t.TempDir(), "akg.cfg")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func oneLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " ..."
	}
	return s
}

// onnxOptions are DefaultOptions for an ONNX model written to a fresh
// temp folder, with the shared kernel cache.
func onnxOptions(t *testing.T, model string) Options {
	o := DefaultOptions()
	o.FMK, o.ModelFile, o.OutputFile, o.KernelCacheDir = "ONNX", model, filepath.Join(t.TempDir(), "model"), kernelCache
	return o
}

// convertOK converts with o, fails the test on any error, and checks the
// written file with `converter check`'s validator (MindSpore's loader rules
// and the primitive schema), as cmd/converter's runCLI does for every
// conversion through the binary: no test writes a file MindSpore would not
// load. It returns the .mindir path and the report.
func convertOK(t *testing.T, o Options) (string, *Report) {
	t.Helper()
	rep, err := Convert(context.Background(), o)
	if err != nil {
		t.Fatalf("convert %s: code %d: %v", o.ModelFile, Code(err), err)
	}
	out := o.OutputFile
	if !strings.HasSuffix(out, ".mindir") {
		out += ".mindir"
	}
	chk, err := check.File(out)
	if err != nil {
		t.Fatalf("check %s: %v", out, err)
	}
	if !chk.OK() {
		for _, v := range chk.Violations {
			t.Errorf("check %s: %s", out, v)
		}
		t.Fatalf("check %s: %s", out, chk.Summary())
	}
	return out, rep
}

// runMindIR runs a converted model on inputs with the CPU runtime.
func runMindIR(t *testing.T, path string, inputs []*ir.Tensor) []*ir.Tensor {
	t.Helper()
	m, err := mindir.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	sess, err := runtime.NewSession(m.Graph, runtime.Options{Threads: 2, KernelPolicy: selfBuilt})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	plan := sess.MemoryPlan()
	outs, err := sess.Run(inputs)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	// The plan benchmark checks against --maxMemory is what the run used.
	if plan.Unknown == 0 && plan.PoolPeak != sess.ArenaBytes() {
		t.Errorf("%s: memory plan says a pool peak of %d bytes, the run used %d", path, plan.PoolPeak, sess.ArenaBytes())
	}
	// A second run reuses the first run's buffers, holding its values: it
	// must give the same bytes (no kernel reads memory it did not write) and
	// the pool must not grow past the plan.
	again, err := sess.Run(inputs)
	if err != nil {
		t.Fatalf("%s: second run: %v", path, err)
	}
	for i := range outs {
		if outs[i] != nil && again[i] != nil && !bytes.Equal(outs[i].Data, again[i].Data) {
			t.Errorf("%s: output %d differs between two runs on the same inputs", path, i)
		}
	}
	if plan.Unknown == 0 && plan.PoolPeak != sess.ArenaBytes() {
		t.Errorf("%s: memory plan says a pool peak of %d bytes, the second run left %d", path, plan.PoolPeak, sess.ArenaBytes())
	}
	return outs
}

// readSet reads <set>/<kind>_<i>.pb for vals, by tensor name when every file
// names one of vals, else by position (as `converter benchmark` matches
// --inDataFile).
func readSet(set, kind string, vals []*ir.Value) ([]*ir.Tensor, error) {
	positional := make([]*ir.Tensor, len(vals))
	named := map[string]*ir.Tensor{}
	for i := range vals {
		t, name, err := onnx.ReadTensorFile(filepath.Join(set, fmt.Sprintf("%s_%d.pb", kind, i)))
		if err != nil {
			return nil, err
		}
		positional[i] = t
		if name != "" {
			named[name] = t
		}
	}
	out := make([]*ir.Tensor, len(vals))
	for i, v := range vals {
		t, ok := named[v.Name]
		if !ok || len(named) != len(vals) {
			return positional, nil
		}
		out[i] = t
	}
	return out, nil
}

// matchSet runs the converted model at path (graph g) on <set>/input_*.pb
// with runMindIR and checks every output against <set>/output_*.pb with
// runtime.Compare's rule (atol, rtol, mean bias percent; 0 = no mean bound).
func matchSet(t *testing.T, label, path string, g *ir.Graph, set string, atol, rtol, mean float64) {
	t.Helper()
	ins, err := readSet(set, "input", g.Inputs)
	if err != nil {
		t.Fatal(err)
	}
	want, err := readSet(set, "output", g.Outputs)
	if err != nil {
		t.Fatal(err)
	}
	got := runMindIR(t, path, ins)
	for i := range got {
		acc, err := runtime.Compare(g.Outputs[i].Name, got[i], want[i], atol, rtol, mean)
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		if !acc.Pass {
			t.Errorf("%s: output %s: %s (mean bias %.4f%%, %d of %d mismatch)", label, acc.Name, acc.FirstMismatch, acc.MeanBiasPct, acc.Mismatches, acc.Elements)
		}
	}
}

// benchAgainst runs a converted model on refDir/test_data_set_0 and checks
// every output as `converter benchmark --atol=1e-4 --rtol=1e-3` does
// (element-wise |got-ref| <= atol + rtol*|ref|, mean bias <= 0.5%).
func benchAgainst(t *testing.T, path, refDir string) {
	t.Helper()
	m, err := mindir.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	g := m.Graph
	set := filepath.Join(refDir, "test_data_set_0")
	ins, err := readSet(set, "input", g.Inputs)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range g.Inputs {
		if err := runtime.CheckInput(v, ins[i]); err != nil {
			t.Fatalf("%s: input %d: %v", path, i, err)
		}
	}
	want, err := readSet(set, "output", g.Outputs)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := runtime.NewSession(g, runtime.Options{Threads: 2, KernelPolicy: selfBuilt})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	got, err := sess.Run(ins)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for i := range got {
		acc, err := runtime.Compare(g.Outputs[i].Name, got[i], want[i], 1e-4, 1e-3, 0.5)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if !acc.Pass {
			t.Errorf("%s: output %s: %s (mean bias %.4f%%, %d of %d mismatch)", path, acc.Name, acc.FirstMismatch, acc.MeanBiasPct, acc.Mismatches, acc.Elements)
		}
	}
}
