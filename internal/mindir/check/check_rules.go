package check

// The value and tensor rules of `converter check` (see check.go); the
// abstract, schema and GraphKernel rules are in check_abstract.go,
// check_schema.go and check_graphkernel.go. Each function cites the
// load_model.cc lines it implements.

import (
	"fmt"
	"math"
	"math/bits"
	"strings"

	pb "gkconv/internal/mindir/mindirpb"
	"gkconv/internal/safefs"
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
		// Opened beneath the model's folder on the descriptor (a location
		// like ../../etc/shadow, or a link out of the folder, is refused
		// before a byte is read).
		if f, st, err := safefs.OpenBeneath(c.dir, ext.GetLocation()); err != nil {
			fi.err = err
		} else {
			fi.size = st.Size()
			var b [1]byte
			if _, err := f.Read(b[:]); err == nil {
				fi.first = b[0]
			}
			f.Close()
		}
		c.ext[ext.GetLocation()] = fi
	}
	el := l.with("external_data")
	switch {
	case fi.err != nil:
		c.at(el, "the external data file must open, inside the model's folder", "a readable file beside the model", fi.err.Error(), "load_model.cc:1054 GetTensorDataFromExternal")
	case fi.size > 0 && fi.first != 1:
		c.at(el, "the external data file starts with the byte-order mark 1 (little-endian)", "first byte 1", fmt.Sprintf("first byte %d", fi.first),
			"load_model.cc:1070 GetTensorDataFromExternal")
	case ext.GetOffset() > fi.size || ext.GetLength() > fi.size-ext.GetOffset(): // no overflow: both are >= 0
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
