// Package ascend prepares fused GraphKernel nodes for Ascend the way
// converter_lite does (mindspore-lite/tools/graph_kernel/converter/kernel_builder.cc,
// akg/ascend_kernel_builder.cc): each node carries its AKG
// kernel-info JSON (process "aicore", target_info.arch = the SoC) and is
// registered as the custom op Fused_x<n_in>_y<n_out>; compilation is left
// to CANN at deployment. In addition an Ascend C kernel is generated and
// embedded, so a deployment without AKG can compile it with CANN's
// ascendc toolchain; it is verified on the host against an emulation of
// the Ascend C API subset it uses (Emulator).
package ascend

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"gkconv/internal/ir"
	"gkconv/internal/kernels"
)

// StatusSourceOnly is the kernel_status of every node: CANN is not run.
const StatusSourceOnly = "source only: compile with CANN at deployment"

// DefaultSoc is the SoC when neither [ascend_context] soc_version nor
// --device names one.
const DefaultSoc = "Ascend910B"

// Options configure the Ascend builder.
type Options struct {
	// Soc is target_info.arch: [ascend_context] soc_version or the
	// --device value; default DefaultSoc.
	Soc string
}

// Builder attaches kernel-info and Ascend C sources; it satisfies
// fusion.KernelBuilder.
type Builder struct{ opts Options }

// NewBuilder returns a Builder.
func NewBuilder(opts Options) *Builder {
	if opts.Soc == "" || strings.EqualFold(opts.Soc, "ascend") {
		opts.Soc = DefaultSoc
	}
	return &Builder{opts: opts}
}

// RegOpName is the custom op type GE resolves: Fused_x<n_in>_y<n_out>.
func RegOpName(nIn, nOut int) string { return fmt.Sprintf("Fused_x%d_y%d", nIn, nOut) }

// BuildKernels processes every GraphKernel node in nodes. The kernel-info
// JSON is required (errors name the node); an Ascend C source the generator
// cannot write is recorded in kernel_error and the node still deploys
// through AKG's info path.
func (b *Builder) BuildKernels(nodes []*ir.Node) error {
	var errs []error
	for _, n := range nodes {
		if n == nil || n.Op != ir.OpGraphKernel {
			continue
		}
		if err := kernels.CheckBodyArity(n); err != nil {
			errs = append(errs, fmt.Errorf("GraphKernel node %s: %w", n.Name, err))
			continue
		}
		if n.Attrs == nil {
			n.Attrs = ir.Attrs{}
		}
		base := strings.TrimSuffix(kernels.KernelBaseName(n), "_kernel0")
		n.Attrs[ir.GKKernelName] = ir.StringAttr(base)
		info, err := kernels.InfoJSONFor(n, kernels.InfoTarget{Process: "aicore", Soc: b.opts.Soc})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		a := n.Attrs
		nin, nout := len(n.Body.Inputs), len(n.Body.Outputs)
		var inNames, outNames []string
		for i := 0; i < nin; i++ {
			inNames = append(inNames, fmt.Sprintf("x%d", i))
		}
		for i := 0; i < nout; i++ {
			outNames = append(outNames, fmt.Sprintf("y%d", i))
		}
		isum := sha256.Sum256(info)
		kernels.SetKernelIOAttrs(n, base)
		a[ir.GKProcess] = ir.StringAttr("aicore")
		a[ir.GKTarget] = ir.StringAttr("aicore")
		a[ir.GKSoc] = ir.StringAttr(b.opts.Soc)
		a[ir.GKRegOpName] = ir.StringAttr(RegOpName(nin, nout))
		a[ir.GKInputNames] = ir.StringsAttr(inNames...)
		a[ir.GKOutputNames] = ir.StringsAttr(outNames...)
		a[ir.GKInfoPath] = ir.StringAttr(base + ".info")
		a[ir.GKKernelInfo] = ir.BytesAttr(info)
		a[ir.GKKernelInfoHash] = ir.StringAttr(hex.EncodeToString(isum[:]))
		a[ir.GKKernelStatus] = ir.StringAttr(StatusSourceOnly)
		src, plan, err := Generate(base+"_kernel0", n.Body)
		if err != nil {
			for _, k := range []string{ir.GKKernelAscendC, ir.GKKernelAscendCHash, ir.GKStrategy, ir.GKBlockDim, ir.GKUBBytes, ir.GKBinaryFormat} {
				delete(a, k)
			}
			a[ir.GKKernelError] = ir.StringAttr(err.Error())
			continue
		}
		ssum := sha256.Sum256([]byte(src))
		a[ir.GKBinaryFormat] = ir.StringAttr("ascendc-source")
		a[ir.GKKernelAscendC] = ir.BytesAttr([]byte(src))
		a[ir.GKKernelAscendCHash] = ir.StringAttr(hex.EncodeToString(ssum[:]))
		a[ir.GKStrategy] = ir.StringAttr(plan.Strategy)
		a[ir.GKBlockDim] = ir.IntAttr(plan.BlockDim)
		a[ir.GKUBBytes] = ir.IntAttr(plan.UBBytes)
		delete(a, ir.GKKernelError)
	}
	return errors.Join(errs...)
}
