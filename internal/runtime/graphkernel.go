package runtime

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/native"
	"gkconv/internal/runtime/opkernel"
)

// KernelPolicy decides where the native code of a fused CPU kernel comes
// from. A model file is data; the shared object embedded in it
// (kernel_so) is code its author chose, checked only against a sha256 the
// same file records. So by default the runtime never loads it: it loads the
// object Rebuild compiles from the kernel's fused body with this host's
// compiler, or runs the body with the op library.
type KernelPolicy struct {
	// TrustEmbedded loads the embedded shared object (sha256- and
	// ISA-checked) as MindSpore Lite does. Set it only for models whose
	// origin the user trusts: a signature verified against trusted keys, or
	// an explicit opt-in.
	TrustEmbedded bool
	// Rebuild compiles the fused body of GraphKernel node n and returns the
	// shared object and the symbol of its entry point (the caller owns the
	// code generator; the runtime imports none). Used when TrustEmbedded is
	// false; nil or an error means the body runs interpreted.
	Rebuild func(n *ir.Node) (so []byte, symbol string, err error)
	// Warn receives the one warning a session gives when kernels fall back
	// to the interpreted path; nil logs it with slog.
	Warn func(string)
}

func (p KernelPolicy) warn(msg string) {
	if p.Warn != nil {
		p.Warn(msg)
		return
	}
	slog.Warn(msg)
}

// KernelMode is how a fused kernel runs.
type KernelMode string

const (
	KernelEmbedded    KernelMode = "embedded"    // the model's own shared object, loaded
	KernelRebuilt     KernelMode = "rebuilt"     // compiled here from the fused body
	KernelInterpreted KernelMode = "interpreted" // the body run with the op library
)

// KernelBinding says how one fused kernel of a session runs and why.
type KernelBinding struct {
	Node   string
	Mode   KernelMode
	Reason string
	// Fallback: interpreted although a native kernel was wanted (the
	// session warned).
	Fallback bool
}

// Kernels lists how every fused kernel of the session runs, in graph order.
func (s *Session) Kernels() []KernelBinding { return append([]KernelBinding(nil), s.kernels...) }

// OptInHint tells a user how to allow embedded kernel binaries.
const OptInHint = "to run the embedded binary, opt in to embedded native code (converter benchmark --trustEmbeddedKernels or GKCONV_TRUST_EMBEDDED_KERNELS=1), or sign the model at conversion (--signKey) and pass the signer's key with --trustedKeys"

// PlanKernel says how a session with policy trusted (TrustEmbedded) would
// run GraphKernel node n when rebuilding its body would fail with
// rebuildErr (nil: it would succeed); err when it could not run at all.
// It compiles and loads nothing (for `converter inspect`).
func PlanKernel(n *ir.Node, trusted bool, rebuildErr error) (mode KernelMode, reason string, err error) {
	if err := checkProcess(n); err != nil {
		return "", "", err
	}
	a, ok := n.Attrs[ir.GKKernelSO]
	if !ok || a.Kind != ir.AttrBytes || len(a.B) == 0 {
		if n.Attrs.String(ir.GKKernelStatus, "") == "interpreted" && n.Body != nil {
			why := "marked kernel_status=interpreted at conversion"
			if e := n.Attrs.String(ir.GKKernelError, ""); e != "" {
				why += ": " + e
			}
			return KernelInterpreted, why, nil
		}
		return "", "", fmt.Errorf("GraphKernel node %s has no compiled kernel (kernel_so) and is not marked kernel_status=interpreted", n.Name)
	}
	if n.Attrs.String(ir.GKKernelName, "") == "" {
		return "", "", fmt.Errorf("GraphKernel node %s: no kernel_name", n.Name)
	}
	if trusted {
		return KernelEmbedded, "embedded binary trusted", nil
	}
	if n.Body == nil {
		return "", "", fmt.Errorf("GraphKernel node %s carries a compiled binary but no fused body to rebuild it from, and embedded native code is not trusted: %s", n.Name, OptInHint)
	}
	if rebuildErr != nil {
		return KernelInterpreted, rebuildErr.Error(), nil
	}
	return KernelRebuilt, "embedded binary not trusted", nil
}

func checkProcess(n *ir.Node) error {
	switch p := n.Attrs.String(ir.GKProcess, "cpu"); p {
	case "cpu":
		return nil
	case "cuda":
		return fmt.Errorf("its kernel is CUDA PTX (%s): no CUDA device is available to this CPU runtime; run the model with MindSpore Lite on a GPU, or convert with --optimize=general for the CPU",
			n.Attrs.String(ir.GKComputeCapability, "sm_?"))
	case "aicore":
		return fmt.Errorf("its kernel is for an Ascend NPU (%s): no Ascend device is available to this CPU runtime; deploy with CANN, or convert with --optimize=general for the CPU",
			n.Attrs.String(ir.GKSoc, "Ascend"))
	default:
		return fmt.Errorf("its kernel targets process %q, which this CPU runtime cannot run", p)
	}
}

// bindGraphKernel binds a fused GraphKernel node as policy p says (see
// KernelPolicy): the embedded shared object (verified by sha256, checked
// against this CPU, loaded once per process per hash, called through the
// AKG CPU ABI) only when trusted; else the object p.Rebuild compiles from
// the body, else the body with the op library. A node without an object
// runs its Body with the op library only when marked
// kernel_status=interpreted.
func bindGraphKernel(n *ir.Node, p KernelPolicy) (opkernel.Func, KernelBinding, error) {
	b := KernelBinding{Node: n.Name}
	mode, reason, err := PlanKernel(n, p.TrustEmbedded, nil)
	if err != nil {
		return nil, b, err
	}
	b.Mode, b.Reason = mode, reason
	switch mode {
	case KernelInterpreted:
		f, err := interpretedFunc(n)
		return f, b, err
	case KernelEmbedded:
		sym := n.Attrs.String(ir.GKKernelName, "")
		if err := native.CheckHost(n.Attrs.String(ir.GKArch, ""), n.Attrs.String(ir.GKFeature, ""), n.Attrs.String(ir.GKCPUFlags, "")); err != nil {
			return nil, b, fmt.Errorf("GraphKernel node %s (%s): %w", n.Name, sym, err)
		}
		k, err := native.Load(n.Attrs[ir.GKKernelSO].B, n.Attrs.String(ir.GKKernelSOHash, ""), sym)
		if err != nil {
			return nil, b, fmt.Errorf("GraphKernel node %s: %w", n.Name, err)
		}
		return nativeFunc(n, k, sym), b, nil
	}
	// Not trusted: never the embedded object.
	var why error
	if p.Rebuild == nil {
		why = errors.New("no kernel rebuilder given")
	} else if so, sym, err := p.Rebuild(n); err != nil {
		why = err
	} else {
		sum := sha256.Sum256(so)
		k, err := native.Load(so, hex.EncodeToString(sum[:]), sym)
		if err == nil {
			return nativeFunc(n, k, sym), b, nil
		}
		why = fmt.Errorf("loading the rebuilt kernel: %w", err)
	}
	f, err := interpretedFunc(n)
	b.Mode, b.Reason, b.Fallback = KernelInterpreted, why.Error(), true
	return f, b, err
}

// serialKernelBytes: a kernel built with OpenMP (by an earlier version of
// the generator, loaded as a trusted embedded binary) that touches fewer
// bytes (inputs and outputs) runs on one thread. Starting its OpenMP team,
// and then waking the pool's workers parked for it, costs more than the
// second thread saves below this (docs/performance.md#serial-openmp-kernels).
// Kernels built now run their parallel loops as tasks on the pool's workers
// (nativeFunc), and their generator already keeps loops under 32K elements
// serial.
const serialKernelBytes = 4 << 20

func kernelBytes(bufs [][]byte) int {
	n := 0
	for _, b := range bufs {
		n += len(b)
	}
	return n
}

// nativeFunc calls kernel k (symbol sym) for node n.
func nativeFunc(n *ir.Node, k *native.Kernel, sym string) opkernel.Func {
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
		threads := ctx.NumThreads()
		if k.OpenMP() {
			if threads > 1 && kernelBytes(bufs) < serialKernelBytes {
				threads = 1
			}
			if threads > 1 {
				opkernel.Quiesce() // the kernel's OpenMP team needs the cores
			}
			k.Call(threads, bufs)
			return nil
		}
		k.CallOn(threads, func(n int, task func(id int)) {
			opkernel.ParallelFor(ctx, n, 1, func(s, e int) {
				for id := s; id < e; id++ {
					task(id)
				}
			})
		}, bufs)
		return nil
	}
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
