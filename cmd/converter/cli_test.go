package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"gkconv/internal/mindir/check"
	"gkconv/internal/onnx/onnxbuild"
	"gkconv/internal/onnx/onnxpb"
)

var converterBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "gkconv-cli-")
	if err != nil {
		panic(err)
	}
	converterBin = filepath.Join(dir, "converter")
	out, err := exec.Command("go", "build", "-o", converterBin, ".").CombinedOutput()
	if err != nil {
		os.Stderr.Write(out)
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type cliResult struct {
	code           int
	stdout, stderr string
}

func runCLI(t *testing.T, env []string, args ...string) cliResult {
	t.Helper()
	cmd := exec.Command(converterBin, args...)
	cmd.Env = append(os.Environ(), env...)
	var so, se strings.Builder
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code == 0 {
		checkWritten(t, args)
	}
	return cliResult{code, so.String(), se.String()}
}

// checkWritten runs `converter check`'s validator (MindSpore's loader rules
// and the primitive schema) on every .mindir a successful conversion in the
// tests writes, so no test can produce a file MindSpore would not load.
func checkWritten(t *testing.T, args []string) {
	t.Helper()
	out := ""
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--outputFile="); ok {
			out = v
		}
		if a == "benchmark" || a == "inspect" || a == "check" {
			return
		}
	}
	if out == "" {
		return
	}
	if !strings.HasSuffix(out, ".mindir") {
		out += ".mindir"
	}
	rep, err := check.File(out)
	if err != nil {
		t.Errorf("check %s: %v", out, err)
		return
	}
	for _, v := range rep.Violations {
		t.Errorf("check %s: %s", out, v)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func testdataModel(t *testing.T, name string) string {
	return filepath.Join(repoRoot(t), "testdata", name)
}

func pbList(dir, kind string) string {
	files, _ := filepath.Glob(filepath.Join(dir, "test_data_set_0", kind+"_*.pb"))
	return strings.Join(files, ",")
}

// convertAndBench runs the real binary: convert, then benchmark against the
// test_data_set, and fails the test on any non-success.
func convertAndBench(t *testing.T, fmk, model, refDir string, extra ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "model")
	args := append([]string{"--fmk=" + fmk, "--modelFile=" + model, "--outputFile=" + out}, extra...)
	r := runCLI(t, nil, args...)
	if r.code != 0 || lastLine(r.stdout) != "CONVERT RESULT SUCCESS:0" {
		t.Fatalf("convert %s: exit %d\nstdout: %s\nstderr: %s", model, r.code, r.stdout, r.stderr)
	}
	b := runCLI(t, nil, "benchmark", "--modelFile="+out+".mindir", "--inDataFile="+pbList(refDir, "input"),
		"--benchmarkDataFile="+pbList(refDir, "output"), "--atol=1e-4", "--rtol=1e-3", "--loopCount=2", "--warmUpLoopCount=1")
	if b.code != 0 || !strings.HasSuffix(lastLine(b.stdout), "Success.") {
		t.Fatalf("benchmark %s: exit %d\nstdout: %s\nstderr: %s", model, b.code, b.stdout, b.stderr)
	}
	return out + ".mindir"
}

func TestTestdataModels(t *testing.T) {
	for _, name := range []string{"mynet", "mynet_myop", "mlp", "layernorm_gelu"} {
		t.Run(name, func(t *testing.T) {
			dir := testdataModel(t, name)
			for _, opt := range []string{"none", "general"} {
				convertAndBench(t, "ONNX", filepath.Join(dir, "model.onnx"), dir, "--optimize="+opt)
			}
		})
	}
}

func TestCorpusModels(t *testing.T) {
	root := filepath.Join(sharedDir(t), "corpus", "models")
	dirs, _ := filepath.Glob(filepath.Join(root, "*", "model.onnx"))
	if len(dirs) == 0 {
		t.Skip("no corpus models")
	}
	for _, m := range dirs {
		dir := filepath.Dir(m)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			for _, opt := range []string{"none", "general"} {
				out := convertAndBench(t, "ONNX", m, dir, "--optimize="+opt)
				// Converting our own .mindir again works, and inspect agrees.
				again := convertAndBench(t, "MINDIR", out, dir, "--optimize="+opt)
				a := runCLI(t, nil, "inspect", "--modelFile="+m)
				b := runCLI(t, nil, "inspect", "--modelFile="+again)
				if a.code != 0 || b.code != 0 {
					t.Fatalf("inspect failed: %s %s", a.stderr, b.stderr)
				}
				if ioSection(a.stdout) != ioSection(b.stdout) {
					t.Errorf("inputs/outputs differ after conversion:\n%s\nvs\n%s", ioSection(a.stdout), ioSection(b.stdout))
				}
			}
		})
	}
}

// ioSection extracts the Inputs/Outputs section of inspect's output.
func ioSection(s string) string {
	start := strings.Index(s, "Inputs")
	end := strings.Index(s, "Nodes:")
	if start < 0 || end < start {
		return s
	}
	return s[start:end]
}

func TestMnistMindIR(t *testing.T) {
	root := filepath.Join(sharedDir(t), "corpus", "mindir")
	for _, opt := range []string{"none", "general"} {
		convertAndBench(t, "MINDIR", filepath.Join(root, "mnist.mindir"), filepath.Join(root, "mnist_equiv"), "--optimize="+opt)
	}
}

func TestDeterministicOutput(t *testing.T) {
	dir := testdataModel(t, "mlp")
	var outs [][]byte
	for i := 0; i < 2; i++ {
		out := filepath.Join(t.TempDir(), "m")
		r := runCLI(t, nil, "--fmk=ONNX", "--modelFile="+filepath.Join(dir, "model.onnx"), "--outputFile="+out)
		if r.code != 0 {
			t.Fatal(r.stderr)
		}
		b, err := os.ReadFile(out + ".mindir")
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, b)
	}
	if string(outs[0]) != string(outs[1]) {
		t.Fatal("two conversions of the same model differ")
	}
}

// expectFailure checks the contract for bad input: exit != 0, the FAILED
// line last, a message containing want, and no output file.
func expectFailure(t *testing.T, want string, env []string, args ...string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "never")
	args = append(args, "--outputFile="+out)
	r := runCLI(t, env, args...)
	if r.code == 0 {
		t.Fatalf("exit 0 for bad input; stdout: %s", r.stdout)
	}
	if !strings.HasPrefix(lastLine(r.stdout), "CONVERT RESULT FAILED:") {
		t.Errorf("last line %q, want CONVERT RESULT FAILED", lastLine(r.stdout))
	}
	if strings.Contains(r.stdout, "SUCCESS") {
		t.Errorf("success printed after an error: %s", r.stdout)
	}
	if !strings.Contains(r.stderr, want) {
		t.Errorf("stderr %q does not mention %q", r.stderr, want)
	}
	matches, _ := filepath.Glob(out + "*")
	dirMatches, _ := filepath.Glob(filepath.Join(filepath.Dir(out), "*"))
	if len(matches) > 0 || len(dirMatches) > 0 {
		t.Errorf("output left behind: %v %v", matches, dirMatches)
	}
}

func TestBadInput(t *testing.T) {
	tmp := t.TempDir()
	good := filepath.Join(testdataModel(t, "mynet"), "model.onnx")
	goodBytes, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(tmp, "truncated.onnx")
	os.WriteFile(truncated, goodBytes[:len(goodBytes)/2], 0o644)

	// Two unknown ops: both must be listed.
	b := onnxbuild.New("unknown_ops", 13)
	b.Input("x", 1, 2, 3)
	b.Node("fancy1", "FancyGelu", []string{"x"}, []string{"y"})
	b.Node("mystery2", "MysteryOp", []string{"y"}, []string{"z"})
	b.Output("z", 1, 2, 3)
	unknown := filepath.Join(tmp, "unknown.onnx")
	if err := b.WriteFile(unknown); err != nil {
		t.Fatal(err)
	}
	badIni := filepath.Join(tmp, "bad.cfg")
	os.WriteFile(badIni, []byte("[graph_kernel_param]\nopt_level=high\n"), 0o644)
	quant := filepath.Join(tmp, "quant.cfg")
	os.WriteFile(quant, []byte("[graph_kernel_param]\nopt_level=2\n[common_quant_param]\nquant_type=FULL_QUANT\n"), 0o644)
	noDelim := filepath.Join(tmp, "nodelim.cfg")
	os.WriteFile(noDelim, []byte("[graph_kernel_param]\nopt_level=2\nthis line has no delimiter\n"), 0o644)

	cases := []struct {
		name, want string
		args       []string
	}{
		{"missing file", "no such file", []string{"--fmk=ONNX", "--modelFile=" + filepath.Join(tmp, "nope.onnx")}},
		{"truncated onnx", "truncated.onnx", []string{"--fmk=ONNX", "--modelFile=" + truncated}},
		{"unknown ops listed", "mystery2", []string{"--fmk=ONNX", "--modelFile=" + unknown}},
		{"unknown ops listed 2", "fancy1", []string{"--fmk=ONNX", "--modelFile=" + unknown}},
		{"bad fmk", "supported: ONNX, MINDIR", []string{"--fmk=KERAS", "--modelFile=" + good}},
		{"bad optimize", "--optimize=fast", []string{"--fmk=ONNX", "--modelFile=" + good, "--optimize=fast"}},
		{"bad fp16", "--fp16=maybe", []string{"--fmk=ONNX", "--modelFile=" + good, "--fp16=maybe"}},
		{"mindir_lite", "MINDIR_LITE is not supported yet", []string{"--fmk=ONNX", "--modelFile=" + good, "--saveType=MINDIR_LITE"}},
		{"weightFile for onnx", "--weightFile", []string{"--fmk=ONNX", "--modelFile=" + good, "--weightFile=w.caffemodel"}},
		{"bad input shape", "--inputShape", []string{"--fmk=ONNX", "--modelFile=" + good, "--inputShape=x:1,a"}},
		{"unknown input name", "nosuch", []string{"--fmk=ONNX", "--modelFile=" + good, "--inputShape=nosuch:1,2"}},
		{"bad ini value", "bad.cfg:2", []string{"--fmk=ONNX", "--modelFile=" + good, "--configFile=" + badIni}},
		{"bad ini line", "nodelim.cfg:3", []string{"--fmk=ONNX", "--modelFile=" + good, "--configFile=" + noDelim}},
		{"quantization asked for", "[data_preprocess_param] calibrate_path: FULL_QUANT needs calibration data", []string{"--fmk=ONNX", "--modelFile=" + good, "--configFile=" + quant}},
		{"missing config", "nope.cfg", []string{"--fmk=ONNX", "--modelFile=" + good, "--configFile=" + filepath.Join(tmp, "nope.cfg")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { expectFailure(t, c.want, nil, c.args...) })
	}
}

func TestExternalDataEscape(t *testing.T) {
	tmp := t.TempDir()
	b := onnxbuild.New("ext", 13)
	b.Input("x", 1, 4)
	w := onnxbuild.Raw("w", 1, []int64{4}, nil)
	w.DataLocation = onnxpb.TensorProto_EXTERNAL.Enum()
	w.ExternalData = []*onnxpb.StringStringEntryProto{
		{Key: proto.String("location"), Value: proto.String("../secret.bin")},
		{Key: proto.String("length"), Value: proto.String("16")},
	}
	b.Init(w)
	b.Node("add", "Add", []string{"x", "w"}, []string{"y"})
	b.Output("y", 1, 4)
	model := filepath.Join(tmp, "m.onnx")
	if err := b.WriteFile(model); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(filepath.Dir(tmp), "secret.bin"), make([]byte, 16), 0o644)
	expectFailure(t, "secret.bin", nil, "--fmk=ONNX", "--modelFile="+model)
}

func TestReportFile(t *testing.T) {
	tmp := t.TempDir()
	rep := filepath.Join(tmp, "r.json")
	dir := testdataModel(t, "mynet")
	r := runCLI(t, nil, "--fmk=ONNX", "--modelFile="+filepath.Join(dir, "model.onnx"), "--outputFile="+filepath.Join(tmp, "o"), "--reportFile="+rep)
	if r.code != 0 {
		t.Fatal(r.stderr)
	}
	var got map[string]any
	data, err := os.ReadFile(rep)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"model", "graph", "kernels", "passes", "unsupported", "warnings"} {
		if _, ok := got[k]; !ok {
			t.Errorf("report lacks %q", k)
		}
	}
}

func TestBenchmarkBadInput(t *testing.T) {
	tmp := t.TempDir()
	dir := testdataModel(t, "mynet_myop")
	out := filepath.Join(tmp, "m")
	if r := runCLI(t, nil, "--fmk=ONNX", "--modelFile="+filepath.Join(dir, "model.onnx"), "--outputFile="+out); r.code != 0 {
		t.Fatal(r.stderr)
	}
	in0 := filepath.Join(dir, "test_data_set_0", "input_0.pb")
	data, _ := os.ReadFile(in0)
	trunc := filepath.Join(tmp, "trunc.pb")
	os.WriteFile(trunc, data[:len(data)-5], 0o644)
	otherDir := testdataModel(t, "mlp")
	notMindir := filepath.Join(tmp, "x.mindir")
	os.WriteFile(notMindir, []byte("this is not a model"), 0o644)
	cases := []struct {
		name, want string
		args       []string
	}{
		{"wrong input count", "model has 2 input(s)", []string{"--modelFile=" + out + ".mindir", "--inDataFile=" + in0}},
		{"shape mismatch", "expects", []string{"--modelFile=" + out + ".mindir", "--inDataFile=" + filepath.Join(otherDir, "test_data_set_0", "input_0.pb") + "," + in0}},
		{"truncated pb", "trunc.pb", []string{"--modelFile=" + out + ".mindir", "--inDataFile=" + trunc + "," + in0}},
		{"not a mindir", "x.mindir", []string{"--modelFile=" + notMindir}},
		{"missing model", "no such file", []string{"--modelFile=" + filepath.Join(tmp, "none.mindir")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runCLI(t, nil, append([]string{"benchmark"}, c.args...)...)
			if r.code == 0 || !strings.Contains(lastLine(r.stdout), "Failed.") {
				t.Fatalf("exit %d, last line %q", r.code, lastLine(r.stdout))
			}
			if !strings.Contains(r.stderr, c.want) {
				t.Errorf("stderr %q lacks %q", r.stderr, c.want)
			}
		})
	}
}
