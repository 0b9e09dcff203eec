package cpu

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"gkconv/internal/ir"
	"gkconv/internal/kernels"
	"gkconv/internal/kernels/cache"
)

// Builder compiles GraphKernel nodes to shared objects; it satisfies
// fusion.KernelBuilder. It is safe for one BuildKernels call at a time.
type Builder struct {
	opts  Options
	cc    *compiler
	Stats cache.Stats
}

// NewBuilder returns a Builder; nothing runs until BuildKernels.
func NewBuilder(opts Options) *Builder { return &Builder{opts: opts} }

// BuildKernels generates, compiles (deduplicated, in parallel, cached) and
// attaches a kernel to every GraphKernel node in nodes. Other nodes are
// ignored. Errors name the nodes; with Options.AllowInterpreted a body the
// generator rejects is marked kernel_status=interpreted instead.
func (b *Builder) BuildKernels(nodes []*ir.Node) error {
	jobs, err := kernels.GenerateJobs(nodes, func(n *ir.Node) string { return kernels.KernelBaseName(n) + "_kernel" },
		b.opts.AllowInterpreted, []string{ir.GKKernelSO, ir.GKKernelSOHash, ir.GKKernelSource},
		func(symbol string, body *ir.Graph) (string, struct{}, error) {
			src, err := GenerateC(symbol, body)
			return src, struct{}{}, err
		})
	if err != nil || len(jobs) == 0 {
		return err
	}
	cacheDir, err := cache.ResolveDir(b.opts.CacheDir)
	if err != nil {
		return err
	}
	if b.cc == nil {
		if b.cc, err = resolveCompiler(b.opts.CC, b.opts.MArch, cacheDir); err != nil {
			return err
		}
	}
	index, srcs, names := kernels.UniqueSources(jobs)
	b.Stats.Kernels += len(jobs)
	b.Stats.Unique += len(srcs)
	var counts cache.Counts
	objects := soCache(b.opts.CacheDir, &counts) // the setting: a remote URL stays one
	sos, err := cache.CompileAll(len(srcs), b.opts.Jobs, &b.Stats, func(i int) ([]byte, bool, error) {
		return b.cc.compile(srcs[i], objects, names[i])
	})
	b.Stats.AddCounts(&counts)
	if err != nil {
		return err
	}
	tgt := b.target()
	for _, j := range jobs {
		so := sos[index[j.Src]]
		sum := sha256.Sum256(so)
		setKernelAttrs(j.Node, j.Symbol, tgt)
		a := j.Node.Attrs
		a[ir.GKCPUFlags] = ir.StringAttr(strings.Join(b.cc.features, ","))
		a[ir.GKMArch] = ir.StringAttr(b.cc.march)
		a[ir.GKKernelSO] = ir.BytesAttr(so)
		a[ir.GKKernelSOHash] = ir.StringAttr(hex.EncodeToString(sum[:]))
		a[ir.GKKernelSource] = ir.StringAttr(j.Src)
		a[ir.GKKernelStatus] = ir.StringAttr("compiled")
		delete(a, ir.GKKernelError)
	}
	return nil
}

func (b *Builder) target() kernels.Target {
	t := kernels.Target{Arch: b.opts.Arch, System: "linux", Feature: b.opts.Feature}
	if t.Arch == "" {
		t.Arch = ir.HostArch()
	}
	if t.Feature == "" && b.cc != nil {
		t.Feature = b.cc.feature
	}
	return t
}

// setKernelAttrs writes converter_lite's CPU Custom attrs
// (mindspore-lite/tools/graph_kernel/converter/akg/cpu_kernel_builder.cc).
func setKernelAttrs(n *ir.Node, symbol string, t kernels.Target) {
	kernels.SetKernelIOAttrs(n, symbol)
	a := n.Attrs
	a[ir.GKProcess] = ir.StringAttr("cpu")
	a[ir.GKArch] = ir.StringAttr(t.Arch)
	a[ir.GKSystem] = ir.StringAttr(t.System)
	a[ir.GKFeature] = ir.StringAttr(t.Feature)
}
