package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"gkconv/internal/akgcfg"
	"gkconv/internal/ir"
	"gkconv/internal/mindir"
	"gkconv/internal/onnx"
	"gkconv/internal/runtime"
)

type convertFlags struct {
	fmk, modelFile, outputFile, configFile, optimize string
	inputShape, saveType, fp16, device               string
	inputDataFormat, weightFile, reportFile          string
	kernelCacheDir, dumpDir                          string
}

func newConvertCmd() *cobra.Command {
	f := &convertFlags{}
	cmd := &cobra.Command{
		Use:   "converter --fmk=ONNX --modelFile=model.onnx --outputFile=model [--configFile=akg.cfg]",
		Short: "Convert an ONNX or MindIR model into an offline .mindir with fused kernels",
		Long: `converter reads an ONNX or MindIR model, runs graph-kernel fusion as configured by the
[graph_kernel_param] section of --configFile (and MS_DEV_GRAPH_KERNEL_FLAGS), compiles a kernel
per fused subgraph and writes <outputFile>.mindir with the kernels embedded.

The last line printed is "CONVERT RESULT SUCCESS:0" or "CONVERT RESULT FAILED:<code>".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			err := convert(cmd, f)
			if err != nil {
				code := retError
				var ee *exitError
				if errors.As(err, &ee) {
					code = ee.code
				}
				fmt.Fprintln(os.Stderr, "ERROR:", err)
				fmt.Printf("CONVERT RESULT FAILED:%d\n", code)
				return err
			}
			fmt.Println("CONVERT RESULT SUCCESS:0")
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.fmk, "fmk", "", "input model framework: ONNX or MINDIR")
	fl.StringVar(&f.modelFile, "modelFile", "", "input model path")
	fl.StringVar(&f.outputFile, "outputFile", "", "output path; .mindir is appended unless present")
	fl.StringVar(&f.configFile, "configFile", "", "INI config file ([graph_kernel_param], ...)")
	fl.StringVar(&f.optimize, "optimize", "general", "none | general | gpu_oriented | ascend_oriented[:chip]")
	fl.StringVar(&f.inputShape, "inputShape", "", `fix input dims: "name:1,3,224,224;name2:1,128"`)
	fl.StringVar(&f.saveType, "saveType", "MINDIR", "MINDIR (MINDIR_LITE is not supported yet)")
	fl.StringVar(&f.fp16, "fp16", "off", "on | off: store float32 weights as float16")
	fl.StringVar(&f.device, "device", "", "target device, e.g. GPU, Ascend, Ascend910B, sm_80")
	fl.StringVar(&f.inputDataFormat, "inputDataFormat", "NCHW", "NCHW | NHWC (4-D inputs)")
	fl.StringVar(&f.weightFile, "weightFile", "", "Caffe weights (not used for ONNX or MINDIR)")
	fl.StringVar(&f.reportFile, "reportFile", "", "write a JSON report of the conversion to this path")
	fl.StringVar(&f.kernelCacheDir, "kernelCacheDir", "", "compiled-kernel cache (default $GKCONV_KERNEL_CACHE or the user cache dir)")
	fl.StringVar(&f.dumpDir, "dumpDir", "", "write IR dumps, DOT/SVG graphs and kernel sources here (default graph_kernel_dump/ when dump_as_text=true)")
	return cmd
}

// parseInputShape reads "name:1,3,224,224;name2:1,128"; the last ':' splits
// name and dims because names may contain ':'.
func parseInputShape(s string) (map[string][]int64, error) {
	out := map[string][]int64{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		i := strings.LastIndex(part, ":")
		if i <= 0 {
			return nil, fmt.Errorf("--inputShape: %q is not name:dims", part)
		}
		name, dims := part[:i], part[i+1:]
		var shape []int64
		if strings.TrimSpace(dims) != "" {
			for _, d := range strings.Split(dims, ",") {
				v, err := strconv.ParseInt(strings.TrimSpace(d), 10, 64)
				if err != nil || v < 0 {
					return nil, fmt.Errorf("--inputShape: %s: dim %q is not a non-negative integer", name, d)
				}
				shape = append(shape, v)
			}
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("--inputShape: input %s given twice", name)
		}
		out[name] = shape
	}
	return out, nil
}

// backendOf maps --optimize/--device to the fusion backend.
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

func convert(cmd *cobra.Command, f *convertFlags) (err error) {
	start := time.Now()
	rep := newReport()
	defer func() {
		if f.reportFile == "" {
			return
		}
		if err != nil {
			rep.Error = err.Error()
		}
		rep.Seconds = time.Since(start).Seconds()
		if werr := rep.write(f.reportFile); werr != nil && err == nil {
			err = failf(retError, "writing report: %v", werr)
		}
	}()

	// Flags first: every flag problem is reported before any work.
	var problems []string
	fmk := strings.ToUpper(f.fmk)
	switch fmk {
	case "ONNX", "MINDIR":
	case "":
		problems = append(problems, "--fmk is required (ONNX or MINDIR)")
	case "TF", "TFLITE", "CAFFE", "PYTORCH", "OM", "MSLITE":
		problems = append(problems, fmt.Sprintf("--fmk=%s is not supported; supported: ONNX, MINDIR", f.fmk))
	default:
		problems = append(problems, fmt.Sprintf("--fmk=%s is unknown; supported: ONNX, MINDIR", f.fmk))
	}
	if f.modelFile == "" {
		problems = append(problems, "--modelFile is required")
	}
	if f.outputFile == "" {
		problems = append(problems, "--outputFile is required")
	}
	switch strings.ToUpper(f.saveType) {
	case "MINDIR":
	case "MINDIR_LITE":
		problems = append(problems, "--saveType=MINDIR_LITE is not supported yet; use MINDIR")
	default:
		problems = append(problems, fmt.Sprintf("--saveType=%s: want MINDIR", f.saveType))
	}
	switch f.fp16 {
	case "on", "off":
	default:
		problems = append(problems, fmt.Sprintf("--fp16=%s: want on or off", f.fp16))
	}
	switch strings.ToUpper(f.inputDataFormat) {
	case "NCHW", "NHWC":
	default:
		problems = append(problems, fmt.Sprintf("--inputDataFormat=%s: want NCHW or NHWC", f.inputDataFormat))
	}
	if f.weightFile != "" {
		problems = append(problems, "--weightFile is only for Caffe models; ONNX and MINDIR keep weights in the model file")
	}
	device, chip, berr := backendOf(f.optimize, f.device)
	if berr != nil {
		problems = append(problems, berr.Error())
	}
	shapes, serr := parseInputShape(f.inputShape)
	if serr != nil {
		problems = append(problems, serr.Error())
	}
	if len(problems) > 0 {
		return failf(retParamInvalid, "%s", strings.Join(problems, "; "))
	}
	if strings.ToUpper(f.inputDataFormat) == "NHWC" {
		return failf(retNotSupport, "--inputDataFormat=NHWC is not supported yet: models keep their NCHW inputs")
	}
	out := f.outputFile
	if !strings.HasSuffix(out, ".mindir") {
		out += ".mindir"
	}
	rep.Output = out

	// Config.
	cfg, warns, cerr := akgcfg.Load(f.configFile, os.Getenv("MS_DEV_GRAPH_KERNEL_FLAGS"))
	for _, w := range warns {
		slog.Warn(w.String())
		rep.Warnings = append(rep.Warnings, w.String())
	}
	if cerr != nil {
		return failf(retParamInvalid, "%v", cerr)
	}
	backend := cfg.Backend(device)
	if chip != "" && device == akgcfg.Ascend {
		backend.Soc = chip
	}
	if device == akgcfg.Ascend && (backend.Soc == "" || strings.EqualFold(backend.Soc, "ascend")) {
		// One chip decides both the partition (910B rules) and the kernel info.
		backend.Soc = "Ascend910B"
	}
	for _, w := range cfg.Flags.Resolve(backend) {
		slog.Warn(w.String())
		rep.Warnings = append(rep.Warnings, w.String())
	}
	rep.Flags = map[string]string{"backend": backend.String(), "tokens": cfg.Flags.Tokens()}

	// Frontend.
	g, closeModel, lerr := loadModel(fmk, f.modelFile, shapes)
	if lerr != nil {
		var ue *onnx.UnsupportedError
		if errors.As(lerr, &ue) {
			for _, it := range ue.Items {
				rep.Unsupported = append(rep.Unsupported, unsupportedItem{Node: it.Node, Op: it.Op, Reason: it.Reason})
			}
			return &exitError{code: retNotFindOp, err: lerr}
		}
		var me *mindir.UnsupportedError
		if errors.As(lerr, &me) {
			for _, it := range me.Items {
				rep.Unsupported = append(rep.Unsupported, unsupportedItem{Node: it.Node, Op: it.Op, Reason: it.Reason})
			}
			return &exitError{code: retNotFindOp, err: lerr}
		}
		return &exitError{code: retError, err: lerr}
	}
	defer closeModel()
	rep.setModel(f.modelFile, fmk, g)
	rep.Graph.NodesBefore = len(g.Nodes)

	// Graph cleanup shared by every --optimize level: exact constant folding.
	folded, ferr := runtime.FoldConstants(g)
	if ferr != nil {
		return failf(retError, "%s: %v", f.modelFile, ferr)
	}
	// FoldConstants has typed every node on the way (shape inference with
	// the folded values known).
	g.RemoveDead()
	slog.Info("constant folding", "nodes_folded", folded)

	// Fusion.
	fo := fusionOptions{kernelCacheDir: f.kernelCacheDir, dumpDir: f.dumpDir, gpuArch: "sm_80"}
	if device == akgcfg.GPU && strings.HasPrefix(strings.ToLower(chip), "sm_") {
		fo.gpuArch = strings.ToLower(chip)
	}
	if err := runFusion(g, cfg, backend, strings.HasPrefix(f.optimize, "none") && f.device == "", fo, rep); err != nil {
		return err
	}
	rep.Graph.NodesAfter = len(g.Nodes)
	if err := g.Validate(); err != nil {
		return failf(retError, "internal error, invalid graph after optimisation: %v", err)
	}

	if dir := filepath.Dir(out); dir != "" {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return failf(retParamInvalid, "--outputFile=%s: folder %s does not exist", f.outputFile, dir)
		}
	}
	if err := mindir.WriteFile(out, g, mindir.WriteOptions{FP16: f.fp16 == "on"}); err != nil {
		return failf(retError, "writing %s: %v", out, err)
	}
	slog.Info("converted", "output", out, "seconds", time.Since(start).Seconds())
	return nil
}

// loadModel opens the model with its frontend; the returned func releases the
// mmapped weights once the output is written.
func loadModel(fmk, path string, shapes map[string][]int64) (*ir.Graph, func(), error) {
	switch fmk {
	case "ONNX":
		m, err := onnx.Open(path, onnx.Options{InputShapes: shapes})
		if err != nil {
			return nil, nil, err
		}
		return m.Graph, func() { m.Close() }, nil
	case "MINDIR":
		m, err := mindir.Open(path)
		if err != nil {
			return nil, nil, err
		}
		if len(shapes) > 0 {
			if err := applyInputShapes(m.Graph, shapes, path); err != nil {
				m.Close()
				return nil, nil, err
			}
		}
		return m.Graph, func() { m.Close() }, nil
	}
	return nil, nil, fmt.Errorf("unsupported --fmk=%s", fmk)
}

// applyInputShapes fixes dynamic input dims of a graph whose frontend took
// no shapes (MindIR, benchmark).
func applyInputShapes(g *ir.Graph, shapes map[string][]int64, file string) error {
	if err := g.FixInputShapes(shapes); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}
