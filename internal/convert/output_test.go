package convert

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"gkconv/internal/safefs"
)

// TestWriteFileAtomicLeavesNoTemps: the report/result writer (the same
// implementation as the .mindir writer) leaves only its file, with the
// unnamed O_TMPFILE path and with the named fallback; the fallback's next
// write removes our stale temporary files and nothing else.
func TestWriteFileAtomicLeavesNoTemps(t *testing.T) {
	for _, noTmpfile := range []string{"", "1"} {
		t.Run("GKCONV_NO_O_TMPFILE="+noTmpfile, func(t *testing.T) {
			t.Setenv(safefs.EnvNoTmpfile, noTmpfile)
			dir := t.TempDir()
			old := time.Now().Add(-2 * safefs.StaleAge)
			stale := filepath.Join(dir, safefs.TempPrefix+"0123456789abcdef-report.json")
			foreign := filepath.Join(dir, ".tmp-report.json-123")
			for _, p := range []string{stale, foreign} {
				os.WriteFile(p, []byte("x"), 0o600)
				os.Chtimes(p, old, old)
			}
			path := filepath.Join(dir, "report.json")
			for _, s := range []string{"{}\n", "{\"a\":1}\n"} {
				if err := WriteFileAtomic(path, []byte(s)); err != nil {
					t.Fatal(err)
				}
				if b, _ := os.ReadFile(path); string(b) != s {
					t.Fatalf("content %q", b)
				}
			}
			es, _ := os.ReadDir(dir)
			var names []string
			for _, e := range es {
				names = append(names, e.Name())
			}
			if want := []string{".tmp-report.json-123", "report.json"}; !slices.Equal(names, want) {
				t.Fatalf("folder holds %v, want %v", names, want)
			}
			if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
				t.Errorf("mode %v", st.Mode())
			}
		})
	}
}

// Issue 32 D2: the report goes where the user points it without replacing
// anything but a regular file, and a run whose report cannot be written
// leaves no model behind: /dev/full (a character device whose writes fail)
// keeps being a device and the .mindir is removed; a FIFO receives the
// report; a directory is refused before any work.
func TestReportOutputPaths(t *testing.T) {
	// As root, a private node of the same device (major 1, minor 7), so a
	// regression replaces that and not the machine's /dev/full.
	full := "/dev/full"
	if os.Geteuid() == 0 {
		full = filepath.Join(t.TempDir(), "full")
		if err := syscall.Mknod(full, syscall.S_IFCHR|0o666, 1<<8|7); err != nil {
			t.Skipf("mknod: %v", err)
		}
	} else if _, err := os.Stat(full); err != nil {
		t.Skip("no /dev/full")
	}
	o := onnxOptions(t, filepath.Join(testdataModel(t, "mlp"), "model.onnx"))
	o.Optimize = "none"
	o.ReportFile = full
	_, err := Convert(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "writing report "+full) {
		t.Fatalf("report to %s: want a report error, got %v", full, err)
	}
	if st, err := os.Lstat(full); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("%s was replaced: %v %v", full, st.Mode(), err)
	}
	if _, err := os.Stat(o.OutputFile + ".mindir"); err == nil {
		t.Errorf("the failed run left %s.mindir", o.OutputFile)
	}

	fifo := filepath.Join(t.TempDir(), "report.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	got := make(chan []byte, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- nil
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- b
	}()
	o.ReportFile = fifo
	if _, err := Convert(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if b := <-got; !bytes.Contains(b, []byte(`"kernels"`)) && !bytes.Contains(b, []byte(`"model"`)) {
		t.Errorf("the FIFO's reader got %q, want the JSON report", b)
	}
	if st, _ := os.Lstat(fifo); st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced by a file")
	}

	o.ReportFile = t.TempDir()
	o.OutputFile = filepath.Join(t.TempDir(), "dir_report")
	_, err = Convert(context.Background(), o)
	if err == nil || Code(err) != CodeParamInvalid || !strings.Contains(err.Error(), "is a directory") {
		t.Fatalf("report into a directory: want a parameter error first, got %v", err)
	}
	if _, err := os.Stat(o.OutputFile + ".mindir"); err == nil {
		t.Errorf("the refused run wrote %s.mindir", o.OutputFile)
	}
}
