// Package ascend prepares fused GraphKernel nodes for Ascend the way
// converter_lite does (reference §6, §7.1–7.2): each node carries its AKG
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

// Node attributes written by BuildKernels, on top of the shared
// kernel_name/inputs_shape/outputs_shape/outputs_type/outputs_format.
const (
	AttrProcess       = "process"       // "aicore"
	AttrTarget        = "target"        // "aicore"
	AttrBinaryFormat  = "binary_format" // "ascendc-source"
	AttrSoc           = "soc_version"   // e.g. "Ascend910B"
	AttrRegOpName     = "reg_op_name"   // "Fused_x<n_in>_y<n_out>" (§7.2)
	AttrInputNames    = "input_names"   // strings x0..
	AttrOutputNames   = "output_names"  // strings y0..
	AttrInfoPath      = "info_path"     // "<kernel_name>.info": the file name CANN's custom op reads
	AttrKernelInfo    = "kernel_info"   // bytes: the AKG kernel-info JSON
	AttrKernelInfoSHA = "kernel_info_sha256"
	AttrKernelAscendC = "kernel_ascendc" // bytes: the Ascend C source
	AttrKernelSrcSHA  = "kernel_ascendc_sha256"
	AttrStrategy      = "kernel_strategy" // vector | scalar | cube
	AttrBlockDim      = "block_dim"       // int: cores of the launch
	AttrUBBytes       = "ub_bytes"        // int: Unified Buffer the kernel allocates
	AttrKernelStatus  = "kernel_status"   // see StatusSourceOnly
	AttrKernelError   = "kernel_error"    // why no Ascend C source was generated
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
		if n == nil || n.Op != "GraphKernel" {
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
		n.Attrs[kernels.AttrKernelName] = ir.StringAttr(base)
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
		a[AttrProcess] = ir.StringAttr("aicore")
		a[AttrTarget] = ir.StringAttr("aicore")
		a[AttrSoc] = ir.StringAttr(b.opts.Soc)
		a[AttrRegOpName] = ir.StringAttr(RegOpName(nin, nout))
		a[AttrInputNames] = ir.StringsAttr(inNames...)
		a[AttrOutputNames] = ir.StringsAttr(outNames...)
		a[AttrInfoPath] = ir.StringAttr(base + ".info")
		a[AttrKernelInfo] = ir.BytesAttr(info)
		a[AttrKernelInfoSHA] = ir.StringAttr(hex.EncodeToString(isum[:]))
		a[AttrKernelStatus] = ir.StringAttr(StatusSourceOnly)
		src, plan, err := Generate(base+"_kernel0", n.Body)
		if err != nil {
			for _, k := range []string{AttrKernelAscendC, AttrKernelSrcSHA, AttrStrategy, AttrBlockDim, AttrUBBytes, AttrBinaryFormat} {
				delete(a, k)
			}
			a[AttrKernelError] = ir.StringAttr(err.Error())
			continue
		}
		ssum := sha256.Sum256([]byte(src))
		a[AttrBinaryFormat] = ir.StringAttr("ascendc-source")
		a[AttrKernelAscendC] = ir.BytesAttr([]byte(src))
		a[AttrKernelSrcSHA] = ir.StringAttr(hex.EncodeToString(ssum[:]))
		a[AttrStrategy] = ir.StringAttr(plan.Strategy)
		a[AttrBlockDim] = ir.IntAttr(plan.BlockDim)
		a[AttrUBBytes] = ir.IntAttr(plan.UBBytes)
		delete(a, AttrKernelError)
	}
	return errors.Join(errs...)
}
