// Package cuda turns fused GraphKernel bodies into CUDA kernels compiled to
// PTX by LLVM's NVPTX backend (clang -x cuda --cuda-device-only, no NVIDIA
// SDK, no libdevice: the math is in the generated source). Each kernel is
// `extern "C" __global__ void <name>_kernel0(inputs..., outputs...)`; the
// launch configuration follows from the static shapes and is recorded on the
// node next to the PTX, as converter_lite's GPU builder does (reference
// §7.2), except that the PTX is embedded instead of referenced by path.
package cuda

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"gkconv/internal/ir"
	"gkconv/internal/kernels"
)

// Node attributes written by BuildKernels, on top of the shared
// kernel_name/inputs_shape/outputs_shape/outputs_type/outputs_format.
const (
	AttrProcess           = "process"            // "cuda"
	AttrTarget            = "target"             // "cuda"
	AttrBinaryFormat      = "binary_format"      // "ptx"
	AttrFuncType          = "func_type"          // "custom_akg_gpu" (§7.2)
	AttrUniqueName        = "unique_name"        // "CustomAkgGpu"
	AttrComputeCapability = "compute_capability" // "8.0" for sm_80
	AttrGridDimX          = "GridDimX"           // ints: launch configuration
	AttrGridDimY          = "GridDimY"
	AttrGridDimZ          = "GridDimZ"
	AttrBlockDimX         = "BlockDimX"
	AttrBlockDimY         = "BlockDimY"
	AttrBlockDimZ         = "BlockDimZ"
	AttrSharedBytes       = "shared_mem_bytes" // int: static shared memory per block
	AttrStrategy          = "kernel_strategy"  // elementwise | row | inline-reduce
	AttrKernelPTX         = "kernel_ptx"       // bytes: the PTX text
	AttrKernelPTXHash     = "kernel_ptx_sha256"
	AttrKernelSource      = "kernel_source" // the CUDA source
	AttrKernelInfo        = "kernel_info"   // bytes: AKG kernel-info JSON, process "cuda"
	AttrKernelStatus      = "kernel_status" // "compiled" | "interpreted"
	AttrKernelError       = "kernel_error"
)

// Options configure the CUDA builder.
type Options struct {
	// Clang is the clang command; default $GKCONV_CLANG, then clang, clang-14.
	Clang string
	// Arch is the GPU architecture, "sm_XX"; default sm_80.
	Arch string
	// CacheDir holds compiled PTX by content hash; default the CPU kernel
	// cache (kernels.DefaultCacheDir).
	CacheDir string
	// Jobs is the number of parallel compiles; default min(8, NumCPU).
	Jobs int
	// AllowInterpreted marks bodies the generator rejects with
	// kernel_status=interpreted instead of failing the build.
	AllowInterpreted bool
}

// Builder compiles GraphKernel nodes to PTX; it satisfies
// fusion.KernelBuilder.
type Builder struct {
	opts  Options
	cc    *clang
	Stats kernels.Stats
}

// NewBuilder returns a Builder; nothing runs until BuildKernels.
func NewBuilder(opts Options) *Builder {
	if opts.Arch == "" {
		opts.Arch = "sm_80"
	}
	return &Builder{opts: opts}
}

// ComputeCapability turns "sm_86" into "8.6".
func ComputeCapability(arch string) (string, error) {
	s, ok := strings.CutPrefix(arch, "sm_")
	if !ok || len(s) < 2 {
		return "", fmt.Errorf("GPU arch %q is not of the form sm_XX", arch)
	}
	if _, err := strconv.Atoi(s); err != nil {
		return "", fmt.Errorf("GPU arch %q is not of the form sm_XX", arch)
	}
	return s[:len(s)-1] + "." + s[len(s)-1:], nil
}

// BaseName is the AKG kernel name of a node without the entry suffix.
func BaseName(n *ir.Node) string {
	name := n.Attrs.String(kernels.AttrKernelName, "")
	name = strings.TrimSuffix(name, "_kernel0")
	if name != "" {
		n2 := *n
		n2.Attrs = ir.Attrs{kernels.AttrKernelName: ir.StringAttr(name)}
		return kernels.KernelBaseName(&n2)
	}
	return kernels.KernelBaseName(n)
}

// BuildKernels generates, compiles (deduplicated, in parallel, cached) and
// attaches PTX to every GraphKernel node in nodes; other nodes are ignored.
func (b *Builder) BuildKernels(nodes []*ir.Node) error {
	cc, err := ComputeCapability(b.opts.Arch)
	if err != nil {
		return err
	}
	jobs, err := kernels.GenerateJobs(nodes, func(n *ir.Node) string { return BaseName(n) + "_kernel0" },
		b.opts.AllowInterpreted, []string{AttrKernelPTX, AttrKernelPTXHash, AttrKernelSource}, Generate)
	if err != nil || len(jobs) == 0 {
		return err
	}
	cacheDir, err := kernels.ResolveCacheDir(b.opts.CacheDir)
	if err != nil {
		return err
	}
	if b.cc == nil {
		if b.cc, err = resolveClang(b.opts.Clang); err != nil {
			return err
		}
	}
	index, srcs, names := kernels.UniqueSources(jobs)
	b.Stats.Kernels += len(jobs)
	b.Stats.Unique += len(srcs)
	ptxs, err := b.cc.compileAll(srcs, names, b.opts.Arch, cacheDir, b.opts.Jobs, &b.Stats)
	if err != nil {
		return err
	}
	for _, j := range jobs {
		ptx := ptxs[index[j.Src]]
		if err := CheckPTX(ptx, j.Symbol, b.opts.Arch, len(j.Node.Body.Inputs)+len(j.Node.Body.Outputs)); err != nil {
			return fmt.Errorf("GraphKernel node %s: %w", j.Node.Name, err)
		}
		sum := sha256.Sum256(ptx)
		kernels.SetKernelIOAttrs(j.Node, j.Symbol)
		a := j.Node.Attrs
		a[AttrProcess] = ir.StringAttr("cuda")
		a[AttrTarget] = ir.StringAttr("cuda")
		a[AttrBinaryFormat] = ir.StringAttr("ptx")
		a[AttrFuncType] = ir.StringAttr("custom_akg_gpu")
		a[AttrUniqueName] = ir.StringAttr("CustomAkgGpu")
		a[AttrComputeCapability] = ir.StringAttr(cc)
		a[AttrGridDimX] = ir.IntAttr(j.Extra.Grid[0])
		a[AttrGridDimY] = ir.IntAttr(j.Extra.Grid[1])
		a[AttrGridDimZ] = ir.IntAttr(j.Extra.Grid[2])
		a[AttrBlockDimX] = ir.IntAttr(j.Extra.Block[0])
		a[AttrBlockDimY] = ir.IntAttr(j.Extra.Block[1])
		a[AttrBlockDimZ] = ir.IntAttr(j.Extra.Block[2])
		a[AttrSharedBytes] = ir.IntAttr(j.Extra.SharedBytes)
		a[AttrStrategy] = ir.StringAttr(j.Extra.Strategy)
		a[AttrKernelPTX] = ir.BytesAttr(ptx)
		a[AttrKernelPTXHash] = ir.StringAttr(hex.EncodeToString(sum[:]))
		a[AttrKernelSource] = ir.StringAttr(j.Src)
		a[AttrKernelStatus] = ir.StringAttr("compiled")
		delete(a, AttrKernelError)
		info, err := kernels.InfoJSONFor(j.Node, kernels.InfoTarget{Process: "cuda", ComputeCapability: cc})
		if err != nil {
			return err
		}
		a[AttrKernelInfo] = ir.BytesAttr(info)
	}
	return nil
}
