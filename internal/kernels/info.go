package kernels

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"gkconv/internal/ir"
)

// Kernel-info JSON (mindspore/ccsrc/kernel/graph_kernel/graph_kernel_json_generator.cc).
// Struct fields are declared in key order
// (alphabetical, as MindSpore's nlohmann::json dumps them).

type tensorDesc struct {
	DataType   string  `json:"data_type"`
	Format     string  `json:"format"`
	Name       string  `json:"name,omitempty"`
	Shape      []int64 `json:"shape"`
	TensorName string  `json:"tensor_name"`
	Value      any     `json:"value,omitempty"`
}

type attrDesc struct {
	DataType string `json:"data_type"`
	Name     string `json:"name"`
	Value    any    `json:"value"`
}

type opDesc struct {
	Attr       []attrDesc     `json:"attr"` // null when empty
	ImplPath   string         `json:"impl_path"`
	InputDesc  [][]tensorDesc `json:"input_desc"`
	Name       string         `json:"name"`
	OutputDesc []tensorDesc   `json:"output_desc"`
}

type targetInfo struct {
	Arch    string `json:"arch"`
	Feature string `json:"feature"`
	System  string `json:"system"`
}

type kernelInfo struct {
	Composite      bool           `json:"composite"`
	CompositeGraph string         `json:"composite_graph"`
	ID             int            `json:"id"`
	InputDesc      [][]tensorDesc `json:"input_desc"`
	NodeName       string         `json:"node_name,omitempty"`
	Op             string         `json:"op"`
	OpDesc         []opDesc       `json:"op_desc"`
	OutputDesc     []tensorDesc   `json:"output_desc"`
	Platform       string         `json:"platform"`
	Process        string         `json:"process"`
	TargetInfo     *targetInfo    `json:"target_info,omitempty"`
	Version        int            `json:"version"`
}

// InfoJSON writes the AKG kernel-info JSON of a GraphKernel node: its fused
// ops in order with tensors linked by tensor_name, constant inputs carrying
// their value, and target_info from the node's arch/feature/system attrs.
func InfoJSON(n *ir.Node) ([]byte, error) {
	if n == nil || n.Body == nil {
		return nil, errors.New("GraphKernel node has no body")
	}
	t := Target{Arch: n.Attrs.String(ir.GKArch, ir.HostArch()), System: n.Attrs.String(ir.GKSystem, "linux"),
		Feature: n.Attrs.String(ir.GKFeature, "")}
	js, err := infoJSON(n, KernelBaseName(n), t)
	if err != nil {
		return nil, fmt.Errorf("GraphKernel node %s: %w", n.Name, err)
	}
	return js, nil
}

func infoJSON(n *ir.Node, name string, t Target) ([]byte, error) {
	body := n.Body
	ki := kernelInfo{Composite: true, Op: name, Platform: "AKG", Process: "cpu", Version: 1}
	if name != "" {
		ki.NodeName = n.Name
		ki.CompositeGraph = body.Name
	}
	if t.Arch != "" {
		ki.TargetInfo = &targetInfo{Arch: t.Arch, Feature: t.Feature, System: t.System}
	}
	names := map[*ir.Value]string{}
	next := 0
	for _, v := range body.Inputs {
		names[v] = fmt.Sprintf("input_%d", next)
		next++
		ki.InputDesc = append(ki.InputDesc, []tensorDesc{desc(v, "", names[v])})
	}
	outK := 0
	for _, bn := range body.Nodes {
		od := opDesc{Name: bn.Op, ImplPath: ""}
		skip := map[int]bool{}
		switch {
		case IsReduce(bn.Op):
			skip[1] = true
			var axes []int64
			if in := bn.Input(1); in != nil && in.Const != nil {
				axes, _ = in.Const.Int64s()
			}
			if axes == nil {
				axes = []int64{}
			}
			od.Attr = append(od.Attr, attrDesc{"listInt", "axis", axes},
				attrDesc{"bool", "keep_dims", bn.Attrs.Int("keepdims", 1) != 0})
		case IsReshape(bn.Op) || bn.Op == "BroadcastTo":
			for i := 1; i < len(bn.Inputs); i++ {
				skip[i] = true
			}
			od.Attr = append(od.Attr, attrDesc{"listInt", "shape", orEmpty(bn.Outputs[0].Shape)})
		case bn.Op == "Cast":
			od.Attr = append(od.Attr, attrDesc{"str", "dst_type", bn.Outputs[0].DType.String()})
		}
		for _, k := range bn.Attrs.Keys() {
			if bn.Op == "Cast" && k == "to" || IsReduce(bn.Op) && k == "keepdims" {
				continue
			}
			if a, ok := attrJSON(k, bn.Attrs[k]); ok {
				od.Attr = append(od.Attr, a)
			}
		}
		slot := 0
		for i, in := range bn.Inputs {
			if in == nil || skip[i] {
				continue
			}
			tn, ok := names[in]
			var val any
			if !ok {
				if in.Const == nil {
					return nil, fmt.Errorf("body node %s: input %s is not defined before use", bn.Name, in.Name)
				}
				tn = fmt.Sprintf("input_%d", next)
				next++
				names[in] = tn
			}
			if in.Const != nil {
				val = constValue(in.Const)
			}
			d := desc(in, fmt.Sprintf("input_%d", slot), tn)
			d.Value = val
			od.InputDesc = append(od.InputDesc, []tensorDesc{d})
			slot++
		}
		for i, o := range bn.Outputs {
			if o == nil {
				continue
			}
			names[o] = fmt.Sprintf("output_0_%d", outK)
			outK++
			od.OutputDesc = append(od.OutputDesc, desc(o, fmt.Sprintf("output_%d", i), names[o]))
		}
		ki.OpDesc = append(ki.OpDesc, od)
	}
	for _, v := range body.Outputs {
		tn, ok := names[v]
		if !ok {
			return nil, fmt.Errorf("body output %s is not produced", v.Name)
		}
		ki.OutputDesc = append(ki.OutputDesc, desc(v, "", tn))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&ki); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

func orEmpty(s []int64) []int64 {
	if s == nil {
		return []int64{}
	}
	return s
}

func desc(v *ir.Value, name, tensor string) tensorDesc {
	shape := v.Shape
	if len(shape) == 0 {
		shape = []int64{1} // AKG writes scalars as [1]
	}
	return tensorDesc{DataType: v.DType.String(), Format: "DefaultFormat", Name: name, Shape: shape, TensorName: tensor}
}

// constValue is a scalar for one element, else a flat list.
func constValue(t *ir.Tensor) any {
	var vals []any
	if t.DType.IsFloat() {
		f, err := t.Float64s()
		if err != nil {
			return nil
		}
		for _, x := range f {
			vals = append(vals, jsonFloat(x))
		}
	} else if t.DType == ir.Bool {
		for _, x := range t.Data[:t.NumElements()] {
			vals = append(vals, x != 0)
		}
	} else {
		iv, err := t.Int64s()
		if err != nil {
			return nil
		}
		for _, x := range iv {
			vals = append(vals, x)
		}
	}
	if len(vals) == 1 {
		return vals[0]
	}
	return vals
}

// jsonFloat keeps NaN/Inf representable (JSON has no literal for them).
func jsonFloat(x float64) any {
	switch {
	case math.IsNaN(x):
		return "nan"
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	}
	return x
}

func attrJSON(name string, a ir.Attr) (attrDesc, bool) {
	switch a.Kind {
	case ir.AttrInt:
		return attrDesc{"int", name, a.I}, true
	case ir.AttrFloat:
		return attrDesc{"float", name, jsonFloat(a.F)}, true
	case ir.AttrString:
		return attrDesc{"str", name, a.S}, true
	case ir.AttrInts:
		return attrDesc{"listInt", name, orEmpty(a.Ints)}, true
	case ir.AttrFloats:
		vals := make([]any, len(a.Floats))
		for i, f := range a.Floats {
			vals[i] = jsonFloat(f)
		}
		return attrDesc{"listFloat", name, vals}, true
	case ir.AttrStrings:
		return attrDesc{"listStr", name, a.Strings}, true
	}
	return attrDesc{}, false
}
