package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"gkconv/internal/benchmark"
	"gkconv/internal/convert"
	"gkconv/internal/ir"
	"gkconv/internal/mindir"
	"gkconv/internal/runtime"
	"gkconv/internal/safefs"
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
			if err := runBenchmark(f); err != nil {
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

func runBenchmark(f *benchFlags) (err error) {
	res := &benchmark.Result{Model: f.modelFile, Threads: f.numThreads, Loops: f.loopCount}
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
	if kt.Signer != "" {
		sayf("Model signature: verified, signed by %s\n", kt.Signer)
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
	if err := benchmark.CheckMemory(g, memoryLimit(limit)); err != nil {
		return fmt.Errorf("%s: %w", f.modelFile, err)
	}
	policy := runtime.KernelPolicy{
		TrustEmbedded: kt.Trusted,
		Warn:          printWarning,
	}
	if err := convert.UseRemoteTrust(trustedKeysOr(f.trust.trustedKeys)); err != nil {
		return err
	}
	if !kt.Trusted && hasGraphKernels(g) {
		policy.Rebuild, _ = convert.RebuildKernels(g, f.kernelCacheDir) // an error: the lookup reports it, the runtime interprets
	}
	sess, err := runtime.NewSession(g, runtime.Options{Threads: f.numThreads, Profile: f.timeProfiling, KernelPolicy: policy})
	if err != nil {
		return fmt.Errorf("%s: %w", f.modelFile, err)
	}
	if err := benchmark.CheckPlan(sess.MemoryPlan(), g, memoryLimit(limit)); err != nil {
		return fmt.Errorf("%s: %w", f.modelFile, err)
	}
	printKernelSummary(sess.Kernels(), kt)
	res.ISA = isaPath(g, kt.Trusted)
	sayf("ISA path: %s\n", res.ISA)
	inputs, err := loadInputs(g, f.inDataFile, f.seed)
	if err != nil {
		return err
	}
	// The accuracy run is the first warm-up run; its outputs stay ours.
	outs, err := sess.Run(inputs)
	if err != nil {
		return fmt.Errorf("%s: %w", f.modelFile, err)
	}
	timing, err := benchmark.Time(sess, inputs, max(f.warmUpLoopCount-1, 0), f.loopCount)
	if err != nil {
		return err
	}
	res.MinMs, res.MedianMs, res.P90Ms = timing.MinMs, timing.MedianMs, timing.P90Ms
	res.ArenaBytes = sess.ArenaBytes()
	sayf("Model = %s, NumThreads = %d, MinRunTime = %.4f ms, MedianRunTime = %.4f ms, P90RunTime = %.4f ms, Loops = %d, ArenaBytes = %d\n",
		filepath.Base(f.modelFile), f.numThreads, res.MinMs, res.MedianMs, res.P90Ms, f.loopCount, res.ArenaBytes)

	if f.timeProfiling {
		res.Profile = benchmark.Profile(sess.Profile())
		sayf("%-48s %-16s %10s %10s %7s\n", "node", "op", "ms/run", "median ms", "share")
		for _, row := range res.Profile {
			sayf("%-48s %-16s %10.4f %10.4f %6.1f%%\n", trunc(row.Node, 48), row.Op, row.Ms, row.MedianMs, 100*row.Share)
		}
	}

	if f.outputDataDir != "" {
		if err := benchmark.WriteOutputs("--outputDataDir", f.outputDataDir, g, outs); err != nil {
			return err
		}
		fmt.Printf("Outputs written: %d file(s) in %s\n", len(outs), f.outputDataDir)
	}
	if f.benchmarkDataFile == "" {
		sayf("No --benchmarkDataFile: accuracy not checked.\n")
		return nil
	}
	refs, err := benchmark.LoadReferences(g, "--benchmarkDataFile", benchmark.SplitList(f.benchmarkDataFile))
	if err != nil {
		return err
	}
	tol := benchmark.Tolerance{Atol: f.atol, Rtol: f.rtol, MeanBiasPct: f.accuracyThreshold}
	checks, err := benchmark.Compare(g, outs, refs, tol)
	for _, c := range checks {
		if !c.Checked {
			sayf("Output %s: no reference given, not checked\n", c.Name)
			continue
		}
		acc := c.Accuracy
		res.Accuracy = append(res.Accuracy, acc)
		sayf("Output %s: max abs error %.3g, max rel error %.3g, mean bias %.4f%%, cosine %.6f, mismatches %d/%d\n",
			acc.Name, acc.MaxAbsErr, acc.MaxRelErr, acc.MeanBiasPct, acc.Cosine, acc.Mismatches, acc.Elements)
	}
	if err != nil {
		return err
	}
	return benchmark.Verdict(checks, tol)
}

func trunc(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n+3:]
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

// loadInputs reads --inDataFile (benchmark's and bisect's) or, when it is
// empty, makes inputs seeded with --seed.
func loadInputs(g *ir.Graph, inDataFile string, seed uint64) ([]*ir.Tensor, error) {
	if inDataFile == "" {
		in, err := benchmark.RandomInputs(g, seed)
		if err != nil {
			return nil, fmt.Errorf("%w: give --inputShapes or --inDataFile", err)
		}
		return in, nil
	}
	return benchmark.LoadInputs(g, "--inDataFile", benchmark.SplitList(inDataFile))
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
