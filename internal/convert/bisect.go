package convert

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gkconv/internal/ir"
	"gkconv/internal/mindir"
	"gkconv/internal/onnx"
	"gkconv/internal/runtime"
)

// BisectOptions configure Bisect.
type BisectOptions struct {
	// Convert is the conversion under suspicion (its OutputFile and
	// ReportFile are not used; the kernel self-check is turned off, so the
	// fused kernels are the ones fusion made).
	Convert Options
	// Inputs gives the model's inputs, matched to g.Inputs.
	Inputs func(g *ir.Graph) ([]*ir.Tensor, error)
	// Atol, Rtol: an element diverges when |fused - body| > Atol + Rtol*|body|.
	Atol, Rtol float64
	// ReproDir receives the standalone repro of the first diverging kernel
	// ("" for none).
	ReproDir string
}

// BisectResult is what Bisect found.
type BisectResult struct {
	Kernels int                // fused kernels run before the search stopped
	Culprit *BisectKernel      // the first kernel that diverges; nil when none does
	Outputs []runtime.Accuracy // fused model outputs against the unfused model's
	Report  *Report            // the fused conversion's report
	Files   []string           // repro files written
}

// BisectKernel is a fused kernel whose compiled output differs from its
// body's on the same inputs.
type BisectKernel struct {
	Node, KernelName string
	Ops, SourceNodes []string
	Output           int    // the first output that diverges
	Mismatch         string // its first diverging element and the count
}

var errFound = errors.New("bisect: diverging kernel found")

// Bisect converts the model fused (as opts.Convert asks) and unfused, runs
// the fused model on the given inputs and, at each fused kernel in
// execution order, compares the kernel's outputs with its body run on the
// op library on the same inputs; the first kernel outside the tolerance is
// the culprit. Comparing each kernel on its own inputs (not the unfused
// model's values) blames exactly one kernel even when errors add up
// downstream. The fused model's outputs are also compared with the
// unfused model's.
func Bisect(ctx context.Context, opts BisectOptions) (*BisectResult, error) {
	tmp, err := os.MkdirTemp("", "gkconv-bisect-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	fusedOpts := opts.Convert
	fusedOpts.OutputFile, fusedOpts.ReportFile, fusedOpts.NoKernelSelfCheck = filepath.Join(tmp, "fused"), "", true
	rep, err := Convert(ctx, fusedOpts)
	if err != nil {
		return nil, fmt.Errorf("fused conversion: %w", err)
	}
	plainOpts := opts.Convert
	plainOpts.OutputFile, plainOpts.ReportFile, plainOpts.Optimize, plainOpts.ConfigFile = filepath.Join(tmp, "unfused"), "", "none", ""
	if _, err := Convert(ctx, plainOpts); err != nil {
		return nil, fmt.Errorf("unfused conversion: %w", err)
	}
	fused, err := mindir.Open(filepath.Join(tmp, "fused.mindir"))
	if err != nil {
		return nil, err
	}
	defer fused.Close()
	plain, err := mindir.Open(filepath.Join(tmp, "unfused.mindir"))
	if err != nil {
		return nil, err
	}
	defer plain.Close()
	inputs, err := opts.Inputs(fused.Graph)
	if err != nil {
		return nil, err
	}
	res := &BisectResult{Report: rep}
	byName := map[string]ReportKernel{}
	for _, k := range rep.Kernels {
		byName[k.Name] = k
	}
	var culpritIn []*ir.Tensor
	var culpritNode *ir.Node
	visit := func(n *ir.Node, in, out []*ir.Tensor) error {
		if n.Op != ir.OpGraphKernel || n.Body == nil {
			return nil
		}
		res.Kernels++
		body, err := runtime.NewSession(n.Body, runtime.Options{Threads: 1})
		if err != nil {
			return fmt.Errorf("kernel %s: its body on the op library: %w", n.Name, err)
		}
		want, err := body.Run(in)
		if err != nil {
			return fmt.Errorf("kernel %s: its body on the op library: %w", n.Name, err)
		}
		for i := range want {
			acc, err := runtime.Compare(n.Outputs[i].Name, out[i], want[i], opts.Atol, opts.Rtol, 0)
			if err != nil {
				return err
			}
			if acc.Pass {
				continue
			}
			rk := byName[n.Name]
			res.Culprit = &BisectKernel{Node: n.Name, KernelName: n.Attrs.String(ir.GKKernelName, ""), Ops: rk.Ops, SourceNodes: rk.SourceNodes,
				Output: i, Mismatch: fmt.Sprintf("%s (%d of %d elements beyond atol %g + rtol %g)", acc.FirstMismatch, acc.Mismatches, acc.Elements, opts.Atol, opts.Rtol)}
			if len(res.Culprit.Ops) == 0 {
				for _, bn := range n.Body.Nodes {
					res.Culprit.Ops = append(res.Culprit.Ops, bn.Op)
				}
				res.Culprit.SourceNodes = n.Provenance
			}
			culpritNode = n
			for _, t := range in {
				culpritIn = append(culpritIn, t.Clone())
			}
			return errFound
		}
		return nil
	}
	// Fused kernels run as compiled here: trusted, this process just built
	// them. The fused outputs are compared with the unfused model's below.
	trusted := runtime.KernelPolicy{TrustEmbedded: true}
	sess, err := runtime.NewSession(fused.Graph, runtime.Options{Threads: 1, KernelPolicy: trusted, Visit: visit})
	if err != nil {
		return nil, err
	}
	got, err := sess.Run(inputs)
	if errors.Is(err, errFound) {
		// The search stopped at the culprit: the end-to-end view needs a
		// whole run.
		var whole *runtime.Session
		if whole, err = runtime.NewSession(fused.Graph, runtime.Options{Threads: 1, KernelPolicy: trusted}); err == nil {
			got, err = whole.Run(inputs)
		}
	}
	if err != nil {
		return nil, err
	}
	ref, err := runtime.NewSession(plain.Graph, runtime.Options{Threads: 1})
	if err != nil {
		return nil, err
	}
	want, err := ref.Run(inputs)
	if err != nil {
		return nil, err
	}
	for i := range got {
		acc, err := runtime.Compare(fused.Graph.Outputs[i].Name, got[i], want[i], opts.Atol, opts.Rtol, 0)
		if err != nil {
			return nil, err
		}
		res.Outputs = append(res.Outputs, acc)
	}
	if res.Culprit != nil && opts.ReproDir != "" {
		if res.Files, err = writeRepro(opts.ReproDir, culpritNode, culpritIn); err != nil {
			return res, fmt.Errorf("repro: %w", err)
		}
	}
	return res, nil
}

// writeRepro writes the standalone repro of kernel n on inputs: the kernel
// alone as a model (kernel.mindir), its body as a plain model (body.mindir),
// the inputs, the body's outputs on the op library (expected_N.pb), the
// generated source and the command that shows the mismatch.
func writeRepro(dir string, n *ir.Node, inputs []*ir.Tensor) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	add := func(name string) string {
		p := filepath.Join(dir, name)
		files = append(files, p)
		return p
	}
	one := ir.SingleNodeGraph(n)
	if err := mindir.WriteFile(add("kernel.mindir"), one, mindir.WriteOptions{}); err != nil {
		return nil, err
	}
	if err := mindir.WriteFile(add("body.mindir"), n.Body, mindir.WriteOptions{}); err != nil {
		return nil, err
	}
	body, err := runtime.NewSession(n.Body, runtime.Options{Threads: 1})
	if err != nil {
		return nil, err
	}
	want, err := body.Run(inputs)
	if err != nil {
		return nil, err
	}
	var ins, outs []string
	for i, t := range inputs {
		name := fmt.Sprintf("input_%d.pb", i)
		if err := onnx.WriteTensorFile(add(name), one.Inputs[i].Name, t); err != nil {
			return nil, err
		}
		ins = append(ins, name)
	}
	for i, t := range want {
		name := fmt.Sprintf("expected_%d.pb", i)
		if err := onnx.WriteTensorFile(add(name), one.Outputs[i].Name, t); err != nil {
			return nil, err
		}
		outs = append(outs, name)
	}
	if src := n.Attrs.String(ir.GKKernelSource, ""); src != "" {
		if err := os.WriteFile(add("kernel.c"), []byte(src), 0o644); err != nil {
			return nil, err
		}
	}
	script := fmt.Sprintf(`#!/bin/sh
# Repro of fused kernel %[1]s (%[2]s).
# kernel.mindir holds the kernel alone, with the compiled object bisect ran
# (written by your own bisect run, so loading it is trusted here);
# expected_*.pb are its body's outputs on the op library on input_*.pb;
# body.mindir is the body as a plain model; kernel.c the generated source.
cd "$(dirname "$0")"
# The object as built: shows the mismatch.
converter benchmark --modelFile=kernel.mindir --trustEmbeddedKernels --inDataFile=%[3]s --benchmarkDataFile=%[4]s --loopCount=1 --warmUpLoopCount=0
# Rebuilt from the body with this machine's compiler (as for any untrusted model):
#   converter benchmark --modelFile=kernel.mindir --inDataFile=%[3]s --benchmarkDataFile=%[4]s --loopCount=1
`, n.Name, n.Attrs.String(ir.GKKernelName, ""), strings.Join(ins, ","), strings.Join(outs, ","))
	if err := os.WriteFile(add("repro.sh"), []byte(script), 0o755); err != nil {
		return nil, err
	}
	return files, nil
}
