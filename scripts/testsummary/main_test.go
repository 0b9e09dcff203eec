package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// events renders test2json lines.
func events(t *testing.T, evs ...event) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, ev := range evs {
		line, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func out(pkg, test, text string) event {
	return event{Action: "output", Package: pkg, Test: test, Output: text}
}

// sampleRun is one go test run with a pass, two ../shared skips in two
// spellings, a failing subtest, a package that panicked outside its tests,
// a build failure and a test that never finished.
func sampleRun(t *testing.T) []byte {
	const a, b, c, d = "gkconv/internal/a", "gkconv/internal/b", "gkconv/internal/c", "gkconv/internal/d"
	return events(t,
		event{Action: "run", Package: a, Test: "TestOK"},
		out(a, "TestOK", "=== RUN   TestOK\n"),
		out(a, "TestOK", "--- PASS: TestOK (0.00s)\n"),
		event{Action: "pass", Package: a, Test: "TestOK"},
		event{Action: "run", Package: a, Test: "TestCorpus"},
		out(a, "TestCorpus", "    repotest.go:37: test material /work/repo/../shared/corpus/models is absent (../shared is not checked out beside the repo): skipping\n"),
		event{Action: "skip", Package: a, Test: "TestCorpus"},
		event{Action: "run", Package: a, Test: "TestSuite"},
		out(a, "TestSuite", "    suite_test.go:9: no ../shared/corpus/onnx-backend/simple/test_x* (shared corpus absent)\n"),
		event{Action: "skip", Package: a, Test: "TestSuite"},
		out(a, "", "ok  \tgkconv/internal/a\t0.1s\n"),
		event{Action: "pass", Package: a},

		event{Action: "run", Package: b, Test: "TestParent"},
		event{Action: "run", Package: b, Test: "TestParent/one"},
		event{Action: "pass", Package: b, Test: "TestParent/one"},
		event{Action: "run", Package: b, Test: "TestParent/two"},
		out(b, "TestParent/two", "    b_test.go:12: got 3, want 4\n"),
		out(b, "TestParent/two", "    --- FAIL: TestParent/two (0.00s)\n"),
		event{Action: "fail", Package: b, Test: "TestParent/two"},
		event{Action: "fail", Package: b, Test: "TestParent"},
		out(b, "", "FAIL\tgkconv/internal/b\t0.2s\n"),
		event{Action: "fail", Package: b},

		out(c, "", "panic: init went wrong\n"),
		out(c, "", "FAIL\tgkconv/internal/c\t0.0s\n"),
		event{Action: "fail", Package: c},

		event{Action: "build-output", ImportPath: d + " [" + d + ".test]", Output: "internal/d/d.go:3:1: syntax error\n"},
		event{Action: "build-fail", ImportPath: d + " [" + d + ".test]"},
		out(d, "", "FAIL\tgkconv/internal/d [build failed]\n"),
		event{Action: "fail", Package: d, FailedBuild: d + " [" + d + ".test]"},

		event{Action: "run", Package: "gkconv/internal/e", Test: "TestHangs"},
		out("gkconv/internal/e", "TestHangs", "=== RUN   TestHangs\n"),
	)
}

func TestStreamPrintsFailuresAndPackageLines(t *testing.T) {
	var w bytes.Buffer
	s := newStreamer(&w, nil)
	for _, line := range bytes.Split(sampleRun(t), []byte("\n")) {
		if len(line) > 0 {
			s.line(line)
		}
	}
	got := w.String()
	for _, want := range []string{
		"ok  \tgkconv/internal/a\t0.1s\n",
		"got 3, want 4",
		"FAIL\tgkconv/internal/b\t0.2s\n",
		"panic: init went wrong\n",
		"internal/d/d.go:3:1: syntax error\n",
		"FAIL\tgkconv/internal/d [build failed]\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "TestOK") {
		t.Errorf("a passing test's output was printed:\n%s", got)
	}
}

func TestReportCountsAndGroups(t *testing.T) {
	tl := newTally()
	tl.step = "unit"
	for _, line := range bytes.Split(sampleRun(t), []byte("\n")) {
		if ev, ok := parseEvent(line); ok {
			tl.add(ev)
		}
	}
	tl.finish()
	var w bytes.Buffer
	writeReport(&w, tl)
	got := w.String()
	lines := strings.Split(strings.TrimSpace(got), "\n")
	// Leaves only: TestOK and TestParent/one pass; TestParent is not
	// counted beside its failing subtest; c, d and the unfinished test fail.
	if last := lines[len(lines)-1]; last != "2 passed, 4 failed, 2 skipped" {
		t.Errorf("last line %q, want the summary\n%s", last, got)
	}
	for _, want := range []string{
		"  ../shared absent (2 tests): internal/a TestCorpus, internal/a TestSuite\n",
		"  internal/b TestParent/two\n",
		"  internal/c (the package failed outside any test",
		"  internal/d (build failed)\n",
		"  internal/e TestHangs (did not finish)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "internal/b TestParent\n") {
		t.Errorf("the parent of a failing subtest is listed as a failure of its own:\n%s", got)
	}
}

func TestSkipReason(t *testing.T) {
	wd, _ := os.Getwd()
	shared := filepath.Join(filepath.Dir(wd), "shared")
	for msg, want := range map[string]string{
		"test material " + shared + " is absent (../shared is not checked out beside the repo): skipping":                  "../shared absent",
		"test material /x/repo/../shared/corpus/models is absent (../shared is not checked out beside the repo): skipping": "../shared absent",
		"/x/repo/../shared/corpus/models/resnet18_bn/model.onnx absent":                                                    "../shared absent",
		wd + "/build/qdq/resnet18_bn_qdq absent; make qdq generates it from ../shared/corpus/models/resnet18_bn":           "build/qdq absent",
		"nginx not found (not on PATH nor in /usr/sbin): the remote kernel cache test needs it":                            "nginx not found",
		"no C compiler (cc): fused kernels cannot be built: exec: not found":                                               "no C compiler",
		"built without cgo":     "built without cgo",
		"":                      "no reason given",
		"no gcc: exec: \"gcc\"": "no gcc",
		shared + "/corpus/onnx-backend/node/test_cast_X/model.onnx: 2 unsupported node(s):;  Cast_0: Cast (Cast to FLOAT4E2M1)": "N unsupported node(s)",
		"node ReduceSum_1 (ReduceSum): the shape of intermediate ReduceL2_test_sum is unknown before running":                   "the shape of intermediate … is unknown before running",
		"node Dropout_0 (Dropout): unsupported: training_mode=true with ratio 0.75 (random dropout)":                            "unsupported",
	} {
		if got := skipReason(msg); got != want {
			t.Errorf("skipReason(%q) = %q, want %q", msg, got, want)
		}
	}
}

func TestStepLineSaysSkipped(t *testing.T) {
	wd, _ := os.Getwd()
	tl := newTally()
	tl.add(event{Action: "run", Package: "p", Test: "TestBackendSuite"})
	tl.add(out("p", "TestBackendSuite", "    repotest.go:37: test material "+filepath.Join(filepath.Dir(wd), "shared", "corpus", "onnx-backend")+" is absent (../shared is not checked out beside the repo): skipping\n"))
	tl.add(event{Action: "skip", Package: "p", Test: "TestBackendSuite"})
	want := "suite: SKIPPED — test material ../shared/corpus/onnx-backend is absent (../shared is not checked out beside the repo)"
	if got := stepLine("suite", tl); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// TestRunCountsACommandFailure: a command that fails without a failing
// test in its events (go test with a bad flag) still fails the step and
// the report.
func TestRunCountsACommandFailure(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	p := filepath.Join(t.TempDir(), "step.json")
	err := runCommand([]string{"-json", p, "--", "sh", "-c", "echo 'flag provided but not defined: -x'; exit 2"})
	if err == nil {
		t.Fatal("run succeeded for a failing command")
	}
	b, _ := os.ReadFile(p)
	if !strings.Contains(string(b), `"Package":"(command)"`) {
		t.Errorf("no command failure recorded in %s", b)
	}
	if err := reportFiles([]string{p}); err == nil {
		t.Error("report succeeded over a failed command")
	}
}
