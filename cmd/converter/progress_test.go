package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gkconv/internal/convert"
)

// syncBuffer is a bytes.Buffer safe for mpb's renderer and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestProgressDisplay: "on" draws the pass, the kernels n/N with cache hits
// and MiB written; "auto" draws nothing on a pipe or file; "off" nothing.
func TestProgressDisplay(t *testing.T) {
	defer func(d time.Duration) { progressDelay = d }(progressDelay)
	progressDelay = 0
	var out syncBuffer
	d, err := newProgress("on", &out)
	if err != nil || d == nil {
		t.Fatalf("on: %v %v", d, err)
	}
	d.event(convert.Progress{Stage: "passes", Pass: "cluster.graph_kernel_cluster", PassIndex: 8, PassTotal: 30})
	time.Sleep(250 * time.Millisecond)
	d.event(convert.Progress{Stage: "kernels", KernelsDone: 3, KernelsTotal: 5, CacheHits: 2})
	time.Sleep(250 * time.Millisecond)
	d.event(convert.Progress{Stage: "write", BytesWritten: 3 << 20})
	time.Sleep(250 * time.Millisecond)
	d.finish()
	got := out.String()
	for _, want := range []string{"fusion pass 9/30 cluster.graph_kernel_cluster", "kernels 3/5", "2 from the cache", "written 3.0 MiB"} {
		if !strings.Contains(got, want) {
			t.Errorf("display lacks %q:\n%q", want, got)
		}
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, mode := range []string{"auto", "off"} {
		if d, err := newProgress(mode, f); d != nil || err != nil {
			t.Errorf("%s on a file: %v %v, want no display", mode, d, err)
		}
	}
	if _, err := newProgress("sometimes", f); err == nil {
		t.Error("--progress=sometimes accepted")
	}
}

// TestNoProgressInLogs: a conversion whose stderr is a pipe (CI logs, make
// test) prints no progress and no terminal escapes.
func TestNoProgressInLogs(t *testing.T) {
	tmp := t.TempDir()
	cfg := filepath.Join(tmp, "akg.cfg")
	if err := os.WriteFile(cfg, []byte("[graph_kernel_param]\nopt_level=2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, []string{"GKCONV_KERNEL_CACHE=" + filepath.Join(tmp, "cache")}, "--fmk=ONNX",
		"--modelFile="+filepath.Join(testdataModel(t, "mlp"), "model.onnx"), "--outputFile="+filepath.Join(tmp, "m"), "--configFile="+cfg)
	if r.code != 0 {
		t.Fatalf("convert: %s%s", r.stdout, r.stderr)
	}
	if strings.Contains(r.stderr, "\x1b[") || strings.Contains(r.stderr, "kernels ") {
		t.Errorf("progress in a log:\n%q", r.stderr)
	}
	expectFailure(t, "--progress=sometimes", nil, "--fmk=ONNX", "--modelFile="+filepath.Join(testdataModel(t, "mlp"), "model.onnx"), "--outputFile="+filepath.Join(tmp, "m2"), "--progress=sometimes")
}
