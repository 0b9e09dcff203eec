package onnx

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestCorpus loads every model of the shared corpus: no panic, and a count of
// loaded, unsupported and failed models. The real architectures must load.
func TestCorpus(t *testing.T) {
	shared := filepath.Join(repoRoot(t), "..", "shared", "corpus")
	if _, err := os.Stat(shared); err != nil {
		t.Skipf("corpus not present at %s (it lives beside the repo, in ../shared)", shared)
	}
	for _, suite := range []struct {
		glob    string
		mustAll bool
	}{
		{"models/*/model.onnx", true},
		{"onnx-backend/node/*/model.onnx", false},
	} {
		paths, _ := filepath.Glob(filepath.Join(shared, suite.glob))
		if len(paths) == 0 {
			t.Logf("%s: no models", suite.glob)
			continue
		}
		loaded, unsupported, failed := 0, 0, 0
		reasons := map[string]int{}
		var failures []string
		for _, p := range paths {
			m, err := Open(p, Options{})
			var ue *UnsupportedError
			switch {
			case err == nil:
				loaded++
				if err := m.Graph.Validate(); err != nil {
					t.Errorf("%s: invalid graph: %v", p, err)
				}
				m.Close()
			case errors.As(err, &ue):
				unsupported++
				for _, it := range ue.Items {
					reasons[it.Op+" ("+it.Reason+")"]++
				}
			default:
				failed++
				failures = append(failures, err.Error())
			}
			if suite.mustAll && err != nil {
				t.Errorf("%v", err)
			}
		}
		t.Logf("%s: %d models: %d loaded, %d unsupported, %d failed", suite.glob, len(paths), loaded, unsupported, failed)
		if testing.Verbose() {
			keys := make([]string, 0, len(reasons))
			for k := range reasons {
				keys = append(keys, k)
			}
			sort.Slice(keys, func(i, j int) bool { return reasons[keys[i]] > reasons[keys[j]] })
			for _, k := range keys {
				t.Logf("  unsupported %4d  %s", reasons[k], k)
			}
			for _, f := range failures {
				t.Logf("  failed: %s", strings.ReplaceAll(f, "\n", " | "))
			}
		}
	}
}
