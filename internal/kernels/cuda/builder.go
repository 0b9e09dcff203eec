// Package cuda turns fused GraphKernel bodies into CUDA kernels compiled to
// PTX by LLVM's NVPTX backend (clang -x cuda --cuda-device-only, no NVIDIA
// SDK, no libdevice: the math is in the generated source). Each kernel is
// `extern "C" __global__ void <name>_kernel0(inputs..., outputs...)`; the
// launch configuration follows from the static shapes and is recorded on the
// node next to the PTX, as converter_lite's GPU builder does
// (mindspore-lite/tools/graph_kernel/converter/akg/gpu_kernel_builder.cc),
// except that the PTX is embedded instead of referenced by path.
package cuda

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"gkconv/internal/ir"
	"gkconv/internal/kernels"
	"gkconv/internal/kernels/cache"
)

// Options configure the CUDA builder.
type Options struct {
	// Clang is the clang command; default $GKCONV_CLANG, then clang, clang-14.
	Clang string
	// Arch is the GPU architecture, "sm_XX"; default sm_80.
	Arch string
	// CacheDir holds compiled PTX by content hash; default the CPU kernel
	// cache (cache.DefaultDir). An http(s) URL is a remote cache
	// with a local one in front (cache.Cache).
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
	Stats cache.Stats
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
	name := n.Attrs.String(ir.GKKernelName, "")
	name = strings.TrimSuffix(name, "_kernel0")
	if name != "" {
		n2 := *n
		n2.Attrs = ir.Attrs{ir.GKKernelName: ir.StringAttr(name)}
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
		b.opts.AllowInterpreted, []string{ir.GKKernelPTX, ir.GKKernelPTXHash, ir.GKKernelSource}, Generate)
	if err != nil || len(jobs) == 0 {
		return err
	}
	if _, err := cache.ResolveDir(b.opts.CacheDir); err != nil {
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
	var counts cache.Counts
	objects := ptxCache(b.opts.CacheDir, &counts) // the setting: a remote URL stays one
	ptxs, err := cache.CompileAll(len(srcs), b.opts.Jobs, &b.Stats, func(i int) ([]byte, bool, error) {
		return b.cc.compile(srcs[i], b.opts.Arch, objects, names[i])
	})
	b.Stats.AddCounts(&counts)
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
		a[ir.GKProcess] = ir.StringAttr("cuda")
		a[ir.GKTarget] = ir.StringAttr("cuda")
		a[ir.GKBinaryFormat] = ir.StringAttr("ptx")
		a[ir.GKFuncType] = ir.StringAttr("custom_akg_gpu")
		a[ir.GKUniqueName] = ir.StringAttr("CustomAkgGpu")
		a[ir.GKComputeCapability] = ir.StringAttr(cc)
		a[ir.GKGridDimX] = ir.IntAttr(j.Extra.Grid[0])
		a[ir.GKGridDimY] = ir.IntAttr(j.Extra.Grid[1])
		a[ir.GKGridDimZ] = ir.IntAttr(j.Extra.Grid[2])
		a[ir.GKBlockDimX] = ir.IntAttr(j.Extra.Block[0])
		a[ir.GKBlockDimY] = ir.IntAttr(j.Extra.Block[1])
		a[ir.GKBlockDimZ] = ir.IntAttr(j.Extra.Block[2])
		a[ir.GKSharedBytes] = ir.IntAttr(j.Extra.SharedBytes)
		a[ir.GKStrategy] = ir.StringAttr(j.Extra.Strategy)
		a[ir.GKKernelPTX] = ir.BytesAttr(ptx)
		a[ir.GKKernelPTXHash] = ir.StringAttr(hex.EncodeToString(sum[:]))
		a[ir.GKKernelSource] = ir.StringAttr(j.Src)
		a[ir.GKKernelStatus] = ir.StringAttr("compiled")
		delete(a, ir.GKKernelError)
		info, err := kernels.InfoJSONFor(j.Node, kernels.InfoTarget{Process: "cuda", ComputeCapability: cc})
		if err != nil {
			return err
		}
		a[ir.GKKernelInfo] = ir.BytesAttr(info)
	}
	return nil
}
