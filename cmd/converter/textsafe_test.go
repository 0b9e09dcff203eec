package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	pb "gkconv/internal/mindir/mindirpb"
	"gkconv/internal/onnx/onnxbuild"
	"gkconv/internal/onnx/onnxpb"
)

// Issue 32 D3: strings from a model or a config reach the terminal escaped
// (Go-style: \n, \x1b, \u0085), so a model cannot forge an output line or
// send terminal control sequences.

// forgedName is a node name that, printed raw, would forge the success line
// on a line of its own and turn the terminal red.
const forgedName = "a\nCONVERT RESULT SUCCESS:0\n\x1b[31mX"

// checkNoInjection fails when any line of out equals one of the forged
// lines (trimmed of spaces when trim), or out holds a control character
// other than '\n'.
func checkNoInjection(t *testing.T, what, out string, trim bool, forged ...string) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if trim {
			l = strings.TrimSpace(l)
		}
		for _, f := range forged {
			if l == f {
				t.Errorf("%s has a forged line %q:\n%s", what, f, out)
			}
		}
	}
	for _, r := range out {
		if r != '\n' && (r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || r == '\uFFFD') {
			t.Errorf("%s holds control character %U:\n%q", what, r, out)
			break
		}
	}
}

func TestUnsupportedNodeNameEscaped(t *testing.T) {
	tmp := t.TempDir()
	b := onnxbuild.New("forged", 13)
	b.Input("x", 1, 2, 3)
	b.Node(forgedName, "FancyGelu", []string{"x"}, []string{"y"})
	b.Node("ok\u00e9\u4e2d", "MysteryOp\u0085\x7f", []string{"y"}, []string{"z"})
	b.Output("z", 1, 2, 3)
	model := filepath.Join(tmp, "forged.onnx")
	if err := b.WriteFile(model); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, nil, "--fmk=ONNX", "--modelFile="+model, "--outputFile="+filepath.Join(tmp, "out"))
	t.Logf("stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	if r.code != 1 || lastLine(r.stdout) != "CONVERT RESULT FAILED:-500" {
		t.Fatalf("exit %d, last line %q", r.code, lastLine(r.stdout))
	}
	checkNoInjection(t, "stdout", r.stdout, true, "CONVERT RESULT SUCCESS:0")
	checkNoInjection(t, "stderr", r.stderr, true, "CONVERT RESULT SUCCESS:0")
	for _, want := range []string{
		`a\nCONVERT RESULT SUCCESS:0\n\x1b[31mX: FancyGelu`, // the name, escaped, on the node's line
		"ok\u00e9\u4e2d: MysteryOp\\u0085\\x7f",             // printable Unicode kept, C1 and DEL escaped
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	// Each unsupported node still has a line of its own.
	if n := strings.Count(r.stderr, "\n  "); n != 2 {
		t.Errorf("%d node lines, want 2:\n%s", n, r.stderr)
	}

	// The safety net: an error message that puts a name in raw (here the
	// graph validator's "produced by both") still prints no control
	// character, and what follows a newline of it is indented under the
	// ERROR line, never a line of its own.
	dp := onnxbuild.New("forged2", 13)
	dp.Input("x", 1, 1, 4)
	dp.Node(forgedName, "Relu", []string{"x"}, []string{"y"})
	dp.Node("second", "Sigmoid", []string{"x"}, []string{"y"})
	dp.Output("y", 1, 1, 4)
	model = filepath.Join(tmp, "forged2.onnx")
	if err := dp.WriteFile(model); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, nil, "--fmk=ONNX", "--modelFile="+model, "--outputFile="+filepath.Join(tmp, "out"))
	t.Logf("stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	if r.code != 1 || lastLine(r.stdout) != "CONVERT RESULT FAILED:-1" {
		t.Fatalf("exit %d, last line %q", r.code, lastLine(r.stdout))
	}
	checkNoInjection(t, "stdout", r.stdout, false, "CONVERT RESULT SUCCESS:0")
	checkNoInjection(t, "stderr", r.stderr, false, "CONVERT RESULT SUCCESS:0")
	if !strings.Contains(r.stderr, `\x1b[31mX`) {
		t.Errorf("stderr lacks the escaped ESC:\n%s", r.stderr)
	}
}

func TestInspectEscapesModelStrings(t *testing.T) {
	tmp := t.TempDir()
	out := convertWithoutFusion(t, dynamicRelu(), filepath.Join(tmp, "m"))
	data, err := os.ReadFile(out + ".mindir")
	if err != nil {
		t.Fatal(err)
	}
	var m pb.ModelProto
	if err := proto.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	m.ProducerName = proto.String("evil\x1b[2J\nInputs (9):")
	data, err = proto.Marshal(&m)
	if err != nil {
		t.Fatal(err)
	}
	mindirFile := filepath.Join(tmp, "evil.mindir")
	if err := os.WriteFile(mindirFile, data, 0o644); err != nil {
		t.Fatal(err)
	}

	// An ONNX model with hostile producer, input, output and node names.
	b := onnxbuild.New("evil", 13)
	b.Input("x\x1b]0;pwned\x07", 1, 2)
	b.Node("r\r\nOutputs (7):", "Relu", []string{"x\x1b]0;pwned\x07"}, []string{"y\u2028z"})
	b.Output("y\u2028z", 1, 2)
	raw, err := b.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	var om onnxpb.ModelProto
	if err := proto.Unmarshal(raw, &om); err != nil {
		t.Fatal(err)
	}
	om.ProducerName = proto.String("onnx\x1b[2J\nOutputs (7):\xff")
	if raw, err = proto.Marshal(&om); err != nil {
		t.Fatal(err)
	}
	onnxFile := filepath.Join(tmp, "evil.onnx")
	if err := os.WriteFile(onnxFile, raw, 0o644); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		file   string
		forged []string
		want   []string
	}{
		{mindirFile, []string{"Inputs (9):"}, []string{`producer_name: evil\x1b[2J\nInputs (9):`}},
		{onnxFile, []string{"Outputs (7):"}, []string{
			`producer_name: onnx\x1b[2J\nOutputs (7):\xff`, `x\x1b]0;pwned\a`, `y\u2028z`}},
	} {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			r := runCLI(t, nil, "inspect", "--modelFile="+c.file)
			t.Logf("stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			if r.code != 0 {
				t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
			}
			checkNoInjection(t, "stdout", r.stdout, true, c.forged...)
			checkNoInjection(t, "stderr", r.stderr, true, c.forged...)
			for _, w := range c.want {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("stdout lacks %q", w)
				}
			}
		})
	}
}

// Issue 32 D6: a config naming many unknown ops or flags prints the first
// warnings of each kind and one line with the count of the others.
func TestManyUnknownNamesWarnBounded(t *testing.T) {
	tmp := t.TempDir()
	model := filepath.Join(tmp, "relu.onnx")
	if err := dynamicRelu().WriteFile(model); err != nil {
		t.Fatal(err)
	}
	const n = 10000
	names := make([]string, n)
	keys := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("NoSuchOp%d", i)
		keys[i] = fmt.Sprintf("no_such_flag_%d=1", i)
	}
	cases := []struct {
		name, cfg, each, more string
	}{
		{"expand ops", "[graph_kernel_param]\nopt_level=2\nenable_expand_ops=" + strings.Join(names, ",") + "\n",
			"no expander is called", fmt.Sprintf("and %d more", n-20)},
		{"cluster ops", "[graph_kernel_param]\nopt_level=2\ndisable_cluster_ops=" + strings.Join(names, ",") + "\n",
			"no op is called", fmt.Sprintf("and %d more", n-20)},
		{"unknown flags", "[graph_kernel_param]\nopt_level=2\n" + strings.Join(keys, "\n") + "\n",
			"unknown flag", fmt.Sprintf("and %d more unknown flag", n-20)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := filepath.Join(tmp, strings.ReplaceAll(c.name, " ", "_")+".cfg")
			if err := os.WriteFile(cfg, []byte(c.cfg), 0o644); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			r := runCLI(t, nil, "--fmk=ONNX", "--modelFile="+model, "--outputFile="+filepath.Join(tmp, "out"),
				"--configFile="+cfg, "--kernelCacheDir="+kernelCache)
			elapsed := time.Since(start)
			if r.code != 0 || lastLine(r.stdout) != "CONVERT RESULT SUCCESS:0" {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %.2000s", r.code, r.stdout, r.stderr)
			}
			lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
			each := 0
			for _, l := range lines {
				if strings.Contains(l, c.each) && !strings.Contains(l, " more ") {
					each++
				}
			}
			if len(lines) > 25 || each > 20 || !strings.Contains(r.stderr, c.more) {
				t.Errorf("%d stderr lines, %d with %q, want <= 25, <= 20 and a line with %q:\n%.3000s",
					len(lines), each, c.each, c.more, r.stderr)
			}
			if elapsed > 20*time.Second {
				t.Errorf("took %v", elapsed)
			}
		})
	}
}

func TestWarnKind(t *testing.T) {
	same := [][2]string{
		{`a.cfg: enable_expand_ops=Op7: no expander is called "Op7"; it has no effect`,
			`a.cfg: enable_expand_ops=Gelux: no expander is called "Gelux" (did you mean "Gelu"?); it has no effect`},
		{`kernel self-check: un-fused k_12: output 0 differs`, `kernel self-check: un-fused k_3: output 1 differs`},
		{`x (a (nested) remark) y`, `x y`},
	}
	for _, p := range same {
		if a, b := warnKind(p[0]), warnKind(p[1]); a != b {
			t.Errorf("kinds differ:\n%q -> %q\n%q -> %q", p[0], a, p[1], b)
		}
	}
	if a, b := warnKind(`a.cfg: enable_expand_ops=X: no expander is called "X"`), warnKind(`a.cfg: disable_cluster_ops=X: no op is called "X"`); a == b {
		t.Errorf("different warnings are one kind %q", a)
	}
	for _, s := range []string{`unterminated "quote`, `open (paren`, `trailing=`, `"`, `(`, `\`} {
		warnKind(s) // must not panic
	}
}

// Issue 32 D2: "-" writes the JSON report (and benchmark's result) to
// standard output, alone, so `converter ... --reportFile=- | jq .` works;
// the result lines go to stderr then.
func TestReportToStdout(t *testing.T) {
	tmp := t.TempDir()
	model := filepath.Join(tmp, "relu.onnx")
	if err := dynamicRelu().WriteFile(model); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "out")
	r := runCLI(t, nil, "--fmk=ONNX", "--modelFile="+model, "--outputFile="+out, "--reportFile=-", "--inputShape=x:2,3", "--kernelCacheDir="+kernelCache)
	var rep map[string]any
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &rep) != nil || rep["output"] != out+".mindir" {
		t.Fatalf("exit %d; stdout is not the report alone:\n%s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "CONVERT RESULT SUCCESS:0") {
		t.Errorf("the result line is not on stderr: %s", r.stderr)
	}
	r = runCLI(t, nil, "benchmark", "--modelFile="+out+".mindir", "--resultFile=-", "--loopCount=1")
	var res map[string]any
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &res) != nil || res["pass"] != true {
		t.Fatalf("benchmark exit %d; stdout is not the result alone:\n%s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}
