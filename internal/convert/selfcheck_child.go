package convert

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"gkconv/internal/ir"
	"gkconv/internal/mindir"
	"gkconv/internal/onnx"
	"gkconv/internal/runtime"
	"gkconv/internal/safefs"
)

// The self-check runs each compiled kernel in a short-lived child process
// when SelfCheckExecutable is set (cmd/converter sets it to its own
// binary): a kernel that crashes, hangs or corrupts memory costs that
// kernel (it is un-fused), never the conversion, and the child inherits no
// descriptor but stdin (empty), stdout and stderr (captured). The kernel
// goes to the child as data: the kernel node alone as a .mindir (its
// object embedded, as bisect's repro writes it) and its inputs as
// TensorProto files; the child's outputs come back the same way. The
// reference (the body on the op library) runs here.

// SelfCheckExecutable is the binary that runs RunKernelCommand; "" runs
// compiled kernels in this process (library use, tests).
var SelfCheckExecutable string

// RunKernelCommand is the hidden first argument that makes the converter
// binary a self-check child: `converter __run-kernel DIR`.
const RunKernelCommand = "__run-kernel"

// selfCheckTimeout bounds one kernel's run in the child (the inputs are
// at most selfCheckMaxElements).
const selfCheckTimeout = 2 * time.Minute

// runCompiledIsolated runs compiled kernel node n on inputs in a child.
func runCompiledIsolated(n *ir.Node, inputs []*ir.Tensor) ([]*ir.Tensor, error) {
	dir, err := safefs.MkdirTemp("", "gkconv-selfcheck-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	g := ir.SingleNodeGraph(n)
	if err := mindir.WriteFile(filepath.Join(dir, "kernel.mindir"), g, mindir.WriteOptions{}); err != nil {
		return nil, err
	}
	for i, t := range inputs {
		if err := onnx.WriteTensorFile(filepath.Join(dir, fmt.Sprintf("input_%d.pb", i)), g.Inputs[i].Name, t); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), selfCheckTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, SelfCheckExecutable, RunKernelCommand, dir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("did not finish in %v", selfCheckTimeout)
		}
		return nil, fmt.Errorf("failed (%v): %s", err, childReason(out.String()))
	}
	outs := make([]*ir.Tensor, len(g.Outputs))
	for i := range outs {
		t, _, err := onnx.ReadTensorFile(filepath.Join(dir, fmt.Sprintf("output_%d.pb", i)))
		if err != nil {
			return nil, err
		}
		outs[i] = t
	}
	return outs, nil
}

// childReason is the line of a child's output that says why it died: the
// Go runtime's "[signal SIGSEGV ...]" or "fatal error" for a crash in the
// kernel, else the last line (its error).
func childReason(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for _, l := range lines {
		if strings.HasPrefix(l, "[signal ") {
			return "crashed: " + l
		}
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "fatal error:") || strings.HasPrefix(l, "SIG") {
			return "crashed: " + l
		}
	}
	last := lines[len(lines)-1]
	if len(last) > 300 {
		last = last[:300]
	}
	return last
}

// RunKernelChild is the child's side: it runs the kernel in dir (trusted:
// this converter compiled it) and writes its outputs there.
func RunKernelChild(dir string) error {
	m, err := mindir.Open(filepath.Join(dir, "kernel.mindir"))
	if err != nil {
		return err
	}
	defer m.Close()
	g := m.Graph
	inputs := make([]*ir.Tensor, len(g.Inputs))
	for i := range inputs {
		if inputs[i], _, err = onnx.ReadTensorFile(filepath.Join(dir, fmt.Sprintf("input_%d.pb", i))); err != nil {
			return err
		}
	}
	sess, err := runtime.NewSession(g, runtime.Options{Threads: 1, KernelPolicy: runtime.KernelPolicy{TrustEmbedded: true}})
	if err != nil {
		return err
	}
	outs, err := sess.Run(inputs)
	if err != nil {
		return err
	}
	for i, t := range outs {
		if err := onnx.WriteTensorFile(filepath.Join(dir, fmt.Sprintf("output_%d.pb", i)), g.Outputs[i].Name, t); err != nil {
			return err
		}
	}
	return nil
}
