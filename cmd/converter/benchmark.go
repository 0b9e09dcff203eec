package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"gkconv/internal/safefs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"gkconv/internal/convert"
	"gkconv/internal/ir"
	"gkconv/internal/mindir"
	"gkconv/internal/onnx"
	"gkconv/internal/runtime"
)

type benchFlags struct {
	modelFile, inDataFile, benchmarkDataFile, inputShapes, resultFile string
	accuracyThreshold, atol, rtol                                     float64
	loopCount, warmUpLoopCount, numThreads                            int
	timeProfiling                                                     bool
	maxMemory                                                         string
	seed                                                              uint64
	kernelCacheDir                                                    string
	outputDataDir                                                     string
	trust                                                             trustFlags
}

func newBenchmarkCmd() *cobra.Command {
	f := &benchFlags{}
	cmd := &cobra.Command{
		Use:   "benchmark --modelFile=model.mindir [--inDataFile=a.pb,b.pb] [--benchmarkDataFile=o.pb]",
		Short: "Run an offline model on the CPU, compare with reference outputs and time it",
		Long: `benchmark executes a .mindir written by converter, compares every output with
the reference files (|got-ref| <= atol + rtol*|ref| element-wise, plus MindSpore Lite's mean bias and
cosine similarity) and times --loopCount runs after --warmUpLoopCount warm-up runs.

Input and reference files are ONNX TensorProto .pb files (test_data_set_0/input_0.pb ...) or raw .bin
files (shapes from the model). Without --inDataFile, inputs are seeded random data.

Fused kernels: the native code embedded in a model is not loaded unless trusted. By default each
fused CPU kernel is rebuilt from its fused body (data, not code) with this converter's code
generator and the local C compiler, through the kernel cache (a cache hit after the first load,
the same code as conversion builds on this host); without a C compiler the bodies run with the op
library (slower; one warning). Embedded binaries are loaded with --trustEmbeddedKernels
(or ` + TrustEnv + `=1), or when <model>.sig verifies against --trustedKeys
(an allowed_signers file; ` + TrustedKeysEnv + `). A .sig that does not verify is an error.
The last line is "Run Benchmark <model> Success." or "Run Benchmark <model> Failed. <reason>".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.resultFile == "-" {
				stdout = stderr // stdout is the JSON result alone
			}
			name := filepath.Base(f.modelFile)
			if f.modelFile == "" {
				name = "(no --modelFile)" // filepath.Base("") is "."
			}
			if err := benchmark(cmd, f); err != nil {
				printError(err)
				resultf("Run Benchmark %s Failed. %s", name, oneLine(err))
				return err
			}
			resultf("Run Benchmark %s Success.", name)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.modelFile, "modelFile", "", "offline model (.mindir) to run")
	fl.StringVar(&f.inDataFile, "inDataFile", "", "comma-separated input files (.pb TensorProto or raw .bin)")
	fl.StringVar(&f.benchmarkDataFile, "benchmarkDataFile", "", "comma-separated reference output files (.pb or .bin), one per output; or fewer .pb files, each a TensorProto named after the output it checks (the others are not checked)")
	fl.Float64Var(&f.accuracyThreshold, "accuracyThreshold", 0.5, "max mean bias in percent (MindSpore Lite's check)")
	fl.Float64Var(&f.atol, "atol", 1e-4, "absolute tolerance of the element-wise check")
	fl.Float64Var(&f.rtol, "rtol", 1e-3, "relative tolerance of the element-wise check")
	fl.IntVar(&f.loopCount, "loopCount", 10, "timed runs")
	fl.StringVar(&f.maxMemory, "maxMemory", "", "refuse runs whose inputs or any tensor need more than this (8G, 512M, bytes; default: the memory available)")
	fl.IntVar(&f.warmUpLoopCount, "warmUpLoopCount", 3, "untimed warm-up runs")
	fl.IntVar(&f.numThreads, "numThreads", 2, "worker threads")
	fl.BoolVar(&f.timeProfiling, "timeProfiling", false, "print per-node times, slowest first")
	fl.StringVar(&f.inputShapes, "inputShapes", "", `input shapes for dynamic models: "name:1,3,224,224;..." or "1,3,224,224:1,128"`)
	fl.StringVar(&f.resultFile, "resultFile", "", "write accuracy and timings as JSON to this path")
	fl.Uint64Var(&f.seed, "seed", 1, "seed of the random inputs used when --inDataFile is not given")
	fl.StringVar(&f.kernelCacheDir, "kernelCacheDir", "", "compiled-kernel cache for rebuilt fused kernels: a folder or an http(s):// URL (default $GKCONV_KERNEL_CACHE or the user cache dir)")
	fl.StringVar(&f.outputDataDir, "outputDataDir", "", "write every output of the accuracy run to DIR/output_<i>.pb (ONNX TensorProto carrying the output's name; readable back as --benchmarkDataFile)")
	f.trust.register(cmd)
	return cmd
}

func oneLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " ..."
	}
	return s
}

type benchResult struct {
	Model      string             `json:"model"`
	Threads    int                `json:"threads"`
	Loops      int                `json:"loops"`
	MedianMs   float64            `json:"median_ms"`
	MinMs      float64            `json:"min_ms"`
	P90Ms      float64            `json:"p90_ms"`
	ArenaBytes int64              `json:"arena_bytes"`
	ISA        string             `json:"isa,omitempty"` // the code paths that ran (isaPath)
	Accuracy   []runtime.Accuracy `json:"accuracy"`
	Profile    []profileRow       `json:"profile,omitempty"`
	Pass       bool               `json:"pass"`
	Error      string             `json:"error,omitempty"`
}

type profileRow struct {
	Node     string  `json:"node"`
	Op       string  `json:"op"`
	Ms       float64 `json:"ms_per_run"`
	MedianMs float64 `json:"median_ms"`
	Share    float64 `json:"share"`
}

func benchmark(cmd *cobra.Command, f *benchFlags) (err error) {
	res := &benchResult{Model: f.modelFile, Threads: f.numThreads, Loops: f.loopCount}
	defer func() {
		if f.resultFile == "" {
			return
		}
		res.Pass = err == nil
		if err != nil {
			res.Error = err.Error()
		}
		b, _ := json.MarshalIndent(res, "", "  ")
		if werr := convert.WriteFileAtomic(f.resultFile, append(b, '\n')); werr != nil && err == nil {
			err = fmt.Errorf("writing %s: %v", f.resultFile, werr)
		}
	}()
	if f.modelFile == "" {
		return errors.New("--modelFile is required")
	}
	if f.loopCount < 1 || f.warmUpLoopCount < 0 || f.numThreads < 1 {
		return errors.New("--loopCount and --numThreads must be >= 1, --warmUpLoopCount >= 0")
	}
	mf, err := openModelFile(f.modelFile)
	if err != nil {
		return err
	}
	defer mf.Close()
	kt, err := f.trust.decide(mf, f.modelFile)
	if err != nil {
		return err
	}
	if kt.signer != "" {
		sayf("Model signature: verified, signed by %s\n", kt.signer)
	}
	m, err := mindir.OpenFile(mf)
	if err != nil {
		return err
	}
	defer m.Close()
	g := m.Graph
	if f.inputShapes != "" {
		shapes, err := parseBenchShapes(f.inputShapes, g)
		if err != nil {
			return err
		}
		if err := g.FixInputShapes(shapes); err != nil {
			return fmt.Errorf("%s: %w", f.modelFile, err)
		}
	}
	var limit int64
	if f.maxMemory != "" {
		if limit, err = parseBytes(f.maxMemory); err != nil {
			return err
		}
	}
	if err := checkMemory(g, limit); err != nil {
		return fmt.Errorf("%s: %w", f.modelFile, err)
	}
	policy := runtime.KernelPolicy{
		TrustEmbedded: kt.trusted,
		Warn:          printWarning,
	}
	if err := convert.UseRemoteTrust(trustedKeysOr(f.trust.trustedKeys)); err != nil {
		return err
	}
	if !kt.trusted && hasGraphKernels(g) {
		policy.Rebuild, _ = convert.RebuildKernels(g, f.kernelCacheDir) // an error: the lookup reports it, the runtime interprets
	}
	sess, err := runtime.NewSession(g, runtime.Options{Threads: f.numThreads, Profile: f.timeProfiling, KernelPolicy: policy})
	if err != nil {
		return fmt.Errorf("%s: %w", f.modelFile, err)
	}
	if err := checkPlan(sess.MemoryPlan(), g, limit); err != nil {
		return fmt.Errorf("%s: %w", f.modelFile, err)
	}
	printKernelSummary(sess.Kernels(), kt)
	res.ISA = isaPath(g, kt.trusted)
	sayf("ISA path: %s\n", res.ISA)
	inputs, err := loadInputs(g, f)
	if err != nil {
		return err
	}
	// Warm-up and the accuracy run.
	outs, err := sess.Run(inputs)
	if err != nil {
		return fmt.Errorf("%s: %w", f.modelFile, err)
	}
	// The loops below give each run's outputs back (Session.Recycle), so
	// the next run writes into them, as a deployment reusing its output
	// buffers does; outs (the accuracy run's) stays the caller's.
	for i := 1; i < f.warmUpLoopCount; i++ {
		o, err := sess.Run(inputs)
		if err != nil {
			return err
		}
		sess.Recycle(o)
	}
	sess.ResetProfile()
	times := make([]float64, 0, f.loopCount)
	for i := 0; i < f.loopCount; i++ {
		t0 := time.Now()
		o, err := sess.Run(inputs)
		if err != nil {
			return err
		}
		times = append(times, float64(time.Since(t0).Nanoseconds())/1e6)
		sess.Recycle(o)
	}
	sort.Float64s(times)
	res.MinMs = times[0]
	res.MedianMs = percentile(times, 0.5)
	res.P90Ms = percentile(times, 0.9)
	res.ArenaBytes = sess.ArenaBytes()
	sayf("Model = %s, NumThreads = %d, MinRunTime = %.4f ms, MedianRunTime = %.4f ms, P90RunTime = %.4f ms, Loops = %d, ArenaBytes = %d\n",
		filepath.Base(f.modelFile), f.numThreads, res.MinMs, res.MedianMs, res.P90Ms, f.loopCount, res.ArenaBytes)

	if f.timeProfiling {
		prof := sess.Profile()
		var total time.Duration
		for _, p := range prof {
			total += p.PerRun
		}
		sayf("%-48s %-16s %10s %10s %7s\n", "node", "op", "ms/run", "median ms", "share")
		for _, p := range prof {
			share := 0.0
			if total > 0 {
				share = float64(p.PerRun) / float64(total)
			}
			row := profileRow{p.Node, p.Op, float64(p.PerRun.Nanoseconds()) / 1e6, float64(p.Median.Nanoseconds()) / 1e6, share}
			res.Profile = append(res.Profile, row)
			sayf("%-48s %-16s %10.4f %10.4f %6.1f%%\n", trunc(p.Node, 48), p.Op, row.Ms, row.MedianMs, 100*share)
		}
	}

	if f.outputDataDir != "" {
		if err := writeOutputs(f.outputDataDir, g, outs); err != nil {
			return err
		}
	}
	if f.benchmarkDataFile == "" {
		sayf("No --benchmarkDataFile: accuracy not checked.\n")
		return nil
	}
	refs, err := loadRefs(g, f.benchmarkDataFile)
	if err != nil {
		return err
	}
	var failed []string
	for i, out := range outs {
		if refs[i] == nil {
			sayf("Output %s: no reference given, not checked\n", g.Outputs[i].Name)
			continue
		}
		acc, err := runtime.Compare(g.Outputs[i].Name, out, refs[i], f.atol, f.rtol, f.accuracyThreshold)
		if err != nil {
			return err
		}
		res.Accuracy = append(res.Accuracy, acc)
		sayf("Output %s: max abs error %.3g, max rel error %.3g, mean bias %.4f%%, cosine %.6f, mismatches %d/%d\n",
			acc.Name, acc.MaxAbsErr, acc.MaxRelErr, acc.MeanBiasPct, acc.Cosine, acc.Mismatches, acc.Elements)
		if !acc.Pass {
			why := acc.FirstMismatch
			if why == "" {
				why = fmt.Sprintf("mean bias %.4f%% > %g%%", acc.MeanBiasPct, f.accuracyThreshold)
			}
			failed = append(failed, fmt.Sprintf("%s (%s)", acc.Name, why))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("accuracy check failed for output(s) %s (atol %g, rtol %g)", strings.Join(failed, "; "), f.atol, f.rtol)
	}
	return nil
}

// writeOutputs writes the accuracy run's outputs as ONNX TensorProto files
// output_<i>.pb in dir (created when absent), each carrying its output's
// name so that --benchmarkDataFile matches it back by name.
func writeOutputs(dir string, g *ir.Graph, outs []*ir.Tensor) error {
	if st, err := os.Lstat(dir); err == nil && !st.IsDir() {
		return fmt.Errorf("--outputDataDir %s: exists and is not a directory", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--outputDataDir: %w", err)
	}
	for i, t := range outs {
		p := filepath.Join(dir, fmt.Sprintf("output_%d.pb", i))
		if err := onnx.WriteTensorFile(p, g.Outputs[i].Name, t); err != nil {
			return fmt.Errorf("--outputDataDir: writing %s: %w", p, err)
		}
	}
	fmt.Printf("Outputs written: %d file(s) in %s\n", len(outs), dir)
	return nil
}

func trunc(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n+3:]
}

func percentile(sorted []float64, p float64) float64 {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	if i < 0 {
		i = 0
	}
	return sorted[i]
}

// parseBenchShapes accepts converter-style "name:dims;..." or MindSpore Lite
// benchmark-style "1,3,224,224:1,128" (positional).
func parseBenchShapes(s string, g *ir.Graph) (map[string][]int64, error) {
	if strings.Contains(s, ";") || strings.ContainsAny(strings.Split(s, ":")[0], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_") {
		return parseInputShape(s)
	}
	parts := strings.Split(s, ":")
	if len(parts) != len(g.Inputs) {
		return nil, fmt.Errorf("--inputShapes gives %d shape(s), the model has %d input(s)", len(parts), len(g.Inputs))
	}
	var spec []string
	for i, p := range parts {
		spec = append(spec, g.Inputs[i].Name+":"+p)
	}
	return parseInputShape(strings.Join(spec, ";"))
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// loadInputs reads --inDataFile (matching by tensor name, else by position)
// or makes seeded random inputs.
func loadInputs(g *ir.Graph, f *benchFlags) ([]*ir.Tensor, error) {
	if f.inDataFile == "" {
		rng := rand.New(rand.NewPCG(f.seed, 0x9e3779b97f4a7c15))
		var out []*ir.Tensor
		for _, v := range g.Inputs {
			if !v.ShapeKnown() {
				return nil, fmt.Errorf("input %s has dynamic shape %v: give --inputShapes or --inDataFile", v.Name, v.Shape)
			}
			out = append(out, randomTensor(rng, v))
		}
		return out, nil
	}
	files := splitList(f.inDataFile)
	if len(files) != len(g.Inputs) {
		return nil, fmt.Errorf("--inDataFile gives %d file(s), the model has %d input(s) (%s)", len(files), len(g.Inputs), valueNames(g.Inputs))
	}
	return loadTensors(g.Inputs, files, "input")
}

// loadRefs reads the reference outputs: one file per output (matched by
// the TensorProtos' names when they all name outputs, else in order), or
// fewer .pb files, each naming the output it is the reference of; outputs
// without one are nil (not checked).
func loadRefs(g *ir.Graph, list string) ([]*ir.Tensor, error) {
	files := splitList(list)
	if len(files) > len(g.Outputs) {
		return nil, fmt.Errorf("--benchmarkDataFile gives %d file(s), the model has %d output(s) (%s)", len(files), len(g.Outputs), valueNames(g.Outputs))
	}
	if len(files) == len(g.Outputs) {
		return loadTensors(g.Outputs, files, "reference")
	}
	index := map[string]int{}
	for i, v := range g.Outputs {
		index[v.Name] = i
	}
	out := make([]*ir.Tensor, len(g.Outputs))
	for _, file := range files {
		if !strings.HasSuffix(file, ".pb") {
			return nil, fmt.Errorf("--benchmarkDataFile gives %d file(s) for %d outputs: each must be a TensorProto .pb naming its output, %s is not", len(files), len(g.Outputs), file)
		}
		t, name, err := onnx.ReadTensorFile(file)
		if err != nil {
			return nil, err
		}
		i, ok := index[name]
		switch {
		case name == "":
			return nil, fmt.Errorf("%s: the tensor has no name; with %d reference file(s) for %d outputs each must name its output (%s)", file, len(files), len(g.Outputs), valueNames(g.Outputs))
		case !ok:
			return nil, fmt.Errorf("%s: names %q, which is not an output of the model (%s)", file, name, valueNames(g.Outputs))
		case out[i] != nil:
			return nil, fmt.Errorf("%s: a second reference for output %q", file, name)
		}
		out[i] = t
	}
	return out, nil
}

func valueNames(vs []*ir.Value) string {
	var s []string
	for _, v := range vs {
		s = append(s, v.Name)
	}
	return strings.Join(s, ", ")
}

func loadTensors(vals []*ir.Value, files []string, what string) ([]*ir.Tensor, error) {
	out := make([]*ir.Tensor, len(vals))
	named := map[string]*ir.Tensor{}
	var positional []*ir.Tensor
	for i, file := range files {
		if strings.HasSuffix(file, ".bin") {
			v := vals[i]
			if !v.ShapeKnown() {
				return nil, fmt.Errorf("%s: raw .bin needs a static shape, %s has %v", file, v.Name, v.Shape)
			}
			want, err := byteCount(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %s %s: %w", file, what, v.Name, err)
			}
			// The shape declares the size: a larger file is refused before
			// anything is read, a FIFO before it is opened.
			if st, err := os.Stat(file); err == nil && st.Mode().IsRegular() && st.Size() != want {
				return nil, fmt.Errorf("%s: %d bytes, %s %s%v needs %d", file, st.Size(), what, v.DType, v.Shape, want)
			}
			data, err := safefs.ReadRegular(file, want)
			if err != nil {
				return nil, err
			}
			if int64(len(data)) != want {
				return nil, fmt.Errorf("%s: %d bytes, %s %s%v needs %d", file, len(data), what, v.DType, v.Shape, want)
			}
			positional = append(positional, &ir.Tensor{DType: v.DType, Shape: v.Shape, Data: data})
			continue
		}
		t, name, err := onnx.ReadTensorFile(file)
		if err != nil {
			return nil, err
		}
		if name != "" {
			named[name] = t
		}
		positional = append(positional, t)
	}
	byName := len(named) == len(vals)
	for i, v := range vals {
		t, ok := named[v.Name]
		if !byName || !ok {
			byName = false
			break
		}
		out[i] = t
	}
	if !byName {
		copy(out, positional)
	}
	if what == "input" {
		for i, v := range vals {
			if err := runtime.CheckInput(v, out[i]); err != nil {
				return nil, fmt.Errorf("%s: %w", files[i], err)
			}
		}
	}
	return out, nil
}

func randomTensor(rng *rand.Rand, v *ir.Value) *ir.Tensor {
	t := ir.NewTensor(v.DType, v.Shape)
	n := int(t.NumElements())
	switch {
	case v.DType.IsFloat():
		for i := 0; i < n; i++ {
			t.PutFloat(i, rng.Float64()*2-1)
		}
	case v.DType == ir.Bool:
		for i := range t.Data {
			t.Data[i] = byte(rng.IntN(2))
		}
	case v.DType == ir.Int64:
		for i := range t.I64() {
			t.I64()[i] = int64(rng.IntN(10))
		}
	case v.DType == ir.Int32:
		for i := range t.I32() {
			t.I32()[i] = int32(rng.IntN(10))
		}
	default:
		for i := range t.Data {
			t.Data[i] = 0
		}
	}
	return t
}

// openModelFile opens a model for reading, refusing what is not a regular
// file before opening it (a FIFO would block).
func openModelFile(path string) (*os.File, error) {
	f, _, err := safefs.OpenRegular(path)
	return f, err
}

func hasGraphKernels(g *ir.Graph) bool {
	for _, n := range g.Nodes {
		if n.Op == ir.OpGraphKernel {
			return true
		}
	}
	return false
}

// printKernelSummary prints one line per way fused kernels run.
func printKernelSummary(ks []runtime.KernelBinding, kt kernelTrust) {
	if len(ks) == 0 {
		return
	}
	count := map[string]int{}
	var order []string
	for _, k := range ks {
		d := describeKernel(k.Mode, k.Reason, kt)
		if count[d] == 0 {
			order = append(order, d)
		}
		count[d]++
	}
	for _, d := range order {
		sayf("Fused kernels (%d): %s\n", count[d], d)
	}
}

// byteCount is the bytes of a value's static shape, refusing overflow.
func byteCount(v *ir.Value) (int64, error) {
	if err := ir.CheckSize(v.Shape, v.DType); err != nil {
		return 0, err
	}
	return ir.NumElements(v.Shape) * int64(max(v.DType.Size(), 1)), nil
}
