package main

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"gkconv/internal/convert"
	"gkconv/internal/ir"
)

func newBisectCmd() *cobra.Command {
	var (
		fmk, modelFile, configFile, inDataFile, inputShape, reproDir, kernelCacheDir string
		atol, rtol                                                                   float64
		seed                                                                         uint64
	)
	cmd := &cobra.Command{
		Use:   "bisect --fmk=ONNX --modelFile=model.onnx --configFile=akg.cfg [--inDataFile=in.pb,...]",
		Short: "Find the first fused kernel whose output diverges from its unfused ops",
		Long: `bisect converts the model fused (as --configFile asks, with the kernel self-check off) and
unfused, runs the fused model on the inputs (--inDataFile, else seeded random ones) and, at each fused
kernel in execution order, runs the kernel's body on the op library on the same inputs; the first kernel
whose outputs differ beyond --atol + --rtol*|body| is printed with its ops and the model nodes it came
from, and a standalone repro is written to --reproDir: the kernel alone as a model, its body as a plain
model, its inputs, the expected outputs, the generated source and repro.sh, the command that shows the
mismatch. The fused model's outputs are also compared with the unfused model's.

Last line: "BISECT RESULT SUCCESS:0" when no kernel diverges; "BISECT RESULT DIVERGED: <kernel>" (exit 1)
when one does; "BISECT RESULT FAILED:<code>" (exit 1) when bisect could not run.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o := convert.DefaultOptions()
			o.FMK, o.ModelFile, o.ConfigFile, o.KernelCacheDir = fmk, modelFile, configFile, kernelCacheDir
			shapes, err := parseInputShape(inputShape)
			if err != nil {
				return err
			}
			o.InputShape = shapes
			if configFile == "" {
				return convert.Errorf(convert.CodeParamInvalid, "--configFile is required: bisect compares the fusion it configures against none")
			}
			res, err := convert.Bisect(context.Background(), convert.BisectOptions{
				Convert:  o,
				Inputs:   func(g *ir.Graph) ([]*ir.Tensor, error) { return loadInputs(g, inDataFile, seed) },
				Atol:     atol,
				Rtol:     rtol,
				ReproDir: reproDir,
			})
			if err != nil {
				printError(err)
				resultf("BISECT RESULT FAILED:%d", convert.Code(err))
				return err
			}
			for _, acc := range res.Outputs {
				state := "matches"
				if !acc.Pass {
					state = "DIFFERS: " + acc.FirstMismatch
				}
				sayf("Output %s: fused vs unfused max abs error %.3g, %s\n", acc.Name, acc.MaxAbsErr, state)
			}
			c := res.Culprit
			if c == nil {
				sayf("No fused kernel diverges (%d checked, atol %g, rtol %g).\n", res.Kernels, atol, rtol)
				resultf("BISECT RESULT SUCCESS:0")
				return nil
			}
			sayf("First diverging kernel (%d of the run): %s (%s)\n", res.Kernels, c.Node, c.KernelName)
			sayf("  ops: %s\n  from model nodes: %s\n  output %d: %s\n", strings.Join(c.Ops, ", "), strings.Join(c.SourceNodes, ", "), c.Output, c.Mismatch)
			for _, f := range res.Files {
				sayf("  repro: %s\n", f)
			}
			resultf("BISECT RESULT DIVERGED: %s", c.Node)
			return &diverged{c.Node}
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&fmk, "fmk", "ONNX", "ONNX | MINDIR")
	fl.StringVar(&modelFile, "modelFile", "", "model to bisect")
	fl.StringVar(&configFile, "configFile", "", "the [graph_kernel_param] config whose fusion is under suspicion")
	fl.StringVar(&inDataFile, "inDataFile", "", "inputs (ONNX TensorProto .pb or raw .bin), comma-separated; seeded random when absent")
	fl.StringVar(&inputShape, "inputShape", "", "static shapes for dynamic inputs, as for conversion (name:d1,d2;...)")
	fl.Float64Var(&atol, "atol", 1e-4, "absolute tolerance")
	fl.Float64Var(&rtol, "rtol", 1e-3, "relative tolerance")
	fl.Uint64Var(&seed, "seed", 1, "seed of the random inputs")
	fl.StringVar(&reproDir, "reproDir", "bisect_repro", "folder for the repro of the first diverging kernel (\"\" for none)")
	fl.StringVar(&kernelCacheDir, "kernelCacheDir", "", "compiled-kernel cache: a folder, or an http(s):// URL of a remote cache with a local one in front (default $GKCONV_KERNEL_CACHE or the user cache dir)")
	return cmd
}

// diverged: bisect ran and found a diverging kernel (already printed).
type diverged struct{ node string }

func (d *diverged) Error() string { return "fused kernel " + d.node + " diverges" }
