package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"

	"gkconv/internal/akgcfg"
	"gkconv/internal/fusion"
	"gkconv/internal/ir"
	"gkconv/internal/kernels"
	"gkconv/internal/kernels/ascend"
	"gkconv/internal/kernels/cuda"
)

// fusionOptions are the converter flags that steer kernel building.
type fusionOptions struct {
	kernelCacheDir string
	dumpDir        string
	gpuArch        string // sm_XX, default sm_80
}

// runFusion runs graph-kernel fusion when the config enables it, builds a
// kernel per fused subgraph and records passes and kernels in the report.
func runFusion(g *ir.Graph, cfg *akgcfg.Config, backend akgcfg.Backend, disabled bool, fo fusionOptions, rep *report) error {
	if disabled {
		rep.Warnings = append(rep.Warnings, "--optimize=none: graph kernel fusion skipped")
		return nil
	}
	if cfg == nil || !cfg.FusionEnabled() {
		return nil
	}
	flags := cfg.Flags
	var builder fusion.KernelBuilder
	switch backend.Device {
	case akgcfg.CPU:
		builder = kernels.NewBuilder(kernels.Options{
			CC:       os.Getenv("CC"),
			MArch:    kernels.MArchFor(flags.CPUArch, flags.CPUFeature, flags.CPUType),
			CacheDir: fo.kernelCacheDir,
			Arch:     flags.CPUArch,
			Feature:  flags.CPUFeature,
		})
	case akgcfg.GPU:
		builder = cuda.NewBuilder(cuda.Options{Clang: os.Getenv("GKCONV_CLANG"), Arch: fo.gpuArch, CacheDir: fo.kernelCacheDir})
	case akgcfg.Ascend:
		builder = ascend.NewBuilder(ascend.Options{Soc: backend.Soc})
	}
	dump := fo.dumpDir
	if dump == "" && (flags.DumpAsText || os.Getenv(fusion.DumpEnv) == "on") {
		dump = "graph_kernel_dump"
	}
	if dump != "" {
		if err := os.MkdirAll(dump, 0o755); err != nil {
			return failf(retError, "dump folder: %v", err)
		}
	}
	res, err := fusion.Run(g, flags, backend, builder, fusion.Options{DumpDir: dump})
	if err != nil {
		return failf(retError, "graph kernel fusion: %v", err)
	}
	for _, p := range res.Passes {
		rep.Passes = append(rep.Passes, reportPass{Stage: p.Stage, Name: p.Name, Level: p.Level, Ran: p.Ran, Changed: p.Changed, Note: p.Note})
	}
	byNode := map[string]fusion.KernelRecord{}
	for _, k := range res.Kernels {
		byNode[k.Node] = k
	}
	for _, n := range g.Nodes {
		if n.Op != fusion.OpGraphKernel {
			continue
		}
		k := byNode[n.Name]
		rk := reportKernel{
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
		if err == nil {
			rk.Info = json.RawMessage(info)
			if dump != "" {
				os.WriteFile(filepath.Join(dump, rk.Name+".info"), info, 0o644)
				for attr, ext := range dumpedSources(rk.Target) {
					if src := n.Attrs.String(attr, ""); src != "" {
						os.WriteFile(filepath.Join(dump, rk.Name+ext), []byte(src), 0o644)
					}
				}
			}
		}
		rep.Kernels = append(rep.Kernels, rk)
	}
	if dump != "" {
		renderSVG(dump)
	}
	slog.Info("graph kernel fusion", "kernels", len(rep.Kernels), "nodes_before", res.NodesBefore, "nodes_after", res.NodesAfter)
	return nil
}

// renderSVG turns the DOT dumps into SVG when Graphviz is installed.
func renderSVG(dir string) {
	dot, err := exec.LookPath("dot")
	if err != nil {
		return
	}
	for _, name := range []string{"before", "after"} {
		src := filepath.Join(dir, name+".dot")
		if _, err := os.Stat(src); err != nil {
			continue
		}
		if out, err := exec.Command(dot, "-Tsvg", "-o", filepath.Join(dir, name+".svg"), src).CombinedOutput(); err != nil {
			slog.Warn("dot -Tsvg failed", "file", src, "error", fmt.Sprint(err, string(out)))
		}
	}
}

// dumpedSources maps the source attrs a kernel of target carries to the
// file extensions they are dumped with (kernel_source is C on the CPU and
// CUDA on the GPU).
func dumpedSources(target string) map[string]string {
	src := ".c"
	if target == "cuda" {
		src = ".cu"
	}
	return map[string]string{"kernel_source": src, "kernel_ascendc": ".ascendc.cpp", "kernel_ptx": ".ptx"}
}
