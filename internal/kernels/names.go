package kernels

import (
	"fmt"
	"strconv"
	"strings"

	"gkconv/internal/ir"
)

// Names and type codes every builder writes into a GraphKernel node.

// KernelBaseName is the AKG kernel name of a node ("Fused_..._<hash>"), from
// its kernel_name attr without the "_kernel" suffix, or derived from the body.
func KernelBaseName(n *ir.Node) string {
	name := n.Attrs.String(ir.GKKernelName, "")
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

// Target is the CPU target recorded in target_info and the node attrs
// (ir.GKArch, ir.GKSystem, ir.GKFeature).
type Target struct {
	Arch, System, Feature string
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

// TypeList writes the MindSpore TypeIds of the values, "43," each.
func TypeList(vs []*ir.Value) string {
	var sb strings.Builder
	for _, v := range vs {
		fmt.Fprintf(&sb, "%d,", MindTypeID(v.DType))
	}
	return sb.String()
}
