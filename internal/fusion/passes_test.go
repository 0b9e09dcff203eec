package fusion

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestPassOrder: the tables keep every declared ordering (init panics when
// they do not; this says which).
func TestPassOrder(t *testing.T) {
	if err := checkPassOrder(conversionPasses(), passOrder); err != nil {
		t.Fatal(err)
	}
	for _, c := range passOrder {
		if c.a == c.b {
			t.Errorf("constraint %s before itself", c.a)
		}
	}
}

// TestCheckPassOrderReports: on a made-up table the checker names each
// broken constraint, each unknown pass and a "stage.name" that appears
// twice (a constraint on it could not be decided).
func TestCheckPassOrderReports(t *testing.T) {
	row := func(stage, index int, name string) pass {
		return pass{stage: stage, index: index, name: name, run: note("test")}
	}
	table := []pass{
		row(anfStageIndex, 0, "FirstFusion"),
		row(0, 0, "alpha"),
		row(1, 0, "beta"),
		row(1, 1, "gamma"),
		row(1, 2, "beta"), // same stage and name as 1.0
		row(2, 0, "beta"), // another stage: a different pass
	}
	good := []passConstraint{
		{"anf_fusion.FirstFusion", "preprocess.alpha"},
		{"preprocess.alpha", "cluster.gamma"},
		{"cluster.gamma", "highlevelopt1.beta"},
	}
	if err := checkPassOrder(slices.Delete(slices.Clone(table), 4, 5), good); err != nil {
		t.Fatalf("kept constraints reported: %v", err)
	}
	bad := append(slices.Clone(good),
		passConstraint{"highlevelopt1.beta", "preprocess.alpha"}, // reversed
		passConstraint{"cluster.gamma", "cluster.gamma"},         // before itself
		passConstraint{"preprocess.alpha", "split.delta"},        // no such pass
		passConstraint{"alpha", "cluster.gamma"},                 // not qualified by its stage
	)
	err := checkPassOrder(table, bad)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		"pass cluster.beta appears twice",
		"pass highlevelopt1.beta must run before preprocess.alpha",
		"pass cluster.gamma must run before cluster.gamma",
		"constraint preprocess.alpha before split.delta: no pass split.delta",
		"constraint alpha before cluster.gamma: no pass alpha",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if n := strings.Count(err.Error(), "\n") + 1; n != 5 {
		t.Errorf("%d problems reported, want 5:\n%v", n, err)
	}
}

// TestPassFiles: every pass that does something is in a file named after it
// (anf_<pass>.go for anfFusions, gk_<pass>.go for pipeline, the pass name in
// lower case, underscores aside, less graph_kernel_), and every such file
// holds exactly one pass.
func TestPassFiles(t *testing.T) {
	passesOf := map[string][]string{} // file -> names of the passes whose run function it holds
	for _, table := range []struct {
		prefix string
		rows   []pass
	}{{"anf_", anfFusions}, {"gk_", pipeline}} {
		for _, p := range table.rows {
			fn := runtime.FuncForPC(reflect.ValueOf(p.run).Pointer())
			path, _ := fn.FileLine(fn.Entry())
			file := filepath.Base(path)
			if strings.Contains(fn.Name(), ".note.") {
				continue // nothing to run on this IR: the row says why
			}
			want := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(p.name, "graph_kernel_"), "_", ""))
			got := strings.ReplaceAll(strings.TrimSuffix(strings.TrimPrefix(file, table.prefix), ".go"), "_", "")
			if !strings.HasPrefix(file, table.prefix) || got != want {
				t.Errorf("pass %s (%s) is in %s, not in a file named after it (%s<pass>.go)", p.qualifiedName(), fn.Name(), file, table.prefix)
			}
			if !slices.Contains(passesOf[file], p.name) {
				passesOf[file] = append(passesOf[file], p.name)
			}
		}
	}
	for file, names := range passesOf {
		if len(names) != 1 {
			t.Errorf("%s holds the passes %v", file, names)
		}
	}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		n := e.Name()
		if (strings.HasPrefix(n, "anf_") || strings.HasPrefix(n, "gk_")) && strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			if _, ok := passesOf[n]; !ok {
				t.Errorf("%s is named like a pass file but holds no pass's run function (helpers go in files without the anf_/gk_ prefix)", n)
			}
		}
	}
}
