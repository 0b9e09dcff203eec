package convert

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"gkconv/internal/trust"
)

// TestWriteFileAtomicLeavesNoTemps: the report/result writer (the same
// implementation as the .mindir writer) leaves only its file, with the
// unnamed O_TMPFILE path and with the named fallback; the fallback's next
// write removes our stale temporary files and nothing else.
func TestWriteFileAtomicLeavesNoTemps(t *testing.T) {
	for _, noTmpfile := range []string{"", "1"} {
		t.Run("GKCONV_NO_O_TMPFILE="+noTmpfile, func(t *testing.T) {
			t.Setenv(trust.EnvNoTmpfile, noTmpfile)
			dir := t.TempDir()
			old := time.Now().Add(-2 * trust.StaleAge)
			stale := filepath.Join(dir, trust.TempPrefix+"0123456789abcdef-report.json")
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
