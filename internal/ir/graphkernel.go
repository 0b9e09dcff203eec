package ir

import "runtime"

// The GraphKernel node schema: the one place that says which attributes a
// fused-kernel node carries, what they mean, and where each goes in a MindIR
// file. The fusion engine, the code generators, the runtime and the MindIR
// writer/reader agree through this table.
//
// In the IR a fused kernel is a node with Op == OpGraphKernel whose Body is
// the fused subgraph. In MindIR it is written as converter_lite writes it
// (mindspore-lite/tools/graph_kernel/converter/akg/cpu_kernel_builder.cc,
// gpu_kernel_builder.cc, ascend_kernel_builder.cc): a `Custom` primitive with
// `type` = "GraphKernel" and one `attr` list of name/bytes pairs
// (ops::Custom::set_attr), the kernel binary as a 1-D uint8 parameter appended
// as the node's last input (MindSpore Lite's akg_kernel.cc pops it and
// dlopens it), and a few plain primitive attributes where converter_lite puts
// them there (GPU func_type/unique_name, Ascend reg_op_name/info_path/
// input_names/output_names).

// OpGraphKernel is the IR op of a fused kernel node.
const OpGraphKernel = "GraphKernel"

// CustomTypeGraphKernel is the Custom primitive's `type` for fused kernels.
const CustomTypeGraphKernel = "GraphKernel"

// GraphKernel attribute names.
const (
	GKKernelName    = "kernel_name"    // symbol/entry base: CPU "<name>_kernel"; GPU entry is <name>_kernel0
	GKInputsShape   = "inputs_shape"   // "<rank>,<d0>,...," per input (converter_lite)
	GKOutputsShape  = "outputs_shape"  // same, per output
	GKOutputsType   = "outputs_type"   // MindSpore TypeIds, "43," per output
	GKOutputsFormat = "outputs_format" // "0," per output (default format)
	GKProcess       = "process"        // cpu | cuda | aicore
	GKArch          = "arch"           // CPU: x86_64 | aarch64 | arm
	GKSystem        = "system"         // CPU: linux
	GKFeature       = "feature"        // CPU: sse | avx | avx512 | neon
	GKCPUFlags      = "cpu_flags"      // /proc/cpuinfo flags the code needs, comma separated
	GKMArch         = "march"          // the -march the kernel was built with
	GKKernelSO      = "kernel_so"      // CPU shared object (bytes)
	GKKernelSOHash  = "kernel_so_sha256"
	GKKernelSource  = "kernel_source" // generated C or CUDA source
	GKKernelStatus  = "kernel_status" // compiled | interpreted | source only
	GKKernelError   = "kernel_error"  // why a body is interpreted
	GKGraphKernel   = "graph_kernel"  // what the kernel came from: expanded op name, "fusion", "split"
	GKPattern       = "pattern"       // dominant split-model pattern of the body
	GKStitch        = "buffer_stitch" // stitch tensor names (opt_level 3)
	GKParallelGroup = "parallel_fusion_group"

	GKTarget             = "target"             // cuda | aicore
	GKBinaryFormat       = "binary_format"      // ptx | ascendc-source
	GKFuncType           = "func_type"          // GPU: "custom_akg_gpu"
	GKUniqueName         = "unique_name"        // GPU: "CustomAkgGpu"
	GKComputeCapability  = "compute_capability" // GPU: "8.0" for sm_80
	GKGridDimX           = "GridDimX"           // GPU launch configuration (ints)
	GKGridDimY           = "GridDimY"
	GKGridDimZ           = "GridDimZ"
	GKBlockDimX          = "BlockDimX"
	GKBlockDimY          = "BlockDimY"
	GKBlockDimZ          = "BlockDimZ"
	GKSharedBytes        = "shared_mem_bytes" // GPU: static shared memory per block
	GKStrategy           = "kernel_strategy"  // GPU: elementwise | row | inline-reduce; Ascend: vector | scalar | cube
	GKKernelPTX          = "kernel_ptx"       // GPU PTX text (bytes)
	GKKernelPTXHash      = "kernel_ptx_sha256"
	GKPTXPath            = "ptx_path"    // converter_lite's key; here the embedded parameter's name
	GKKernelInfo         = "kernel_info" // AKG kernel-info JSON (bytes): GPU process "cuda", Ascend "aicore"
	GKKernelInfoHash     = "kernel_info_sha256"
	GKSoc                = "soc_version"    // Ascend: e.g. "Ascend910B"
	GKRegOpName          = "reg_op_name"    // Ascend: Fused_x<n_in>_y<n_out>
	GKInputNames         = "input_names"    // Ascend: x0, x1, ...
	GKOutputNames        = "output_names"   // Ascend: y0, y1, ...
	GKInfoPath           = "info_path"      // Ascend: "<kernel_name>.info", the file CANN's custom op reads
	GKKernelAscendC      = "kernel_ascendc" // Ascend C source (bytes)
	GKKernelAscendCHash  = "kernel_ascendc_sha256"
	GKBlockDim           = "block_dim"         // Ascend: AI cores of the launch
	GKUBBytes            = "ub_bytes"          // Ascend: Unified Buffer the kernel allocates
	GKBody               = "graph_kernel_body" // MindIR only: the function graph holding the fused body
	GKAttrList           = "attr"              // MindIR only: Custom's name/bytes list
	GKCustomType         = "type"              // MindIR only: Custom's type
	GKBinarySuffixSO     = ".so"
	GKBinarySuffixPTX    = ".ptx"
	GKBinarySuffixInfo   = ".info"
	GKDefaultOutputsForm = "0,"
)

// HostArch is the GKArch value of the machine this program runs on
// (MindSpore's names x86_64, aarch64, arm; else Go's GOARCH).
func HostArch() string {
	switch runtime.GOARCH {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	case "arm":
		return "arm"
	}
	return runtime.GOARCH
}

// GKPlace says where a GraphKernel attribute goes in MindIR.
type GKPlace uint8

const (
	// GKInAttrList: an entry of Custom's `attr` list (UTF-8 bytes; ints as
	// decimal text, as converter_lite writes GridDimX).
	GKInAttrList GKPlace = iota
	// GKInPrimAttr: a plain attribute of the Custom primitive.
	GKInPrimAttr
	// GKInBinaryInput: the kernel binary, a 1-D uint8 parameter appended as
	// the node's last input (named <kernel_name><suffix>).
	GKInBinaryInput
)

// GKAttr is one row of the GraphKernel schema.
type GKAttr struct {
	Name  string
	Kind  AttrKind
	Place GKPlace
	// Process limits a row to one target ("" = every target); the binary
	// input differs per target.
	Process string
}

// GraphKernelAttrs is the schema. An attribute not listed here cannot be
// written to MindIR (the writer reports it), so the table stays complete.
var GraphKernelAttrs = []GKAttr{
	{GKKernelName, AttrString, GKInAttrList, ""},
	{GKInputsShape, AttrString, GKInAttrList, ""},
	{GKOutputsShape, AttrString, GKInAttrList, ""},
	{GKOutputsType, AttrString, GKInAttrList, ""},
	{GKOutputsFormat, AttrString, GKInAttrList, ""},
	{GKProcess, AttrString, GKInAttrList, ""},
	{GKArch, AttrString, GKInAttrList, ""},
	{GKSystem, AttrString, GKInAttrList, ""},
	{GKFeature, AttrString, GKInAttrList, ""},
	{GKCPUFlags, AttrString, GKInAttrList, ""},
	{GKMArch, AttrString, GKInAttrList, ""},
	{GKKernelSO, AttrBytes, GKInBinaryInput, "cpu"},
	{GKKernelSOHash, AttrString, GKInAttrList, ""},
	{GKKernelSource, AttrString, GKInAttrList, ""},
	{GKKernelStatus, AttrString, GKInAttrList, ""},
	{GKKernelError, AttrString, GKInAttrList, ""},
	{GKGraphKernel, AttrString, GKInAttrList, ""},
	{GKPattern, AttrString, GKInAttrList, ""},
	{GKStitch, AttrStrings, GKInPrimAttr, ""},
	{GKParallelGroup, AttrString, GKInAttrList, ""},
	{GKTarget, AttrString, GKInAttrList, ""},
	{GKBinaryFormat, AttrString, GKInAttrList, ""},
	{GKFuncType, AttrString, GKInPrimAttr, ""},
	{GKUniqueName, AttrString, GKInPrimAttr, ""},
	{GKComputeCapability, AttrString, GKInAttrList, ""},
	{GKGridDimX, AttrInt, GKInAttrList, ""},
	{GKGridDimY, AttrInt, GKInAttrList, ""},
	{GKGridDimZ, AttrInt, GKInAttrList, ""},
	{GKBlockDimX, AttrInt, GKInAttrList, ""},
	{GKBlockDimY, AttrInt, GKInAttrList, ""},
	{GKBlockDimZ, AttrInt, GKInAttrList, ""},
	{GKSharedBytes, AttrInt, GKInAttrList, ""},
	{GKStrategy, AttrString, GKInAttrList, ""},
	{GKKernelPTX, AttrBytes, GKInBinaryInput, "cuda"},
	{GKKernelPTXHash, AttrString, GKInAttrList, ""},
	{GKKernelInfo, AttrBytes, GKInBinaryInput, "aicore"},
	{GKKernelInfo, AttrBytes, GKInAttrList, ""},
	{GKKernelInfoHash, AttrString, GKInAttrList, ""},
	{GKSoc, AttrString, GKInAttrList, ""},
	{GKRegOpName, AttrString, GKInPrimAttr, ""},
	{GKInputNames, AttrStrings, GKInPrimAttr, ""},
	{GKOutputNames, AttrStrings, GKInPrimAttr, ""},
	{GKInfoPath, AttrString, GKInPrimAttr, ""},
	{GKKernelAscendC, AttrBytes, GKInAttrList, ""},
	{GKKernelAscendCHash, AttrString, GKInAttrList, ""},
	{GKBlockDim, AttrInt, GKInAttrList, ""},
	{GKUBBytes, AttrInt, GKInAttrList, ""},
}

// LookupGKAttr returns the row for attribute name on a kernel of the given
// process (cpu, cuda, aicore).
func LookupGKAttr(name, process string) (GKAttr, bool) {
	var found GKAttr
	ok := false
	for _, r := range GraphKernelAttrs {
		if r.Name != name {
			continue
		}
		if r.Process == process {
			return r, true
		}
		if r.Process == "" && !ok {
			found, ok = r, true
		}
	}
	return found, ok
}

// GKBinarySuffix is the parameter-name suffix of the embedded binary of a
// kernel attribute placed as a binary input.
func GKBinarySuffix(name string) string {
	switch name {
	case GKKernelSO:
		return GKBinarySuffixSO
	case GKKernelPTX:
		return GKBinarySuffixPTX
	case GKKernelInfo:
		return GKBinarySuffixInfo
	}
	return ""
}

// GKBinaryAttr is the attribute whose bytes travel as the binary input of a
// kernel of the given process, and that input's name suffix.
func GKBinaryAttr(process string) (name, suffix string) {
	for _, r := range GraphKernelAttrs {
		if r.Place == GKInBinaryInput && r.Process == process {
			return r.Name, GKBinarySuffix(r.Name)
		}
	}
	return "", ""
}

// Annotation attributes say where a node came from, not what it computes
// (the expander that made a body node). Writers carry them beside an op's
// own attributes, and lowerings to other formats never see them.
const GKExpandFrom = "expand_from"

// SourcePrimitive is set by the MindIR reader on a node that one MindSpore
// primitive became (e.g. "Conv2D"), so the writer can write that primitive
// form again instead of converter_lite's (Conv2DFusion).
const SourcePrimitive = "mindspore_primitive"

// AnnotationAttrs lists the annotation attributes.
var AnnotationAttrs = []string{GKExpandFrom, SourcePrimitive}

// IsAnnotation reports whether an attribute name is an annotation.
func IsAnnotation(name string) bool {
	for _, a := range AnnotationAttrs {
		if a == name {
			return true
		}
	}
	return false
}
