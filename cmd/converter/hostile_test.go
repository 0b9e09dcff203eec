package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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
	out := convertWithoutFusion(t, dynamicRelu(), filepath.Join(tmp, "m"))
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

	// Eight branches alive at once: every tensor (4 MiB) is under the limit,
	// their sum at the peak is not, and the memory plan says so.
	w := onnxbuild.New("branches", 13)
	w.Input("x", 1, "n", "m")
	var outs []string
	for i := range 8 {
		name := fmt.Sprintf("b%d", i)
		w.Node(name, "Relu", []string{"x"}, []string{name})
		outs = append(outs, name)
	}
	w.Node("sum", "Sum", outs, []string{"y"})
	w.Output("y", 1, "n", "m")
	out = convertWithoutFusion(t, w, filepath.Join(tmp, "b"))
	expectCommandFailure(t, "Run Benchmark b.mindir Failed.", "the memory plan needs",
		"benchmark", "--modelFile="+out+".mindir", "--inputShapes=x:1024,1024", "--maxMemory=20M", "--loopCount=1")
	if r := runCLI(t, nil, "benchmark", "--modelFile="+out+".mindir", "--inputShapes=x:1024,1024", "--maxMemory=64M", "--loopCount=1"); r.code != 0 {
		t.Errorf("a run within the limit failed: %s%s", r.stdout, r.stderr)
	} else if !strings.Contains(r.stdout, "ArenaBytes = 33554432") {
		t.Errorf("eight live 4 MiB branches: want ArenaBytes = 33554432 (the plan's peak):\n%s", r.stdout)
	}
}

// TestKilledCompileLeavesNoOrphan: a conversion killed with SIGKILL while the
// C compiler runs leaves its work folder (no deferred cleanup runs); the next
// run removes it once it is older than any compile, and the conversion still
// succeeds.
func TestKilledCompileLeavesNoOrphan(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc:", err)
	}
	tmp := t.TempDir()
	work := filepath.Join(tmp, "tmp")
	if err := os.Mkdir(work, 0o700); err != nil {
		t.Fatal(err)
	}
	// A compiler that stalls on kernel sources (not on the feature probe),
	// so the kill lands while the work folder exists.
	slowCC := filepath.Join(tmp, "slowcc.sh")
	script := "#!/bin/sh\ncase \"$*\" in *kernel.c*) sleep 30;; esac\nexec " + gcc + " \"$@\"\n"
	if err := os.WriteFile(slowCC, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	model, _ := filepath.Abs("../../testdata/mlp/model.onnx")
	out := filepath.Join(tmp, "m")
	cfg := filepath.Join(tmp, "akg.cfg")
	if err := os.WriteFile(cfg, []byte("[graph_kernel_param]\nopt_level=2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--fmk=ONNX", "--modelFile=" + model, "--outputFile=" + out, "--configFile=" + cfg}
	env := []string{"TMPDIR=" + work, "GKCONV_KERNEL_CACHE=" + filepath.Join(tmp, "cache")}
	cmd := exec.Command(converterBin, args...)
	cmd.Env = append(append(os.Environ(), env...), "CC="+slowCC)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var orphans []string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && len(orphans) == 0; time.Sleep(20 * time.Millisecond) {
		orphans, _ = filepath.Glob(filepath.Join(work, "gkconv-cc-*"))
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // the converter and its compiler
	_ = cmd.Wait()
	if len(orphans) == 0 {
		t.Fatal("the conversion never started compiling a kernel")
	}
	if _, err := os.Stat(out + ".mindir"); err == nil {
		t.Fatal("a killed conversion left an output file")
	}
	if _, err := os.Stat(orphans[0]); err != nil {
		t.Fatalf("the killed run's work folder is already gone (%v): the test proves nothing", err)
	}
	// A young orphan is kept (its writer may live in another PID
	// namespace); one older than any compile goes.
	old := time.Now().Add(-time.Hour)
	orphans, _ = filepath.Glob(filepath.Join(work, "gkconv-*")) // kernels compile in parallel
	for _, o := range orphans {
		if err := os.Chtimes(o, old, old); err != nil {
			t.Fatal(err)
		}
	}
	if r := runCLI(t, env, args...); r.code != 0 {
		t.Fatalf("the next conversion failed: %s%s", r.stdout, r.stderr)
	}
	if _, err := os.Stat(orphans[0]); !os.IsNotExist(err) {
		t.Errorf("the orphaned work folder %s survived the next run (%v)", orphans[0], err)
	}
	if left, _ := filepath.Glob(filepath.Join(work, "gkconv-*")); len(left) != 0 {
		t.Errorf("the next run left work folders: %v", left)
	}
}

// TestBenchmarkInputFilesBounded: benchmark's input and reference files are
// refused before they are opened when they are FIFOs, and a raw .bin whose
// size differs from what the input's shape declares is refused before it is
// read.
func TestBenchmarkInputFilesBounded(t *testing.T) {
	tmp := t.TempDir()
	out := convertWithoutFusion(t, dynamicRelu(), filepath.Join(tmp, "m"))
	fifo := func(name string) string {
		p := filepath.Join(tmp, name)
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	big := filepath.Join(tmp, "big.bin")
	if err := os.WriteFile(big, make([]byte, 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	bench := []string{"benchmark", "--modelFile=" + out + ".mindir", "--inputShapes=x:2,2", "--loopCount=1"}
	for _, c := range []struct{ name, want, arg string }{
		{"fifo .pb input", "not a regular file", "--inDataFile=" + fifo("in.pb")},
		{"fifo .bin input", "not a regular file", "--inDataFile=" + fifo("in.bin")},
		{"oversized .bin input", "1000 bytes, input float32[2 2] needs 16", "--inDataFile=" + big},
	} {
		t.Run(c.name, func(t *testing.T) {
			expectCommandFailure(t, "Run Benchmark m.mindir Failed.", c.want, append(bench, c.arg)...)
		})
	}
}

// dynamicRelu is y = Relu(x) with x of symbolic shape [n, m].
func dynamicRelu() *onnxbuild.Model {
	d := onnxbuild.New("dynamic", 13)
	d.Input("x", 1, "n", "m")
	d.Node("r", "Relu", []string{"x"}, []string{"y"})
	d.Output("y", 1, "n", "m")
	return d
}

// convertWithoutFusion writes m as out.onnx and converts it to out.mindir
// with --optimize=none; it returns out.
func convertWithoutFusion(t *testing.T, m *onnxbuild.Model, out string) string {
	t.Helper()
	model := out + ".onnx"
	if err := m.WriteFile(model); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, nil, "--fmk=ONNX", "--modelFile="+model, "--outputFile="+out, "--optimize=none"); r.code != 0 {
		t.Fatalf("convert: %s", r.stderr)
	}
	return out
}

// TestReadOnlyOutputFolder (issue 32 minor): on a read-only filesystem
// unlink fails with EROFS even for a file that is not there; the error
// used to be about removing a stale signature that did not exist. Now it
// names the write of the output. Needs root to mount a read-only tmpfs.
func TestReadOnlyOutputFolder(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to mount a read-only tmpfs")
	}
	ro := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "ro,size=1m", "none", ro).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a read-only tmpfs here: %v %s", err, out)
	}
	defer exec.Command("umount", ro).Run()
	r := runCLI(t, nil, "--fmk=ONNX", "--modelFile="+filepath.Join(testdataModel(t, "mlp"), "model.onnx"),
		"--outputFile="+filepath.Join(ro, "model"))
	if r.code == 0 || !strings.Contains(lastLine(r.stdout), "CONVERT RESULT FAILED") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	all := r.stdout + r.stderr
	if strings.Contains(all, "stale signature") || !strings.Contains(all, "read-only file system") {
		t.Errorf("the error does not say the output could not be written:\n%s", all)
	}
}

// Issue 36: benchmark without flags names what is missing, not "Run Benchmark ." .
func TestBenchmarkWithoutModelFile(t *testing.T) {
	r := runCLI(t, nil, "benchmark")
	if r.code == 0 || lastLine(r.stdout) != "Run Benchmark (no --modelFile) Failed. --modelFile is required" {
		t.Errorf("exit %d, last line %q", r.code, lastLine(r.stdout))
	}
}
