package runtime

import (
	"fmt"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/native"
	"gkconv/internal/runtime/opkernel"
)

// bindGraphKernel binds a fused GraphKernel node to its embedded shared
// object (verified by sha256, checked against this CPU, loaded once per
// process per hash, called through the AKG CPU ABI), or says why it cannot
// run. A node without an object runs its Body with the op library only when
// marked kernel_status=interpreted.
func bindGraphKernel(n *ir.Node) (opkernel.Func, error) {
	switch p := n.Attrs.String(ir.GKProcess, "cpu"); p {
	case "cpu":
	case "cuda":
		return nil, fmt.Errorf("its kernel is CUDA PTX (%s): no CUDA device is available to this CPU runtime; run the model with MindSpore Lite on a GPU, or convert with --optimize=general for the CPU",
			n.Attrs.String(ir.GKComputeCapability, "sm_?"))
	case "aicore":
		return nil, fmt.Errorf("its kernel is for an Ascend NPU (%s): no Ascend device is available to this CPU runtime; deploy with CANN, or convert with --optimize=general for the CPU",
			n.Attrs.String(ir.GKSoc, "Ascend"))
	default:
		return nil, fmt.Errorf("its kernel targets process %q, which this CPU runtime cannot run", p)
	}
	a, ok := n.Attrs[ir.GKKernelSO]
	if !ok || a.Kind != ir.AttrBytes || len(a.B) == 0 {
		if n.Attrs.String(ir.GKKernelStatus, "") == "interpreted" && n.Body != nil {
			return interpretedFunc(n)
		}
		return nil, fmt.Errorf("GraphKernel node %s has no compiled kernel (kernel_so) and is not marked kernel_status=interpreted", n.Name)
	}
	sym := n.Attrs.String(ir.GKKernelName, "")
	if sym == "" {
		return nil, fmt.Errorf("GraphKernel node %s: no kernel_name", n.Name)
	}
	if err := native.CheckHost(n.Attrs.String(ir.GKArch, ""), n.Attrs.String(ir.GKFeature, ""), n.Attrs.String(ir.GKCPUFlags, "")); err != nil {
		return nil, fmt.Errorf("GraphKernel node %s (%s): %w", n.Name, sym, err)
	}
	k, err := native.Load(a.B, n.Attrs.String(ir.GKKernelSOHash, ""), sym)
	if err != nil {
		return nil, fmt.Errorf("GraphKernel node %s: %w", n.Name, err)
	}
	nin, nout := len(n.Inputs), len(n.Outputs)
	return func(ctx *opkernel.Ctx, _ *ir.Node, in []*ir.Tensor, out []*ir.Tensor) error {
		if len(in) != nin || len(out) != nout {
			return fmt.Errorf("kernel %s: %d inputs/%d outputs given, want %d/%d", sym, len(in), len(out), nin, nout)
		}
		bufs := make([][]byte, 0, nin+nout)
		for i, t := range in {
			if t == nil {
				return fmt.Errorf("kernel %s: input %d is missing", sym, i)
			}
			if err := checkKernelTensor(n.Inputs[i], t); err != nil {
				return fmt.Errorf("kernel %s: input %d: %w", sym, i, err)
			}
			bufs = append(bufs, t.Data)
		}
		for i, t := range out {
			if err := checkKernelTensor(n.Outputs[i], t); err != nil {
				return fmt.Errorf("kernel %s: output %d: %w", sym, i, err)
			}
			bufs = append(bufs, t.Data)
		}
		threads := 1
		if ctx != nil && ctx.Threads > 0 {
			threads = ctx.Threads
		}
		k.Call(threads, bufs)
		return nil
	}, nil
}

// checkKernelTensor: the compiled code has the shapes baked in, so a tensor
// of another size would be read or written out of bounds.
func checkKernelTensor(v *ir.Value, t *ir.Tensor) error {
	if v == nil || t == nil {
		return fmt.Errorf("missing tensor")
	}
	if t.DType != v.DType {
		return fmt.Errorf("dtype %s, kernel built for %s", t.DType, v.DType)
	}
	if n := ir.NumElements(v.Shape); n < 0 || int64(len(t.Data)) != n*int64(v.DType.Size()) {
		return fmt.Errorf("shape %v (%d bytes), kernel built for %v", t.Shape, len(t.Data), v.Shape)
	}
	return nil
}

// interpretedFunc runs the Body subgraph with the op library.
func interpretedFunc(n *ir.Node) (opkernel.Func, error) {
	sub, err := NewSession(n.Body, Options{Threads: 1})
	if err != nil {
		return nil, fmt.Errorf("GraphKernel node %s (interpreted): %w", n.Name, err)
	}
	return func(ctx *opkernel.Ctx, _ *ir.Node, in []*ir.Tensor, out []*ir.Tensor) error {
		if ctx != nil {
			sub.ctx.Threads = ctx.Threads
		}
		res, err := sub.Run(in)
		if err != nil {
			return err
		}
		if len(res) != len(out) {
			return fmt.Errorf("fused body gave %d outputs, want %d", len(res), len(out))
		}
		for i := range res {
			copy(out[i].Data, res[i].Data)
		}
		return nil
	}, nil
}
