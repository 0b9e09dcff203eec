package convert

import (
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"gkconv/internal/ir"
)

// dumpPlan is where and what a conversion dumps. planDumps is the one place
// that decides it.
type dumpPlan struct {
	dir    string // "" for no dumps
	passIR bool   // the IR as text after every fusion pass (in dir)
}

// planDumps resolves Options.DumpDir, the config's dump_as_text and the
// value of MS_DEV_DUMP_GRAPH_KERNEL_IR. With a dumpDir, the DOT graphs and
// kernel files always go there and the per-pass IR text when dump_as_text or
// the variable is on (any case); without one, dump_as_text or exactly "on"
// selects DefaultDumpDir.
func planDumps(dumpDir string, dumpAsText bool, env string) dumpPlan {
	p := dumpPlan{dir: dumpDir, passIR: dumpAsText || strings.EqualFold(env, "on")}
	if p.dir == "" && (dumpAsText || env == "on") {
		p.dir = DefaultDumpDir
	}
	return p
}

// kernel writes a fused kernel's info JSON and its sources.
func (p dumpPlan) kernel(n *ir.Node, rk ReportKernel, info []byte) {
	if p.dir == "" {
		return
	}
	os.WriteFile(filepath.Join(p.dir, rk.Name+".info"), info, 0o644)
	for attr, ext := range dumpedSources(rk.Target) {
		if src := n.Attrs.String(attr, ""); src != "" {
			os.WriteFile(filepath.Join(p.dir, rk.Name+ext), []byte(src), 0o644)
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

// renderSVG turns the DOT dumps into SVG when Graphviz is installed.
func (p dumpPlan) renderSVG() {
	if p.dir == "" {
		return
	}
	dot, err := exec.LookPath("dot")
	if err != nil {
		return
	}
	for _, name := range []string{"before", "after"} {
		src := filepath.Join(p.dir, name+".dot")
		if _, err := os.Stat(src); err != nil {
			continue
		}
		if out, err := exec.Command(dot, "-Tsvg", "-o", filepath.Join(p.dir, name+".svg"), src).CombinedOutput(); err != nil {
			slog.Warn("dot -Tsvg failed", "file", src, "error", fmt.Sprint(err, string(out)))
		}
	}
}
