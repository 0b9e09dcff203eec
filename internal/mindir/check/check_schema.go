package check

// The primitive schema rules of `converter check` (see check.go): a
// primitive's attributes and inputs checked against the schema (schema.go,
// generated from MindSpore's op_def yaml and ops/infer sources), i.e.
// against what the primitive's infer/kernel reads: attribute types,
// enum arguments, variadic primitives and input counts.

import (
	"fmt"
	"strings"

	"gkconv/internal/mindir"
	pb "gkconv/internal/mindir/mindirpb"
)

// ---------------------------------------------------------------------------
// The primitive schema (schema.go, generated from MindSpore's op_def yaml and
// ops/infer sources). The loader itself adds every attribute it finds
// (SetPrimitiveAttrWithType, load_model.cc:1352-1379); these rules check the
// attributes and inputs against what the primitive's infer/kernel reads.

// variadicPrims take any number of inputs.
var variadicPrims = map[string]bool{
	"MakeTuple": true, "MakeList": true, "MakeDict": true, "UpdateState": true, "Custom": true,
	"Partial": true, "Switch": true, "SwitchLayer": true,
}

func isEnumArg(a mindir.PrimArg) bool {
	t := strings.ToLower(a.Type)
	return strings.Contains(t, "enum") || strings.Contains(t, "handler")
}

// attrTypes is the MindIR type an attribute loads as, and its items' types
// for a sequence. Old-form attributes take it from ref_attr_name
// (GetAttrValueForCNode, load_model.cc:1381-1452).
func attrTypes(a *pb.AttributeProto) (pb.AttributeProto_AttributeType, []pb.AttributeProto_AttributeType) {
	if a.RefAttrName != nil {
		r := a.GetRefAttrName()
		switch parseForm(r) {
		case "type", "tensor":
			return pb.AttributeProto_TENSORS, nil
		case "none":
			return pb.AttributeProto_NONE, nil
		case "scalar":
			seq := pb.AttributeProto_LIST
			if strings.Contains(r, "Tuple") {
				seq = pb.AttributeProto_TUPLE
			}
			switch {
			case strings.Contains(r, "value0"):
				return a.GetType(), nil
			case strings.Contains(r, "Tuple[]") || strings.Contains(r, "List[]"):
				return seq, nil
			}
			_, n, _ := repeatedField(a)
			items := make([]pb.AttributeProto_AttributeType, n)
			for i := range items {
				items[i] = a.GetType()
			}
			return seq, items
		}
		return a.GetType(), nil
	}
	t := a.GetType()
	if t != pb.AttributeProto_TUPLE && t != pb.AttributeProto_LIST {
		return t, nil
	}
	items := make([]pb.AttributeProto_AttributeType, len(a.Values))
	for i, v := range a.Values {
		items[i] = v.GetType()
	}
	return t, items
}

func isSeq(t pb.AttributeProto_AttributeType) bool {
	return t == pb.AttributeProto_TUPLE || t == pb.AttributeProto_LIST
}

// typeMatches: the schema's MindIR type, with TUPLE and LIST interchangeable
// (both load as a ValueSequence that GetValue<std::vector<T>> reads), STRING
// or INT64 for enum arguments (Type "enum:X", "enum:X|str" or
// "int|str_to_enum": a string converted by the arg handler, or the enum's
// integer), and TENSORS or INT64 for "TypeId|dtype_to_type_id".
func typeMatches(arg mindir.PrimArg, want, got pb.AttributeProto_AttributeType) bool {
	if isSeq(want) {
		return isSeq(got)
	}
	if got == want {
		return true
	}
	if strings.Contains(arg.Type, "type_id") && (got == pb.AttributeProto_INT64 || got == pb.AttributeProto_TENSORS) {
		return true // a dtype: the Type value, or the TypeId integer of the dtype_to_type_id handler
	}
	return isEnumArg(arg) && (got == pb.AttributeProto_STRING || got == pb.AttributeProto_INT64)
}

func describeArg(arg mindir.PrimArg) string {
	s := arg.MindIR.String()
	if isSeq(arg.MindIR) && arg.Elem != pb.AttributeProto_UNDEFINED {
		s += " of " + arg.Elem.String()
	}
	if isEnumArg(arg) && !isSeq(arg.MindIR) {
		s = "STRING or INT64"
	}
	return fmt.Sprintf("%s (%s %s)", s, arg.Name, arg.Type)
}

// checkSchema checks a primitive node against its schema row. The loader
// sets every attribute it finds on the primitive (SetPrimitiveAttrWithType,
// load_model.cc:1352-1379; old form GetAttrValueForCNode, 1381-1452) and
// passes every node input (BuildCNodeForFuncGraph, 1991-1998); which
// convention applies follows CheckMindIRVseriosn (2212-2220) and the
// primitive's prim_type (BuildPrimitiveNode, 2539-2542).
func (c *checker) checkSchema(l loc, primName string, prim *pb.PrimitiveProto, attrs []*pb.AttributeProto,
	inputs []string, monads []bool, shape *pb.AttributeProto) {
	if primName == "" {
		return
	}
	s, ok := checkLookup(primName)
	if !ok || s == nil {
		c.unchecked[primName] = true
		return
	}
	ref := "schema " + primName
	if s.Source != "" {
		ref += " from " + s.Source
	}
	// The convention: mind_ir_version < 2 or prim_type PRIMITIVE keeps
	// primitive-init arguments as attributes; PRIMITIVE_FUNCTION
	// (mind_ir_version >= 2, CheckMindIRVseriosn load_model.cc:2212) passes
	// every argument as a node input.
	primFunc := prim != nil && prim.GetPrimType() == pb.PrimitiveProto_PRIMITIVE_FUNCTION
	usesAttrs := c.mindIR < 2 || !primFunc
	c.checkInputCount(l, primName, s, usesAttrs, inputs, monads, ref)

	present := map[string]*pb.AttributeProto{}
	var order []string
	for _, a := range attrs {
		if _, dup := present[a.GetName()]; !dup {
			order = append(order, a.GetName())
		}
		present[a.GetName()] = a // AddAttr: a node attribute overrides the primitive's
	}
	for _, name := range order {
		a := present[name]
		arg, ok := s.Arg(name)
		if !ok || arg.MindIR == pb.AttributeProto_UNDEFINED || primName == "Custom" && name == "attr" {
			continue // attributes outside the schema are fine (input_names, is_load, ...)
		}
		t, items := attrTypes(a)
		if t == pb.AttributeProto_NONE && arg.Default == "None" {
			continue
		}
		if !typeMatches(arg, arg.MindIR, t) {
			c.at(l.with(name), "attribute type must be the schema's MindIR type", describeArg(arg), t.String(), ref)
			continue
		}
		if isSeq(arg.MindIR) && arg.Elem != pb.AttributeProto_UNDEFINED {
			for i, it := range items {
				if !typeMatches(arg, arg.Elem, it) {
					c.at(l.with(fmt.Sprintf("%s[%d]", name, i)), "sequence item type must be the schema's item type",
						fmt.Sprintf("%s (an item of %s %s)", arg.Elem, arg.Name, arg.Type), it.String(), ref)
					break
				}
			}
		}
	}
	// Required attributes: only rows from the op_def yaml, where an argument
	// without a default is a mandatory primitive-init argument. In rows from
	// ops/infer headers a missing default also marks setters outside Init
	// (derived or added in later versions: LSTM num_directions and
	// proj_size, absent from MindSpore 1.6 files), so it does not mean
	// required there.
	if usesAttrs && strings.HasSuffix(s.Source, ".yaml") {
		for _, arg := range s.Args {
			if arg.Form == mindir.FormAttr && !arg.Optional() && present[arg.Name] == nil {
				c.at(l.with(arg.Name), "required primitive attribute missing (attributes hold primitive-init arguments when mind_ir_version < 2 or prim_type is PRIMITIVE)",
					describeArg(arg), "absent", ref)
			}
		}
	}
	if s.Outputs > 1 && shape != nil {
		c.checkTupleShape(l, shape, s.Outputs, fmt.Sprintf("%s has %d outputs", primName, s.Outputs), ref+"; load_model.cc:1955 SetCNodeAbstract")
	}
}

// checkInputCount (node inputs: BuildCNodeForFuncGraph, load_model.cc:1991-1998):
// between the required inputs and all inputs, not counting
// the monads (UMonad/IOMonad values, UpdateState results) MindSpore appends
// to side-effect nodes.
func (c *checker) checkInputCount(l loc, primName string, s *mindir.PrimSchema, usesAttrs bool, inputs []string, monads []bool, ref string) {
	if variadicPrims[primName] {
		return
	}
	if len(s.Inputs()) == 0 {
		return // the row lists no inputs (an ops/infer header without an input list): unknown
	}
	ins := s.Args
	conv := "PRIMITIVE_FUNCTION: every argument is an input"
	if usesAttrs {
		ins = s.Inputs()
		conv = "primitive-init arguments are attributes"
	}
	req := 0
	names := make([]string, len(ins))
	for i, a := range ins {
		names[i] = a.Name
		if !a.Optional() {
			req++
		}
	}
	n := len(inputs)
	for n > 0 && monads[n-1] {
		n--
	}
	if n >= req && n <= len(ins) {
		return
	}
	want := fmt.Sprintf("%d", req)
	if len(ins) != req {
		want = fmt.Sprintf("%d..%d", req, len(ins))
	}
	got := fmt.Sprint(n)
	if n != len(inputs) {
		got += fmt.Sprintf(" (+%d trailing monad)", len(inputs)-n)
	}
	c.at(l.with("input"), "node input count must match the primitive's inputs ("+conv+")",
		fmt.Sprintf("%s inputs [%s]", want, strings.Join(names, ", ")), got, ref)
}
