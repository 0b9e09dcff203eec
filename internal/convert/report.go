package convert

import (
	"encoding/json"
	"log/slog"

	"gkconv/internal/ir"
	"gkconv/internal/safefs"
)

// Report is what a conversion did; Options.ReportFile receives it as JSON.
// Field names are the documented schema.
type Report struct {
	Model  ReportModel `json:"model"`
	Output string      `json:"output,omitempty"`
	// Signature is the detached signature written next to the output
	// (--signKey).
	Signature string            `json:"signature,omitempty"`
	Graph     ReportGraph       `json:"graph"`
	Flags     map[string]string `json:"flags,omitempty"`
	Kernels   []ReportKernel    `json:"kernels"`
	// KernelBuild counts the kernel builder's work: kernels, distinct
	// sources, compiler runs, kernel-cache hits and the remote cache's work.
	KernelBuild *ReportBuild    `json:"kernel_build,omitempty"`
	Passes      []ReportPass    `json:"passes"`
	Unsupported []UnsupportedOp `json:"unsupported"`
	// Quantization is what post-training quantization did (nil when not asked).
	Quantization *ReportQuantization `json:"quantization,omitempty"`
	Warnings     []string            `json:"warnings"`
	Error        string              `json:"error,omitempty"`
	Seconds      float64             `json:"seconds"`
}

// ReportBuild is what the kernel builder did.
type ReportBuild struct {
	Kernels   int `json:"kernels"`    // GraphKernel nodes built
	Unique    int `json:"unique"`     // distinct kernel sources
	Compiled  int `json:"compiled"`   // compiler runs (cache misses)
	CacheHits int `json:"cache_hits"` // sources found in the kernel cache (local or remote)
	// Remote is the remote kernel cache's work (nil without one).
	Remote *ReportRemote `json:"remote,omitempty"`
	// SelfCheck is the kernel self-check (nil when off or nothing was built
	// for the CPU).
	SelfCheck *ReportSelfCheck `json:"self_check,omitempty"`
}

// ReportRemote is what the remote kernel cache (--kernelCacheDir=URL) did.
type ReportRemote struct {
	Hits   int `json:"remote_hits"`   // sources fetched from the remote and verified (part of cache_hits)
	Puts   int `json:"remote_puts"`   // compiled objects uploaded
	Errors int `json:"remote_errors"` // failed requests and rejected (corrupt) entries
}

// ReportSelfCheck says what buildkernel.kernel_self_check did.
type ReportSelfCheck struct {
	Ran       int      `json:"ran"`        // kernels run against their bodies (the rest passed in an earlier run)
	Unfused   []string `json:"unfused"`    // kernels that disagreed with their bodies, and why
	Skipped   []string `json:"skipped"`    // kernels not checked, and why
	ElapsedMs float64  `json:"elapsed_ms"` // time spent running them
}

// ReportModel describes the input model.
type ReportModel struct {
	File    string            `json:"file"`
	Fmk     string            `json:"fmk"`
	Inputs  []ReportValue     `json:"inputs"`
	Outputs []ReportValue     `json:"outputs"`
	Meta    map[string]string `json:"meta,omitempty"`
}

// ReportValue is a graph input or output.
type ReportValue struct {
	Name  string  `json:"name"`
	DType string  `json:"dtype"`
	Shape []int64 `json:"shape"`
}

// ReportGraph counts top-level nodes before and after the passes.
type ReportGraph struct {
	NodesBefore int `json:"nodes_before"`
	NodesAfter  int `json:"nodes_after"`
}

// ReportKernel is one fused kernel (GraphKernel node) of the output.
type ReportKernel struct {
	Name         string           `json:"name"`
	Target       string           `json:"target"`
	Ops          []string         `json:"ops"`
	SourceNodes  []string         `json:"source_nodes"`
	Pattern      string           `json:"pattern"`
	BinaryFormat string           `json:"binary_format"`
	BinaryBytes  int              `json:"binary_bytes"`
	BinarySHA256 string           `json:"binary_sha256"`
	Status       string           `json:"status,omitempty"`
	Launch       map[string]int64 `json:"launch,omitempty"`
	Info         json.RawMessage  `json:"info,omitempty"`
}

// ReportPass is one pass of the fusion pass table.
type ReportPass struct {
	Stage   string `json:"stage"`
	Name    string `json:"name"`
	Level   int    `json:"level"`
	Ran     bool   `json:"ran"`
	Changed bool   `json:"changed"`
	Note    string `json:"note,omitempty"`
}

// UnsupportedOp is a node the frontend cannot convert.
type UnsupportedOp struct {
	Node   string `json:"node"`
	Op     string `json:"op"`
	Reason string `json:"reason"`
}

func newReport() *Report {
	return &Report{Kernels: []ReportKernel{}, Passes: []ReportPass{}, Unsupported: []UnsupportedOp{}, Warnings: []string{}}
}

// warn logs w and records it.
func (r *Report) warn(w string) {
	slog.Warn(w)
	r.Warnings = append(r.Warnings, w)
}

func valuesOf(vs []*ir.Value) []ReportValue {
	out := []ReportValue{}
	for _, v := range vs {
		out = append(out, ReportValue{Name: v.Name, DType: v.DType.String(), Shape: v.Shape})
	}
	return out
}

func (r *Report) setModel(file, fmk string, g *ir.Graph) {
	r.Model = ReportModel{File: file, Fmk: fmk, Inputs: valuesOf(g.Inputs), Outputs: valuesOf(g.Outputs), Meta: g.Meta}
}

// write replaces path atomically.
func (r *Report) write(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, append(b, '\n'))
}

// WriteFileAtomic writes an output file the user named (report, result):
// safefs.WriteOutput, which also writes the .mindir. A regular file is
// replaced crash-safely (readers never see a partial file, and neither an
// error nor a kill -9 leaves a temporary file behind); a FIFO, pipe or
// character device (/dev/stdout, /proc/self/fd/N) is written as it is,
// never replaced; "-" is standard output.
func WriteFileAtomic(path string, data []byte) error {
	return safefs.WriteOutputBytes(path, data, 0o644)
}
