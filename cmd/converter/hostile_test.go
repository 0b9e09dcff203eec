package main

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"gkconv/internal/onnx/onnxbuild"
	"gkconv/internal/onnx/onnxpb"
)

// The hostile-input suite (issue 11): every bad input ends with exit status
// 1, the command's FAILED result line, an ERROR line naming the file, node or
// flag and the reason, and no output or temporary file left behind. Cases
// covered elsewhere: missing/truncated models, unknown ops, bad flags and INI
// values (TestBadInput), path-escaping external data (TestExternalDataEscape),
// benchmark inputs (TestBenchmarkBadInput), check's inputs (check_test.go).

// expectCommandFailure runs a subcommand (or the converter) and checks the
// failure contract with the given result-line prefix.
func expectCommandFailure(t *testing.T, resultPrefix, want string, args ...string) cliResult {
	t.Helper()
	r := runCLI(t, nil, args...)
	if r.code != 1 {
		t.Errorf("exit %d, want 1\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if !strings.HasPrefix(lastLine(r.stdout), resultPrefix) {
		t.Errorf("last line %q, want %q...", lastLine(r.stdout), resultPrefix)
	}
	if strings.Contains(r.stdout, "SUCCESS") || strings.Contains(r.stdout, "Success.") {
		t.Errorf("success printed after an error: %s", r.stdout)
	}
	if !strings.Contains(r.stderr, "ERROR:") || !strings.Contains(r.stderr, want) {
		t.Errorf("stderr %q lacks ERROR: and %q", r.stderr, want)
	}
	return r
}

func TestHostileCLI(t *testing.T) {
	good := filepath.Join(testdataModel(t, "mynet"), "model.onnx")
	tmp := t.TempDir()
	t.Run("unknown flag", func(t *testing.T) {
		expectFailure(t, "unknown flag: --bogus", nil, "--bogus=1", "--fmk=ONNX", "--modelFile="+good)
	})
	t.Run("extra argument", func(t *testing.T) {
		expectFailure(t, `unknown command "extra"`, nil, "extra", "--fmk=ONNX", "--modelFile="+good)
	})
	t.Run("bad logLevel", func(t *testing.T) {
		expectFailure(t, "--logLevel=loud", nil, "--logLevel=loud", "--fmk=ONNX", "--modelFile="+good)
	})
	t.Run("inspect missing file", func(t *testing.T) {
		expectCommandFailure(t, "INSPECT RESULT FAILED:", "nope.mindir", "inspect", "--modelFile="+filepath.Join(tmp, "nope.mindir"))
	})
	t.Run("inspect without model", func(t *testing.T) {
		expectCommandFailure(t, "INSPECT RESULT FAILED:-600", "--modelFile is required", "inspect")
	})
	t.Run("inspect unknown flag", func(t *testing.T) {
		expectCommandFailure(t, "INSPECT RESULT FAILED:-600", "unknown flag", "inspect", "--bogus")
	})
	t.Run("check unknown flag", func(t *testing.T) {
		expectCommandFailure(t, "CHECK RESULT FAILED:-600", "unknown flag", "check", "--bogus")
	})
	t.Run("benchmark unknown flag", func(t *testing.T) {
		expectCommandFailure(t, "Run Benchmark", "unknown flag", "benchmark", "--bogus")
	})
}

func TestHostileModels(t *testing.T) {
	tmp := t.TempDir()
	good := filepath.Join(testdataModel(t, "mynet"), "model.onnx")

	fifo := filepath.Join(tmp, "fifo.onnx")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	random := filepath.Join(tmp, "random.onnx")
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 4096)
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	os.WriteFile(random, buf, 0o644)
	randomMindIR := filepath.Join(tmp, "random.mindir")
	os.WriteFile(randomMindIR, buf, 0o644)

	// A cycle: y = Relu(z), z = Relu(y).
	b := onnxbuild.New("cyclic", 13)
	b.Input("x", 1, 4)
	b.Node("a", "Add", []string{"x", "z"}, []string{"y"})
	b.Node("r", "Relu", []string{"y"}, []string{"z"})
	b.Output("z", 1, 4)
	cyclic := filepath.Join(tmp, "cyclic.onnx")
	if err := b.WriteFile(cyclic); err != nil {
		t.Fatal(err)
	}
	// A model with symbolic dims, for --inputShape.
	d := onnxbuild.New("dynamic", 13)
	d.Input("x", 1, "n", "m")
	d.Node("r", "Relu", []string{"x"}, []string{"y"})
	d.Output("y", 1, "n", "m")
	dynamic := filepath.Join(tmp, "dynamic.onnx")
	if err := d.WriteFile(dynamic); err != nil {
		t.Fatal(err)
	}
	// Graph validation (issue 11 item 7).
	write := func(m *onnxbuild.Model, name string) string {
		t.Helper()
		p := filepath.Join(tmp, name)
		if err := m.WriteFile(p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// Two nodes produce y.
	dp := onnxbuild.New("dupproducer", 13)
	dp.Input("x", 1, 1, 4)
	dp.Node("first", "Relu", []string{"x"}, []string{"y"})
	dp.Node("second", "Sigmoid", []string{"x"}, []string{"y"})
	dp.Output("y", 1, 1, 4)
	dupProducer := write(dp, "dupproducer.onnx")
	// A node overwrites a graph input.
	di := onnxbuild.New("dupinput", 13)
	di.Input("x", 1, 1, 4)
	di.Node("over", "Relu", []string{"x"}, []string{"x"})
	di.Output("x", 1, 1, 4)
	dupInput := write(di, "dupinput.onnx")
	// A negative dim_value on a graph input.
	nd := onnxbuild.New("negdim", 13)
	nd.Input("x", 1, 1, 4)
	nd.Node("r", "Relu", []string{"x"}, []string{"y"})
	nd.Output("y", 1, 1, 4)
	nd.Graph().Input[0].GetType().GetTensorType().GetShape().Dim[1].Value = &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: -3}
	negDim := write(nd, "negdim.onnx")
	// Add of float32 and int64.
	md := onnxbuild.New("mixeddtype", 13)
	md.Input("a", 1, 1, 4)
	md.Input("b", 7, 1, 4)
	md.Node("add", "Add", []string{"a", "b"}, []string{"y"})
	md.Output("y", 1, 1, 4)
	mixedDType := write(md, "mixeddtype.onnx")

	// INI injection: converter_lite turns each key=value into a --key=value
	// flag, so a value must not smuggle in another flag.
	inject := filepath.Join(tmp, "inject.cfg")
	os.WriteFile(inject, []byte("[graph_kernel_param]\nopt_level=1 --opt_level=3\n"), 0o644)

	cases := []struct {
		name, want string
		args       []string
	}{
		{"fifo model", "not a regular file", []string{"--fmk=ONNX", "--modelFile=" + fifo}},
		{"fifo config", "not a regular file", []string{"--fmk=ONNX", "--modelFile=" + good, "--configFile=" + fifo}},
		{"random onnx", "random.onnx", []string{"--fmk=ONNX", "--modelFile=" + random}},
		{"random mindir", "random.mindir", []string{"--fmk=MINDIR", "--modelFile=" + randomMindIR}},
		{"cyclic model", "cycle", []string{"--fmk=ONNX", "--modelFile=" + cyclic}},
		{"ini injection", "inject.cfg", []string{"--fmk=ONNX", "--modelFile=" + good, "--configFile=" + inject}},
		{"two producers", "tensor y is produced by both node first (Relu) and node second (Sigmoid)", []string{"--fmk=ONNX", "--modelFile=" + dupProducer}},
		{"node overwrites input", "tensor x is produced by both graph input x and node over (Relu)", []string{"--fmk=ONNX", "--modelFile=" + dupInput}},
		{"negative dim_value", `graph input "x": dim 1 has dim_value -3`, []string{"--fmk=ONNX", "--modelFile=" + negDim}},
		{"mixed dtypes", "node add (Add): inputs of different dtypes: input 0 (a) is float32, input 1 (b) is int64", []string{"--fmk=ONNX", "--modelFile=" + mixedDType}},
		{"input shape overflows", "more elements than an int64", []string{"--fmk=ONNX", "--modelFile=" + dynamic, "--inputShape=x:4294967296,4294967296"}},
		{"input shape MaxInt64", "more elements than an int64", []string{"--fmk=ONNX", "--modelFile=" + dynamic, "--inputShape=x:9223372036854775807,2"}},
		{"input shape 2^40", "larger than", []string{"--fmk=ONNX", "--modelFile=" + dynamic, "--inputShape=x:1099511627776,2"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { expectFailure(t, c.want, nil, c.args...) })
	}
	for _, sub := range []string{"inspect", "check", "benchmark"} {
		t.Run(sub+" fifo", func(t *testing.T) {
			prefix := map[string]string{"inspect": "INSPECT RESULT FAILED:", "check": "CHECK RESULT FAILED:", "benchmark": "Run Benchmark"}[sub]
			expectCommandFailure(t, prefix, "not a regular file", sub, "--modelFile="+fifo)
		})
	}
}

func TestVersion(t *testing.T) {
	r := runCLI(t, nil, "version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "converter ") || !strings.Contains(r.stdout, "\ngo: go1.") || !strings.Contains(r.stdout, "\nCPU:") {
		t.Errorf("version: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, nil, "--version"); r.code != 0 || !strings.HasPrefix(r.stdout, "converter version ") {
		t.Errorf("--version: exit %d\n%s", r.code, r.stdout)
	}
}

// TestBenchmarkMemoryLimit: --inputShapes that would need more memory than
// --maxMemory (or than the machine has) fail with the normal Failed line
// before anything is allocated.
func TestBenchmarkMemoryLimit(t *testing.T) {
	tmp := t.TempDir()
	d := onnxbuild.New("dynamic", 13)
	d.Input("x", 1, "n", "m")
	d.Node("r", "Relu", []string{"x"}, []string{"y"})
	d.Output("y", 1, "n", "m")
	model := filepath.Join(tmp, "dynamic.onnx")
	if err := d.WriteFile(model); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "m")
	if r := runCLI(t, nil, "--fmk=ONNX", "--modelFile="+model, "--outputFile="+out, "--optimize=none"); r.code != 0 {
		t.Fatalf("convert: %s", r.stderr)
	}
	mindirFile := out + ".mindir"
	expectCommandFailure(t, "Run Benchmark m.mindir Failed.", "more than --maxMemory",
		"benchmark", "--modelFile="+mindirFile, "--inputShapes=x:1000,1000", "--maxMemory=1M", "--loopCount=1")
	expectCommandFailure(t, "Run Benchmark m.mindir Failed.", "more than the memory available",
		"benchmark", "--modelFile="+mindirFile, "--inputShapes=x:400000,400000", "--loopCount=1")
	expectCommandFailure(t, "Run Benchmark m.mindir Failed.", "--maxMemory=LOTS",
		"benchmark", "--modelFile="+mindirFile, "--inputShapes=x:2,2", "--maxMemory=lots", "--loopCount=1")
	if r := runCLI(t, nil, "benchmark", "--modelFile="+mindirFile, "--inputShapes=x:100,100", "--maxMemory=64M", "--loopCount=1"); r.code != 0 {
		t.Errorf("a run within the limit failed: %s%s", r.stdout, r.stderr)
	}
}
