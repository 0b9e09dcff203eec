package convert

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/mindir"
	"gkconv/internal/mindir/check"
	"gkconv/internal/onnx"
	"gkconv/internal/runtime"
	"gkconv/internal/runtime/opkernel"
)

// ortPassFloor is how many of the backend tests onnxruntime 1.30 passes
// (strings and ai.onnx.ml excepted) must pass here at opt_level 0 and 2:
// raised as ops are added, so an op that silently becomes unsupported (or
// a test that newly errors as unsupported) fails the suite.
const ortPassFloor = 1427

// excludedFromORTCount: the tests issue 13 leaves out of the comparison with
// onnxruntime: string tensors and ops (no string dtype in the IR or the
// MindIR writer) and the ai.onnx.ml domain.
func excludedFromORTCount(name string, ops []string) bool {
	if strings.Contains(strings.ToLower(name), "string") || strings.HasPrefix(name, "test_strnorm") {
		return true
	}
	for _, op := range ops {
		if strings.Contains(op, "::") || strings.HasPrefix(op, "String") || op == "RegexFullMatch" {
			return true
		}
	}
	return false
}

type manifestRow struct {
	ops []string
	ort string
}

func readManifest(t *testing.T, path string) map[string]manifestRow {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := map[string]manifestRow{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		c := strings.Split(sc.Text(), "\t")
		if len(c) < 8 || c[0] == "suite" {
			continue
		}
		rows[c[0]+"/"+c[1]] = manifestRow{ops: strings.Split(c[4], ","), ort: c[7]}
	}
	return rows
}

// roundTrip applies the conversion steps of `--optimize=none` in memory:
// the driver's constant folding (with shape inference), MindIR write,
// `converter check`'s validator on the bytes, and read back.
func roundTrip(g *ir.Graph) (*ir.Graph, error) {
	if _, err := fold(g, &Report{}); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := mindir.Write(&buf, g, mindir.WriteOptions{}); err != nil {
		return nil, err
	}
	// Every file the suite writes must pass MindSpore's loader rules.
	rep, err := check.Bytes(buf.Bytes(), g.Name)
	if err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	if !rep.OK() {
		return nil, fmt.Errorf("check: %d violation(s), first: %s", len(rep.Violations), rep.Violations[0])
	}
	return mindir.Parse(buf.Bytes())
}

// runONNXTest converts one test folder and checks every test_data_set
// output. At opt_level 0 it applies `--optimize=none`'s steps in memory
// (frontend, folding, MindIR write, check, read back); at opt_level 2 it
// runs the whole driver (converter_lite's fusion passes, graph-kernel
// fusion, compiled kernels with their self-check) into tmp and runs the
// written file.
func runONNXTest(dir string, optLevel int, tmp, config string) error {
	var g *ir.Graph
	if optLevel == 0 {
		m, err := onnx.Open(filepath.Join(dir, "model.onnx"), onnx.Options{})
		if err != nil {
			return err
		}
		defer m.Close()
		if g, err = roundTrip(m.Graph); err != nil {
			return err
		}
	} else {
		o := DefaultOptions()
		o.FMK, o.ModelFile, o.OutputFile = "ONNX", filepath.Join(dir, "model.onnx"), filepath.Join(tmp, "model")
		o.ConfigFile, o.KernelCacheDir = config, kernelCache
		if _, err := Convert(context.Background(), o); err != nil {
			if Code(err) == CodeNotFindOp {
				return &suiteUnsupported{err}
			}
			return err
		}
		out := o.OutputFile + ".mindir"
		defer os.Remove(out)
		chk, err := check.File(out)
		if err != nil {
			return fmt.Errorf("check: %w", err)
		}
		if !chk.OK() {
			return fmt.Errorf("check: %d violation(s), first: %s", len(chk.Violations), chk.Violations[0])
		}
		m, err := mindir.Open(out)
		if err != nil {
			return err
		}
		defer m.Close()
		g = m.Graph
	}
	sets, _ := filepath.Glob(filepath.Join(dir, "test_data_set_*"))
	if len(sets) == 0 {
		return fmt.Errorf("no test_data_set")
	}
	sess, err := runtime.NewSession(g, runtime.Options{Threads: 1, KernelPolicy: selfBuilt})
	if err != nil {
		return err
	}
	plan := sess.MemoryPlan()
	for _, set := range sets {
		ins, err := readPBs(set, "input", len(g.Inputs))
		if err != nil {
			return err
		}
		want, err := readPBs(set, "output", len(g.Outputs))
		if err != nil {
			return err
		}
		// Twice: the second run writes into the first run's outputs, given
		// back after being filled with garbage (Session.Recycle does not
		// clear them), and into pool buffers holding the first run's values,
		// so an op that leaves an element unwritten fails here.
		for run := 0; run < 2; run++ {
			got, err := sess.Run(ins)
			if err != nil {
				return err
			}
			// The plan benchmark checks against --maxMemory is what the run used.
			if plan.Unknown == 0 && plan.PoolPeak < sess.ArenaBytes() {
				return fmt.Errorf("memory plan: pool peak %d bytes, the run used %d", plan.PoolPeak, sess.ArenaBytes())
			}
			for i := range got {
				atol, rtol := 1e-4, 1e-3
				if got[i].DType == ir.Float16 || got[i].DType == ir.BFloat16 {
					atol, rtol = 1e-2, 1e-2
				}
				acc, err := runtime.Compare(g.Outputs[i].Name, got[i], want[i], atol, rtol, 0)
				if err != nil {
					return err
				}
				if !acc.Pass {
					return fmt.Errorf("%s (run %d): output %s: %s (%d mismatches)", filepath.Base(set), run+1, acc.Name, acc.FirstMismatch, acc.Mismatches)
				}
			}
			data := make([][]byte, len(got))
			for i, t := range got {
				if t != nil && t.DType != ir.String {
					data[i] = t.Data
				}
			}
			sess.Recycle(got)
			for i, t := range got {
				if t != nil && t.Data == nil { // taken back (not a constant or an input)
					for k := range data[i] {
						data[i][k] = 0x7f // float32 3.4e38, float16 NaN
					}
				}
			}
		}
	}
	return nil
}

// suiteUnsupported marks a driver failure with CodeNotFindOp (unsupported
// ops) as the suite's "unsupported" outcome.
type suiteUnsupported struct{ err error }

func (e *suiteUnsupported) Error() string { return e.err.Error() }
func (e *suiteUnsupported) Unwrap() error { return e.err }

func readPBs(set, kind string, n int) ([]*ir.Tensor, error) {
	out := make([]*ir.Tensor, n)
	for i := 0; i < n; i++ {
		t, _, err := onnx.ReadTensorFile(filepath.Join(set, fmt.Sprintf("%s_%d.pb", kind, i)))
		if err != nil {
			return nil, err
		}
		out[i] = t
	}
	return out, nil
}

func isUnsupported(err error) bool {
	var ue *onnx.UnsupportedError
	var ke *opkernel.Unsupported
	var re *runtime.UnsupportedOpsError
	var se *suiteUnsupported
	return errors.As(err, &ue) || errors.As(err, &ke) || errors.As(err, &re) || errors.As(err, &se)
}

// pendingModelTests are the tests of the model suites (simple,
// pytorch-converted, pytorch-operator) onnxruntime passes that are still
// unsupported here, with the reason; the suite fails when one of them
// fails otherwise or passes (then it must leave this list).
var pendingModelTests = map[string]string{}

// backendSuites are the ONNX backend test folders the suite runs: the node
// tests and the three suites of small models.
var backendSuites = []string{"node", "simple", "pytorch-converted", "pytorch-operator"}

// TestBackendSuite converts and runs every ONNX backend test (node, simple,
// pytorch-converted, pytorch-operator) at
// opt_level 0 (`--optimize=none`) and, unless -short or
// GKCONV_SUITE_LEVELS=0, at opt_level 2 through the whole driver. Every test
// onnxruntime 1.30 passes must pass or be unsupported here (never fail), and
// at least ortPassFloor of them must pass at each level. GKCONV_SUITE_RUN=re
// runs only the tests whose name matches re.
func TestBackendSuite(t *testing.T) {
	root := filepath.Join(sharedDir(t), "corpus", "onnx-backend")
	rows := readManifest(t, filepath.Join(root, "manifest.tsv"))
	var dirs []string
	for _, suite := range backendSuites {
		d, _ := filepath.Glob(filepath.Join(root, suite, "test_*"))
		sort.Strings(d)
		dirs = append(dirs, d...)
	}
	if re := os.Getenv("GKCONV_SUITE_RUN"); re != "" {
		rx, err := regexp.Compile(re)
		if err != nil {
			t.Fatalf("GKCONV_SUITE_RUN: %v", err)
		}
		dirs = slices.DeleteFunc(dirs, func(d string) bool { return !rx.MatchString(filepath.Base(d)) })
	}
	levels := []int{0, 2}
	if testing.Short() {
		levels = []int{0}
	}
	if v := os.Getenv("GKCONV_SUITE_LEVELS"); v != "" {
		levels = nil
		for _, f := range strings.Split(v, ",") {
			l, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || (l != 0 && l != 2) {
				t.Fatalf("GKCONV_SUITE_LEVELS=%q: want 0, 2 or 0,2", v)
			}
			levels = append(levels, l)
		}
	}
	config := writeConfig(t, "[graph_kernel_param]\nopt_level=2\n")
	for _, level := range levels {
		results := make([]error, len(dirs))
		// Conversions at opt_level 2 wait on the C compiler: run them on
		// GOMAXPROCS workers (each test has its own output folder).
		workers := 1
		if level > 0 {
			workers = goruntime.GOMAXPROCS(0)
		}
		var wg sync.WaitGroup
		next := make(chan int)
		for w := 0; w < workers; w++ {
			tmp := t.TempDir()
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range next {
					results[i] = func() (err error) {
						defer func() {
							if r := recover(); r != nil {
								err = fmt.Errorf("panic: %v", r)
							}
						}()
						return runONNXTest(dirs[i], level, tmp, config)
					}()
				}
			}()
		}
		for i := range dirs {
			next <- i
		}
		close(next)
		wg.Wait()
		for _, suite := range backendSuites {
			var sd []string
			var sr []error
			for i, d := range dirs {
				if filepath.Base(filepath.Dir(d)) == suite {
					sd, sr = append(sd, d), append(sr, results[i])
				}
			}
			summarizeSuite(t, suite, level, sd, rows, sr)
		}
	}
}

// summarizeSuite prints the suite line for one opt_level and fails the test
// for every test onnxruntime passes that fails here, and when fewer than
// ortPassFloor of those pass.
//
// The simple, pytorch-converted and pytorch-operator suites are models, not
// op tests: every one onnxruntime passes must pass here, unsupported or not.
func summarizeSuite(t *testing.T, suite string, level int, dirs []string, rows map[string]manifestRow, results []error) {
	if len(dirs) == 0 {
		return
	}
	var passed, failed, unsupported, ortPassed, ortBoth int
	var failures []string
	unsupportedOps, allUnsupportedOps := map[string]int{}, map[string]int{}
	for i, dir := range dirs {
		name := filepath.Base(dir)
		row := rows[suite+"/"+name]
		err := results[i]
		counted := row.ort == "pass" && !excludedFromORTCount(name, row.ops)
		if counted {
			ortPassed++
		}
		switch {
		case err == nil:
			passed++
			if counted {
				ortBoth++
			}
			if _, ok := pendingModelTests[suite+"/"+name]; ok {
				failures = append(failures, fmt.Sprintf("%s: passes now: remove it from pendingModelTests", name))
			}
		case isUnsupported(err):
			unsupported++
			for _, op := range row.ops {
				allUnsupportedOps[op]++
			}
			if _, pending := pendingModelTests[suite+"/"+name]; suite != "node" && counted && !pending {
				failures = append(failures, fmt.Sprintf("%s: %v", name, oneLine(err)))
			}
			if counted {
				for _, op := range row.ops {
					unsupportedOps[op]++
				}
			}
		default:
			failed++
			if row.ort == "pass" {
				failures = append(failures, fmt.Sprintf("%s: %v", name, oneLine(err)))
			} else {
				t.Logf("%s, opt_level %d: %s fails here and in onnxruntime (%s): %v", suite, level, name, row.ort, oneLine(err))
			}
		}
	}
	var ops []string
	for op, n := range unsupportedOps {
		ops = append(ops, fmt.Sprintf("%s(%d)", op, n))
	}
	sort.Strings(ops)
	t.Logf("%s, opt_level %d: ops of the unsupported tests onnxruntime passes (tests): %s", suite, level, strings.Join(ops, " "))
	ops = ops[:0]
	for op, n := range allUnsupportedOps {
		ops = append(ops, fmt.Sprintf("%s(%d)", op, n))
	}
	sort.Strings(ops)
	t.Logf("%s, opt_level %d: ops of all unsupported tests (tests): %s", suite, level, strings.Join(ops, " "))
	pct := 0.0
	if ortPassed > 0 {
		pct = 100 * float64(ortBoth) / float64(ortPassed)
	}
	fmt.Printf("onnx-backend %s suite, opt_level %d: %d passed, %d failed, %d unsupported of %d; "+
		"onnxruntime 1.30 passes %d (strings and ai.onnx.ml excepted), this converter %d of them (%.1f%%)\n",
		suite, level, passed, failed, unsupported, len(dirs), ortPassed, ortBoth, pct)
	for _, f := range failures {
		t.Errorf("%s, opt_level %d: a test onnxruntime passes fails: %s", suite, level, f)
	}
	if suite == "node" && len(dirs) > 1000 && ortBoth < ortPassFloor {
		t.Errorf("opt_level %d: %d of onnxruntime's tests pass, fewer than the floor %d (an op became unsupported?)", level, ortBoth, ortPassFloor)
	}
}
