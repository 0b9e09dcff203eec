package kernels

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	goruntime "runtime"
	"strconv"
	"strings"

	"gkconv/internal/ir"
)

// Node attributes written by BuildKernels (converter_lite CPU Custom attrs,
// reference §7.2, plus the embedded object and its provenance).
const (
	AttrKernelName    = "kernel_name"      // C symbol, "<name>_kernel"
	AttrInputsShape   = "inputs_shape"     // "<rank>,<d0>,...," per input
	AttrOutputsShape  = "outputs_shape"    // same, per output
	AttrOutputsType   = "outputs_type"     // MindSpore TypeIds, "43," per output
	AttrOutputsFormat = "outputs_format"   // "0," per output (default format)
	AttrProcess       = "process"          // "cpu"
	AttrArch          = "arch"             // x86_64 | aarch64 | arm
	AttrSystem        = "system"           // "linux"
	AttrFeature       = "feature"          // sse | avx | avx512 | neon
	AttrCPUFlags      = "cpu_flags"        // /proc/cpuinfo flags the code needs, comma separated
	AttrMArch         = "march"            // the -march the kernel was built with
	AttrKernelSO      = "kernel_so"        // the shared object (bytes)
	AttrKernelSOHash  = "kernel_so_sha256" // hex sha256 of kernel_so
	AttrKernelSource  = "kernel_source"    // the C source (dumps)
	AttrKernelStatus  = "kernel_status"    // "compiled" | "interpreted"
	AttrKernelError   = "kernel_error"     // why a body is interpreted
)

// Builder compiles GraphKernel nodes. It is safe for one BuildKernels call
// at a time.
type Builder struct {
	opts  Options
	cc    *compiler
	Stats Stats
}

// NewBuilder returns a Builder; nothing runs until BuildKernels.
func NewBuilder(opts Options) *Builder { return &Builder{opts: opts} }

// KernelBaseName is the AKG kernel name of a node ("Fused_..._<hash>"), from
// its kernel_name attr without the "_kernel" suffix, or derived from the body.
func KernelBaseName(n *ir.Node) string {
	name := n.Attrs.String(AttrKernelName, "")
	name = strings.TrimSuffix(name, "_kernel")
	if name == "" && n.Body != nil {
		name = derivedName(n)
	}
	return sanitizeIdent(name)
}

// derivedName is "Fused_<ops>_fusion_<fnv64 of the kernel-info JSON>".
func derivedName(n *ir.Node) string {
	var ops []string
	seen := map[string]bool{}
	for _, b := range n.Body.Nodes {
		if !seen[b.Op] {
			seen[b.Op] = true
			ops = append(ops, b.Op)
		}
	}
	opsName := strings.Join(ops, "_") + "_fusion"
	if len(opsName) > 80 {
		opsName = opsName[:80] + "_more"
	}
	js, err := infoJSON(n, "", Target{}) // no names: identical bodies hash alike
	h := uint64(14695981039346656037)
	if err == nil {
		for _, c := range js {
			h ^= uint64(c)
			h *= 1099511628211
		}
	}
	return "Fused_" + opsName + "_" + strconv.FormatUint(h, 10)
}

func sanitizeIdent(s string) string {
	var b strings.Builder
	for i, c := range s {
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' && i > 0 {
			b.WriteRune(c)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// Target is the CPU target recorded in target_info and the node attrs.
type Target struct {
	Arch, System, Feature string
}

// BuildKernels generates, compiles (deduplicated, in parallel, cached) and
// attaches a kernel to every GraphKernel node in nodes. Other nodes are
// ignored. Errors name the nodes; with Options.AllowInterpreted a body the
// generator rejects is marked kernel_status=interpreted instead.
func (b *Builder) BuildKernels(nodes []*ir.Node) error {
	jobs, err := GenerateJobs(nodes, func(n *ir.Node) string { return KernelBaseName(n) + "_kernel" },
		b.opts.AllowInterpreted, []string{AttrKernelSO, AttrKernelSOHash, AttrKernelSource},
		func(symbol string, body *ir.Graph) (string, struct{}, error) {
			src, err := GenerateC(symbol, body)
			return src, struct{}{}, err
		})
	if err != nil || len(jobs) == 0 {
		return err
	}
	cacheDir, err := ResolveCacheDir(b.opts.CacheDir)
	if err != nil {
		return err
	}
	if b.cc == nil {
		if b.cc, err = resolveCompiler(b.opts.CC, b.opts.MArch, cacheDir); err != nil {
			return err
		}
	}
	index, srcs, names := UniqueSources(jobs)
	jobsN := b.opts.Jobs
	if jobsN <= 0 {
		jobsN = min(8, goruntime.NumCPU())
	}
	b.Stats.Kernels += len(jobs)
	b.Stats.Unique += len(srcs)
	sos, err := b.cc.compileAll(srcs, names, cacheDir, jobsN, &b.Stats)
	if err != nil {
		return err
	}
	tgt := b.target()
	for _, j := range jobs {
		so := sos[index[j.Src]]
		sum := sha256.Sum256(so)
		setKernelAttrs(j.Node, j.Symbol, tgt)
		a := j.Node.Attrs
		a[AttrCPUFlags] = ir.StringAttr(strings.Join(b.cc.features, ","))
		a[AttrMArch] = ir.StringAttr(b.cc.march)
		a[AttrKernelSO] = ir.BytesAttr(so)
		a[AttrKernelSOHash] = ir.StringAttr(hex.EncodeToString(sum[:]))
		a[AttrKernelSource] = ir.StringAttr(j.Src)
		a[AttrKernelStatus] = ir.StringAttr("compiled")
		delete(a, AttrKernelError)
	}
	return nil
}

func (b *Builder) target() Target {
	t := Target{Arch: b.opts.Arch, System: "linux", Feature: b.opts.Feature}
	if t.Arch == "" {
		t.Arch = hostArch()
	}
	if t.Feature == "" && b.cc != nil {
		t.Feature = b.cc.feature
	}
	return t
}

// setKernelAttrs writes the converter_lite CPU Custom attrs of §7.2.
func setKernelAttrs(n *ir.Node, symbol string, t Target) {
	SetKernelIOAttrs(n, symbol)
	a := n.Attrs
	a[AttrProcess] = ir.StringAttr("cpu")
	a[AttrArch] = ir.StringAttr(t.Arch)
	a[AttrSystem] = ir.StringAttr(t.System)
	a[AttrFeature] = ir.StringAttr(t.Feature)
}

// shapeList writes "<rank>,<d0>,<d1>,...," for each value.
func shapeList(vs []*ir.Value) string {
	var sb strings.Builder
	for _, v := range vs {
		fmt.Fprintf(&sb, "%d,", len(v.Shape))
		for _, d := range v.Shape {
			fmt.Fprintf(&sb, "%d,", d)
		}
	}
	return sb.String()
}

// MindTypeID is MindSpore's TypeId number of a dtype (0 when it has none).
func MindTypeID(dt ir.DType) int {
	switch dt {
	case ir.Bool:
		return 30
	case ir.Int8:
		return 32
	case ir.Int16:
		return 33
	case ir.Int32:
		return 34
	case ir.Int64:
		return 35
	case ir.Uint8:
		return 37
	case ir.Uint16:
		return 38
	case ir.Uint32:
		return 39
	case ir.Uint64:
		return 40
	case ir.Float16:
		return 42
	case ir.Float32:
		return 43
	case ir.Float64:
		return 44
	case ir.BFloat16:
		return 45
	}
	return 0
}
