package convert

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"gkconv/internal/akgcfg"
	"gkconv/internal/fusion"
	"gkconv/internal/ir"
	"gkconv/internal/kernels"
	"gkconv/internal/kernels/ascend"
	"gkconv/internal/kernels/cache"
	"gkconv/internal/kernels/cpu"
	"gkconv/internal/kernels/cuda"
)

// fuseOptions are the options that steer fusion and kernel building.
type fuseOptions struct {
	disabled       bool // --optimize=none without --device
	kernelCacheDir string
	noSelfCheck    bool   // Options.NoKernelSelfCheck
	dumpDir        string // Options.DumpDir
	gpuArch        string // sm_XX, default sm_80
	progress       *progress
}

// fuse runs graph-kernel fusion when the config enables it, builds a kernel
// per fused subgraph, writes the dumps and records passes and kernels in the
// report.
func fuse(g *ir.Graph, cfg *akgcfg.Config, backend akgcfg.Backend, fo fuseOptions, rep *Report) error {
	if fo.disabled {
		rep.Warnings = append(rep.Warnings, "--optimize=none: graph kernel fusion skipped")
		return nil
	}
	if cfg == nil || !cfg.FusionEnabled() {
		return nil
	}
	flags := cfg.Flags
	for _, w := range fusion.CheckNames(flags) {
		// "key=name: ...": name where the key's value came from (the
		// config line, MS_DEV_GRAPH_KERNEL_FLAGS, a --path JSON file).
		key, _, _ := strings.Cut(w, "=")
		rep.warn(cfg.Source(key) + ": " + w)
	}
	var builder fusion.KernelBuilder
	switch backend.Device {
	case akgcfg.CPU:
		builder = cpu.NewBuilder(cpu.Options{
			CC:       os.Getenv("CC"),
			MArch:    cpu.MArchFor(flags.CPUArch, flags.CPUFeature, flags.CPUType),
			CacheDir: fo.kernelCacheDir,
			Arch:     flags.CPUArch,
			Feature:  flags.CPUFeature,
		})
	case akgcfg.GPU:
		builder = cuda.NewBuilder(cuda.Options{Clang: os.Getenv("GKCONV_CLANG"), Arch: fo.gpuArch, CacheDir: fo.kernelCacheDir})
	case akgcfg.Ascend:
		builder = ascend.NewBuilder(ascend.Options{Soc: backend.Soc})
	}
	dump := planDumps(fo.dumpDir, flags.DumpAsText, os.Getenv(DumpEnv))
	if dump.dir != "" {
		if err := os.MkdirAll(dump.dir, 0o755); err != nil {
			return Errorf(CodeError, "dump folder: %v", err)
		}
	}
	fopts := fusion.Options{DumpDir: dump.dir, DumpIR: dump.passIR, OnPass: fo.progress.pass}
	switch b := builder.(type) {
	case *cpu.Builder:
		b.Stats.OnProgress = fo.progress.kernels
	case *cuda.Builder:
		b.Stats.OnProgress = fo.progress.kernels
	}
	var check *kernelSelfCheck
	if backend.Device == akgcfg.CPU && !fo.noSelfCheck {
		check = newKernelSelfCheck(fo.kernelCacheDir)
		fopts.Check = check
	}
	warnDynamicShapes(g, rep)
	res, err := fusion.Run(g, flags, backend, builder, fopts)
	if err != nil {
		return Errorf(CodeError, "graph kernel fusion: %v", err)
	}
	for _, b := range bodies(g) {
		fopts.OnPass = nil
		br, err := fusion.Run(b, flags, backend, builder, fopts)
		if err != nil {
			return Errorf(CodeError, "graph kernel fusion: body %s: %v", b.Name, err)
		}
		res.Kernels = append(res.Kernels, br.Kernels...)
		res.NodesBefore += br.NodesBefore
		res.NodesAfter += br.NodesAfter
	}
	for _, p := range res.Passes {
		rep.Passes = append(rep.Passes, ReportPass{Stage: p.Stage, Name: p.Name, Level: p.Level, Ran: p.Ran, Changed: p.Changed, Note: p.Note})
	}
	byNode := map[string]fusion.KernelRecord{}
	for _, k := range res.Kernels {
		byNode[k.Node] = k
	}
	for _, n := range allNodes(g) {
		if n.Op != ir.OpGraphKernel {
			continue
		}
		rk, info, ok := reportKernel(n, byNode[n.Name])
		if ok {
			dump.kernel(n, rk, info)
		}
		rep.Kernels = append(rep.Kernels, rk)
	}
	var st *cache.Stats
	switch b := builder.(type) {
	case *cpu.Builder:
		st = &b.Stats
	case *cuda.Builder:
		st = &b.Stats
	}
	if st != nil {
		rep.KernelBuild = &ReportBuild{Kernels: st.Kernels, Unique: st.Unique, Compiled: st.Compiled, CacheHits: st.CacheHits}
		if cache.UsesRemote(fo.kernelCacheDir) {
			rep.KernelBuild.Remote = &ReportRemote{Hits: st.RemoteHits, Puts: st.RemotePuts, Errors: st.RemoteErrors}
		}
		// Already logged by the cache, once per process.
		rep.Warnings = append(rep.Warnings, st.Warnings...)
		if check != nil {
			rep.KernelBuild.SelfCheck = &ReportSelfCheck{Ran: check.ran, Unfused: check.failed, Skipped: check.skipped,
				ElapsedMs: float64(check.elapsed.Microseconds()) / 1000}
		}
	}
	if check != nil {
		for _, f := range check.failed {
			rep.warn("kernel self-check: un-fused " + f)
		}
	}
	dump.renderSVG()
	slog.Info("graph kernel fusion", "kernels", len(rep.Kernels), "nodes_before", res.NodesBefore, "nodes_after", res.NodesAfter)
	return nil
}

// reportKernel describes GraphKernel node n; info is its kernel-info JSON,
// ok false when it has none.
func reportKernel(n *ir.Node, k fusion.KernelRecord) (rk ReportKernel, info []byte, ok bool) {
	rk = ReportKernel{
		Name:         n.Attrs.String("kernel_name", n.Name),
		Target:       n.Attrs.String("process", "cpu"),
		Ops:          k.Ops,
		SourceNodes:  n.Provenance,
		Pattern:      k.Pattern,
		BinaryFormat: n.Attrs.String("binary_format", "so"),
		Status:       n.Attrs.String("kernel_status", ""),
	}
	for _, attr := range []string{"kernel_so", "kernel_ptx", "kernel_ascendc"} {
		if b := n.Attrs[attr]; b.Kind == ir.AttrBytes {
			rk.BinaryBytes = len(b.B)
			sum := sha256.Sum256(b.B)
			rk.BinarySHA256 = hex.EncodeToString(sum[:])
		}
	}
	if rk.Target == "cuda" {
		rk.Launch = map[string]int64{}
		for _, d := range []string{"GridDimX", "GridDimY", "GridDimZ", "BlockDimX", "BlockDimY", "BlockDimZ", "shared_mem_bytes"} {
			rk.Launch[d] = n.Attrs.Int(d, 0)
		}
	}
	info, err := kernels.InfoJSON(n)
	if b := n.Attrs["kernel_info"]; b.Kind == ir.AttrBytes {
		info, err = b.B, nil
	}
	if err != nil {
		return rk, nil, false
	}
	rk.Info = json.RawMessage(info)
	return rk, info, true
}

// warnDynamicShapes says when graph inputs with unknown dims keep nodes out
// of graph kernel fusion (which fuses static shapes only, as MindSpore's on
// CPU), so that a user converting without --inputShape learns why a model
// got few or no fused kernels.
func warnDynamicShapes(g *ir.Graph, rep *Report) {
	var dyn []string
	for _, v := range g.Inputs {
		if v.Const == nil && !v.ShapeKnown() {
			dyn = append(dyn, fmt.Sprintf("%s%v", v.Name, v.Shape))
		}
	}
	if len(dyn) == 0 {
		return
	}
	static := 0
	for _, n := range g.Nodes {
		if allShapesKnown(n) {
			static++
		}
	}
	rep.warn(fmt.Sprintf("graph kernel fusion: input(s) %s have dynamic dims (-1), so %d of %d nodes have unknown "+
		"shapes and are not fused; fix the dims with --inputShape=\"%s\", each ? the size it runs at, to fuse them",
		strings.Join(dyn, ", "), len(g.Nodes)-static, len(g.Nodes), exampleShape(g.Inputs)))
}

func allShapesKnown(n *ir.Node) bool {
	for _, v := range n.Outputs {
		if v != nil && !v.ShapeKnown() {
			return false
		}
	}
	return true
}

// exampleShape is an --inputShape value for the dynamic inputs, unknown
// dims shown as ?.
func exampleShape(ins []*ir.Value) string {
	var parts []string
	for _, v := range ins {
		if v.Const != nil || v.ShapeKnown() {
			continue
		}
		dims := make([]string, len(v.Shape))
		for i, d := range v.Shape {
			dims[i] = fmt.Sprint(d)
			if d < 0 {
				dims[i] = "?"
			}
		}
		parts = append(parts, v.Name+":"+strings.Join(dims, ","))
	}
	return strings.Join(parts, ";")
}
