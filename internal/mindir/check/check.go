// Package check is `converter check`: a MindIR validator that applies the
// rules of MindSpore's own loader, mindspore/core/load_mindir/load_model.cc
// (MSANFModelParser, MindSpore 2.x), to a file without loading it into
// MindSpore. Every rule names the load_model.cc function and line it comes
// from; a Violation is something that makes that loader fail, throw, log an
// error, or read a value other than the one written (a sequence whose items
// sit in `ints` loads empty, a scalar in the wrong field loads as 0, ...).
// The per-primitive rules come from the primitive schema (internal/mindir's
// schema.go) and the GraphKernel Custom rules from converter_lite's AKG
// kernel builders.
//
// The file is mapped read-only and decoded with mindir.DecodeModel, whose
// tensors alias the mapping, so a large model is never copied. The reader
// is used only to decode: the rules here are MindSpore's, not the reader's.
package check

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"google.golang.org/protobuf/encoding/protowire"

	"gkconv/internal/mindir"
	pb "gkconv/internal/mindir/mindirpb"
)

// Violation is one broken loader rule.
type Violation struct {
	Graph string // graph name ("model" for header rules)
	Node  string // node output name, parameter or primitive name; "" for graph-level rules
	Attr  string // attribute (with a path into sequences: "attr[3]"); "" when none
	Rule  string // what the loader requires
	Want  string
	Got   string
	Ref   string // "load_model.cc:NNN Function" (or the converter_lite / schema source)
}

// String renders "graph/node: attr: rule: want X, got Y (load_model.cc:NNN Function)".
func (v Violation) String() string {
	return fmt.Sprintf("%s/%s: %s: %s: want %s, got %s (%s)",
		dash(v.Graph), dash(v.Node), dash(v.Attr), v.Rule, dash(v.Want), dash(v.Got), v.Ref)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Report is the result of checking one model.
type Report struct {
	File            string
	Producer        string
	ProducerVersion string // model_version (MindSpore writes its version there)
	IRVersion       string
	MindIRVersion   int64
	Graphs          int // main graph + functions (+ graphs held in attributes)
	Nodes           int
	Primitives      int
	Parameters      int
	// Unchecked lists the primitives used by the model that the schema table
	// does not know: their inputs and attributes were not checked against it.
	Unchecked  []string
	Violations []Violation
	// Omitted counts violations beyond maxViolations that were not stored.
	Omitted int
}

// OK reports whether the model broke no rule.
func (r *Report) OK() bool { return len(r.Violations) == 0 && r.Omitted == 0 }

// Summary is a one-line description of the checked model and the outcome.
func (r *Report) Summary() string {
	prod := r.Producer
	if r.ProducerVersion != "" {
		prod += " " + r.ProducerVersion
	}
	s := fmt.Sprintf("%s: %s, ir_version %s, mind_ir_version %d: %d graph(s), %d node(s), %d primitive(s), %d parameter(s): %d violation(s)",
		r.File, dash(strings.TrimSpace(prod)), dash(r.IRVersion), r.MindIRVersion, r.Graphs, r.Nodes, r.Primitives, r.Parameters,
		len(r.Violations)+r.Omitted)
	if r.Omitted > 0 {
		s += fmt.Sprintf(" (%d not listed)", r.Omitted)
	}
	return s
}

const (
	// maxViolations bounds the stored list; the rest are only counted.
	maxViolations = 10000
	// maxCheckSize is protobuf's message limit (INT_MAX): MindSpore parses a
	// model with ParseFromArray(buffer, SizeToInt(size)) / ParseFromIstream,
	// which refuse anything larger; big weights must be external data.
	maxCheckSize = math.MaxInt32
	// protoRecursionLimit is protobuf C++'s default nesting limit, which
	// MindSpore's ParseFromIstream/ParseFromArray keep (load_model.cc:2740, 2853).
	protoRecursionLimit = 100
)

// checkLookup is the schema lookup used by the checker (a test hook).
var checkLookup = mindir.LookupPrim

// File maps path read-only and checks it. The error is for files that
// cannot be checked at all: missing, not a regular file, empty, absurdly
// large, encrypted, truncated or not a MindIR protobuf.
func File(path string) (*Report, error) {
	st, err := os.Stat(path) // before opening: opening a FIFO would block
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%s): a MindIR model is a regular file", path, fileKind(st.Mode()))
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err = f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%s): a MindIR model is a regular file", path, fileKind(st.Mode()))
	}
	size := st.Size()
	if err := checkSize(path, size); err != nil {
		return nil, err
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("%s: mmap: %w", path, err)
	}
	defer syscall.Munmap(data)
	// Nothing of the report aliases data: names are strings copied by the
	// decoder and raw_data is only measured.
	return check(data, path, filepath.Dir(path))
}

// Bytes checks a model held in memory; name labels messages. External
// data files are not opened (there is no directory to look in).
func Bytes(data []byte, name string) (*Report, error) {
	if name == "" {
		name = "mindir"
	}
	if err := checkSize(name, int64(len(data))); err != nil {
		return nil, err
	}
	return check(data, name, "")
}

func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a block device"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return "mode " + m.String()
}

func checkSize(name string, size int64) error {
	if size == 0 {
		return fmt.Errorf("%s: empty file: not a MindIR model", name)
	}
	if size < 0 || size > maxCheckSize || size != int64(int(size)) {
		return fmt.Errorf("%s: %d bytes: larger than protobuf's 2 GiB message limit, so MindSpore cannot parse it (load_model.cc:2853 LoadMindIR: ParseFromArray(buffer, SizeToInt(size))); store large weights as external data", name, size)
	}
	return nil
}

// check decodes and checks a model. An encrypted file (MindSpore's magic
// numbers) is what ParseModelProto decrypts only with dec_key
// (load_model.cc:2726-2734); without the key nothing can be checked.
func check(data []byte, name, dir string) (rep *Report, err error) {
	defer func() {
		// The checker never panics on input; a bug becomes an error naming the file.
		if r := recover(); r != nil {
			rep, err = nil, fmt.Errorf("%s: internal error checking MindIR: %v", name, r)
		}
	}()
	if len(data) >= 4 {
		if mode, ok := mindir.EncryptionMode(binary.LittleEndian.Uint32(data)); ok {
			return nil, fmt.Errorf("%s: encrypted MindIR (MindSpore %s, magic 0x%08X): cannot be checked without the key; decrypt it with MindSpore (mindspore.load with dec_key/dec_mode) and check the plain file", name, mode, binary.LittleEndian.Uint32(data))
		}
	}
	if err := checkFraming(data); err != nil {
		return nil, fmt.Errorf("%s: not a MindIR protobuf: %w", name, err)
	}
	mp, err := mindir.DecodeModel(data)
	if err != nil {
		if errors.Is(err, mindir.ErrTooDeep) {
			return nil, fmt.Errorf("%s: messages nested deeper than %d levels: %w", name, mindir.MaxDepth, err)
		}
		return nil, fmt.Errorf("%s: not a valid MindIR protobuf (%v); if the model was exported with encryption, decrypt it first", name, err)
	}
	if mp.Graph == nil && mp.IrVersion == nil && len(mp.Functions) == 0 && len(mp.Primitives) == 0 {
		return nil, fmt.Errorf("%s: not a MindIR model (the protobuf has no ir_version, graph, functions or primitives)", name)
	}
	c := newChecker(mp, name, dir)
	c.run()
	return c.rep, nil
}

// checkFraming walks the top-level fields before decoding, as a stand-in for
// ParseModelProto's ParseFromIstream (load_model.cc:2740), which rejects
// such files: a field running past the end of the data means the file was
// cut short; an integer ir_version is ONNX.
func checkFraming(b []byte) error {
	off := 0
	for off < len(b) {
		num, typ, n := protowire.ConsumeTag(b[off:])
		if n < 0 {
			return framingErr(protowire.ParseError(n), off)
		}
		if typ == protowire.StartGroupType || typ == protowire.EndGroupType {
			return fmt.Errorf("group wire type for field %d at offset %d (MindIR has no groups)", num, off)
		}
		if num == 1 && typ == protowire.VarintType {
			// MindIR's ir_version is a string; ONNX's (same field number) an integer.
			return fmt.Errorf("field 1 (ir_version) is an integer: this looks like an ONNX model, not MindIR (convert it with --fmk=ONNX)")
		}
		m := protowire.ConsumeFieldValue(num, typ, b[off+n:])
		if m < 0 {
			return framingErr(protowire.ParseError(m), off)
		}
		off += n + m
	}
	return nil
}

func framingErr(err error, off int) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("truncated: the field at offset %d runs past the end of the file (%w)", off, err)
	}
	return fmt.Errorf("invalid wire format at offset %d: %w", off, err)
}

// ---------------------------------------------------------------------------
// The loader simulation: one name map shared by every graph, filled in the
// order of MSANFModelParser::Parse (load_model.cc:2222): primitives, the main
// graph's name, every function's name, the main graph, then each function in
// file order.

type defKind uint8

const (
	defPrim defKind = iota + 1
	defGraph
	defInput
	defParam
	defConst
	defCNode
	defReturn
	defMeta // MetaFuncGraph:: / ClassType:: (GetAnfNode builds these on the fly)
)

func (k defKind) String() string {
	switch k {
	case defPrim:
		return "primitive"
	case defGraph:
		return "function graph"
	case defInput:
		return "graph input"
	case defParam:
		return "parameter"
	case defConst:
		return "Constant node"
	case defCNode:
		return "CNode"
	case defReturn:
		return "return node"
	case defMeta:
		return "meta"
	}
	return "?"
}

type def struct {
	kind  defKind
	graph string
	monad bool   // UMonad/IOMonad value, or an UpdateState result
	op    string // CNode: primitive name (Partial, UpdateState, ...); graph: name
	param *pb.TensorProto
	prim  *pb.PrimitiveProto
}

type where struct {
	graph string
	index int // node index in the graph, -1 for inputs/parameters
	kind  defKind
}

type secondary struct {
	graph, node string
	index       int
}

type checker struct {
	mp    *pb.ModelProto
	rep   *Report
	name  string
	dir   string // for external data; "" for Bytes
	names map[string]*def
	// defined: every definition in the file (pre-scan), for messages about
	// inputs used before their definition.
	defined   map[string]where
	secondary map[string]secondary
	// graphsBuilt: GenerateFuncGraphValue's static cache of graphs held in
	// attributes, by name (load_model.cc:543).
	graphsBuilt map[string]bool
	partials    []pendingPartial
	unchecked   map[string]bool
	mindIR      int64
	ext         map[string]*extFile // external data files, by location
	unbuilt     map[string]bool     // Constants the loader does not register
}

type pendingPartial struct {
	graph, node, attr, ref string
}

func newChecker(mp *pb.ModelProto, name, dir string) *checker {
	return &checker{
		mp:          mp,
		name:        name,
		dir:         dir,
		rep:         &Report{File: name},
		names:       map[string]*def{},
		defined:     map[string]where{},
		secondary:   map[string]secondary{},
		graphsBuilt: map[string]bool{},
		unchecked:   map[string]bool{},
		unbuilt:     map[string]bool{},
	}
}

func (c *checker) add(v Violation) {
	if len(c.rep.Violations) >= maxViolations {
		c.rep.Omitted++
		return
	}
	c.rep.Violations = append(c.rep.Violations, v)
}

// loc is where a rule is applied.
type loc struct {
	graph, node, attr string
}

func (l loc) with(attr string) loc { return loc{l.graph, l.node, attr} }

func (l loc) sub(suffix string) loc { return loc{l.graph, l.node, l.attr + suffix} }

func (c *checker) at(l loc, rule, want, got, ref string) {
	c.add(Violation{Graph: l.graph, Node: l.node, Attr: l.attr, Rule: rule, Want: want, Got: got, Ref: ref})
}

func (c *checker) run() {
	mp := c.mp
	rep := c.rep
	rep.Producer = mp.GetProducerName()
	rep.ProducerVersion = mp.GetModelVersion()
	rep.IRVersion = mp.GetIrVersion()
	rep.MindIRVersion = mp.GetMindIrVersion()
	c.mindIR = mp.GetMindIrVersion()
	rep.Primitives = len(mp.Primitives)

	c.checkHeader()
	c.prescan()

	// load_model.cc:2229-2234 Parse: every primitive first.
	for i, p := range mp.Primitives {
		c.buildPrimitive(i, p)
	}
	// load_model.cc:2240-2244: the main graph's name, when it has one.
	mainName := mp.GetGraph().GetName()
	if mp.Graph == nil {
		c.at(loc{graph: "model"}, "the model has no graph", "graph (ModelProto field 7)", "none",
			"load_model.cc:2124 BuildFuncGraph")
	} else if mp.Graph.Name != nil {
		if d := c.names[mainName]; d != nil {
			c.at(loc{graph: mainName}, "the main graph's name is already defined (the loader silently rebinds it)",
				"a name of its own", "the name of a "+d.kind.String(), "load_model.cc:2243 Parse")
		}
		c.names[mainName] = &def{kind: defGraph, graph: mainName, op: mainName}
	}
	// load_model.cc:2245-2256: function names present and unique.
	for i, f := range mp.Functions {
		if f.Name == nil {
			c.at(loc{graph: fmt.Sprintf("functions[%d]", i)}, "function graph has no name", "name", "none",
				"load_model.cc:2249 Parse")
			continue
		}
		if d := c.names[f.GetName()]; d != nil {
			c.at(loc{graph: f.GetName()}, "duplicate function graph name", "a unique name",
				"already the name of a "+d.kind.String(), "load_model.cc:2253 Parse")
			continue
		}
		c.names[f.GetName()] = &def{kind: defGraph, graph: f.GetName(), op: f.GetName()}
	}
	if mp.Graph != nil {
		c.buildGraph(mp.Graph, "", 1)
	}
	for i, f := range mp.Functions {
		label := f.GetName()
		if f.Name == nil {
			label = fmt.Sprintf("functions[%d]", i)
		}
		c.buildGraph(f, label, 1)
	}
	c.finishPartials()
	for p := range c.unchecked {
		rep.Unchecked = append(rep.Unchecked, p)
	}
	sort.Strings(rep.Unchecked)
}

// checkHeader implements CheckModelConfigureInfo (load_model.cc:320-349):
// producer_name and model_version present, mind_ir_version a valid
// mind_ir::Version (<= Version_MAX), little_endian (when written) equal to
// the loading machine's byte order (MindSpore runs on little-endian hosts).
func (c *checker) checkHeader() {
	mp := c.mp
	l := loc{graph: "model"}
	if mp.ProducerName == nil {
		c.at(l.with("producer_name"), "producer_name is required", "present", "absent", "load_model.cc:321 CheckModelConfigureInfo")
	}
	if mp.ModelVersion == nil {
		c.at(l.with("model_version"), "model_version is required", "present", "absent", "load_model.cc:328 CheckModelConfigureInfo")
	}
	v := mp.GetMindIrVersion()
	if _, ok := pb.Version_name[int32(v)]; !ok || v != int64(int32(v)) {
		c.at(l.with("mind_ir_version"), "mind_ir_version must be a mind_ir::Version", fmt.Sprintf("0..%d (Version_MAX)", versionMax()),
			fmt.Sprint(v), "load_model.cc:339 CheckModelConfigureInfo")
	}
	if mp.LittleEndian != nil && !mp.GetLittleEndian() {
		c.at(l.with("little_endian"), "byte order of the exporting and loading machines must match", "true", "false",
			"load_model.cc:344 CheckModelConfigureInfo")
	}
}

func versionMax() int32 {
	var m int32
	for k := range pb.Version_name {
		if k > m {
			m = k
		}
	}
	return m
}

// prescan records where every name is defined, and the extra outputs of
// multi-output nodes, to explain unresolved inputs.
func (c *checker) prescan() {
	scan := func(g *pb.GraphProto) {
		gn := g.GetName()
		for _, in := range g.Input {
			if _, ok := c.defined[in.GetName()]; !ok {
				c.defined[in.GetName()] = where{gn, -1, defInput}
			}
		}
		for _, p := range g.Parameter {
			if _, ok := c.defined[p.GetName()]; !ok {
				c.defined[p.GetName()] = where{gn, -1, defParam}
			}
		}
		for i, n := range g.Node {
			if len(n.Output) == 0 {
				continue
			}
			k := defCNode
			if n.GetOpType() == "Constant" {
				k = defConst
			}
			if _, ok := c.defined[n.Output[0]]; !ok {
				c.defined[n.Output[0]] = where{gn, i, k}
			}
			for j, o := range n.Output[1:] {
				if _, ok := c.secondary[o]; !ok {
					c.secondary[o] = secondary{gn, n.Output[0], j + 1}
				}
			}
		}
	}
	if c.mp.Graph != nil {
		scan(c.mp.Graph)
	}
	for _, f := range c.mp.Functions {
		scan(f)
	}
}

// resolve is GetAnfNode (load_model.cc:2496-2520): MetaFuncGraph:: and
// ClassType:: names are built on the fly, everything else must be in the
// shared map.
func (c *checker) resolve(name string) *def {
	if strings.HasPrefix(name, "MetaFuncGraph::") || strings.HasPrefix(name, "ClassType::") {
		return &def{kind: defMeta, op: name}
	}
	return c.names[name]
}

// define registers a name in the shared map. A CNode name already present is
// BuildCNodeForFuncGraph's "Duplicate CNode name" exception
// (load_model.cc:2003-2005); other definitions silently rebind the name
// (load_model.cc:842, 1163, 1767...), which the exporter never writes
// (mindir_exporter.cc BuildParameters: "parameter name is duplicate"), so
// both are reported.
func (c *checker) define(name string, d *def, l loc) {
	if old := c.names[name]; old != nil && old.kind != defReturn {
		if d.kind == defCNode {
			c.at(l, "duplicate CNode name (the name map is shared by the main graph and all functions; only output(0) is registered)",
				"a name not yet defined", "already defined as a "+old.kind.String()+inGraph(old.graph), "load_model.cc:2004 BuildCNodeForFuncGraph")
		} else {
			c.at(l, "name defined twice in the shared name map (the loader silently rebinds it)",
				"a name not yet defined", "already defined as a "+old.kind.String()+inGraph(old.graph), refRebind(d.kind))
		}
	} else if old != nil && d.kind == defCNode {
		c.at(l, "duplicate CNode name (a graph's return node is registered under this name)",
			"a name not yet defined", "already defined as a "+old.kind.String()+inGraph(old.graph), "load_model.cc:2004 BuildCNodeForFuncGraph")
	}
	c.names[name] = d
}

func inGraph(g string) string {
	if g == "" {
		return ""
	}
	return " in graph " + g
}

func refRebind(k defKind) string {
	switch k {
	case defInput:
		return "load_model.cc:1163 BuildInputForFuncGraph"
	case defParam:
		return "load_model.cc:842 BuildParameterForFuncGraph"
	case defConst:
		return "load_model.cc:1857 BuildValueNodeForFuncGraph"
	}
	return "load_model.cc:2222 Parse"
}
