package kernels

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"gkconv/internal/ir"
)

// InfoTarget selects the process of a kernel-info JSON and its target_info
// (mindspore/ccsrc/kernel/graph_kernel/graph_kernel_json_generator.cc):
// cpu {arch, feature, system}, cuda {compute_capability,
// sm_count}, aicore {arch: <soc>}.
type InfoTarget struct {
	Process string // "cpu" | "cuda" | "aicore"
	// CPU
	Arch, System, Feature string
	// CUDA: "8.0"; SMCount is written when > 0.
	ComputeCapability string
	SMCount           int
	// Ascend: the SoC, e.g. "Ascend910B2" (written as target_info.arch).
	Soc string
	// Version is the "version" key; default 1 (what the CPU writer emits).
	Version int
}

// InfoJSONFor writes the kernel-info JSON of a GraphKernel node for any
// process: the same op_desc/input_desc/output_desc as InfoJSON, with the
// process and target_info of t. Keys stay in alphabetical order, as
// MindSpore's nlohmann::json dumps them.
func InfoJSONFor(n *ir.Node, t InfoTarget) ([]byte, error) {
	if n == nil || n.Body == nil {
		return nil, errors.New("GraphKernel node has no body")
	}
	if (t.Process == "" || t.Process == "cpu") && t.Arch == "" {
		t.Arch = n.Attrs.String(ir.GKArch, ir.HostArch())
		t.System = n.Attrs.String(ir.GKSystem, "linux")
		t.Feature = n.Attrs.String(ir.GKFeature, "")
	}
	js, err := infoJSON(n, KernelBaseName(n), Target{})
	if err != nil {
		return nil, fmt.Errorf("GraphKernel node %s: %w", n.Name, err)
	}
	if js, err = regroup(js, n.Body); err != nil {
		return nil, fmt.Errorf("GraphKernel node %s: %w", n.Name, err)
	}
	return retarget(js, t)
}

// regroup merges the input_desc entries of ops with grouped (dynamic)
// inputs, dyn_input_sizes or gk_input_groups, into one list per group as
// AKG expects (Concat's inputs are one entry), and drops the private attr.
func regroup(js []byte, body *ir.Graph) ([]byte, error) {
	grouped := false
	for _, bn := range body.Nodes {
		grouped = grouped || bn.Attrs.Has("dyn_input_sizes") || bn.Attrs.Has(AttrInputGroups) || bn.Attrs.Has(AttrAttrInputs)
	}
	if !grouped {
		return js, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(js, &m); err != nil {
		return nil, err
	}
	var ops []opDesc
	if err := json.Unmarshal(m["op_desc"], &ops); err != nil {
		return nil, err
	}
	if len(ops) != len(body.Nodes) {
		return nil, fmt.Errorf("op_desc has %d entries for %d body nodes", len(ops), len(body.Nodes))
	}
	fresh := 0 // tensor names for re-inserted constant inputs
	for _, od := range ops {
		for _, l := range od.InputDesc {
			for _, d := range l {
				var k int
				if _, err := fmt.Sscanf(d.TensorName, "input_%d", &k); err == nil && k >= fresh {
					fresh = k + 1
				}
			}
		}
	}
	for i, bn := range body.Nodes {
		sizes := bn.Attrs.Ints(AttrInputGroups, bn.Attrs.Ints("dyn_input_sizes", nil))
		od := &ops[i]
		attrInputs := bn.Attrs.Has(AttrAttrInputs)
		var kept []attrDesc
		for _, a := range od.Attr {
			synth := attrInputs && (a.Name == "axis" && IsReduce(bn.Op) || a.Name == "shape" && (IsReshape(bn.Op) || bn.Op == "BroadcastTo") ||
				a.Name == "dst_type" && bn.Op == "Cast")
			if a.Name != AttrInputGroups && a.Name != AttrAttrInputs && !synth {
				kept = append(kept, a)
			}
		}
		od.Attr = kept
		if attrInputs && (IsReduce(bn.Op) || IsReshape(bn.Op) || bn.Op == "BroadcastTo") {
			// The writer turned these constant inputs into attrs: put them back.
			for k := 1; k < len(bn.Inputs); k++ {
				in := bn.Inputs[k]
				if in == nil || in.Const == nil {
					continue
				}
				d := desc(in, fmt.Sprintf("input_%d", k), fmt.Sprintf("input_%d", fresh))
				fresh++
				d.Value = constValue(in.Const)
				od.InputDesc = append(od.InputDesc, []tensorDesc{d})
			}
		}
		var sum int64
		for _, s := range sizes {
			if s < 1 {
				sum = -1
				break
			}
			sum += s
		}
		if len(sizes) == 0 || sum != int64(len(od.InputDesc)) {
			continue // not a grouping of the written inputs
		}
		var lists [][]tensorDesc
		k := 0
		for _, s := range sizes {
			var l []tensorDesc
			for j := int64(0); j < s; j++ {
				l = append(l, od.InputDesc[k]...)
				k++
			}
			lists = append(lists, l)
		}
		od.InputDesc = lists
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(ops); err != nil {
		return nil, err
	}
	m["op_desc"] = bytes.TrimRight(buf.Bytes(), "\n")
	buf.Reset()
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// retarget replaces process, version and target_info of a kernel-info JSON.
func retarget(js []byte, t InfoTarget) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(js, &m); err != nil {
		return nil, err
	}
	put := func(k string, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		m[k] = b
		return nil
	}
	proc := t.Process
	if proc == "" {
		proc = "cpu"
	}
	if err := put("process", proc); err != nil {
		return nil, err
	}
	if t.Version > 0 {
		if err := put("version", t.Version); err != nil {
			return nil, err
		}
	}
	delete(m, "target_info")
	var ti any
	switch proc {
	case "cuda":
		if t.ComputeCapability != "" {
			x := struct {
				ComputeCapability string `json:"compute_capability"`
				SMCount           int    `json:"sm_count,omitempty"`
			}{t.ComputeCapability, t.SMCount}
			ti = x
		}
	case "aicore":
		if t.Soc != "" {
			ti = struct {
				Arch string `json:"arch"`
			}{t.Soc}
		}
	default:
		if t.Arch != "" {
			ti = targetInfo{Arch: t.Arch, Feature: t.Feature, System: t.System}
		}
	}
	if ti != nil {
		if err := put("target_info", ti); err != nil {
			return nil, err
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil { // map keys are sorted
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
