package mindir

// The value, tensor, abstract, schema and GraphKernel rules of `converter
// check` (see check.go). Each function cites the load_model.cc lines it
// implements.

import (
	"fmt"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"strings"

	pb "gkconv/internal/mindir/mindirpb"
)

type valueMode uint8

const (
	// modeGetValue: GetValueFromAttributeProto (load_model.cc:486-541), used
	// for primitive attributes, new-form node attributes, graph attributes,
	// node_attr and primal_attr.
	modeGetValue valueMode = iota
	// modeBuildValue: BuildValueFromAttributeProto (load_model.cc:1701-1756),
	// used for new-form Constant nodes and map-parameter defaults.
	modeBuildValue
)

// checkValue implements GetValueFromAttributeProto (load_model.cc:486-541)
// and BuildValueFromAttributeProto (load_model.cc:1701-1756): the attribute's
// type selects how it is read; scalars at the top level come from i/f/d/s
// (ObtainCNodeAttrInSingleScalarForm, 1293-1336), sequences from values
// (ObtainValueInSequenceForm, 1626-1699).
func (c *checker) checkValue(l loc, a *pb.AttributeProto, mode valueMode, depth int) {
	if depth > protoRecursionLimit {
		c.at(l, "attribute nested deeper than protobuf's recursion limit", fmt.Sprintf("<= %d levels", protoRecursionLimit), fmt.Sprint(depth),
			"load_model.cc:2740 ParseModelProto (ParseFromIstream)")
		return
	}
	t := a.GetType()
	switch {
	case t == pb.AttributeProto_TENSORS:
		// load_model.cc:489-491 / 1703-1720: tensors(0), a real tensor when it
		// has raw_data, else a data type.
		quantName := "graph_input_quant_param" // GenerateTensorValue, 464
		if mode == modeBuildValue {
			quantName = ""
		}
		c.checkTensorsItem(l, a, quantName, "load_model.cc:490 GetValueFromAttributeProto")
		return
	case t == pb.AttributeProto_NONE:
		return
	case t == pb.AttributeProto_TUPLE || t == pb.AttributeProto_LIST:
		c.checkSequence(l, a, depth)
		return
	}
	if mode == modeGetValue {
		switch t {
		case pb.AttributeProto_DICT:
			c.checkDict(l, a, depth)
			return
		case pb.AttributeProto_FUNCTOR:
			c.checkFunctor(l, a, depth)
			return
		case pb.AttributeProto_GRAPH:
			c.checkGraphValue(l, a, depth)
			return
		case pb.AttributeProto_SCALAR_GRAPH_HOLDER:
			return
		}
	} else {
		switch t {
		case pb.AttributeProto_UMONAD, pb.AttributeProto_IOMONAD, pb.AttributeProto_TYPE_NULL,
			pb.AttributeProto_CLASS_TYPE, pb.AttributeProto_NAME_SPACE, pb.AttributeProto_SYMBOL:
			return
		}
	}
	c.checkSingleScalar(l, a)
}

// intLike reports the types read through PARSE_MINDIR_ATTR_IN_INT_FORM
// (load_model.cc:232-246): the integer types and BOOL.
func intLike(t pb.AttributeProto_AttributeType) bool {
	switch t {
	case pb.AttributeProto_INT8, pb.AttributeProto_INT16, pb.AttributeProto_INT32, pb.AttributeProto_INT64,
		pb.AttributeProto_UINT8, pb.AttributeProto_UINT16, pb.AttributeProto_UINT32, pb.AttributeProto_UINT64,
		pb.AttributeProto_BOOL:
		return true
	}
	return false
}

// checkSingleScalar implements ObtainCNodeAttrInSingleScalarForm
// (load_model.cc:1293-1336): integers and BOOL from i (has_i() required, else
// "Parse MindIR attr failed", 241-245), STRING from s (281), FLOAT from f
// (286), DOUBLE from d (291); any other type is not supported (1332).
func (c *checker) checkSingleScalar(l loc, a *pb.AttributeProto) {
	t := a.GetType()
	switch {
	case intLike(t):
		if a.I == nil {
			rule := fmt.Sprintf("a top-level %s scalar is read from i (has_i() or \"Parse MindIR attr failed\")", t)
			if t == pb.AttributeProto_UINT8 && a.S != nil {
				rule = "a top-level UINT8 is read from i; a byte string in s is not read (bytes are a TUPLE of UINT8 items)"
			}
			c.at(l, rule, "i set", misplaced(a, "i"), "load_model.cc:241 ParseAttrInSingleScalar_*")
			return
		}
		c.checkIntRange(l, t, a.GetI(), "i", "load_model.cc:242 ParseAttrInSingleScalar_*")
	case t == pb.AttributeProto_STRING:
		if a.S == nil && len(a.Strings) > 0 {
			c.at(l, "a top-level STRING is read from s (it loads as \"\")", "s set", misplaced(a, "s"), "load_model.cc:282 ParseAttrInSingleScalar_string_string")
		}
	case t == pb.AttributeProto_FLOAT:
		if a.F == nil && len(a.Floats) > 0 {
			c.at(l, "a top-level FLOAT is read from f (it loads as 0)", "f set", misplaced(a, "f"), "load_model.cc:287 ParseAttrInSingleScalar_float_float")
		}
	case t == pb.AttributeProto_DOUBLE:
		if a.D == nil && len(a.Doubles) > 0 {
			c.at(l, "a top-level DOUBLE is read from d (it loads as 0)", "d set", misplaced(a, "d"), "load_model.cc:292 ParseAttrInSingleScalar_double_double")
		}
	default:
		what := "type " + t.String()
		if a.Type == nil {
			what = "no type"
		}
		c.at(l, "attribute type not supported here (\"Obtain attr in scalar-form has not support input type\")",
			"TENSORS, NONE, TUPLE, LIST, DICT, FUNCTOR, GRAPH or a scalar type", what, "load_model.cc:1333 ObtainCNodeAttrInSingleScalarForm")
	}
}

// misplaced describes which fields of an attribute hold data, for messages.
func misplaced(a *pb.AttributeProto, want string) string {
	if d := dataFields(a); d != "" {
		return want + " absent; data in " + d
	}
	return want + " absent, no data at all"
}

// dataFields lists the fields of an attribute that hold data.
func dataFields(a *pb.AttributeProto) string {
	var parts []string
	if a.I != nil {
		parts = append(parts, fmt.Sprintf("i=%d", a.GetI()))
	}
	if a.S != nil {
		parts = append(parts, fmt.Sprintf("s (%d bytes)", len(a.S)))
	}
	if a.F != nil {
		parts = append(parts, fmt.Sprintf("f=%g", a.GetF()))
	}
	if a.D != nil {
		parts = append(parts, fmt.Sprintf("d=%g", a.GetD()))
	}
	for _, f := range []struct {
		name string
		n    int
	}{{"ints", len(a.Ints)}, {"floats", len(a.Floats)}, {"doubles", len(a.Doubles)}, {"strings", len(a.Strings)},
		{"tensors", len(a.Tensors)}, {"values", len(a.Values)}} {
		if f.n > 0 {
			parts = append(parts, fmt.Sprintf("%d in %s", f.n, f.name))
		}
	}
	return strings.Join(parts, ", ")
}

// checkIntRange flags integers the loader's static_cast would truncate
// (load_model.cc:235/242).
func (c *checker) checkIntRange(l loc, t pb.AttributeProto_AttributeType, v int64, field, ref string) {
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	switch t {
	case pb.AttributeProto_INT8:
		lo, hi = math.MinInt8, math.MaxInt8
	case pb.AttributeProto_INT16:
		lo, hi = math.MinInt16, math.MaxInt16
	case pb.AttributeProto_INT32:
		lo, hi = math.MinInt32, math.MaxInt32
	case pb.AttributeProto_UINT8:
		lo, hi = 0, math.MaxUint8
	case pb.AttributeProto_UINT16:
		lo, hi = 0, math.MaxUint16
	case pb.AttributeProto_UINT32:
		lo, hi = 0, math.MaxUint32
	case pb.AttributeProto_BOOL:
		lo, hi = 0, 1
	}
	if v < lo || v > hi {
		c.at(l, fmt.Sprintf("%s value out of range (the loader truncates it)", t), fmt.Sprintf("%s in [%d, %d]", field, lo, hi), fmt.Sprint(v), ref)
	}
}

// checkTensorsItem implements the TENSORS case of GetValueFromAttributeProto
// (489-491), ObtainValueInSequenceForm (1631-1651), ObtainValueInDictionaryForm
// (1571-1589) and BuildValueFromAttributeProto (1703-1720): exactly one
// tensor (tensors(0) is read, the rest ignored); with raw_data it is a real
// tensor (GenerateTensorPtrFromTensorProto), with the quant-param name a
// QuantizationParam, otherwise a data type from kDefaultValueSwitchMap.
func (c *checker) checkTensorsItem(l loc, a *pb.AttributeProto, quantName, ref string) {
	if len(a.Tensors) != 1 {
		c.at(l, "a TENSORS value holds exactly one tensor (the loader reads tensors(0))", "1 tensor", fmt.Sprintf("%d tensors", len(a.Tensors)), ref)
		if len(a.Tensors) == 0 {
			return
		}
	}
	t := a.Tensors[0]
	switch {
	case t.RawData != nil:
		c.checkTensor(l, t, ref)
	case quantName != "" && t.GetName() == quantName:
		if len(t.QuantParams) == 0 {
			c.at(l, "a "+quantName+" tensor without raw_data holds quant_params (\"Failed to get the tensor for value\")",
				"quant_params", "none", "load_model.cc:482 GenerateTensorValue")
		}
	default:
		if !supportedDType(t.GetDataType()) {
			c.at(l, "a type value needs a data_type of kDefaultValueSwitchMap (\"has not support input type\")", "a supported data_type",
				dtypeName(t.GetDataType()), "load_model.cc:477 GenerateTensorValue")
		}
	}
}

// checkSequence implements ObtainValueInSequenceForm (load_model.cc:1626-1699):
// items are read from values only; items in ints/strings/floats/... are not
// read, so such a TUPLE/LIST loads EMPTY.
func (c *checker) checkSequence(l loc, a *pb.AttributeProto, depth int) {
	if depth > protoRecursionLimit {
		c.at(l, "sequence nested deeper than protobuf's recursion limit", fmt.Sprintf("<= %d levels", protoRecursionLimit), fmt.Sprint(depth),
			"load_model.cc:2740 ParseModelProto (ParseFromIstream)")
		return
	}
	stray := len(a.Ints) + len(a.Floats) + len(a.Doubles) + len(a.Strings) + len(a.Tensors)
	if stray > 0 || a.I != nil || a.S != nil || a.F != nil || a.D != nil {
		rule := fmt.Sprintf("%s items are read from values only; data in other fields is not read", a.GetType())
		if len(a.Values) == 0 {
			rule = fmt.Sprintf("%s items are read from values only: this %s loads EMPTY", a.GetType(), a.GetType())
		}
		got := dataFields(a)
		if len(a.Values) == 0 {
			got = "nothing in values; " + got
		}
		c.at(l, rule, "items in values", got, "load_model.cc:1628 ObtainValueInSequenceForm")
	}
	for i, v := range a.Values {
		c.checkItem(l.sub(fmt.Sprintf("[%d]", i)), v, depth+1, "quant_param", "load_model.cc:1632 ObtainValueInSequenceForm")
	}
}

// checkItem is one item of a sequence (load_model.cc:1630-1684) or one value
// of a dictionary (1570-1621): TENSORS, TUPLE/LIST, DICT, or a scalar read by
// ParseAttrInScalarForm(item, 0).
func (c *checker) checkItem(l loc, v *pb.AttributeProto, depth int, quantName, ref string) {
	switch v.GetType() {
	case pb.AttributeProto_TENSORS:
		c.checkTensorsItem(l, v, quantName, ref)
	case pb.AttributeProto_TUPLE, pb.AttributeProto_LIST:
		c.checkSequence(l, v, depth)
	case pb.AttributeProto_DICT:
		c.checkDict(l, v, depth)
	default:
		c.checkIndexedScalar(l, v)
	}
}

// repeatedField is the field ParseAttrInScalarForm (load_model.cc:1223-1274)
// reads for a type, and how many entries it has.
func repeatedField(a *pb.AttributeProto) (string, int, bool) {
	t := a.GetType()
	switch {
	case intLike(t):
		return "ints", len(a.Ints), true
	case t == pb.AttributeProto_STRING:
		return "strings", len(a.Strings), true
	case t == pb.AttributeProto_FLOAT:
		return "floats", len(a.Floats), true
	case t == pb.AttributeProto_DOUBLE:
		return "doubles", len(a.Doubles), true
	case t == pb.AttributeProto_TENSORS:
		return "tensors", len(a.Tensors), true
	}
	return "", 0, false
}

// checkIndexedScalar implements ParseAttrInScalarForm(item, 0)
// (load_model.cc:1223-1274): an item's scalar is ints(0) / floats(0) /
// doubles(0) / strings(0) ("Parse MindIR attr failed" when empty, 238/254);
// other types are not supported (1271).
func (c *checker) checkIndexedScalar(l loc, v *pb.AttributeProto) {
	field, n, ok := repeatedField(v)
	if !ok {
		what := "type " + v.GetType().String()
		if v.Type == nil {
			what = "no type"
		}
		c.at(l, "item type not supported in a sequence or dictionary (\"Obtain attr in scalar-form has not support input type\")",
			"TENSORS, TUPLE, LIST, DICT or a scalar type", what, "load_model.cc:1271 ParseAttrInScalarForm")
		return
	}
	ref := "load_model.cc:238 ParseAttrInScalar_*"
	if !intLike(v.GetType()) {
		ref = "load_model.cc:254 ParseAttrInScalar_*"
	}
	if n == 0 {
		c.at(l, fmt.Sprintf("a %s item's scalar is read from %s(0) (\"Parse MindIR attr failed\")", v.GetType(), field),
			"1 value in "+field, misplaced(v, field), ref)
		return
	}
	if n > 1 {
		c.at(l, fmt.Sprintf("a %s item holds one scalar in %s (the loader reads only %s(0))", v.GetType(), field, field),
			"1 value in "+field, fmt.Sprintf("%d values", n), ref)
	}
	if intLike(v.GetType()) {
		c.checkIntRange(l, v.GetType(), v.Ints[0], "ints(0)", "load_model.cc:235 ParseAttrInScalar_*")
	}
}

// checkDict implements ObtainValueInDictionaryForm (load_model.cc:1555-1624):
// every entry has a name (the key) and exactly one value.
func (c *checker) checkDict(l loc, a *pb.AttributeProto, depth int) {
	if depth > protoRecursionLimit {
		c.at(l, "dictionary nested deeper than protobuf's recursion limit", fmt.Sprintf("<= %d levels", protoRecursionLimit), fmt.Sprint(depth),
			"load_model.cc:2740 ParseModelProto (ParseFromIstream)")
		return
	}
	for i, kv := range a.Values {
		kl := l.sub(fmt.Sprintf("[%q]", kv.GetName()))
		if kv.Name == nil {
			kl = l.sub(fmt.Sprintf("[%d]", i))
			c.at(kl, "a DICT entry needs a name (its key)", "name", "none", "load_model.cc:1559 ObtainValueInDictionaryForm")
		}
		if len(kv.Values) != 1 {
			c.at(kl, "a DICT entry holds exactly one value", "1 value", fmt.Sprintf("%d values", len(kv.Values)), "load_model.cc:1565 ObtainValueInDictionaryForm")
			continue
		}
		c.checkItem(kl, kv.Values[0], depth+1, "", "load_model.cc:1572 ObtainValueInDictionaryForm")
	}
}

// checkFunctor implements GenerateFunctorValue (load_model.cc:557-573): a
// SHAPE_CALC functor needs a registered name and reads values(0).
func (c *checker) checkFunctor(l loc, a *pb.AttributeProto, depth int) {
	f := a.Functor
	if f == nil || f.GetType() != pb.FunctorProto_SHAPE_CALC_FUNCTOR {
		return
	}
	if f.GetName() == "" {
		c.at(l, "a SHAPE_CALC functor needs the name of a registered functor", "a functor name", "none", "load_model.cc:561 GenerateFunctorValue")
	}
	if len(f.Values) == 0 {
		c.at(l, "a SHAPE_CALC functor reads values(0)", "1 value", "0", "load_model.cc:567 GenerateFunctorValue")
		return
	}
	c.checkValue(l.sub(".values[0]"), f.Values[0], modeGetValue, depth+1)
}

// checkGraphValue implements GenerateFuncGraphValue (load_model.cc:543-555):
// the graph is built once per name (a static cache), into the shared map.
func (c *checker) checkGraphValue(l loc, a *pb.AttributeProto, depth int) {
	if a.G == nil {
		c.at(l, "a GRAPH attribute holds a graph", "g set", "g absent", "load_model.cc:549 GenerateFuncGraphValue")
		return
	}
	name := a.G.GetName()
	if c.graphsBuilt[name] {
		return
	}
	c.graphsBuilt[name] = true
	c.buildGraph(a.G, "", depth+1)
}

// ---------------------------------------------------------------------------
// Tensors.

// supportedDType: the keys of kDefaultValueSwitchMap (load_model.cc:103-121).
func supportedDType(dt int32) bool {
	return dt >= int32(pb.TensorProto_FLOAT) && dt <= int32(pb.TensorProto_QINT4X2)
}

func dtypeName(dt int32) string {
	if s, ok := pb.TensorProto_DataType_name[dt]; ok {
		return fmt.Sprintf("%s (%d)", s, dt)
	}
	return fmt.Sprintf("unknown data_type %d", dt)
}

// dtypeSize is the element size of a data type; 0 when data sizes are not
// fixed (STRING) or not known.
func dtypeSize(dt int32) int64 {
	switch pb.TensorProto_DataType(dt) {
	case pb.TensorProto_UINT8, pb.TensorProto_INT8, pb.TensorProto_BOOL, pb.TensorProto_QINT4X2:
		return 1
	case pb.TensorProto_UINT16, pb.TensorProto_INT16, pb.TensorProto_FLOAT16, pb.TensorProto_BFLOAT16:
		return 2
	case pb.TensorProto_FLOAT, pb.TensorProto_INT32, pb.TensorProto_UINT32:
		return 4
	case pb.TensorProto_INT64, pb.TensorProto_UINT64, pb.TensorProto_DOUBLE, pb.TensorProto_FLOAT64, pb.TensorProto_COMPLEX64:
		return 8
	case pb.TensorProto_COMPLEX128:
		return 16
	}
	return 0
}

// tensorBytes is product(dims) * element size; ok is false on negative
// dims or overflow.
func tensorBytes(t *pb.TensorProto) (n int64, ok bool, why string) {
	n = dtypeSize(t.GetDataType())
	elems := int64(1)
	for _, d := range t.Dims {
		if d < 0 {
			return 0, false, fmt.Sprintf("negative dim %d in %v", d, t.Dims)
		}
		hi, lo := bits.Mul64(uint64(elems), uint64(d))
		if hi != 0 || lo > math.MaxInt64 {
			return 0, false, fmt.Sprintf("dims %v overflow int64", t.Dims)
		}
		elems = int64(lo)
	}
	hi, lo := bits.Mul64(uint64(elems), uint64(n))
	if hi != 0 || lo > math.MaxInt64 {
		return 0, false, fmt.Sprintf("dims %v overflow int64", t.Dims)
	}
	return int64(lo), true, ""
}

// checkTensor implements GenerateTensorPtrFromTensorProto
// (load_model.cc:602-648): a data_type of kDefaultValueSwitchMap (611,
// operator[] inserts kTypeUnknown otherwise); an uncompressed tensor's
// raw_data is copied with memcpy_s into product(dims) * element size bytes
// (633: a longer raw_data fails, a shorter one leaves the tail
// uninitialised), else it is read from external_data (1023-1096).
func (c *checker) checkTensor(l loc, t *pb.TensorProto, ref string) {
	dt := t.GetDataType()
	if !supportedDType(dt) {
		c.at(l, "tensor data_type not in kDefaultValueSwitchMap", "a supported data_type", dtypeName(dt), "load_model.cc:611 GenerateTensorPtrFromTensorProto")
		return
	}
	nbytes, ok, why := tensorBytes(t)
	if !ok {
		c.at(l, "tensor dims must give a valid size", "non-negative dims", why, "load_model.cc:611 GenerateTensorPtrFromTensorProto")
		return
	}
	if t.CompressionType != nil && t.GetCompressionType() != pb.TensorProto_NO_COMPRESSION {
		return // compressed: the loader keeps raw_data / external_data as given (612-620)
	}
	esize := dtypeSize(dt)
	if esize == 0 {
		return // STRING: no fixed size
	}
	if t.RawData != nil {
		got := int64(len(t.RawData))
		if got != nbytes && !(pb.TensorProto_DataType(dt) == pb.TensorProto_QINT4X2 && got == (nbytes+1)/2) {
			c.at(l, "raw_data length must be product(dims) * element size (memcpy_s into the tensor)",
				fmt.Sprintf("%d bytes (dims %v, %s)", nbytes, t.Dims, dtypeName(dt)), fmt.Sprintf("%d bytes", got),
				"load_model.cc:633 GenerateTensorPtrFromTensorProto")
		}
		return
	}
	if t.ExternalData != nil {
		c.checkExternal(l, t, nbytes)
	}
}

type extFile struct {
	size  int64
	first byte
	err   error
}

// checkExternal implements GetTensorDataFromExternal (load_model.cc:1023-1096):
// the file <model dir>/<location> must open (1054), start with the
// little-endian byte order mark 1 (1070), and hold length bytes at offset,
// length being the tensor's size (huge_memcpy, 1088).
func (c *checker) checkExternal(l loc, t *pb.TensorProto, nbytes int64) {
	ext := t.ExternalData
	const ref = "load_model.cc:1088 GetTensorDataFromExternal"
	if ext.GetLocation() == "" {
		c.at(l.with("external_data"), "external_data needs a location", "a file name", "empty", "load_model.cc:1033 GetTensorDataFromExternal")
		return
	}
	if ext.GetOffset() < 0 || ext.GetLength() < 0 {
		c.at(l.with("external_data"), "external_data offset and length are sizes", ">= 0",
			fmt.Sprintf("offset %d, length %d", ext.GetOffset(), ext.GetLength()), ref)
		return
	}
	if ext.GetLength() != 0 && nbytes != 0 && ext.GetLength() != nbytes {
		c.at(l.with("external_data"), "external_data length must be product(dims) * element size",
			fmt.Sprintf("%d bytes (dims %v)", nbytes, t.Dims), fmt.Sprintf("%d bytes", ext.GetLength()), ref)
	}
	if c.dir == "" {
		return
	}
	if c.ext == nil {
		c.ext = map[string]*extFile{}
	}
	fi := c.ext[ext.GetLocation()]
	if fi == nil {
		fi = &extFile{}
		p := filepath.Join(c.dir, ext.GetLocation())
		if st, err := os.Stat(p); err != nil {
			fi.err = err
		} else if !st.Mode().IsRegular() {
			fi.err = fmt.Errorf("%s is not a regular file", p)
		} else {
			fi.size = st.Size()
			if f, err := os.Open(p); err != nil {
				fi.err = err
			} else {
				var b [1]byte
				if _, err := f.Read(b[:]); err == nil {
					fi.first = b[0]
				}
				f.Close()
			}
		}
		c.ext[ext.GetLocation()] = fi
	}
	el := l.with("external_data")
	switch {
	case fi.err != nil:
		c.at(el, "the external data file must open", "a readable file beside the model", fi.err.Error(), "load_model.cc:1054 GetTensorDataFromExternal")
	case fi.size > 0 && fi.first != 1:
		c.at(el, "the external data file starts with the byte-order mark 1 (little-endian)", "first byte 1", fmt.Sprintf("first byte %d", fi.first),
			"load_model.cc:1070 GetTensorDataFromExternal")
	case ext.GetOffset()+ext.GetLength() > fi.size:
		c.at(el, "external data must lie inside the file", fmt.Sprintf("offset+length <= %d", fi.size),
			fmt.Sprintf("offset %d + length %d", ext.GetOffset(), ext.GetLength()), ref)
	}
}

// absTensorProblem implements GetAbsTensorFromTensorProto
// (load_model.cc:785-813): a data_type is required and must be in
// kDefaultValueSwitchMap. It returns "" when the tensor type is readable.
func (c *checker) absTensorProblem(t *pb.TensorProto) string {
	if t.DataType == nil {
		return "no data_type"
	}
	if !supportedDType(t.GetDataType()) {
		return dtypeName(t.GetDataType())
	}
	return ""
}

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

func isEnumArg(a PrimArg) bool {
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
func typeMatches(arg PrimArg, want, got pb.AttributeProto_AttributeType) bool {
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

func describeArg(arg PrimArg) string {
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
			if arg.Form == FormAttr && !arg.Optional() && present[arg.Name] == nil {
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
func (c *checker) checkInputCount(l loc, primName string, s *PrimSchema, usesAttrs bool, inputs []string, monads []bool, ref string) {
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
