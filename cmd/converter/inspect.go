package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"gkconv/internal/convert"
	"gkconv/internal/ir"
	"gkconv/internal/runtime"
)

func newInspectCmd() *cobra.Command {
	var modelFile, fmk string
	var tf trustFlags
	cmd := &cobra.Command{
		Use:   "inspect --modelFile=model.onnx|model.mindir",
		Short: "Print a model's inputs, outputs, op histogram and fused kernels",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			defer func() {
				if err != nil {
					printError(err)
					resultf("INSPECT RESULT FAILED:%d", convert.Code(err))
				}
			}()
			if modelFile == "" {
				return convert.Errorf(convert.CodeParamInvalid, "--modelFile is required")
			}
			if fmk == "" {
				fmk = "ONNX"
				if strings.HasSuffix(strings.ToLower(modelFile), ".mindir") {
					fmk = "MINDIR"
				}
			}
			g, closeModel, err := convert.Load(fmk, modelFile, convert.LoadOptions{})
			if err != nil {
				return err
			}
			defer closeModel()
			printGraph(g, modelFile, kernelPlanner(g, modelFile, strings.EqualFold(fmk, "MINDIR"), &tf))
			return nil
		},
	}
	cmd.Flags().StringVar(&modelFile, "modelFile", "", "ONNX or .mindir model")
	cmd.Flags().StringVar(&fmk, "fmk", "", "ONNX or MINDIR (default: from the file extension)")
	tf.register(cmd) // run= of each fused kernel: how benchmark with these flags would run it
	return cmd
}

// kernelPlanner returns how `benchmark` with the trust flags tf would run
// each fused kernel of g, and why (nil when g has none).
func kernelPlanner(g *ir.Graph, file string, isMindIR bool, tf *trustFlags) func(*ir.Node) string {
	if !hasGraphKernels(g) {
		return nil
	}
	var kt kernelTrust
	var trustErr error
	if isMindIR {
		if f, err := openModelFile(file); err != nil {
			trustErr = err
		} else {
			kt, trustErr = tf.decide(f, file)
			f.Close()
		}
	}
	if kt.Signer != "" {
		sayf("Signature: verified, signed by %s\n", kt.Signer)
	}
	var rebuildErr func(*ir.Node) error
	return func(n *ir.Node) string {
		if trustErr != nil {
			return "refused (" + trustErr.Error() + ")"
		}
		var rerr error
		if !kt.Trusted {
			if rebuildErr == nil {
				rebuildErr = convert.CheckRebuild()
			}
			rerr = rebuildErr(n)
		}
		mode, reason, err := runtime.PlanKernel(n, kt.Trusted, rerr)
		if err != nil {
			return "refused (" + err.Error() + ")"
		}
		return describeKernel(mode, reason, kt)
	}
}

func printGraph(g *ir.Graph, file string, plan func(*ir.Node) string) {
	sayf("Model: %s\n", file)
	for _, k := range []string{"producer_name", "producer_version", "ir_version", "onnx.opset"} {
		if v := g.Meta[k]; v != "" {
			sayf("  %s: %s\n", k, v)
		}
	}
	sayf("Inputs (%d):\n", len(g.Inputs))
	for _, v := range g.Inputs {
		sayf("  %-32s %-8s %s\n", v.Name, v.DType, shapeString(v))
	}
	sayf("Outputs (%d):\n", len(g.Outputs))
	for _, v := range g.Outputs {
		sayf("  %-32s %-8s %s\n", v.Name, v.DType, shapeString(v))
	}
	var weights int64
	for _, c := range g.Consts {
		weights += int64(len(c.Const.Data))
	}
	sayf("Nodes: %d, constants: %d (%d bytes)\n", len(g.Nodes), len(g.Consts), weights)
	sayf("Ops:\n")
	for _, oc := range g.OpHistogram() {
		sayf("  %-24s %d\n", oc.Op, oc.Count)
	}
	var kernels []*ir.Node
	for _, n := range g.Nodes {
		if n.Op == "GraphKernel" {
			kernels = append(kernels, n)
		}
	}
	sayf("Fused kernels (%d):\n", len(kernels))
	for _, n := range kernels {
		name := n.Attrs.String("kernel_name", n.Name)
		target := n.Attrs.String("process", "?")
		bin := 0
		for _, k := range n.Attrs.Keys() {
			if a := n.Attrs[k]; a.Kind == ir.AttrBytes {
				bin += len(a.B)
			}
		}
		ops := ""
		if n.Body != nil {
			var names []string
			for _, b := range n.Body.Nodes {
				names = append(names, b.Op)
			}
			ops = strings.Join(names, ",")
		}
		sayf("  %-40s target=%-6s binary=%d bytes ops=%s\n", name, target, bin, ops)
		if plan != nil {
			sayf("    benchmark runs it: %s\n", plan(n))
		}
	}
}

func shapeString(v *ir.Value) string {
	if v.Shape == nil {
		return "[?]"
	}
	parts := make([]string, len(v.Shape))
	for i, d := range v.Shape {
		if d < 0 {
			if i < len(v.DimNames) && v.DimNames[i] != "" {
				parts[i] = v.DimNames[i]
			} else {
				parts[i] = "?"
			}
		} else {
			parts[i] = fmt.Sprint(d)
		}
	}
	return "[" + strings.Join(parts, ",") + "]"
}
