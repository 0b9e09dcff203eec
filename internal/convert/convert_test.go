package convert

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gkconv/internal/onnx/onnxbuild"
)

// expectFailure converts with o (output in a fresh folder) and checks the
// failure contract: the code, a message containing each of want, no output
// file left behind, and the report (when asked for) carrying the error.
func expectFailure(t *testing.T, o Options, code int, want ...string) *Report {
	t.Helper()
	tmp := t.TempDir()
	o.OutputFile = filepath.Join(tmp, "never")
	o.ReportFile = filepath.Join(t.TempDir(), "report.json")
	rep, err := Convert(context.Background(), o)
	if err == nil {
		t.Fatal("no error for bad input")
	}
	if Code(err) != code {
		t.Errorf("code %d, want %d: %v", Code(err), code, err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) > 0 {
		t.Errorf("output left behind: %v", left)
	}
	var got Report
	data, rerr := os.ReadFile(o.ReportFile)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if got.Error != err.Error() || rep.Error != err.Error() {
		t.Errorf("report error %q / %q, want %q", got.Error, rep.Error, err)
	}
	return rep
}

// TestOptionProblems: every option problem, the caller's parse problems
// (Options.Invalid) included, is reported at once in converter_lite's option
// order with -600.
func TestOptionProblems(t *testing.T) {
	o := Options{FMK: "KERAS", SaveType: "MINDIR_LITE", InputDataFormat: "nhwc?", WeightFile: "w.caffemodel",
		Optimize: "fast", Invalid: []OptionError{
			{"inputShape", errors.New("--inputShape: \"x\" is not name:dims")},
			{"fp16", errors.New("--fp16=maybe: want on or off")},
			{"somethingElse", errors.New("--somethingElse: bad")},
		}}
	expectFailure(t, o, CodeParamInvalid, "--fmk=KERAS is unknown; supported: ONNX, MINDIR; --modelFile is required; "+
		"--saveType=MINDIR_LITE is not supported yet; use MINDIR; --fp16=maybe: want on or off; "+
		"--inputDataFormat=nhwc?: want NCHW or NHWC; --weightFile is only for Caffe models; ONNX and MINDIR keep weights in the model file; "+
		"--optimize=fast: want none, general, gpu_oriented or ascend_oriented[:chip]; --inputShape: \"x\" is not name:dims; --somethingElse: bad")

	// The zero Options name what is missing.
	expectFailure(t, Options{}, CodeParamInvalid, "--fmk is required", "--modelFile is required", "--optimize=: want")
}

func TestFailureCodes(t *testing.T) {
	tmp := t.TempDir()
	good := filepath.Join(testdataModel(t, "mynet"), "model.onnx")

	// Two unknown ops: both are listed, in the error and the report.
	b := onnxbuild.New("unknown_ops", 13)
	b.Input("x", 1, 2, 3)
	b.Node("fancy1", "FancyGelu", []string{"x"}, []string{"y"})
	b.Node("mystery2", "MysteryOp", []string{"y"}, []string{"z"})
	b.Output("z", 1, 2, 3)
	unknown := filepath.Join(tmp, "unknown.onnx")
	if err := b.WriteFile(unknown); err != nil {
		t.Fatal(err)
	}
	rep := expectFailure(t, onnxOptions(t, unknown), CodeNotFindOp, "fancy1", "mystery2")
	if len(rep.Unsupported) != 2 || rep.Unsupported[0].Node != "fancy1" || rep.Unsupported[1].Op != "MysteryOp" {
		t.Errorf("report lists %+v", rep.Unsupported)
	}

	nhwc := onnxOptions(t, good)
	nhwc.InputDataFormat = "NHWC"
	expectFailure(t, nhwc, CodeNotSupport, "NHWC is not supported yet")

	badCfg := filepath.Join(tmp, "bad.cfg")
	os.WriteFile(badCfg, []byte("[graph_kernel_param]\nopt_level=high\n"), 0o644)
	cfg := onnxOptions(t, good)
	cfg.ConfigFile = badCfg
	expectFailure(t, cfg, CodeParamInvalid, "bad.cfg:2")

	expectFailure(t, onnxOptions(t, filepath.Join(tmp, "nope.onnx")), CodeError, "no such file")

	// A missing output folder is found with the options, before any work
	// (issue 32: output paths are checked first).
	rep, err := Convert(context.Background(), func() Options {
		o := onnxOptions(t, good)
		o.OutputFile = filepath.Join(tmp, "no", "such", "m")
		return o
	}())
	if Code(err) != CodeParamInvalid || !strings.Contains(err.Error(), "does not exist") || rep.Graph.NodesBefore != 0 {
		t.Errorf("missing folder: code %d, %v, report %+v", Code(err), err, rep.Graph)
	}
}

// TestCanceled: a canceled context stops the conversion before it writes.
func TestCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o := onnxOptions(t, filepath.Join(testdataModel(t, "mynet"), "model.onnx"))
	_, err := Convert(ctx, o)
	if !errors.Is(err, context.Canceled) || Code(err) != CodeError {
		t.Fatalf("err %v (code %d), want context.Canceled", err, Code(err))
	}
	if _, serr := os.Stat(o.OutputFile + ".mindir"); serr == nil {
		t.Error("output written despite the canceled context")
	}
}

// TestReport: the returned report is the one written to ReportFile.
func TestReport(t *testing.T) {
	dir := testdataModel(t, "mynet")
	o := onnxOptions(t, filepath.Join(dir, "model.onnx"))
	o.ConfigFile = writeConfig(t, "[graph_kernel_param]\nopt_level=2\n")
	o.ReportFile = filepath.Join(t.TempDir(), "r.json")
	out, rep := convertOK(t, o)
	var got Report
	data, err := os.ReadFile(o.ReportFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if got.Output != out || rep.Output != out || got.Model.Fmk != "ONNX" || len(got.Kernels) != 1 || len(got.Kernels) != len(rep.Kernels) ||
		len(got.Passes) == 0 || got.Error != "" || got.Flags["backend"] == "" {
		t.Errorf("report %s\nreturned %+v", data, rep)
	}
}
