// Package convert is the converter's driver, converter_lite's Converter as a
// library: Convert loads an ONNX or MindIR model, runs the graph passes
// (exact constant folding, then graph-kernel fusion as the config's
// [graph_kernel_param] asks), builds a kernel per fused subgraph, and writes
// the offline .mindir (a temp file renamed into place) with the optional dumps
// and JSON report. cmd/converter only maps its flags to Options and prints.
package convert

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gkconv/internal/akgcfg"
	"gkconv/internal/ir"
	"gkconv/internal/kernels/cache"
	"gkconv/internal/mindir"
	"gkconv/internal/onnx"
	"gkconv/internal/runtime"
	"gkconv/internal/safefs"
)

// Options are converter_lite's conversion options, already parsed. The
// string options take converter_lite's values; DefaultOptions has its
// defaults (an empty Optimize, SaveType or InputDataFormat is an error, as
// the empty flag value is).
type Options struct {
	FMK        string // ONNX or MINDIR (any case); other converter_lite frameworks are refused
	ModelFile  string
	OutputFile string // ".mindir" is appended unless present
	ConfigFile string // INI file; "" for none
	// Optimize is none, general, gpu_oriented or ascend_oriented[:chip]; it
	// selects the fusion backend and is ignored when Device is given.
	Optimize string
	Device   string // "" (from Optimize), CPU, GPU, sm_XX, Ascend...
	// InputShape fixes dynamic input dims by input name.
	InputShape map[string][]int64
	SaveType   string // MINDIR (MINDIR_LITE is refused)
	FP16       bool   // store float32 constants as float16
	// KeepFloat16 rounds every float16 op of an ONNX model to float16 as the
	// graph reads, instead of computing as onnxruntime's CPU provider does
	// (onnx.Options.KeepFloat16).
	KeepFloat16 bool
	// PrimitiveSet is "lite" (converter_lite's fusion primitives, what
	// MindSpore Lite runs; the default) or "mindspore" (MindSpore's own
	// primitives where an op has one, so MindSpore itself runs the file:
	// mindir.WriteOptions.MindSporePrimitives).
	PrimitiveSet    string
	InputDataFormat string // NCHW (NHWC is refused: not implemented)
	WeightFile      string // Caffe only: an error for ONNX and MINDIR
	ReportFile      string // JSON report path; "" for none
	KernelCacheDir  string // "" for $GKCONV_KERNEL_CACHE, else the user cache dir
	// NoKernelSelfCheck turns off the kernel self-check (every compiled CPU
	// kernel run once against its body; one that disagrees is un-fused).
	NoKernelSelfCheck bool
	// Progress, when set, receives the conversion's steps (load, each
	// fusion pass, kernels compiled, bytes written) for a display.
	Progress func(Progress)
	// DumpDir receives, when fusion runs, before/after.dot (+ SVG with
	// Graphviz), each kernel's .info and sources, and the IR after each pass
	// when the config's dump_as_text or MS_DEV_DUMP_GRAPH_KERNEL_IR=on asks
	// for it. "" means DefaultDumpDir when either asks, else no dumps (see
	// planDumps for the exact rule).
	DumpDir string
	// SignKeyFile is an unencrypted Ed25519 private key in OpenSSH format;
	// when set, the output is signed: <output>.sig is the detached SSH
	// signature (namespace trust.Namespace) of the whole .mindir file, which
	// `ssh-keygen -Y verify -f allowed_signers -I <principal> -n gkconv-model
	// -s model.mindir.sig < model.mindir` verifies. Without it a stale
	// <output>.sig is removed.
	SignKeyFile string
	// TrustedKeysFile is an allowed_signers file (ssh-keygen format): with
	// a remote kernel cache, only objects signed by one of its keys are
	// used (cache.RemoteTrust); "" uses none. Uploads are signed with
	// SignKeyFile's key.
	TrustedKeysFile string

	// Invalid lists options the caller could not parse from their text
	// form (a command line's --fp16=maybe). Convert reports them with its
	// own option checks, in converter_lite's option order, as one
	// CodeParamInvalid failure before any work (and in the report).
	Invalid []OptionError
}

// OptionError is an option whose text could not be parsed.
type OptionError struct {
	Option string // converter_lite name: "fp16", "inputShape", ...
	Err    error  // the message, naming the option
}

// DefaultOptions has converter_lite's defaults: Optimize general, SaveType
// MINDIR, InputDataFormat NCHW, FP16 off.
func DefaultOptions() Options {
	return Options{Optimize: "general", SaveType: "MINDIR", InputDataFormat: "NCHW"}
}

// DefaultDumpDir is where dumps go when the config or MS_DEV_DUMP_GRAPH_KERNEL_IR
// asks for them and Options.DumpDir is empty.
const DefaultDumpDir = "graph_kernel_dump"

// Environment variables Convert reads.
const (
	// FlagsEnv holds MS_DEV_GRAPH_KERNEL_FLAGS, per key over the config file.
	FlagsEnv = "MS_DEV_GRAPH_KERNEL_FLAGS"
	// DumpEnv=on turns the dumps on (see Options.DumpDir).
	DumpEnv = "MS_DEV_DUMP_GRAPH_KERNEL_IR"
)

// Convert converts opts.ModelFile into opts.OutputFile (.mindir). It returns
// the report (on failure too: what was known by then, e.g. every
// unsupported op) and, on failure, an *Error with MindSpore Lite's status
// code (see Code); no output file is left behind then. The report is
// written to opts.ReportFile either way. Besides FlagsEnv and DumpEnv it
// reads CC (the C compiler of CPU kernels) and GKCONV_CLANG (clang for PTX).
func Convert(ctx context.Context, opts Options) (rep *Report, err error) {
	start := time.Now()
	rep = newReport()
	// wrote: the regular files this run created or replaced (the model,
	// its signature); a report that cannot be written fails the run, and a
	// failed run leaves no file.
	var wrote []string
	defer func() {
		if err != nil {
			rep.Error = err.Error()
		}
		rep.Seconds = time.Since(start).Seconds()
		if opts.ReportFile == "" {
			return
		}
		if werr := rep.write(opts.ReportFile); werr != nil && err == nil {
			err = Errorf(CodeError, "writing report %s: %v", opts.ReportFile, werr)
			for _, p := range wrote {
				os.Remove(p)
			}
		}
	}()

	// Options first: every problem is reported before any work.
	o, err := opts.check()
	if err != nil {
		return rep, err
	}
	cache.SetRemoteTrust(cache.RemoteTrust{AllowedSigners: o.trustedKeys, SignKey: o.signKey})
	rep.Output = o.output

	// Config.
	cfg, warns, cerr := akgcfg.Load(opts.ConfigFile, os.Getenv(FlagsEnv))
	for _, w := range warns {
		rep.warn(w.String())
	}
	if cerr != nil {
		return rep, Errorf(CodeParamInvalid, "%v", cerr)
	}
	backend := cfg.Backend(o.device)
	if o.chip != "" && o.device == akgcfg.Ascend {
		backend.Soc = o.chip
	}
	if o.device == akgcfg.Ascend && (backend.Soc == "" || strings.EqualFold(backend.Soc, "ascend")) {
		// One chip decides both the partition (910B rules) and the kernel info.
		backend.Soc = "Ascend910B"
	}
	if o.device == akgcfg.Ascend {
		if w := akgcfg.CheckSoc(backend.Soc); w != "" {
			rep.warn(w)
		}
	}
	for _, w := range cfg.Flags.Resolve(backend) {
		rep.warn(w.String())
	}
	rep.Flags = map[string]string{"backend": backend.String(), "tokens": cfg.Flags.Tokens()}
	if err := ctx.Err(); err != nil {
		return rep, &Error{Code: CodeError, Err: err}
	}

	// Frontend.
	prog := &progress{fn: opts.Progress}
	prog.stage("load")
	g, closeModel, lerr := Load(o.fmk, opts.ModelFile, LoadOptions{InputShape: opts.InputShape, KeepFloat16: opts.KeepFloat16})
	if lerr != nil {
		var ue *onnx.UnsupportedError
		if errors.As(lerr, &ue) {
			for _, it := range ue.Items {
				rep.Unsupported = append(rep.Unsupported, UnsupportedOp{Node: it.Node, Op: it.Op, Reason: it.Reason})
			}
			return rep, &Error{Code: CodeNotFindOp, Err: lerr}
		}
		var me *mindir.UnsupportedError
		if errors.As(lerr, &me) {
			for _, it := range me.Items {
				rep.Unsupported = append(rep.Unsupported, UnsupportedOp{Node: it.Node, Op: it.Op, Reason: it.Reason})
			}
			return rep, &Error{Code: CodeNotFindOp, Err: lerr}
		}
		return rep, &Error{Code: CodeError, Err: lerr}
	}
	defer closeModel()
	rep.setModel(opts.ModelFile, o.fmk, g)
	rep.Graph.NodesBefore = len(g.Nodes)

	// Passes: exact constant folding at every --optimize level, then fusion.
	folded, ferr := fold(g, rep)
	if ferr != nil {
		return rep, Errorf(CodeError, "%s: %v", opts.ModelFile, ferr)
	}
	slog.Info("constant folding", "nodes_folded", folded)
	if err := ctx.Err(); err != nil {
		return rep, &Error{Code: CodeError, Err: err}
	}
	gpuArch := "sm_80"
	if o.device == akgcfg.GPU && strings.HasPrefix(strings.ToLower(o.chip), "sm_") {
		gpuArch = strings.ToLower(o.chip)
	}
	fo := fuseOptions{
		disabled:       strings.HasPrefix(opts.Optimize, "none") && opts.Device == "",
		kernelCacheDir: opts.KernelCacheDir,
		noSelfCheck:    opts.NoKernelSelfCheck,
		dumpDir:        opts.DumpDir,
		gpuArch:        gpuArch,
		progress:       prog,
	}
	if err := anfFuse(g, cfg, backend, fo, rep); err != nil {
		return rep, err
	}
	// Post-training quantization: after converter_lite's fusion passes (a
	// folded Conv+BatchNorm is quantized once), before graph-kernel fusion.
	if err := quantize(ctx, g, cfg, opts.ModelFile, rep); err != nil {
		return rep, err
	}
	if err := fuse(g, cfg, backend, fo, rep); err != nil {
		return rep, err
	}
	rep.Graph.NodesAfter = len(g.Nodes)
	if err := g.Validate(); err != nil {
		return rep, Errorf(CodeError, "internal error, invalid graph after optimisation: %v", err)
	}
	if err := ctx.Err(); err != nil {
		return rep, &Error{Code: CodeError, Err: err}
	}

	// Write.
	if dir := filepath.Dir(o.output); dir != "" {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return rep, Errorf(CodeParamInvalid, "--outputFile=%s: folder %s does not exist", opts.OutputFile, dir)
		}
	}
	// A signature of an earlier output must never stand next to this one.
	// (Looked for first: on a read-only filesystem unlink fails even for a
	// file that is not there, and the error would name a phantom.)
	if _, err := os.Lstat(o.output + SignatureSuffix); err == nil {
		if err := os.Remove(o.output + SignatureSuffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return rep, Errorf(CodeError, "removing the stale signature %s: %v", o.output+SignatureSuffix, err)
		}
	}
	prog.written(0)
	target, stream, err := safefs.OutputTarget(o.output)
	if err != nil {
		return rep, Errorf(CodeParamInvalid, "--outputFile: %v", err)
	}
	if err := mindir.WriteFile(o.output, g, mindir.WriteOptions{FP16: opts.FP16, OnWrite: prog.written, MindSporePrimitives: opts.PrimitiveSet == "mindspore"}); err != nil {
		return rep, Errorf(CodeError, "writing %s: %v", o.output, err)
	}
	if !stream {
		wrote = append(wrote, target)
	}
	if o.signKey != nil {
		if err := signFile(o.output, o.signKey); err != nil {
			for _, p := range wrote {
				os.Remove(p) // a failed run leaves no file
			}
			return rep, Errorf(CodeError, "signing %s: %v", o.output, err)
		}
		rep.Signature = o.output + SignatureSuffix
		wrote = append(wrote, rep.Signature)
	}
	slog.Info("converted", "output", o.output, "seconds", time.Since(start).Seconds())
	return rep, nil
}

// fold is the graph cleanup shared by every --optimize level: exact constant
// folding (which types every node on the way: shape inference with the
// folded values known), then dead-node removal.
func fold(g *ir.Graph, rep *Report) (int, error) {
	folded, notes, err := runtime.FoldConstants(g)
	for _, n := range notes {
		rep.warn(n)
	}
	if err != nil {
		return folded, err
	}
	g.RemoveDead()
	return folded, nil
}

// checked is what check derives from valid Options.
type checked struct {
	fmk    string // upper case
	output string // with .mindir
	device akgcfg.Device
	chip   string
	// trustedKeys is TrustedKeysFile's content, nil without one.
	trustedKeys []byte
	// signKey is the OpenSSH private key of SignKeyFile (parsed), nil
	// when the output is not signed.
	signKey []byte
}

// check validates every option at once, in converter_lite's option order,
// merging in the caller's parse problems (Options.Invalid).
func (opts *Options) check() (checked, error) {
	var c checked
	var problems []string
	// invalid adds the caller's problems with option name and says whether
	// there were any (then the option's own check is skipped).
	seen := map[string]bool{}
	invalid := func(name string) bool {
		seen[name] = true
		found := false
		for _, e := range opts.Invalid {
			if e.Option == name {
				problems = append(problems, e.Err.Error())
				found = true
			}
		}
		return found
	}
	if !invalid("fmk") {
		c.fmk = strings.ToUpper(opts.FMK)
		switch c.fmk {
		case "ONNX", "MINDIR":
		case "":
			problems = append(problems, "--fmk is required (ONNX or MINDIR)")
		case "TF", "TFLITE", "CAFFE", "PYTORCH", "OM", "MSLITE":
			problems = append(problems, fmt.Sprintf("--fmk=%s is not supported; supported: ONNX, MINDIR", opts.FMK))
		default:
			problems = append(problems, fmt.Sprintf("--fmk=%s is unknown; supported: ONNX, MINDIR", opts.FMK))
		}
	}
	if !invalid("modelFile") && opts.ModelFile == "" {
		problems = append(problems, "--modelFile is required")
	}
	if !invalid("outputFile") && opts.OutputFile == "" {
		problems = append(problems, "--outputFile is required")
	}
	if !invalid("saveType") {
		switch strings.ToUpper(opts.SaveType) {
		case "MINDIR":
		case "MINDIR_LITE":
			problems = append(problems, "--saveType=MINDIR_LITE is not supported yet; use MINDIR")
		default:
			problems = append(problems, fmt.Sprintf("--saveType=%s: want MINDIR", opts.SaveType))
		}
	}
	invalid("fp16")
	switch opts.PrimitiveSet {
	case "", "lite", "mindspore":
	default:
		problems = append(problems, fmt.Sprintf("--primitiveSet=%s: want lite or mindspore", opts.PrimitiveSet))
	}
	if !invalid("inputDataFormat") {
		switch strings.ToUpper(opts.InputDataFormat) {
		case "NCHW", "NHWC":
		default:
			problems = append(problems, fmt.Sprintf("--inputDataFormat=%s: want NCHW or NHWC", opts.InputDataFormat))
		}
	}
	if !invalid("weightFile") && opts.WeightFile != "" {
		problems = append(problems, "--weightFile is only for Caffe models; ONNX and MINDIR keep weights in the model file")
	}
	badOptimize, badDevice := invalid("optimize"), invalid("device")
	if !badOptimize && !badDevice {
		var err error
		if c.device, c.chip, err = backendOf(opts.Optimize, opts.Device); err != nil {
			problems = append(problems, err.Error())
		}
	}
	invalid("inputShape")
	for _, e := range opts.Invalid {
		if !seen[e.Option] {
			problems = append(problems, e.Err.Error())
		}
	}
	if len(problems) > 0 {
		return c, Errorf(CodeParamInvalid, "%s", strings.Join(problems, "; "))
	}
	if strings.ToUpper(opts.InputDataFormat) == "NHWC" {
		return c, Errorf(CodeNotSupport, "--inputDataFormat=NHWC is not supported yet: models keep their NCHW inputs")
	}
	c.output = opts.OutputFile
	// converter_lite appends .mindir; a FIFO or device named as the output
	// (a pipe, /dev/stdout) is written as it is.
	if _, stream, err := safefs.OutputTarget(c.output); !strings.HasSuffix(c.output, ".mindir") && (err != nil || !stream) {
		c.output += ".mindir"
	}
	// Output paths first, so a run that cannot write them fails before any
	// work (and never leaves a model without its report).
	if _, _, err := safefs.OutputTarget(c.output); err != nil {
		return c, Errorf(CodeParamInvalid, "--outputFile: %v", err)
	}
	if opts.ReportFile != "" {
		if _, _, err := safefs.OutputTarget(opts.ReportFile); err != nil {
			return c, Errorf(CodeParamInvalid, "--reportFile: %v", err)
		}
	}
	if opts.SignKeyFile != "" {
		key, err := readSignKey(opts.SignKeyFile)
		if err != nil {
			return c, Errorf(CodeParamInvalid, "--signKey=%s: %v", opts.SignKeyFile, err)
		}
		c.signKey = key
	}
	if opts.TrustedKeysFile != "" {
		b, err := readTrustedKeys(opts.TrustedKeysFile)
		if err != nil {
			return c, Errorf(CodeParamInvalid, "--trustedKeys=%s: %v", opts.TrustedKeysFile, err)
		}
		c.trustedKeys = b
	}
	return c, nil
}

// backendOf maps Optimize/Device to the fusion backend and chip.
func backendOf(optimize, device string) (akgcfg.Device, string, error) {
	opt, chip, _ := strings.Cut(optimize, ":")
	switch opt {
	case "none", "general":
	case "gpu_oriented", "ascend_oriented":
	default:
		return 0, "", fmt.Errorf("--optimize=%s: want none, general, gpu_oriented or ascend_oriented[:chip]", optimize)
	}
	if device != "" {
		// converter_lite: --optimize is ignored when --device is given.
		d, err := akgcfg.ParseDevice(device)
		if err != nil {
			return 0, "", fmt.Errorf("--device=%s: %v", device, err)
		}
		if d == akgcfg.CPU {
			return d, "", nil
		}
		return d, device, nil
	}
	switch opt {
	case "gpu_oriented":
		return akgcfg.GPU, chip, nil
	case "ascend_oriented":
		return akgcfg.Ascend, chip, nil
	}
	return akgcfg.CPU, "", nil
}
