package check

// The abstract and output-arity rules of `converter check` (see check.go):
// the `shape` attribute and ValueInfoProto.attr_info in their new and old
// (ref_attr_name) forms, old-form CNode and value-node attributes, and the
// tuple abstract of a node with several outputs. Each function cites the
// load_model.cc lines it implements.

import (
	"fmt"
	"strings"

	pb "gkconv/internal/mindir/mindirpb"
)

// ---------------------------------------------------------------------------
// Abstracts: the `shape` attribute and ValueInfoProto.attr_info.

// checkAbstract implements GetNodeAbstractFromAttrProtoWithType
// (load_model.cc:673-721) for a new-form shape attribute (no ref_attr_name):
// TENSORS for a tensor (one tensor with a data_type), TUPLE/LIST of
// abstracts for a tuple, SCALAR, monads, NONE, closures, CSR/COO/MAP
// tensors; any other type yields no abstract (the loader logs "Parse CNode
// abstract error", TrytoBuildCNodeAbstract 2204).
func (c *checker) checkAbstract(l loc, a *pb.AttributeProto, depth int, ref string) {
	if depth > protoRecursionLimit {
		c.at(l, "abstract nested deeper than protobuf's recursion limit", fmt.Sprintf("<= %d levels", protoRecursionLimit), fmt.Sprint(depth),
			"load_model.cc:2740 ParseModelProto (ParseFromIstream)")
		return
	}
	switch a.GetType() {
	case pb.AttributeProto_TENSORS:
		if len(a.Tensors) != 1 {
			c.at(l, "a TENSORS abstract holds exactly one tensor (the loader reads tensors(0))", "1 tensor",
				fmt.Sprintf("%d tensors", len(a.Tensors)), "load_model.cc:677 GetNodeAbstractFromAttrProtoWithType")
			if len(a.Tensors) == 0 {
				return
			}
		}
		if msg := c.absTensorProblem(a.Tensors[0]); msg != "" {
			c.at(l, "a TENSORS abstract needs a data_type of kDefaultValueSwitchMap", "a supported data_type", msg,
				"load_model.cc:791 GetAbsTensorFromTensorProto")
		}
	case pb.AttributeProto_SCALAR:
		if len(a.Tensors) == 0 {
			c.at(l, "a SCALAR abstract reads its type from tensors(0)", "1 tensor", "0 tensors", "load_model.cc:912 BuildAbstractScalar")
		} else if !supportedDType(a.Tensors[0].GetDataType()) {
			c.at(l, "a SCALAR abstract needs a data_type of kDefaultValueSwitchMap", "a supported data_type",
				dtypeName(a.Tensors[0].GetDataType()), "load_model.cc:914 BuildAbstractScalar")
		}
	case pb.AttributeProto_TUPLE, pb.AttributeProto_LIST, pb.AttributeProto_CSR_TENSOR, pb.AttributeProto_COO_TENSOR:
		for i, v := range a.Values {
			c.checkAbstract(l.sub(fmt.Sprintf("[%d]", i)), v, depth+1, ref)
		}
		if si := a.SeqInfo; si != nil && si.TupleElemItem != nil {
			c.checkAbstract(l.sub(".tuple_elem_item"), si.TupleElemItem, depth+1, ref)
		}
	case pb.AttributeProto_MAP_TENSOR:
		if len(a.Values) != 1 {
			c.at(l, "a MAP_TENSOR abstract holds one default value", "1 value", fmt.Sprintf("%d values", len(a.Values)),
				"load_model.cc:877 BuildAbstractMapTensorFromAttrProto")
		} else {
			c.checkSingleScalar(l.sub(".values[0]"), a.Values[0])
		}
		if len(a.Tensors) != 2 {
			c.at(l, "a MAP_TENSOR abstract holds key and value tensors", "2 tensors", fmt.Sprintf("%d tensors", len(a.Tensors)),
				"load_model.cc:887 BuildAbstractMapTensorFromAttrProto")
		} else {
			for i, t := range a.Tensors {
				if msg := c.absTensorProblem(t); msg != "" {
					c.at(l.sub(fmt.Sprintf(".tensors[%d]", i)), "a MAP_TENSOR tensor needs a data_type of kDefaultValueSwitchMap",
						"a supported data_type", msg, "load_model.cc:892 BuildAbstractMapTensorFromAttrProto")
				}
			}
		}
	case pb.AttributeProto_UMONAD, pb.AttributeProto_IOMONAD, pb.AttributeProto_BOOL, pb.AttributeProto_NONE,
		pb.AttributeProto_FUNCGRAPHCLOSURE, pb.AttributeProto_PRIMITIVECLOSURE:
	case pb.AttributeProto_PARTIALCLOSURE:
		c.partials = append(c.partials, pendingPartial{l.graph, l.node, l.attr, string(a.S)})
	case pb.AttributeProto_UNIONFUNCCLOSURE:
		for i, v := range a.Values {
			switch v.GetType() {
			case pb.AttributeProto_FUNCGRAPHCLOSURE, pb.AttributeProto_PRIMITIVECLOSURE, pb.AttributeProto_UNIONFUNCCLOSURE:
			case pb.AttributeProto_PARTIALCLOSURE:
				c.partials = append(c.partials, pendingPartial{l.graph, l.node, l.attr + fmt.Sprintf("[%d]", i), string(v.S)})
			default:
				c.at(l.sub(fmt.Sprintf("[%d]", i)), "a UNIONFUNCCLOSURE holds function closures", "a *CLOSURE type", v.GetType().String(),
					"load_model.cc:2638 BuildAbstractFunction")
			}
		}
	default:
		what := a.GetType().String()
		if a.Type == nil {
			what = "no type"
		}
		c.at(l, "the abstract type is not readable (GetNodeAbstractFromAttrProtoWithType returns null: \"Parse CNode abstract error\")",
			"TENSORS, TUPLE, LIST, SCALAR, BOOL, NONE, UMONAD, IOMONAD, a closure, CSR/COO/MAP_TENSOR", what,
			"load_model.cc:717 GetNodeAbstractFromAttrProtoWithType")
	}
}

// refTokens splits a ref_attr_name such as "scalar:Tuple[value1,value2,]," or
// "shape:Tuple[shape1,shape2,]," into its names, as ParserAttr reads them
// (load_model.cc:124-169, after ParserScalarAttrValue/ParserAttrShape strip
// the prefix, "Tuple" and "List"); ok is false when the brackets do not
// balance (ParserAttr then returns null).
func refTokens(ref, prefix string) (tokens []string, ok bool) {
	s := strings.ReplaceAll(ref, prefix, "")
	s = strings.ReplaceAll(s, "Tuple", "")
	s = strings.ReplaceAll(s, "List", "")
	depth := 0
	closed := false
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			tokens = append(tokens, cur.String())
			cur.Reset()
		}
	}
	for _, r := range s {
		switch r {
		case '[':
			flush()
			depth++
		case ']':
			flush()
			depth--
			if depth < 0 {
				return tokens, false
			}
			if depth == 0 {
				closed = true
			}
		case ',':
			flush()
		default:
			cur.WriteRune(r)
		}
	}
	flush()
	return tokens, depth == 0 && closed
}

// checkOldShape implements SetNodeAbstractFromAttrProto (load_model.cc:723-752)
// for the old "shape:..." form: tensors named in ref_attr_name; a Tuple/List
// form names every element, each a tensor of the attribute (ParserAttr:
// "Node's attributes and shape do not match", 160).
func (c *checker) checkOldShape(l loc, a *pb.AttributeProto, ref string) {
	r := a.GetRefAttrName()
	if !strings.Contains(r, "shape:") {
		c.at(l, "an old-form abstract has a \"shape:\" ref_attr_name", "shape:...", r, "load_model.cc:727 SetNodeAbstractFromAttrProto")
		return
	}
	have := map[string]bool{}
	for i, t := range a.Tensors {
		have[t.GetName()] = true
		if msg := c.absTensorProblem(t); msg != "" {
			c.at(l.sub(fmt.Sprintf(".tensors[%d]", i)), "a shape tensor needs a data_type of kDefaultValueSwitchMap", "a supported data_type", msg,
				"load_model.cc:791 GetAbsTensorFromTensorProto")
		}
	}
	if len(a.Tensors) == 0 || !(strings.Contains(r, "Tuple[") || strings.Contains(r, "List[")) {
		return
	}
	tokens, ok := refTokens(r, "shape:")
	if !ok {
		c.at(l, "ref_attr_name brackets must balance", "a well-formed Tuple[...]", r, "load_model.cc:169 ParserAttr")
		return
	}
	for _, tk := range tokens {
		if !have[tk] {
			c.at(l, "every name of a shape:Tuple[...] is a tensor of the attribute (\"Node's attributes and shape do not match\")",
				"a tensor named "+tk, "none", "load_model.cc:160 ParserAttr")
		}
	}
}

// parseForm is GetParseFormType (load_model.cc:296-303).
func parseForm(ref string) string {
	for _, p := range []string{"type", "scalar", "tensor", "none", "Monad", "Sequence"} {
		if strings.HasPrefix(ref, p) {
			return p
		}
	}
	return ""
}

// checkOldMultiScalar implements ObtainCNodeAttrInScalarForm
// (load_model.cc:1276-1291) and ParserScalarAttrValue: for each of ints,
// doubles, floats, strings and tensors, entry i is read with
// ParseAttrInScalarForm(attr, i) from the field of the attribute's type, so
// no field may hold more entries than that one; every valueN named in
// ref_attr_name must exist. It returns how many values were built.
func (c *checker) checkOldMultiScalar(l loc, a *pb.AttributeProto) int {
	field, n, ok := repeatedField(a)
	sizes := []int{len(a.Ints), len(a.Doubles), len(a.Floats), len(a.Strings), len(a.Tensors)}
	maxN := 0
	for _, s := range sizes {
		maxN = max(maxN, s)
	}
	if !ok {
		if maxN > 0 {
			c.at(l, "old-form sequence item type not supported (\"Obtain attr in scalar-form has not support input type\")",
				"a scalar type or TENSORS", a.GetType().String(), "load_model.cc:1271 ParseAttrInScalarForm")
		}
		return 0
	}
	if maxN > n {
		c.at(l, fmt.Sprintf("old-form %s values are read from %s by index; another field holds more entries (\"Parse MindIR attr failed\")", a.GetType(), field),
			fmt.Sprintf("all values in %s", field), misplaced(a, field), "load_model.cc:1286 ObtainCNodeAttrInScalarForm")
	}
	if a.GetType() == pb.AttributeProto_TENSORS {
		for i, t := range a.Tensors {
			if !supportedDType(t.GetDataType()) {
				c.at(l.sub(fmt.Sprintf(".tensors[%d]", i)), "a type value needs a data_type of kDefaultValueSwitchMap", "a supported data_type",
					dtypeName(t.GetDataType()), "load_model.cc:1264 ParseAttrInScalarForm")
			}
		}
	}
	tokens, ok := refTokens(a.GetRefAttrName(), "scalar:")
	if !ok {
		c.at(l, "ref_attr_name brackets must balance", "a well-formed Tuple[...]/List[...]", a.GetRefAttrName(), "load_model.cc:169 ParserAttr")
		return 0
	}
	for _, tk := range tokens {
		var k int
		if _, err := fmt.Sscanf(tk, "value%d", &k); err != nil || fmt.Sprintf("value%d", k) != tk || k < 1 || k > maxN {
			c.at(l, "every name of a scalar:Tuple[...]/List[...] is one of the values (\"Node's attributes and shape do not match\")",
				fmt.Sprintf("value1..value%d", maxN), tk, "load_model.cc:160 ParserAttr")
		}
	}
	return maxN
}

// checkOldCNodeAttr implements GetAttrValueForCNode (load_model.cc:1381-1452)
// for an old-form node attribute (with ref_attr_name).
func (c *checker) checkOldCNodeAttr(l loc, a *pb.AttributeProto) {
	r := a.GetRefAttrName()
	switch parseForm(r) {
	case "type":
		if len(a.Tensors) == 0 {
			c.at(l, "a type: attribute reads tensors(0)", "1 tensor", "0 tensors", "load_model.cc:1214 ObtainCNodeAttrInTypeForm")
		} else if !supportedDType(a.Tensors[0].GetDataType()) {
			c.at(l, "a type: attribute needs a data_type of kDefaultValueSwitchMap", "a supported data_type",
				dtypeName(a.Tensors[0].GetDataType()), "load_model.cc:1216 ObtainCNodeAttrInTypeForm")
		}
	case "scalar":
		switch {
		case strings.Contains(r, "value0"):
			c.checkSingleScalar(l, a)
		case strings.Contains(r, "Tuple[]") || strings.Contains(r, "List[]"):
		default:
			if c.checkOldMultiScalar(l, a) == 0 {
				c.at(l, "an old-form sequence with no values is dropped (the attribute is not set)", "values in ints/floats/doubles/strings/tensors",
					"none", "load_model.cc:1442 GetAttrValueForCNode")
			}
		}
	case "tensor":
		if len(a.Tensors) == 0 {
			c.at(l, "a tensor: attribute reads tensors(0)", "1 tensor", "0 tensors", "load_model.cc:1341 ObtainCNodeAttrInTensorForm")
		} else {
			c.checkTensor(l, a.Tensors[0], "load_model.cc:1342 ObtainCNodeAttrInTensorForm")
		}
	case "none":
	default:
		c.at(l, "ref_attr_name form not supported for a node attribute (\"parse attr type don't support the ref_attr_name\")",
			"type:, scalar:, tensor: or none", r, "load_model.cc:1437 GetAttrValueForCNode")
	}
}

// checkOldValueNode implements GetAttrValueForValueNode (load_model.cc:1774-1855)
// for an old-form Constant; it reports whether the loader registers the node.
func (c *checker) checkOldValueNode(l loc, a *pb.AttributeProto) bool {
	r := a.GetRefAttrName()
	switch parseForm(r) {
	case "type":
		if len(a.Tensors) == 0 {
			c.at(l, "a type: Constant reads tensors(0)", "1 tensor", "0 tensors", "load_model.cc:1786 GetAttrValueForValueNode")
			return false
		}
		if !supportedDType(a.Tensors[0].GetDataType()) {
			c.at(l, "a type: Constant needs a data_type of kDefaultValueSwitchMap (the node is not built)", "a supported data_type",
				dtypeName(a.Tensors[0].GetDataType()), "load_model.cc:1517 ObtainValueNodeInTypeForm")
			return false
		}
	case "scalar":
		switch {
		case strings.Contains(r, "value0"):
			c.checkSingleScalar(l, a)
		case strings.Contains(r, "Tuple[]"):
		case strings.Contains(r, "Tuple[value") && len(a.Tensors) > 1:
			for i, t := range a.Tensors {
				c.checkTensor(l.sub(fmt.Sprintf(".tensors[%d]", i)), t, "load_model.cc:1497 ObtainValueNodeInTupleTensorForm")
			}
		default:
			if c.checkOldMultiScalar(l, a) == 0 {
				c.at(l, "an old-form sequence Constant with no values is not built", "values in ints/floats/doubles/strings/tensors",
					"none", "load_model.cc:1832 GetAttrValueForValueNode")
				return false
			}
		}
	case "tensor":
		if len(a.Tensors) == 0 {
			c.at(l, "a tensor: Constant reads tensors(0)", "1 tensor", "0 tensors", "load_model.cc:1817 GetAttrValueForValueNode")
			return false
		}
		c.checkTensor(l, a.Tensors[0], "load_model.cc:1456 ObtainValueNodeInTensorForm")
	case "none":
	case "Monad":
		if !strings.Contains(r, "UMonad") && !strings.Contains(r, "IOMonad") {
			c.at(l, "a Monad: Constant names UMonad or IOMonad (the node is not built)", "Monad:UMonad or Monad:IOMonad", r,
				"load_model.cc:1550 ObtainValueNodeInMonadForm")
			return false
		}
	default:
		c.at(l, "ref_attr_name form not supported for a Constant (\"parse attr type don't support the ref_attr_name\")",
			"type:, scalar:, tensor:, none or Monad:", r, "load_model.cc:1829 GetAttrValueForValueNode")
		return false
	}
	return true
}

// ---------------------------------------------------------------------------
// Output arity.

// checkTupleShape implements the tuple case of SetCNodeAbstract
// (load_model.cc:1955-1969 via GetNodeAbstractFromAttrProtoWithType 689 /
// ParserAttrShape 192): a node with n outputs has a TUPLE (or old-form
// shape:Tuple[...]) abstract of n TENSORS; one tensor output is a TENSORS.
func (c *checker) checkTupleShape(l loc, shape *pb.AttributeProto, n int, why, ref string) {
	sl := l.with("shape")
	want := fmt.Sprintf("a TUPLE of %d TENSORS", n)
	if shape == nil {
		c.at(sl, "a multi-output node's abstract is a tuple ("+why+")", want, "no shape attribute", ref)
		return
	}
	if shape.RefAttrName != nil {
		r := shape.GetRefAttrName()
		if !strings.Contains(r, "Tuple[") && !strings.Contains(r, "List[") {
			c.at(sl, "a multi-output node's abstract is a tuple ("+why+")", "shape:Tuple[...] of "+fmt.Sprint(n), r, ref)
			return
		}
		if tokens, _ := refTokens(r, "shape:"); len(tokens) != n {
			c.at(sl, "a multi-output node's abstract has one element per output ("+why+")", fmt.Sprintf("%d elements", n),
				fmt.Sprintf("%d elements (%s)", len(tokens), r), ref)
		}
		return
	}
	t := shape.GetType()
	if t != pb.AttributeProto_TUPLE && t != pb.AttributeProto_LIST {
		c.at(sl, "a multi-output node's abstract is a tuple ("+why+")", want, t.String(), ref)
		return
	}
	if len(shape.Values) != n {
		c.at(sl, "a multi-output node's abstract has one element per output ("+why+")", want,
			fmt.Sprintf("%s of %d", t, len(shape.Values)), ref)
		return
	}
	for i, v := range shape.Values {
		if v.GetType() != pb.AttributeProto_TENSORS {
			c.at(sl.sub(fmt.Sprintf("[%d]", i)), "each output of a multi-output node is a tensor ("+why+")", "TENSORS", v.GetType().String(), ref)
		}
	}
}
