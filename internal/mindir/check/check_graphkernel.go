package check

// The GraphKernel rules of `converter check` (see check.go): the attributes
// and inputs of converter_lite's GraphKernel Custom node (its attr map, the
// keys its AKG kernel builders require, and the kernel .so it names).

import (
	"fmt"
	"strings"

	pb "gkconv/internal/mindir/mindirpb"
)

// ---------------------------------------------------------------------------
// converter_lite's GraphKernel Custom node.

// attrString is a STRING attribute's value (s, as the loader reads it).
func attrString(a *pb.AttributeProto) (string, bool) {
	if a == nil || a.GetType() != pb.AttributeProto_STRING {
		return "", false
	}
	return string(a.S), true
}

const (
	refCustomAttr = "ops::Custom::set_attr (ops/infer/custom.h: TUPLE of MakeValue<std::string>(name), MakeValue<std::vector<uint8_t>>(bytes))"
	refCPUKernel  = "cpu_kernel_builder.cc:31 CreateCustomOp"
	refCPUSo      = "cpu_kernel_builder.cc:113 GenerateAkgKernelNodes; akg_kernel.cc:157 Prepare"
	refGPUKernel  = "gpu_kernel_builder.cc:57 CreateCustomOp"
	refAscend     = "ascend_kernel_builder.cc:59 CreateCustomOp"
)

var (
	cpuKeys = []string{"kernel_name", "process", "arch", "system", "feature", "inputs_shape", "outputs_shape", "outputs_format", "outputs_type"}
	gpuKeys = []string{"kernel_name", "outputs_shape", "outputs_format", "outputs_type", "GridDimX", "GridDimY", "GridDimZ",
		"BlockDimX", "BlockDimY", "BlockDimZ", "process", "ptx_path"}
)

// checkGraphKernel checks a Custom node of type "GraphKernel" against
// converter_lite's AKG kernel builders: attribute attr is a TUPLE
// alternating a STRING key and a TUPLE of UINT8 (ops::Custom::set_attr);
// process selects CPU (cpu: the compiled .so is the last input, a 1-D UINT8
// parameter named *.so), GPU (cuda) or Ascend (aicore: reg_op_name and
// info_path primitive attributes).
func (c *checker) checkGraphKernel(l loc, attrs []*pb.AttributeProto, inputs []string) {
	byName := map[string]*pb.AttributeProto{}
	for _, a := range attrs {
		byName[a.GetName()] = a
	}
	if typ, _ := attrString(byName["type"]); typ != "GraphKernel" {
		return
	}
	kv, ok := c.customAttr(l, byName["attr"])
	if !ok {
		return
	}
	process := ""
	if kv != nil {
		process = string(kv["process"])
	}
	_, hasReg := byName["reg_op_name"]
	_, hasInfo := byName["info_path"]
	switch {
	case kv == nil && (hasReg || hasInfo), process == "aicore":
		for _, k := range []string{"reg_op_name", "info_path"} {
			if s, ok := attrString(byName[k]); !ok || s == "" {
				got := "absent"
				if a := byName[k]; a != nil {
					got = a.GetType().String()
				}
				c.at(l.with(k), "an Ascend GraphKernel Custom node needs the primitive attribute "+k, "a non-empty STRING", got, refAscend)
			}
		}
	case kv == nil:
		c.at(l.with("attr"), "a GraphKernel Custom node needs attr (CPU/GPU) or reg_op_name/info_path (Ascend)",
			"attr: TUPLE of name/bytes pairs", "absent", refCPUKernel)
	case process == "cpu":
		c.requireKeys(l, kv, cpuKeys, refCPUKernel)
		c.checkKernelSo(l, inputs)
	case process == "cuda":
		c.requireKeys(l, kv, gpuKeys, refGPUKernel)
	case process == "":
		c.at(l.with("attr"), "GraphKernel attr needs the process key (cpu, cuda or aicore)", "process", "absent", refCPUKernel)
	default:
		c.at(l.with("attr[process]"), "GraphKernel process must be cpu, cuda or aicore", "cpu, cuda or aicore", process, refCPUKernel)
	}
}

// customAttr decodes ops::Custom's attr, as the loader reads a TUPLE
// (ObtainValueInSequenceForm, load_model.cc:1626-1699: each key a STRING in
// strings(0), each value a TUPLE of UINT8 items in ints(0)); kv is nil when
// the node has none.
func (c *checker) customAttr(l loc, a *pb.AttributeProto) (kv map[string][]byte, ok bool) {
	if a == nil {
		return nil, true
	}
	al := l.with("attr")
	if a.RefAttrName != nil || a.GetType() != pb.AttributeProto_TUPLE {
		got := a.GetType().String()
		if a.RefAttrName != nil {
			got = "old form " + a.GetRefAttrName()
		}
		c.at(al, "Custom attr is a TUPLE alternating a STRING key and a TUPLE of UINT8", "TUPLE", got, refCustomAttr)
		return nil, false
	}
	if len(a.Values)%2 != 0 {
		c.at(al, "Custom attr alternates keys and values", "an even number of items", fmt.Sprint(len(a.Values)), refCustomAttr)
	}
	kv = map[string][]byte{}
	for i := 0; i+1 < len(a.Values); i += 2 {
		k, v := a.Values[i], a.Values[i+1]
		if k.GetType() != pb.AttributeProto_STRING || len(k.Strings) == 0 {
			c.at(al.sub(fmt.Sprintf("[%d]", i)), "Custom attr keys are STRING items (in strings(0))", "STRING", k.GetType().String(), refCustomAttr)
			continue
		}
		key := string(k.Strings[0])
		vl := al.sub(fmt.Sprintf("[%s]", key))
		if v.GetType() != pb.AttributeProto_TUPLE {
			c.at(vl, "Custom attr values are TUPLEs of UINT8 (MakeValue<std::vector<uint8_t>>)", "TUPLE of UINT8", v.GetType().String(), refCustomAttr)
			continue
		}
		b := make([]byte, 0, len(v.Values))
		for j, it := range v.Values {
			if it.GetType() != pb.AttributeProto_UINT8 {
				c.at(vl.sub(fmt.Sprintf("[%d]", j)), "Custom attr value bytes are UINT8 items", "UINT8", it.GetType().String(), refCustomAttr)
				break
			}
			if len(it.Ints) > 0 {
				b = append(b, byte(it.Ints[0]))
			}
		}
		kv[key] = b
	}
	return kv, true
}

// requireKeys: the keys a kernel builder writes with set_attr (converter_lite).
func (c *checker) requireKeys(l loc, kv map[string][]byte, keys []string, ref string) {
	for _, k := range keys {
		if v, ok := kv[k]; !ok || len(v) == 0 {
			got := "absent"
			if ok {
				got = "empty"
			}
			c.at(l.with("attr["+k+"]"), "GraphKernel attr key required by converter_lite's kernel builder", k+" (non-empty bytes)", got, ref)
		}
	}
}

// checkKernelSo: the CPU kernel's last input is the compiled library, a 1-D
// UINT8 parameter named <kernel>.so (CreateAkgKernelParameter, utils.cc:168-193).
func (c *checker) checkKernelSo(l loc, inputs []string) {
	il := l.with("input")
	if len(inputs) < 2 {
		c.at(il, "a CPU GraphKernel node has its data inputs and the kernel library", ">= 2 inputs", fmt.Sprint(len(inputs)), refCPUSo)
		if len(inputs) == 0 {
			return
		}
	}
	last := inputs[len(inputs)-1]
	il = l.with(fmt.Sprintf("input[%d]", len(inputs)-1))
	d := c.resolve(last)
	if d == nil {
		return // reported as an undefined input
	}
	if d.kind != defParam || d.param == nil {
		c.at(il, "a CPU GraphKernel node's last input is the kernel library parameter", "a parameter named *.so", "a "+d.kind.String()+" "+last, refCPUSo)
		return
	}
	p := d.param
	if !strings.HasSuffix(p.GetName(), ".so") {
		c.at(il, "the kernel library parameter is named after the .so", "a name ending in .so", p.GetName(), refCPUSo)
	}
	if pb.TensorProto_DataType(p.GetDataType()) != pb.TensorProto_UINT8 || len(p.Dims) != 1 {
		c.at(il, "the kernel library parameter is a 1-D UINT8 tensor", "UINT8 [n]", fmt.Sprintf("%s %v", dtypeName(p.GetDataType()), p.Dims), refCPUSo)
	}
}
