package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"gkconv/internal/convert"
)

type convertFlags struct {
	fmk, modelFile, outputFile, configFile, optimize string
	inputShape, saveType, fp16, device               string
	primitiveSet, float16Compute                     string
	inputDataFormat, weightFile, reportFile          string
	kernelCacheDir, dumpDir                          string
	signKey, kernelSelfCheck, progress               string
	trustedKeys                                      string
}

func newConvertCmd() *cobra.Command {
	f := &convertFlags{}
	cmd := &cobra.Command{
		Use:   "converter --fmk=ONNX --modelFile=model.onnx --outputFile=model [--configFile=akg.cfg]",
		Short: "Convert an ONNX or MindIR model into an offline .mindir with fused kernels",
		Long: `converter reads an ONNX or MindIR model, runs graph-kernel fusion as configured by the
[graph_kernel_param] section of --configFile (and MS_DEV_GRAPH_KERNEL_FLAGS), compiles a kernel
per fused subgraph and writes <outputFile>.mindir with the kernels embedded.
With --signKey it also writes <outputFile>.mindir.sig, a detached SSH signature (namespace
gkconv-model) of the whole file:
  ssh-keygen -Y verify -f allowed_signers -I <principal> -n gkconv-model -s model.mindir.sig < model.mindir

The last line printed is "CONVERT RESULT SUCCESS:0" or "CONVERT RESULT FAILED:<code>".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.reportFile == "-" {
				stdout = stderr // stdout is the JSON report alone (--reportFile=- | jq .)
			}
			opts := f.options()
			display, err := newProgress(f.progress, os.Stderr)
			if err != nil {
				opts.Invalid = append(opts.Invalid, convert.OptionError{Option: "progress", Err: err})
			} else if display != nil {
				opts.Progress = display.event
			}
			_, err = convert.Convert(cmd.Context(), opts)
			display.finish()
			if err != nil {
				printError(err)
				resultf("CONVERT RESULT FAILED:%d", convert.Code(err))
				return err
			}
			resultf("CONVERT RESULT SUCCESS:0")
			return nil
		},
	}
	def := convert.DefaultOptions()
	fl := cmd.Flags()
	fl.StringVar(&f.fmk, "fmk", "", "input model framework: ONNX or MINDIR")
	fl.StringVar(&f.modelFile, "modelFile", "", "input model path")
	fl.StringVar(&f.outputFile, "outputFile", "", "output path; .mindir is appended unless present")
	fl.StringVar(&f.configFile, "configFile", "", "INI config file ([graph_kernel_param], ...)")
	fl.StringVar(&f.optimize, "optimize", def.Optimize, "none | general | gpu_oriented | ascend_oriented[:chip]")
	fl.StringVar(&f.inputShape, "inputShape", "", `fix input dims: "name:1,3,224,224;name2:1,128"`)
	fl.StringVar(&f.saveType, "saveType", def.SaveType, "MINDIR (MINDIR_LITE is not supported yet)")
	fl.StringVar(&f.fp16, "fp16", "off", "on | off: store float32 weights as float16")
	fl.StringVar(&f.float16Compute, "float16Compute", "onnxruntime", "onnxruntime | float16 (ONNX input): run a float16 model's ops as onnxruntime's CPU provider does (ops it has no float16 kernel for in float32 between its Casts, Cast pairs it removes removed), or round every op to float16 as the graph reads")
	fl.StringVar(&f.primitiveSet, "primitiveSet", "lite", "lite | mindspore: write converter_lite's fusion primitives (what MindSpore Lite runs), or MindSpore's own primitives where an op has one (what mindspore.load + nn.GraphCell run)")
	fl.StringVar(&f.device, "device", "", "target device, e.g. GPU, Ascend, Ascend910B, sm_80")
	fl.StringVar(&f.inputDataFormat, "inputDataFormat", def.InputDataFormat, "NCHW | NHWC (4-D inputs)")
	fl.StringVar(&f.weightFile, "weightFile", "", "Caffe weights (not used for ONNX or MINDIR)")
	fl.StringVar(&f.reportFile, "reportFile", "", "write a JSON report of the conversion to this path")
	fl.StringVar(&f.kernelCacheDir, "kernelCacheDir", "", "compiled-kernel cache: a folder, or an http(s):// URL of a remote cache with a local one in front (default $GKCONV_KERNEL_CACHE or the user cache dir)")
	fl.StringVar(&f.trustedKeys, "trustedKeys", "", "allowed_signers file (ssh-keygen(1) format; default $"+TrustedKeysEnv+"): with a remote --kernelCacheDir, only cache objects signed by one of these keys are used (a fleet's uploads are signed with --signKey)")
	fl.StringVar(&f.signKey, "signKey", "", "sign the output with this unencrypted Ed25519 private `key` (OpenSSH format, ssh-keygen -t ed25519 -N ''): writes <output>.mindir.sig, "+
		"a detached SSH signature of the whole .mindir file; 'ssh-keygen -Y verify -f allowed_signers -I <principal> -n gkconv-model -s model.mindir.sig < model.mindir' verifies it, "+
		"and 'converter benchmark --trustedKeys=allowed_signers' then loads the embedded kernels")
	fl.StringVar(&f.progress, "progress", "auto", "auto | on | off: progress on stderr (passes, kernels compiled with cache hits, MiB written) for conversions over a second; auto: only when stderr is a terminal")
	fl.StringVar(&f.kernelSelfCheck, "kernelSelfCheck", "on", "on | off: run every compiled CPU kernel once against its fused body on seeded random inputs and un-fuse the ones that disagree (skipped for kernels that passed before, remembered in the kernel cache)")
	fl.StringVar(&f.dumpDir, "dumpDir", "", "write IR dumps, DOT/SVG graphs and kernel sources here (default graph_kernel_dump/ when dump_as_text=true)")
	return cmd
}

// options maps the flags to the driver's options; a value that does not
// parse is passed on as an OptionError, so the driver reports it with every
// other option problem.
func (f *convertFlags) options() convert.Options {
	o := convert.Options{
		FMK:             f.fmk,
		ModelFile:       f.modelFile,
		OutputFile:      f.outputFile,
		ConfigFile:      f.configFile,
		Optimize:        f.optimize,
		Device:          f.device,
		SaveType:        f.saveType,
		InputDataFormat: f.inputDataFormat,
		WeightFile:      f.weightFile,
		ReportFile:      f.reportFile,
		KernelCacheDir:  f.kernelCacheDir,
		DumpDir:         f.dumpDir,
		SignKeyFile:     f.signKey,
		TrustedKeysFile: trustedKeysOr(f.trustedKeys),
		PrimitiveSet:    f.primitiveSet,
	}
	switch f.fp16 {
	case "on", "off":
		o.FP16 = f.fp16 == "on"
	default:
		o.Invalid = append(o.Invalid, convert.OptionError{Option: "fp16", Err: fmt.Errorf("--fp16=%s: want on or off", f.fp16)})
	}
	switch f.float16Compute {
	case "onnxruntime", "float16":
		o.KeepFloat16 = f.float16Compute == "float16"
	default:
		o.Invalid = append(o.Invalid, convert.OptionError{Option: "float16Compute", Err: fmt.Errorf("--float16Compute=%s: want onnxruntime or float16", f.float16Compute)})
	}
	switch f.kernelSelfCheck {
	case "on", "off":
		o.NoKernelSelfCheck = f.kernelSelfCheck == "off"
	default:
		o.Invalid = append(o.Invalid, convert.OptionError{Option: "kernelSelfCheck", Err: fmt.Errorf("--kernelSelfCheck=%s: want on or off", f.kernelSelfCheck)})
	}
	shapes, err := parseInputShape(f.inputShape)
	if err != nil {
		o.Invalid = append(o.Invalid, convert.OptionError{Option: "inputShape", Err: err})
	}
	o.InputShape = shapes
	return o
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
