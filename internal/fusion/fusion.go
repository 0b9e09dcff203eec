// Package fusion is the graph-kernel fusion engine: it rewrites an ir.Graph
// the way MindSpore converter_lite's GraphKernelOptimize does
// (mindspore-lite/tools/graph_kernel/converter/graph_kernel_optimization.cc):
// complex ops are expanded into basic ops, basic ops are clustered, each
// cluster is re-partitioned by the split model, and every resulting composite
// area becomes one "GraphKernel" node whose Body is the fused subgraph.
//
// The pipeline is one table of passes (passes.go); whether a pass runs is
// decided by akgcfg.Flags.PassEnabled exactly as GraphKernelPassManager::Add.
// converter_lite's graph fusion passes, which run before it on every
// conversion (RunAnf, anf.go), are a second table there. Each pass is in a
// file named after it, gk_<pass>.go for the graph-kernel table and
// anf_<pass>.go for converter_lite's fusion passes; the other files are
// shared helpers. passes.go's passOrder declares which passes must run
// before which, checked when the package is initialised.
package fusion

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gkconv/internal/akgcfg"
	"gkconv/internal/ir"
)

// KernelBuilder compiles the Body of each GraphKernel node (the
// akg_kernel_builder pass). Implementations set whatever attributes the
// runtime needs on the nodes; they must not change the nodes' inputs or
// outputs. Package internal/kernels implements it.
type KernelBuilder interface {
	BuildKernels(nodes []*ir.Node) error
}

// KernelChecker runs a built kernel against its body (the converter's
// kernel self-check, buildkernel.kernel_self_check); an error is the reason
// the kernel is un-fused.
type KernelChecker interface {
	CheckKernel(k *ir.Node) error
	// KernelUnfused is told of every kernel node un-fused for a failed
	// check (nodes sharing one object share its verdict, so there can be
	// more of them than failed checks).
	KernelUnfused(k *ir.Node, reason string)
}

// Options are the engine's output side channels.
type Options struct {
	// DumpDir receives before.dot/after.dot whenever it is not empty, and
	// with DumpIR the IR as text after every pass that ran
	// (NNNN_stage<S>_<stage>_<idx>_<pass>.txt).
	DumpDir string
	// DumpIR turns the per-pass IR text on. The caller decides it (the
	// converter, internal/convert: dump_as_text or
	// MS_DEV_DUMP_GRAPH_KERNEL_IR=on).
	DumpIR bool
	// Check, when set, verifies every compiled kernel after the build;
	// kernels it rejects go back into the graph as plain nodes.
	Check KernelChecker
	// OnPass, when set, is called before each pass that runs, with its
	// position in the pass table and its "stage.name" (progress displays).
	OnPass func(index, total int, name string)
}

// PassRecord says what one pass of the table did.
type PassRecord struct {
	Stage      string
	StageIndex int
	Name       string
	PassIndex  int
	Level      int
	Ran        bool
	Changed    bool
	Note       string
}

// KernelRecord describes one GraphKernel node of the result graph.
type KernelRecord struct {
	Node        string   // node name (unique in the graph)
	KernelName  string   // attr kernel_name: Fused_<ops>_<hash>
	Ops         []string // body ops in topological order
	SourceNodes []string // provenance: original model node names
	Pattern     string   // dominant split-model pattern of the body
}

// Result is the report of one Run.
type Result struct {
	Passes  []PassRecord
	Kernels []KernelRecord
	// NodesBefore/NodesAfter count top-level nodes.
	NodesBefore, NodesAfter int
}

// state is what passes share during one Run.
type state struct {
	g       *ir.Graph
	flags   *akgcfg.Flags
	backend akgcfg.Backend
	builder KernelBuilder
	check   KernelChecker
	edit    *ir.Editor // names and constants of the top-level graph
	// built records whether the build stage ran.
	built bool
}

// Run optimizes g in place. flags must have been resolved for backend
// (flags.Resolve); a nil flags means defaults (opt_level 0: nothing runs).
func Run(g *ir.Graph, flags *akgcfg.Flags, backend akgcfg.Backend, builder KernelBuilder, opts Options) (*Result, error) {
	if g == nil {
		return nil, fmt.Errorf("fusion: nil graph")
	}
	if flags == nil {
		flags = akgcfg.NewFlags()
	}
	if backend.Device == 0 {
		backend.Device = akgcfg.CPU
	}
	if flags.OptLevel > 0 {
		// Nodes that reach no output would make clusters with no used output.
		g.RemoveDead()
	}
	res := &Result{NodesBefore: len(g.Nodes)}
	for _, n := range g.Nodes {
		if len(n.Provenance) == 0 {
			n.Provenance = []string{n.Name}
		}
	}
	st := &state{g: g, flags: flags, backend: backend, builder: builder, check: opts.Check, edit: ir.NewEditor(g)}

	if opts.DumpDir != "" {
		if err := os.MkdirAll(opts.DumpDir, 0o755); err != nil {
			return nil, fmt.Errorf("fusion: dump dir: %w", err)
		}
		if err := writeDOTFile(filepath.Join(opts.DumpDir, "before.dot"), g); err != nil {
			return nil, err
		}
	}
	seq := 0
	for pi, p := range pipeline {
		rec := PassRecord{Stage: stageNames[p.stage], StageIndex: p.stage, Name: p.name, PassIndex: p.index, Level: p.level(flags)}
		backendOK := p.devices&backend.Device != 0
		if flags.OptLevel <= 0 {
			// converter_lite runs no pass at all when opt_level is 0.
			rec.Note = "graph kernel fusion is off (opt_level 0)"
			res.Passes = append(res.Passes, rec)
			continue
		}
		rec.Ran = flags.PassEnabled(p.stage, rec.Stage, p.index, p.name, rec.Level, backendOK)
		switch {
		case !rec.Ran && !backendOK && flags.OptLevel >= rec.Level && rec.Level <= 3:
			rec.Note = "not applicable on " + backend.Device.String()
		case !rec.Ran && rec.Level > 3:
			rec.Note = "disabled: its flag is off"
		case !rec.Ran && flags.OptLevel < rec.Level:
			rec.Note = fmt.Sprintf("needs opt_level >= %d", rec.Level)
		case !rec.Ran:
			rec.Note = "disabled by disable_pass"
		}
		if rec.Ran {
			if opts.OnPass != nil {
				opts.OnPass(pi, len(pipeline), rec.Stage+"."+p.name)
			}
			changed, note, err := p.run(st)
			if err != nil {
				return res, fmt.Errorf("fusion: pass %s.%s: %w", rec.Stage, p.name, err)
			}
			rec.Changed, rec.Note = changed, note
			if opts.DumpIR && opts.DumpDir != "" {
				seq++
				name := fmt.Sprintf("%04d_stage%d_%s_%d_%s.txt", seq, p.stage, rec.Stage, p.index, p.name)
				if err := writeIRFile(filepath.Join(opts.DumpDir, name), g); err != nil {
					return res, err
				}
			}
		}
		res.Passes = append(res.Passes, rec)
	}
	if err := g.Validate(); err != nil {
		return res, fmt.Errorf("fusion: result graph is invalid: %w", err)
	}
	for _, n := range g.Nodes {
		if n.Op != ir.OpGraphKernel || n.Body == nil {
			continue
		}
		if !n.Attrs.Has(ir.GKKernelName) {
			finalizeKernel(n)
		}
		if err := n.Body.Validate(); err != nil {
			return res, fmt.Errorf("fusion: kernel %s has an invalid body: %w", n.Name, err)
		}
		res.Kernels = append(res.Kernels, kernelRecord(n))
	}
	res.NodesAfter = len(g.Nodes)
	if opts.DumpDir != "" {
		if err := writeDOTFile(filepath.Join(opts.DumpDir, "after.dot"), g); err != nil {
			return res, err
		}
	}
	return res, nil
}

func kernelRecord(n *ir.Node) KernelRecord {
	r := KernelRecord{Node: n.Name, KernelName: n.Attrs.String(ir.GKKernelName, ""),
		SourceNodes: append([]string(nil), n.Provenance...), Pattern: n.Attrs.String(ir.GKPattern, "")}
	for _, b := range n.Body.Nodes {
		r.Ops = append(r.Ops, b.Op)
	}
	return r
}

func writeIRFile(path string, g *ir.Graph) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("fusion: dump: %w", err)
	}
	if err := WriteIR(f, g); err != nil {
		f.Close()
		return fmt.Errorf("fusion: dump %s: %w", path, err)
	}
	return f.Close()
}

func writeDOTFile(path string, g *ir.Graph) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("fusion: dot: %w", err)
	}
	if err := WriteDOT(f, g); err != nil {
		f.Close()
		return fmt.Errorf("fusion: dot %s: %w", path, err)
	}
	return f.Close()
}

// String renders the pass table of a result, one pass a line.
func (r *Result) String() string {
	var b strings.Builder
	for _, p := range r.Passes {
		mark := "skip"
		if p.Ran {
			mark = "ran "
			if p.Changed {
				mark = "CHG "
			}
		}
		fmt.Fprintf(&b, "%s %d.%d %s.%s (L%d)", mark, p.StageIndex, p.PassIndex, p.Stage, p.Name, p.Level)
		if p.Note != "" {
			fmt.Fprintf(&b, ": %s", p.Note)
		}
		b.WriteByte('\n')
	}
	for _, k := range r.Kernels {
		fmt.Fprintf(&b, "kernel %s [%s] ops=%s from=%s\n", k.Node, k.Pattern, strings.Join(k.Ops, ","), strings.Join(k.SourceNodes, ","))
	}
	return b.String()
}
