// Package archtest holds the architecture test: the allowed imports between
// this project's packages, written down once (as Go's own go/build deps test
// does), and a test that fails on any other arrow.
package archtest

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "gkconv"

// allowed lists, per package (path relative to the module), the project
// packages its non-test files may import. The pipeline reads top to bottom:
// cmd -> convert -> {onnx, mindir, akgcfg, fusion, kernels/*, runtime} -> ir.
// safefs (crash-safe output files, regular-file opening, safe-folder checks,
// orphan-aware work folders) imports nothing of ours; every package that
// reads or writes a user's file uses it. trust (who is trusted: SSH
// signatures and keys, allowed_signers, the provenance secret) imports only
// safefs; cmd, convert and the kernel cache (provenance, remote objects) use
// it; runtime does not. The kernel cache (kernels/cache) knows nothing of
// kernels: the builders (kernels/cpu, kernels/cuda) and convert use it.
// fusion reads its flags from akgcfg (its input, a value type); kernels/* and
// runtime never import fusion; runtime never imports kernels; the device
// generators use only the shared kernels root; ir imports nothing of ours.
// benchmark (what `converter benchmark` does: input files, timed runs,
// reference checks) reads tensor files through onnx and runs the runtime;
// it never converts, so it does not import convert.
// mindir/check (`converter check`, the validator) reads files through
// mindir's decoder; cmd uses it, mindir never imports it (mindir's tests
// reach it through an external test file, checkhook_ext_test.go).
// textsafe (escaping model and config strings for terminals and logs)
// imports nothing of ours; cmd, convert, the readers and akgcfg use it.
var allowed = map[string][]string{
	"cmd/converter":                    {"internal/benchmark", "internal/convert", "internal/ir", "internal/mindir", "internal/mindir/check", "internal/runtime", "internal/runtime/cpuisa", "internal/runtime/native", "internal/safefs", "internal/textsafe", "internal/trust"},
	"internal/convert":                 {"internal/akgcfg", "internal/fusion", "internal/ir", "internal/kernels", "internal/kernels/ascend", "internal/kernels/cache", "internal/kernels/cpu", "internal/kernels/cuda", "internal/mindir", "internal/onnx", "internal/runtime", "internal/runtime/cpuisa", "internal/safefs", "internal/textsafe", "internal/trust"},
	"internal/onnx":                    {"internal/ir", "internal/onnx/onnxpb", "internal/safefs", "internal/textsafe"},
	"internal/benchmark":               {"internal/ir", "internal/onnx", "internal/runtime", "internal/safefs"},
	"internal/onnx/onnxpb":             {},
	"internal/mindir":                  {"internal/ir", "internal/mindir/mindirpb", "internal/safefs", "internal/textsafe"},
	"internal/mindir/check":            {"internal/mindir", "internal/mindir/mindirpb", "internal/safefs"},
	"internal/mindir/mindirpb":         {},
	"internal/mindir/schemagen":        {},
	"internal/akgcfg":                  {"internal/safefs", "internal/textsafe"},
	"internal/fusion":                  {"internal/akgcfg", "internal/ir"},
	"internal/kernels":                 {"internal/ir", "internal/safefs"},
	"internal/kernels/cpu":             {"internal/ir", "internal/kernels", "internal/kernels/cache", "internal/safefs"},
	"internal/kernels/cuda":            {"internal/ir", "internal/kernels", "internal/kernels/cache", "internal/safefs"},
	"internal/kernels/ascend":          {"internal/ir", "internal/kernels"},
	"internal/kernels/cache":           {"internal/safefs", "internal/trust"},
	"internal/runtime":                 {"internal/ir", "internal/runtime/native", "internal/runtime/opkernel", "internal/runtime/ops/elementwise", "internal/runtime/ops/nn", "internal/runtime/ops/tensorops"},
	"internal/runtime/cpuisa":          {"internal/runtime/native"},
	"internal/runtime/native":          {"internal/ir", "internal/safefs"},
	"internal/runtime/opkernel":        {"internal/ir"},
	"internal/runtime/ops/elementwise": {"internal/ir", "internal/runtime/cpuisa", "internal/runtime/opkernel"},
	"internal/runtime/ops/nn":          {"internal/ir", "internal/runtime/cpuisa", "internal/runtime/opkernel"},
	"internal/runtime/ops/tensorops":   {"internal/ir", "internal/runtime/cpuisa", "internal/runtime/opkernel"},
	"internal/ir":                      {},
	"internal/trust":                   {"internal/safefs"},
	"internal/safefs":                  {},
	"internal/textsafe":                {},
	"internal/archtest":                {},
	"scripts/testsummary":              {}, // make test's summariser: the standard library only
}

// testOnly packages exist for tests: only test files, or other test-only
// packages, may import them.
var testOnly = map[string]bool{
	"internal/randgraph":           true,
	"internal/repotest":            true,
	"internal/kerneltest":          true,
	"internal/onnx/onnxbuild":      true,
	"internal/runtime/ops/opstest": true,
	"internal/testkit":             true,
}

type pkgImports struct {
	code, tests map[string]bool // project imports of non-test and test files
}

// scan reads the import lists of every package under root.
func scan(t *testing.T, root string) map[string]*pkgImports {
	t.Helper()
	pkgs := map[string]*pkgImports{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (name == "testdata" || strings.HasPrefix(name, ".") || name == "bench") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		p := pkgs[rel]
		if p == nil {
			p = &pkgImports{code: map[string]bool{}, tests: map[string]bool{}}
			pkgs[rel] = p
		}
		for _, imp := range f.Imports {
			ip := strings.Trim(imp.Path.Value, `"`)
			dep, ok := strings.CutPrefix(ip, module+"/")
			if !ok {
				continue
			}
			if strings.HasSuffix(path, "_test.go") {
				p.tests[dep] = true
			} else {
				p.code[dep] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// violations lists every import arrow the rules forbid.
func violations(pkgs map[string]*pkgImports) []string {
	var out []string
	for _, name := range sortedKeys(pkgs) {
		p := pkgs[name]
		if len(p.code) == 0 && len(p.tests) > 0 && !testOnly[name] && allowed[name] == nil {
			// A folder of tests only (like this one) imports what it tests.
			continue
		}
		rules, listed := allowed[name]
		if !listed && !testOnly[name] {
			out = append(out, name+": package not in the architecture table (add it to allowed or testOnly)")
			continue
		}
		for _, dep := range sortedKeys(p.code) {
			switch {
			case testOnly[dep] && !testOnly[name]:
				out = append(out, name+" -> "+dep+": a test-only package imported by non-test code")
			case testOnly[name]:
				// test helpers may use anything but must not be used by code (above)
			case !slices.Contains(rules, dep):
				out = append(out, name+" -> "+dep+": not an allowed import")
			}
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func TestImports(t *testing.T) {
	root := filepath.Join("..", "..")
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
	for _, v := range violations(scan(t, root)) {
		t.Error(v)
	}
}

// TestImportsCatchForbiddenArrow shows the test fails when a forbidden
// import is added: the real import lists plus runtime -> fusion, a test-only
// package in code, and an unlisted package.
func TestImportsCatchForbiddenArrow(t *testing.T) {
	pkgs := scan(t, filepath.Join("..", ".."))
	pkgs["internal/runtime"].code["internal/fusion"] = true
	pkgs["internal/ir"].code["internal/mindir"] = true
	pkgs["internal/fusion"].code["internal/randgraph"] = true
	pkgs["internal/newthing"] = &pkgImports{code: map[string]bool{"internal/ir": true}, tests: map[string]bool{}}
	got := strings.Join(violations(pkgs), "\n")
	for _, want := range []string{
		"internal/runtime -> internal/fusion: not an allowed import",
		"internal/ir -> internal/mindir: not an allowed import",
		"internal/fusion -> internal/randgraph: a test-only package imported by non-test code",
		"internal/newthing: package not in the architecture table",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("violation %q not reported; got:\n%s", want, got)
		}
	}
}
