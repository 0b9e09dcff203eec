package kernels

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"

	"gkconv/internal/ir"
)

// Reading AKG kernel-info JSON back into a body graph (the inverse of
// InfoJSONFor): graph inputs from input_desc, one node per op_desc entry in
// order, tensors linked by tensor_name, inputs with a `value` as constants,
// graph outputs from output_desc. The IR conventions of the writer are
// restored: reduce axis/keep_dims become the axes input and keepdims, Cast's
// dst_type becomes `to`, Reshape/BroadcastTo's shape attr is dropped (the
// writer derives it from the output shape). Grouped inputs (several tensors
// in one input_desc entry) keep their grouping in dyn_input_sizes (or the
// private attr gk_input_groups when the file has none).

// AttrInputGroups records input_desc grouping that dyn_input_sizes does not.
const AttrInputGroups = "gk_input_groups"

// AttrAttrInputs marks a node whose axes/shape/type came as constant inputs
// (newer AKG files) instead of attrs: the writer keeps that form.
const AttrAttrInputs = "gk_attr_inputs"

// InfoMeta is the top level of a kernel-info file besides the graph.
type InfoMeta struct {
	Op, Process, Platform, CompositeGraph string
	// TargetInfo is target_info as read (nil when absent).
	TargetInfo map[string]any
	// Keys are the top-level keys present, sorted.
	Keys []string
}

type rTensor struct {
	DataType   string          `json:"data_type"`
	Format     string          `json:"format"`
	Name       string          `json:"name"`
	Shape      []int64         `json:"shape"`
	TensorName string          `json:"tensor_name"`
	Value      json.RawMessage `json:"value"`
}

type rAttr struct {
	DataType string          `json:"data_type"`
	Name     string          `json:"name"`
	Value    json.RawMessage `json:"value"`
}

type rOp struct {
	Attr       json.RawMessage `json:"attr"`
	InputDesc  [][]rTensor     `json:"input_desc"`
	Name       string          `json:"name"`
	OutputDesc []rTensor       `json:"output_desc"`
}

type rInfo struct {
	CompositeGraph string         `json:"composite_graph"`
	InputDesc      [][]rTensor    `json:"input_desc"`
	Op             string         `json:"op"`
	OpDesc         []rOp          `json:"op_desc"`
	OutputDesc     []rTensor      `json:"output_desc"`
	Platform       string         `json:"platform"`
	Process        string         `json:"process"`
	TargetInfo     map[string]any `json:"target_info"`
}

// ReadInfo parses a kernel-info JSON into a body graph. It never panics;
// errors name the op and tensor at fault.
func ReadInfo(data []byte) (*ir.Graph, *InfoMeta, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, nil, fmt.Errorf("kernel info: %w", err)
	}
	var ri rInfo
	if err := json.Unmarshal(data, &ri); err != nil {
		return nil, nil, fmt.Errorf("kernel info: %w", err)
	}
	meta := &InfoMeta{Op: ri.Op, Process: ri.Process, Platform: ri.Platform, CompositeGraph: ri.CompositeGraph, TargetInfo: ri.TargetInfo}
	for k := range top {
		meta.Keys = append(meta.Keys, k)
	}
	sort.Strings(meta.Keys)
	g := ir.NewGraph(ri.CompositeGraph)
	vals := map[string]*ir.Value{}
	newValue := func(t rTensor, what string) (*ir.Value, error) {
		dt, ok := ir.ParseDType(t.DataType)
		if !ok {
			return nil, fmt.Errorf("%s: tensor %q has unknown data_type %q", what, t.TensorName, t.DataType)
		}
		if t.TensorName == "" {
			return nil, fmt.Errorf("%s: tensor without tensor_name", what)
		}
		for _, d := range t.Shape {
			if d < 0 {
				return nil, fmt.Errorf("%s: tensor %q has a negative dim", what, t.TensorName)
			}
		}
		return &ir.Value{Name: t.TensorName, DType: dt, Shape: append([]int64{}, t.Shape...)}, nil
	}
	for _, list := range ri.InputDesc {
		for _, t := range list {
			v, err := newValue(t, "input_desc")
			if err != nil {
				return nil, nil, err
			}
			if _, dup := vals[v.Name]; dup {
				return nil, nil, fmt.Errorf("input_desc: tensor %q defined twice", v.Name)
			}
			vals[v.Name] = v
			g.Inputs = append(g.Inputs, v)
		}
	}
	for i, op := range ri.OpDesc {
		what := fmt.Sprintf("op_desc[%d] (%s)", i, op.Name)
		if op.Name == "" {
			return nil, nil, fmt.Errorf("%s: no name", what)
		}
		n := &ir.Node{Name: fmt.Sprintf("%s_%d", op.Name, i), Op: op.Name, Attrs: ir.Attrs{}}
		attrs, err := readAttrs(op.Attr)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", what, err)
		}
		var groups []int64
		for _, list := range op.InputDesc {
			groups = append(groups, int64(len(list)))
			for _, t := range list {
				v, ok := vals[t.TensorName]
				if !ok {
					if len(t.Value) == 0 {
						return nil, nil, fmt.Errorf("%s: input tensor %q is not defined before use", what, t.TensorName)
					}
					cv, err := newValue(t, what)
					if err != nil {
						return nil, nil, err
					}
					c, err := constTensor(cv.DType, cv.Shape, t.Value)
					if err != nil {
						return nil, nil, fmt.Errorf("%s: tensor %q: %w", what, t.TensorName, err)
					}
					v = g.AddConst(t.TensorName, c)
					v.Shape = cv.Shape
					vals[t.TensorName] = v
				}
				n.Inputs = append(n.Inputs, v)
			}
		}
		attrInputs := len(n.Inputs) > 1
		grouped := false
		for _, s := range groups {
			grouped = grouped || s != 1
		}
		for _, a := range attrs {
			switch {
			case IsReduce(op.Name) && a.name == "axis":
				axes := a.attr.Ints
				if a.attr.Kind == ir.AttrInt {
					axes = []int64{a.attr.I}
				}
				ax := g.AddConst(fmt.Sprintf("%s_axes", n.Name), ir.Int64Tensor([]int64{int64(len(axes))}, axes...))
				n.Inputs = append(n.Inputs[:1:1], append([]*ir.Value{ax}, n.Inputs[1:]...)...)
			case IsReduce(op.Name) && a.name == "keep_dims":
				n.Attrs["keepdims"] = a.attr
			case (IsReshape(op.Name) || op.Name == "BroadcastTo") && a.name == "shape":
			case op.Name == "Cast" && a.name == "dst_type":
			default:
				n.Attrs[a.name] = a.attr
			}
		}
		if (IsReduce(op.Name) || IsReshape(op.Name) || op.Name == "BroadcastTo" || op.Name == "Cast") && attrInputs {
			n.Attrs[AttrAttrInputs] = ir.IntAttr(1)
		}
		if IsReduce(op.Name) && len(n.Inputs) == 0 {
			return nil, nil, fmt.Errorf("%s: reduction without input", what)
		}
		if grouped && !n.Attrs.Has("dyn_input_sizes") {
			n.Attrs[AttrInputGroups] = ir.IntsAttr(groups...)
		}
		for k, t := range op.OutputDesc {
			v, err := newValue(t, what)
			if err != nil {
				return nil, nil, err
			}
			if _, dup := vals[v.Name]; dup {
				return nil, nil, fmt.Errorf("%s: output tensor %q defined twice", what, v.Name)
			}
			v.Producer, v.OutIndex = n, k
			vals[v.Name] = v
			n.Outputs = append(n.Outputs, v)
		}
		if op.Name == "Cast" && len(n.Outputs) > 0 {
			n.Attrs["to"] = ir.IntAttr(int64(n.Outputs[0].DType))
		}
		g.Nodes = append(g.Nodes, n)
	}
	for _, t := range ri.OutputDesc {
		v, ok := vals[t.TensorName]
		if !ok {
			return nil, nil, fmt.Errorf("output_desc: tensor %q is not produced", t.TensorName)
		}
		g.Outputs = append(g.Outputs, v)
	}
	return g, meta, nil
}

type namedAttr struct {
	name string
	attr ir.Attr
}

// readAttrs reads `attr`: null, an empty object, or a list of
// {data_type, name, value} (data_type may be missing: inferred).
func readAttrs(raw json.RawMessage) ([]namedAttr, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return nil, nil
	}
	var list []rAttr
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("attr: %w", err)
	}
	var out []namedAttr
	for _, a := range list {
		if a.Name == "" {
			return nil, errors.New("attr without name")
		}
		at, err := attrValue(a.DataType, a.Value)
		if err != nil {
			return nil, fmt.Errorf("attr %s: %w", a.Name, err)
		}
		out = append(out, namedAttr{a.Name, at})
	}
	return out, nil
}

func attrValue(dt string, raw json.RawMessage) (ir.Attr, error) {
	var v any
	if len(raw) == 0 {
		return ir.Attr{}, errors.New("no value")
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return ir.Attr{}, err
	}
	switch x := v.(type) {
	case bool:
		if x {
			return ir.IntAttr(1), nil
		}
		return ir.IntAttr(0), nil
	case string:
		if f, ok := specialFloat(x); ok && dt == "float" {
			return ir.FloatAttr(f), nil
		}
		return ir.StringAttr(x), nil
	case float64:
		if dt == "float" || x != math.Trunc(x) {
			return ir.FloatAttr(x), nil
		}
		return ir.IntAttr(int64(x)), nil
	case []any:
		allStr, allInt := true, dt != "listFloat"
		for _, e := range x {
			f, isNum := e.(float64)
			_, isStr := e.(string)
			allStr = allStr && isStr
			allInt = allInt && isNum && f == math.Trunc(f)
		}
		switch {
		case len(x) > 0 && allStr:
			s := make([]string, len(x))
			for i, e := range x {
				s[i] = e.(string)
			}
			return ir.StringsAttr(s...), nil
		case allInt:
			iv := make([]int64, len(x))
			for i, e := range x {
				iv[i] = int64(e.(float64))
			}
			return ir.IntsAttr(iv...), nil
		default:
			fv := make([]float64, len(x))
			for i, e := range x {
				switch y := e.(type) {
				case float64:
					fv[i] = y
				case string:
					f, ok := specialFloat(y)
					if !ok {
						return ir.Attr{}, fmt.Errorf("list element %q is not a number", y)
					}
					fv[i] = f
				default:
					return ir.Attr{}, fmt.Errorf("list element %v is not a number", e)
				}
			}
			return ir.FloatsAttr(fv...), nil
		}
	case nil:
		return ir.StringAttr(""), nil
	}
	return ir.Attr{}, fmt.Errorf("unsupported value %s", raw)
}

func specialFloat(s string) (float64, bool) {
	switch s {
	case "nan":
		return math.NaN(), true
	case "inf":
		return math.Inf(1), true
	case "-inf":
		return math.Inf(-1), true
	}
	return 0, false
}

// constTensor builds the tensor of a constant input from its JSON value: a
// scalar broadcast over the shape, or a flat list of all elements.
func constTensor(dt ir.DType, shape []int64, raw json.RawMessage) (*ir.Tensor, error) {
	if dt.Size() <= 0 || dt == ir.String || dt == ir.Complex64 || dt == ir.Complex128 {
		return nil, fmt.Errorf("constant of type %s is not supported", dt)
	}
	n := ir.NumElements(shape)
	if n < 0 || n > 1<<24 {
		return nil, fmt.Errorf("constant of %d elements", n)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	var elems []any
	if l, ok := v.([]any); ok {
		elems = l
	} else {
		elems = []any{v}
	}
	if len(elems) != 1 && int64(len(elems)) != n {
		return nil, fmt.Errorf("value has %d elements, shape %v has %d", len(elems), shape, n)
	}
	t := ir.NewTensor(dt, shape)
	for i := int64(0); i < n; i++ {
		e := elems[0]
		if len(elems) > 1 {
			e = elems[i]
		}
		var f float64
		switch x := e.(type) {
		case float64:
			f = x
		case bool:
			if x {
				f = 1
			}
		case string:
			sf, ok := specialFloat(x)
			if !ok {
				return nil, fmt.Errorf("element %q is not a number", x)
			}
			f = sf
		default:
			return nil, fmt.Errorf("element %v is not a number", e)
		}
		PutNumber(t, int(i), f)
	}
	return t, nil
}

// PutNumber stores v into element i of t, converting to t's dtype (floats
// round, integers truncate, bools are v != 0).
func PutNumber(t *ir.Tensor, i int, v float64) {
	switch t.DType {
	case ir.Float32, ir.Float64, ir.Float16, ir.BFloat16:
		t.PutFloat(i, v)
	case ir.Bool:
		t.Data[i] = 0
		if v != 0 {
			t.Data[i] = 1
		}
	case ir.Int8, ir.Uint8:
		t.Data[i] = byte(int64(v))
	case ir.Int16, ir.Uint16:
		binary.LittleEndian.PutUint16(t.Data[2*i:], uint16(int64(v)))
	case ir.Int32, ir.Uint32:
		binary.LittleEndian.PutUint32(t.Data[4*i:], uint32(int64(v)))
	case ir.Int64:
		binary.LittleEndian.PutUint64(t.Data[8*i:], uint64(int64(v)))
	case ir.Uint64:
		binary.LittleEndian.PutUint64(t.Data[8*i:], uint64(v))
	}
}
