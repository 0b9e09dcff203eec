// Command schemagen generates internal/mindir/prims_gen.go, the MindSpore
// primitive schema table, from unmodified MindSpore 2.7 / MindSpore Lite
// sources (Copyright Huawei Technologies Co., Ltd, Apache License 2.0):
//
//   - mindspore/mindspore/ops/op_def/yaml/*.yaml: the 2.x op definitions
//     (args in order; prim_init args are primitive attributes, the others
//     node inputs; returns; class name);
//   - mindspore/mindspore/ops/infer/*.h and infer/cxx_api/*.h/.cc: older
//     primitives that have no yaml and MindSpore Lite's fusion primitives
//     (attributes from Init parameters and set_xxx setters, names from the
//     kXxx constants of op_def/*op_name.h, inputs from InitIOName);
//   - mindspore-lite/mindspore-lite/tools/converter/parser/onnx/*.cc: the
//     primitive converter_lite's ONNX parser creates for every ONNX op.
//
// Usage (see internal/mindir/doc.go):
//
//	go run ./schemagen -src ../../../shared/reference/mindspore-src -out prims_gen.go
//
// The output is deterministic (rows sorted by primitive name) and gofmt'ed.
// With -v, everything upstream that was skipped or could not be parsed is
// reported on stderr.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Upstream locations, relative to -src.
const (
	yamlDir   = "mindspore/mindspore/ops/op_def/yaml"
	opDefDir  = "mindspore/mindspore/ops/op_def"
	inferDir  = "mindspore/mindspore/ops/infer"
	cxxAPIDir = "mindspore/mindspore/ops/infer/cxx_api"
	onnxDir   = "mindspore-lite/mindspore-lite/tools/converter/parser/onnx"
)

// arg is one row of PrimSchema.Args; MindIR and Elem are the names of
// pb.AttributeProto_AttributeType constants without the prefix ("" for
// inputs, which leaves them UNDEFINED).
type arg struct {
	Name    string
	Input   bool
	Type    string
	MindIR  string
	Elem    string
	Default string
}

type prim struct {
	Name    string
	Source  string
	Args    []arg
	Outputs int
}

func (p *prim) find(name string) int {
	for i := range p.Args {
		if p.Args[i].Name == name {
			return i
		}
	}
	return -1
}

// override is a correction taken from files MindSpore itself wrote
// (../../shared/corpus/mindir: mnist.mindir, exported by MindSpore 2.2's
// Python front end), applied where the C++ header of a primitive and the
// real file disagree. The real file wins. With add set, the argument is
// appended (an attribute the Python primitive sets that the C++ class has no
// setter for); otherwise the existing argument's Type/MindIR/Elem are
// replaced. A missing target is an error, so that an upstream change is
// noticed.
type override struct {
	prim, arg    string
	add          bool
	typ          string
	mindir, elem string
	def          string // only with add
	why          string
}

// overrides: MindSpore's Python primitives (ops.Conv2D, ops.MaxPool, ...)
// are not generated from the yaml; their __init__ stores pad_mode and
// format as strings (add_prim_attr('format', 'NCHW')), while the C++ setter
// takes the PadMode/Format enum and stores an int64. Files written from
// Python therefore hold STRING; files written by converter_lite (through
// the C++ setters) hold INT64. Type "enum:X|str" tells a validator to accept
// both; MindIR says what MindSpore's own export writes.
var overrides = []override{
	{prim: "Conv2D", arg: "pad_mode", typ: "enum:PadMode|str", mindir: "STRING",
		why: `mnist.mindir: Conv2D pad_mode="valid" STRING`},
	{prim: "Conv2D", arg: "format", typ: "enum:Format|str", mindir: "STRING",
		why: `mnist.mindir: Conv2D format="NCHW" STRING`},
	{prim: "Conv2D", arg: "pad_list", add: true, typ: "tuple[int]", mindir: "TUPLE", elem: "INT64", def: "{0, 0, 0, 0}",
		why: "mnist.mindir: Conv2D pad_list TUPLE of INT64 (set by the Python primitive, no C++ setter)"},
	{prim: "Conv2D", arg: "groups", add: true, typ: "int", mindir: "INT64", def: "1",
		why: "mnist.mindir: Conv2D groups INT64 (set by the Python primitive next to group)"},
	{prim: "MaxPool", arg: "pad_mode", typ: "enum:PadMode|str", mindir: "STRING",
		why: `mnist.mindir: MaxPool pad_mode="VALID" STRING`},
	{prim: "MaxPool", arg: "format", typ: "enum:Format|str", mindir: "STRING",
		why: `mnist.mindir: MaxPool format="NCHW" STRING`},
	{prim: "BiasAdd", arg: "format", add: true, typ: "str", mindir: "STRING", def: "'NCHW'",
		why: "mnist.mindir: BiasAdd format STRING next to data_format (MindSpore <= 2.2 Python BiasAdd)"},
	{prim: "MatMul", arg: "transpose_x1", add: true, typ: "bool", mindir: "BOOL", def: "False",
		why: "mnist.mindir: MatMul transpose_x1 BOOL (legacy alias of transpose_a)"},
	{prim: "MatMul", arg: "transpose_x2", add: true, typ: "bool", mindir: "BOOL", def: "False",
		why: "mnist.mindir: MatMul transpose_x2 BOOL (legacy alias of transpose_b)"},
}

// inputOverrides: MindSpore Lite's fusion primitives take the node inputs of
// the ONNX op they come from (converter_lite's parsers pass the ONNX inputs
// through: onnx_conv_parser.cc, onnx_conv_transpose_parser.cc,
// onnx_matmul_parser.cc/onnx_gemm_parser.cc keep the bias as the third
// input), which their C++ headers do not declare; the generator would
// otherwise borrow the inputs of the MindSpore op of the same base name
// (Conv2dTransposeFusion would get Conv2DBackpropInput's out_backprop,
// filter, input_sizes).
var inputOverrides = []struct {
	prim   string
	inputs []string // names; a trailing "?" marks an optional input
	why    string
}{
	{"Conv2DFusion", []string{"x", "weight", "bias?"}, "onnx_conv_parser.cc: Conv inputs X, W, B? pass through"},
	{"Conv2dTransposeFusion", []string{"x", "weight", "bias?"}, "onnx_conv_transpose_parser.cc: ConvTranspose inputs X, W, B?"},
	{"MatMulFusion", []string{"input", "mat2", "bias?"}, "onnx_gemm_parser.cc/onnx_matmul_parser.cc: bias as the third input"},
}

var verbose = flag.Bool("v", false, "report skipped and unparsed upstream items on stderr")

func note(format string, a ...any) {
	if *verbose {
		fmt.Fprintf(os.Stderr, "schemagen: "+format+"\n", a...)
	}
}

func main() {
	src := flag.String("src", "", "root of the MindSpore / MindSpore Lite source excerpts (mindspore-src)")
	out := flag.String("out", "prims_gen.go", "output Go file")
	flag.Parse()
	if *src == "" {
		fmt.Fprintln(os.Stderr, "schemagen: -src is required")
		os.Exit(2)
	}
	code, n, err := Generate(*src)
	if err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, code, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
	note("%d primitives written to %s", n, *out)
}

// Generate builds the formatted prims_gen.go from the tree at src and
// returns it with the number of primitives.
func Generate(src string) ([]byte, int, error) {
	prims := map[string]*prim{}
	yamlPrims, err := loadYAMLOps(src)
	if err != nil {
		return nil, 0, err
	}
	for _, p := range yamlPrims {
		if q, dup := prims[p.Name]; dup {
			return nil, 0, fmt.Errorf("primitive %s defined twice (%s, %s)", p.Name, q.Source, p.Source)
		}
		prims[p.Name] = p
	}
	consts, err := loadConstants(src)
	if err != nil {
		return nil, 0, err
	}
	classes, err := loadClasses(src, consts)
	if err != nil {
		return nil, 0, err
	}
	cppPrims, err := resolveClasses(classes, prims, consts, attrNames(src))
	if err != nil {
		return nil, 0, err
	}
	for _, p := range cppPrims {
		if q, ok := prims[p.Name]; ok {
			note("%s: %s also has a yaml definition (%s); the yaml wins", p.Source, p.Name, q.Source)
			continue
		}
		prims[p.Name] = p
	}
	if err := applyOverrides(prims); err != nil {
		return nil, 0, err
	}
	onnx, err := loadONNX(src, classes)
	if err != nil {
		return nil, 0, err
	}
	for _, op := range sortedKeys(onnx) {
		if pn := onnx[op]; prims[pn] == nil {
			note("onnx %s -> %s: primitive not defined in the excerpt (converter-only op)", op, onnx[op])
		}
	}
	code, err := emit(prims, onnx)
	return code, len(prims), err
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func applyOverrides(prims map[string]*prim) error {
	for _, o := range overrides {
		p, ok := prims[o.prim]
		if !ok {
			return fmt.Errorf("override %s.%s: no such primitive", o.prim, o.arg)
		}
		i := p.find(o.arg)
		switch {
		case o.add && i >= 0:
			return fmt.Errorf("override %s.%s: argument already exists upstream; drop the override", o.prim, o.arg)
		case o.add:
			p.Args = append(p.Args, arg{Name: o.arg, Type: o.typ, MindIR: o.mindir, Elem: o.elem, Default: o.def})
		case i < 0:
			return fmt.Errorf("override %s.%s: no such argument", o.prim, o.arg)
		default:
			a := &p.Args[i]
			if a.Input {
				return fmt.Errorf("override %s.%s: argument is an input", o.prim, o.arg)
			}
			a.Type, a.MindIR, a.Elem = o.typ, o.mindir, o.elem
		}
		note("override %s.%s: %s", o.prim, o.arg, o.why)
	}
	for _, o := range inputOverrides {
		p, ok := prims[o.prim]
		if !ok {
			return fmt.Errorf("input override %s: no such primitive", o.prim)
		}
		var args []arg
		for _, in := range o.inputs {
			name, opt := strings.CutSuffix(in, "?")
			a := arg{Name: name, Input: true, Type: "tensor"}
			if opt {
				a.Default = "None"
			}
			args = append(args, a)
		}
		for _, a := range p.Args {
			if !a.Input {
				args = append(args, a)
			}
		}
		p.Args = args
		note("input override %s: %s", o.prim, o.why)
	}
	return nil
}

// ---------------------------------------------------------------- yaml ----

// ynode is a mapping entry of the YAML subset the op_def files use: block
// mappings by indentation, plain or quoted scalar values, # comments.
type ynode struct {
	key, value string
	line       int
	kids       []*ynode
}

func (n *ynode) child(key string) *ynode {
	for _, k := range n.kids {
		if k.key == key {
			return k
		}
	}
	return nil
}

func (n *ynode) scalar(key string) string {
	if c := n.child(key); c != nil {
		return c.value
	}
	return ""
}

// stripComment removes a # comment (at line start or after whitespace,
// outside quotes).
func stripComment(s string) string {
	var q byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case q != 0:
			if c == q {
				q = 0
			}
		case c == '"' || c == '\'':
			q = c
		case c == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t'):
			return s[:i]
		}
	}
	return s
}

func unquoteYAML(v string) (string, error) {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		return strconv.Unquote(v)
	}
	if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'"), nil
	}
	if v != "" && (v[0] == '[' || v[0] == '{') {
		// A one-line flow collection (reduce_std's `default: []`) is kept
		// as written: it is only ever a default value.
		if e := matchClose(v, 0); e != len(v)-1 {
			return "", fmt.Errorf("flow collection %q does not close on its line", v)
		}
		return v, nil
	}
	if v != "" && strings.ContainsAny(v[:1], `"'|>&*!`) {
		return "", fmt.Errorf("value %q is outside the supported YAML subset", v)
	}
	return v, nil
}

// parseYAML parses the block-mapping subset into a root node.
func parseYAML(data []byte) (*ynode, error) {
	root := &ynode{}
	type frame struct {
		indent int
		n      *ynode
	}
	stack := []frame{{-1, root}}
	for ln, raw := range strings.Split(string(data), "\n") {
		lineNo := ln + 1
		line := strings.TrimRight(stripComment(strings.TrimRight(raw, "\r")), " \t")
		if strings.TrimSpace(line) == "" {
			continue
		}
		indent := len(line) - len(strings.TrimLeft(line, " "))
		if line[indent] == '\t' {
			return nil, fmt.Errorf("line %d: tab indentation", lineNo)
		}
		body := line[indent:]
		if strings.HasPrefix(body, "- ") || body == "-" {
			return nil, fmt.Errorf("line %d: sequences are outside the supported YAML subset", lineNo)
		}
		colon := -1
		for i := 0; i < len(body); i++ {
			if body[i] == ':' && (i+1 == len(body) || body[i+1] == ' ') {
				colon = i
				break
			}
		}
		if top := stack[len(stack)-1]; colon <= 0 && top.n != root && indent > top.indent && len(top.n.kids) == 0 {
			// Continuation of a plain scalar on a more-indented line
			// (resize_nearest_neighbor_grad: "disable:\n    True").
			v, err := unquoteYAML(strings.TrimSpace(body))
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", lineNo, err)
			}
			top.n.value = strings.TrimSpace(top.n.value + " " + v)
			continue
		}
		if colon <= 0 {
			return nil, fmt.Errorf("line %d: expected `key:` or `key: value`, got %q", lineNo, body)
		}
		key := strings.TrimSpace(body[:colon])
		val, err := unquoteYAML(strings.TrimSpace(body[colon+1:]))
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", lineNo, err)
		}
		for len(stack) > 1 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		parent := stack[len(stack)-1].n
		if parent != root && parent.value != "" {
			return nil, fmt.Errorf("line %d: %q has both a value and nested keys", lineNo, parent.key)
		}
		if parent.child(key) != nil {
			return nil, fmt.Errorf("line %d: duplicate key %q", lineNo, key)
		}
		n := &ynode{key: key, value: val, line: lineNo}
		parent.kids = append(parent.kids, n)
		stack = append(stack, frame{indent, n})
	}
	return root, nil
}

// camel is MindSpore's gen_utils convert_python_func_name_to_c: every
// underscore-separated word capitalized (first letter upper, rest lower).
func camel(s string) string {
	var b strings.Builder
	for _, w := range strings.Split(s, "_") {
		if w == "" {
			continue
		}
		b.WriteString(strings.ToUpper(w[:1]))
		b.WriteString(strings.ToLower(w[1:]))
	}
	return b.String()
}

// isGradOp: a gradient op has a "grad" word in its key (abs_grad,
// batch_norm_grad_ext, gather_d_grad_v2), except the AdaGrad optimizer
// (embedding_apply_ada_grad); "gradient" (dump_gradient,
// inplace_stop_gradient) is not such a word.
func isGradOp(key string) bool {
	key = strings.ReplaceAll(key, "ada_grad", "adagrad")
	return strings.HasSuffix(key, "_grad") || strings.Contains(key, "_grad_")
}

// yamlAttrType maps a yaml dtype of a prim_init argument to its MindIR
// attribute type.
func yamlAttrType(dtype string) (mindir, elem string, ok bool) {
	switch dtype {
	case "int":
		return "INT64", "", true
	case "bool":
		return "BOOL", "", true
	case "float":
		return "FLOAT", "", true
	case "str":
		return "STRING", "", true
	case "TypeId":
		// A dtype attribute: TENSORS whose tensor has only data_type.
		return "TENSORS", "", true
	}
	for _, seq := range []string{"tuple", "list"} {
		if strings.HasPrefix(dtype, seq+"[") && strings.HasSuffix(dtype, "]") {
			e, _, ok := yamlAttrType(dtype[len(seq)+1 : len(dtype)-1])
			if !ok {
				return "", "", false
			}
			return strings.ToUpper(seq), e, true
		}
	}
	return "", "", false
}

func loadYAMLOps(src string) ([]*prim, error) {
	files, err := filepath.Glob(filepath.Join(src, yamlDir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no yaml files under %s", filepath.Join(src, yamlDir))
	}
	sort.Strings(files)
	var out []*prim
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		root, err := parseYAML(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", f, err)
		}
		rel := path.Join(yamlDir, filepath.Base(f))
		for _, op := range root.kids {
			if isGradOp(op.key) {
				note("%s: %s skipped (gradient op)", rel, op.key)
				continue
			}
			p, err := yamlPrim(op, rel)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", f, err)
			}
			out = append(out, p)
		}
	}
	return out, nil
}

func yamlPrim(op *ynode, rel string) (*prim, error) {
	p := &prim{Name: camel(op.key), Source: rel}
	if c := op.child("class"); c != nil {
		if n := c.scalar("name"); n != "" {
			p.Name = n
		}
	}
	if args := op.child("args"); args != nil {
		for _, a := range args.kids {
			dtype := strings.TrimSpace(a.scalar("dtype"))
			if dtype == "" {
				return nil, fmt.Errorf("line %d: %s.%s has no dtype", a.line, op.key, a.key)
			}
			r := arg{Name: a.key, Type: dtype, Default: a.scalar("default")}
			if a.child("default") != nil && r.Default == "" {
				r.Default = "''" // an explicitly empty default still makes the arg optional
			}
			if h := a.scalar("arg_handler"); h != "" {
				r.Type += "|" + h
			}
			if strings.EqualFold(a.scalar("prim_init"), "true") {
				m, e, ok := yamlAttrType(dtype)
				if !ok {
					return nil, fmt.Errorf("line %d: %s.%s: prim_init dtype %q has no MindIR mapping", a.line, op.key, a.key, dtype)
				}
				r.MindIR, r.Elem = m, e
			} else {
				r.Input = true
			}
			p.Args = append(p.Args, r)
		}
	}
	if rets := op.child("returns"); rets != nil {
		p.Outputs = len(rets.kids)
		for _, r := range rets.kids {
			if d := r.scalar("dtype"); strings.HasPrefix(d, "tuple[") || strings.HasPrefix(d, "list[") {
				p.Outputs = -1 // a sequence output whose length depends on the node
			}
		}
	} else {
		p.Outputs = 1
	}
	return p, nil
}

// ----------------------------------------------------------------- C++ ----

var (
	reConst     = regexp.MustCompile(`constexpr\s+(?:auto|char)\s+(\w+)\s*(?:\[\])?\s*=\s*"([^"]*)"\s*;`)
	reClass     = regexp.MustCompile(`\bclass\s+(?:OPS_API\s+|MIND_API\s+)?(\w+)\s*(?:final\s*)?:\s*public\s+(?:(?:mindspore::)?ops::)?(\w+)\s*\{`)
	reSetterDef = regexp.MustCompile(`\bvoid\s+(\w+)::set_(\w+)\s*\(`)
	reInitDef   = regexp.MustCompile(`\bvoid\s+(\w+)::Init\s*\(`)
	reAddAttr   = regexp.MustCompile(`\b(?:AddAttr|set_attr)\s*\(\s*(?:(?:mindspore::)?ops::)?(\w+|"[^"]*")\s*,`)
	reCallSet   = regexp.MustCompile(`\bset_(\w+)\s*\(\s*(\w+)\s*\)`)
	reRefOps    = regexp.MustCompile(`@ref\s+mindspore\.ops\.(\w+)\s+for\s+the\s+inputs`)
	reIdent     = regexp.MustCompile(`^[A-Za-z_]\w*$`)
)

// stripCComments blanks out // and /* */ comments (string and char literals
// are left alone); offsets are preserved so that positions in the stripped
// text index the raw text too.
func stripCComments(s string) string {
	b := []byte(s)
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '"' || b[i] == '\'':
			q := b[i]
			for i++; i < len(b) && b[i] != q; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '/':
			for ; i < len(b) && b[i] != '\n'; i++ {
				b[i] = ' '
			}
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '*':
			for ; i+1 < len(b) && !(b[i] == '*' && b[i+1] == '/'); i++ {
				if b[i] != '\n' {
					b[i] = ' '
				}
			}
			if i+1 < len(b) {
				b[i], b[i+1] = ' ', ' '
				i++
			}
		}
	}
	return string(b)
}

// matchClose returns the index of the bracket closing s[open].
func matchClose(s string, open int) int {
	pairs := map[byte]byte{'(': ')', '{': '}', '[': ']'}
	oc := s[open]
	cc := pairs[oc]
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '"', '\'':
			q := s[i]
			for i++; i < len(s) && s[i] != q; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case oc:
			depth++
		case cc:
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// splitTop splits s on commas outside (), {}, [], <> and quotes.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '{', '[', '<':
			depth++
		case ')', '}', ']', '>':
			depth--
		case '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	if strings.TrimSpace(s[start:]) != "" {
		out = append(out, s[start:])
	}
	return out
}

func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

type cparam struct{ typ, name, def string }

// parseParams parses a C++ parameter list ("const PadMode &pad_mode = VALID,
// ..."). A parameter without a name (set_median(const float)) gets "".
func parseParams(s string) []cparam {
	var out []cparam
	for _, p := range splitTop(s) {
		p = squash(p)
		if p == "" || p == "void" {
			continue
		}
		var def string
		if eq := topLevelEq(p); eq >= 0 {
			def = strings.TrimSpace(p[eq+1:])
			p = strings.TrimSpace(p[:eq])
		}
		typ, name := p, ""
		if i := strings.LastIndexAny(p, " &*"); i >= 0 && reIdent.MatchString(p[i+1:]) && !isTypeWord(p[i+1:]) {
			typ, name = strings.TrimSpace(p[:i+1]), p[i+1:]
		}
		typ = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(typ), "&"))
		typ = strings.TrimSpace(strings.TrimPrefix(typ, "const "))
		out = append(out, cparam{typ: typ, name: name, def: def})
	}
	return out
}

func isTypeWord(w string) bool {
	switch w {
	case "int", "int64_t", "int32_t", "bool", "float", "double", "size_t", "uint8_t":
		return true
	}
	return false
}

func topLevelEq(s string) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '{', '[', '<':
			depth++
		case ')', '}', ']', '>':
			depth--
		case '=':
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// isEnumType: a capitalized plain type name other than TypeId/TypePtr is
// one of the enums of mindapi/base (PadMode, Format, ActivationType,
// ReduceMode, RoundMode, EltwiseMode, ...) or of the ops headers. Setters
// store them as MakeValue of an int64_t (`int64_t swi = mode;` in the
// cxx_api .cc files; attrFromSetter reports a .cc setter that does not).
func isEnumType(t string) bool {
	if t == "" || t == "TypeId" || t == "TypePtr" || strings.ContainsAny(t, "<>:") {
		return false
	}
	return t[0] >= 'A' && t[0] <= 'Z'
}

// cppAttrType maps a setter's C++ parameter type to (Type, MindIR, Elem).
func cppAttrType(t string) (typ, mindir, elem string, ok bool) {
	t = strings.ReplaceAll(t, "std::", "")
	switch t {
	case "int64_t":
		return "int", "INT64", "", true
	case "int", "int32_t":
		return "int32", "INT32", "", true
	case "bool":
		return "bool", "BOOL", "", true
	case "float":
		return "float", "FLOAT", "", true
	case "double":
		return "float64", "DOUBLE", "", true
	case "string":
		return "str", "STRING", "", true
	case "TypeId":
		return "TypeId", "TENSORS", "", true
	case "map<string, vector<uint8_t>>":
		// ops::Custom::set_attr: one TUPLE of name (STRING) / value (TUPLE
		// of UINT8) pairs, hence no single element type.
		return "dict[str,tuple[uint8]]", "TUPLE", "", true
	}
	if strings.HasPrefix(t, "vector<") && strings.HasSuffix(t, ">") {
		et, em, _, ok := cppAttrType(strings.TrimSpace(t[len("vector<") : len(t)-1]))
		if !ok {
			return "", "", "", false
		}
		if et == "TypePtr" {
			return "tuple[TypeId]", "TUPLE", "TENSORS", true
		}
		return "tuple[" + et + "]", "TUPLE", em, true
	}
	if t == "TypePtr" {
		return "TypePtr", "TENSORS", "", true
	}
	if isEnumType(t) {
		return "enum:" + t, "INT64", "", true
	}
	return "", "", "", false
}

type setter struct {
	name  string // setter suffix: set_<name>
	param cparam
	body  string // inline body from the header, or the .cc definition
}

type class struct {
	name, base, file string // file relative to src
	primName         string
	inputs, outputs  []string
	hasIO            bool
	init             []cparam
	hasInit          bool
	initCalls        map[string]string // Init parameter -> setter, from an inline Init body
	ccInit           []string          // setter called with each Init parameter, by position, from the .cc
	setters          []setter
	refOps           string // "@ref mindspore.ops.X for the inputs"
}

// loadConstants collects `constexpr auto kXxx = "..."` of op_def/*.h and
// the infer headers (attribute names and kNameXxx primitive names).
func loadConstants(src string) (map[string]string, error) {
	consts := map[string]string{}
	var files []string
	for _, pat := range []string{opDefDir + "/*.h", inferDir + "/*.h", cxxAPIDir + "/*.h", cxxAPIDir + "/*.cc"} {
		fs, err := filepath.Glob(filepath.Join(src, pat))
		if err != nil {
			return nil, err
		}
		sort.Strings(fs)
		files = append(files, fs...)
	}
	if len(files) == 0 {
		return nil, errors.New("no headers under " + filepath.Join(src, opDefDir))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, m := range reConst.FindAllStringSubmatch(stripCComments(string(data)), -1) {
			if old, ok := consts[m[1]]; ok && old != m[2] {
				note("%s: %s = %q redefines %q; keeping the first", f, m[1], m[2], old)
				continue
			}
			consts[m[1]] = m[2]
		}
	}
	return consts, nil
}

// attrNames is the set of values of op_def/*op_name.h, to check setter
// names against.
func attrNames(src string) map[string]bool {
	names := map[string]bool{}
	fs, _ := filepath.Glob(filepath.Join(src, opDefDir, "*.h"))
	for _, f := range fs {
		data, _ := os.ReadFile(f)
		for _, m := range reConst.FindAllStringSubmatch(string(data), -1) {
			names[m[2]] = true
		}
	}
	return names
}

func stringList(s string) []string {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "{") || !strings.HasSuffix(s, "}") {
		return nil
	}
	var out []string
	for _, e := range splitTop(s[1 : len(s)-1]) {
		e = strings.TrimSpace(e)
		if u, err := strconv.Unquote(e); err == nil {
			out = append(out, u)
		} else {
			return nil
		}
	}
	return out
}

func loadClasses(src string, consts map[string]string) (map[string]*class, error) {
	classes := map[string]*class{}
	var headers []string
	for _, d := range []string{inferDir, cxxAPIDir} {
		fs, err := filepath.Glob(filepath.Join(src, d, "*.h"))
		if err != nil {
			return nil, err
		}
		if len(fs) == 0 {
			return nil, fmt.Errorf("no headers under %s", filepath.Join(src, d))
		}
		sort.Strings(fs)
		headers = append(headers, fs...)
	}
	for _, f := range headers {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		raw := string(data)
		s := stripCComments(raw)
		rel, _ := filepath.Rel(src, f)
		rel = filepath.ToSlash(rel)
		for _, m := range reClass.FindAllStringSubmatchIndex(s, -1) {
			open := m[1] - 1
			end := matchClose(s, open)
			if end < 0 {
				return nil, fmt.Errorf("%s: unbalanced class body", rel)
			}
			body := s[open+1 : end]
			name, base := s[m[2]:m[3]], s[m[4]:m[5]]
			if !strings.Contains(body, "MIND_API_BASE_MEMBER(") {
				continue // an infer implementation or helper class, not a primitive
			}
			c := &class{name: name, base: base, file: rel}
			if r := reRefOps.FindStringSubmatch(raw[open:end]); r != nil {
				c.refOps = r[1]
			}
			c.primName = ctorName(name, body, consts)
			parseClassBody(c, body)
			if old, dup := classes[name]; dup {
				return nil, fmt.Errorf("class %s declared in %s and %s", name, old.file, rel)
			}
			classes[name] = c
		}
	}
	// Out-of-line definitions (cxx_api/*.cc).
	ccs, err := filepath.Glob(filepath.Join(src, cxxAPIDir, "*.cc"))
	if err != nil {
		return nil, err
	}
	infcc, _ := filepath.Glob(filepath.Join(src, inferDir, "*.cc"))
	ccs = append(ccs, infcc...)
	sort.Strings(ccs)
	for _, f := range ccs {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		s := stripCComments(string(data))
		for _, m := range reSetterDef.FindAllStringSubmatchIndex(s, -1) {
			cls, sn := s[m[2]:m[3]], s[m[4]:m[5]]
			c := classes[cls]
			body, ok := funcBody(s, m[1]-1)
			if c == nil || !ok {
				continue
			}
			for i := range c.setters {
				if c.setters[i].name == sn && c.setters[i].body == "" {
					c.setters[i].body = body
				}
			}
		}
		for _, m := range reInitDef.FindAllStringSubmatchIndex(s, -1) {
			c := classes[s[m[2]:m[3]]]
			body, ok := funcBody(s, m[1]-1)
			if c == nil || !ok || c.ccInit != nil {
				continue
			}
			// The .cc may name the parameters differently from the header
			// (GroupNormFusion: eps / epsilon): map them by position.
			ps := parseParams(s[m[1]:matchClose(s, m[1]-1)])
			calls := map[string]string{}
			for _, cm := range reCallSet.FindAllStringSubmatch(body, -1) {
				if _, seen := calls[cm[2]]; !seen {
					calls[cm[2]] = cm[1]
				}
			}
			c.ccInit = make([]string, len(ps))
			for i, p := range ps {
				c.ccInit[i] = calls[p.name]
			}
		}
	}
	return classes, nil
}

// funcBody returns the body of the function whose parameter list opens at
// s[open] ("" and false for a declaration).
func funcBody(s string, open int) (string, bool) {
	cl := matchClose(s, open)
	if cl < 0 {
		return "", false
	}
	i := cl + 1
	for i < len(s) && s[i] != '{' && s[i] != ';' {
		i++
	}
	if i >= len(s) || s[i] == ';' {
		return "", false
	}
	e := matchClose(s, i)
	if e < 0 {
		return "", false
	}
	return s[i+1 : e], true
}

// ctorName finds the primitive name a class passes to its base
// constructor: C() : Base(kNameC), or explicit C(const std::string &k_name
// = kNameC) : Base(k_name).
func ctorName(cls, body string, consts map[string]string) string {
	re := regexp.MustCompile(`\b` + regexp.QuoteMeta(cls) + `\s*\(([^()]*)\)\s*:\s*[\w:]+\s*\(\s*([^()]*?)\s*\)`)
	for _, m := range re.FindAllStringSubmatch(body, -1) {
		a := m[2]
		if u, err := strconv.Unquote(a); err == nil {
			return u
		}
		if v, ok := consts[a]; ok {
			return v
		}
		for _, p := range parseParams(m[1]) {
			if p.name == a {
				if v, ok := consts[p.def]; ok {
					return v
				}
			}
		}
	}
	if v, ok := consts["kName"+cls]; ok {
		return v
	}
	return cls
}

var (
	reInitIO  = regexp.MustCompile(`\bInitIOName\s*\(`)
	reInitDcl = regexp.MustCompile(`\bvoid\s+Init\s*\(`)
	reSetDcl  = regexp.MustCompile(`(\bstatic\s+)?\bvoid\s+set_(\w+)\s*\(`)
)

func parseClassBody(c *class, body string) {
	c.initCalls = map[string]string{}
	if loc := reInitIO.FindStringIndex(body); loc != nil {
		if e := matchClose(body, loc[1]-1); e > 0 {
			parts := splitTop(body[loc[1]:e])
			if len(parts) == 2 {
				in, out := stringList(parts[0]), stringList(parts[1])
				if in != nil || strings.TrimSpace(parts[0]) == "{}" {
					c.inputs, c.outputs, c.hasIO = in, out, true
				}
			}
		}
	}
	if loc := reInitDcl.FindStringIndex(body); loc != nil {
		if e := matchClose(body, loc[1]-1); e > 0 {
			c.init, c.hasInit = parseParams(body[loc[1]:e]), true
			if b, ok := funcBody(body, loc[1]-1); ok {
				for _, cm := range reCallSet.FindAllStringSubmatch(b, -1) {
					c.initCalls[cm[2]] = cm[1]
				}
			}
		}
	}
	for _, m := range reSetDcl.FindAllStringSubmatchIndex(body, -1) {
		sn := body[m[4]:m[5]]
		if m[2] >= 0 {
			note("%s: %s::set_%s is static (not an attribute); skipped", c.file, c.name, sn)
			continue
		}
		e := matchClose(body, m[1]-1)
		if e < 0 {
			continue
		}
		ps := parseParams(body[m[1]:e])
		if len(ps) != 1 {
			note("%s: %s::set_%s takes %d parameters; not an attribute setter, skipped", c.file, c.name, sn, len(ps))
			continue
		}
		b, _ := funcBody(body, m[1]-1)
		c.setters = append(c.setters, setter{name: sn, param: ps[0], body: b})
	}
}

// attrFromSetter resolves one setter into an attribute.
func attrFromSetter(c *class, s setter, consts map[string]string, known map[string]bool) (arg, bool) {
	name := s.name
	if m := reAddAttr.FindStringSubmatch(s.body); m != nil {
		if u, err := strconv.Unquote(m[1]); err == nil {
			name = u
		} else if v, ok := consts[m[1]]; ok {
			name = v
		} else {
			note("%s: %s::set_%s: AddAttr(%s) does not resolve; using the setter name", c.file, c.name, s.name, m[1])
		}
	} else if s.body != "" {
		note("%s: %s::set_%s has a body without AddAttr; using the setter name", c.file, c.name, s.name)
	} else if !known[name] {
		note("%s: %s::set_%s: no .cc and %q is not an op_name.h constant; using it anyway", c.file, c.name, s.name, name)
	}
	typ, mindir, elem, ok := cppAttrType(s.param.typ)
	if !ok {
		note("%s: %s::set_%s(%s): C++ type has no MindIR mapping; skipped", c.file, c.name, s.name, s.param.typ)
		return arg{}, false
	}
	if strings.HasPrefix(typ, "enum:") && s.body != "" &&
		!strings.Contains(s.body, "int64_t") && !strings.Contains(s.body, "MakeValue(static_cast") {
		note("%s: %s::set_%s stores enum %s without an int64 conversion", c.file, c.name, s.name, s.param.typ)
	}
	return arg{Name: name, Type: typ, MindIR: mindir, Elem: elem}, true
}

// resolveClasses turns the parsed classes into primitives: inherited
// attributes first, own setters override or append, the Init order wins.
func resolveClasses(classes map[string]*class, yamlPrims map[string]*prim, consts map[string]string, known map[string]bool) ([]*prim, error) {
	var names []string
	for n := range classes {
		names = append(names, n)
	}
	sort.Strings(names)
	done := map[string]*prim{}
	var resolve func(c *class, depth int) (*prim, error)
	resolve = func(c *class, depth int) (*prim, error) {
		if p, ok := done[c.name]; ok {
			return p, nil
		}
		if depth > 16 {
			return nil, fmt.Errorf("%s: inheritance too deep", c.name)
		}
		p := &prim{Name: c.primName, Source: c.file, Outputs: 1}
		var inherited []arg
		ioKnown, baseMissing := false, false
		if c.base != "BaseOperator" {
			if bc, ok := classes[c.base]; ok {
				bp, err := resolve(bc, depth+1)
				if err != nil {
					return nil, err
				}
				for _, a := range bp.Args {
					if !a.Input {
						inherited = append(inherited, a)
					}
				}
				if !c.hasIO {
					c.inputs, c.outputs, c.hasIO = bc.inputs, bc.outputs, bc.hasIO
				}
			} else if yp, ok := yamlPrims[c.base]; ok {
				for _, a := range yp.Args {
					if !a.Input {
						inherited = append(inherited, a)
					}
				}
				if !c.hasIO {
					for _, a := range yp.Inputs() {
						p.Args = append(p.Args, a)
					}
					p.Outputs, ioKnown = yp.Outputs, true
				}
			} else {
				baseMissing = true
				note("%s: base class %s of %s is not in the excerpt", c.file, c.base, c.name)
			}
		}
		// Inputs.
		if c.hasIO {
			for _, in := range c.inputs {
				p.Args = append(p.Args, arg{Name: in, Input: true, Type: "tensor"})
			}
			p.Outputs = len(c.outputs)
			if p.Outputs == 0 {
				p.Outputs = 1
			}
		} else if !ioKnown {
			var yp *prim
			for _, cand := range []string{strings.TrimSuffix(c.primName, "Fusion"), c.refOps} {
				if q, ok := yamlPrims[cand]; ok && cand != "" {
					yp = q
					break
				}
			}
			if yp != nil {
				for _, a := range yp.Inputs() {
					p.Args = append(p.Args, a)
				}
				p.Outputs = yp.Outputs
			}
		}
		// Attributes: inherited, then own setters (replace or append).
		attrs := append([]arg{}, inherited...)
		inheritedAttr := map[string]bool{}
		for _, a := range inherited {
			inheritedAttr[a.Name] = true
		}
		setterAttr := map[string]string{} // setter name -> attribute name
		for _, b := range inheritedSetters(c, classes) {
			setterAttr[b] = b
		}
		for _, s := range c.setters {
			a, ok := attrFromSetter(c, s, consts, known)
			if !ok {
				continue
			}
			setterAttr[s.name] = a.Name
			replaced := false
			for i := range attrs {
				if attrs[i].Name == a.Name {
					a.Default = attrs[i].Default
					attrs[i] = a
					replaced = true
				}
			}
			if !replaced {
				attrs = append(attrs, a)
			}
		}
		// Defaults and order from Init.
		if c.hasInit {
			var ordered []arg
			used := map[string]bool{}
			for i, ip := range c.init {
				sn := ""
				if len(c.ccInit) == len(c.init) {
					sn = c.ccInit[i]
				}
				if sn == "" {
					sn = c.initCalls[ip.name]
				}
				if sn == "" {
					sn = matchSetter(ip, c, classes, setterAttr, used)
				}
				an := setterAttr[sn]
				if an == "" && baseMissing {
					// The base class (Conv2DBackpropInput, ...) is not in
					// the excerpt: its Init parameters stand for its
					// setters, named like them.
					if typ, mindir, elem, ok := cppAttrType(ip.typ); ok && ip.name != "" {
						attrs = append(attrs, arg{Name: ip.name, Type: typ, MindIR: mindir, Elem: elem})
						an = ip.name
						note("%s: %s::Init parameter %s taken as an attribute of the missing base %s", c.file, c.name, ip.name, c.base)
					}
				}
				found := false
				for j := range attrs {
					if an != "" && attrs[j].Name == an && !used[an] {
						attrs[j].Default = squash(ip.def)
						ordered = append(ordered, attrs[j])
						used[an], found = true, true
					}
				}
				if !found {
					note("%s: %s::Init parameter %s matches no setter (not an attribute)", c.file, c.name, ip.name)
				}
			}
			for _, a := range attrs {
				if !used[a.Name] {
					// Not an Init parameter: Init does not set it, so
					// nothing requires it (LSTM's proj_size and
					// num_directions are absent from MindSpore 1.6 files).
					if a.Default == "" {
						a.Default = "None"
					}
					ordered = append(ordered, a)
				}
			}
			attrs = ordered
		} else {
			// Without an Init of its own the class inherits its base's
			// Init (whose required arguments stay required); its own
			// setters are optional.
			for i := range attrs {
				if attrs[i].Default == "" && !inheritedAttr[attrs[i].Name] {
					attrs[i].Default = "None"
				}
			}
		}
		p.Args = append(p.Args, attrs...)
		done[c.name] = p
		return p, nil
	}
	var out []*prim
	seen := map[string]string{}
	for _, n := range names {
		p, err := resolve(classes[n], 0)
		if err != nil {
			return nil, err
		}
		if other, dup := seen[p.Name]; dup {
			note("%s: primitive %s already defined by class %s; skipped", classes[n].file, p.Name, other)
			continue
		}
		seen[p.Name] = n
		out = append(out, p)
	}
	return out, nil
}

// snake converts a camelCase C++ parameter name (NmsIouThreshold) to the
// snake_case of attribute names (nms_iou_threshold).
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// matchSetter finds the setter an Init parameter stands for when no Init
// body says so: the setter of the same name, the one whose own parameter has
// that name (set_split_stride(int64_t stride)), the snake_case name, the
// plural or singular, or a unique setter ending in _<name> (format ->
// data_format).
func matchSetter(ip cparam, c *class, classes map[string]*class, setterAttr map[string]string, used map[string]bool) string {
	free := func(sn string) bool {
		an, ok := setterAttr[sn]
		return ok && !used[an]
	}
	if ip.name == "" {
		return ""
	}
	if free(ip.name) {
		return ip.name
	}
	for cl := c; cl != nil; cl = classes[cl.base] {
		for _, s := range cl.setters {
			if s.param.name == ip.name && free(s.name) {
				return s.name
			}
		}
	}
	for _, cand := range []string{snake(ip.name), ip.name + "s", strings.TrimSuffix(ip.name, "s")} {
		if free(cand) {
			return cand
		}
	}
	var hits []string
	for sn := range setterAttr {
		if free(sn) && strings.HasSuffix(sn, "_"+ip.name) {
			hits = append(hits, sn)
		}
	}
	if len(hits) == 1 {
		return hits[0]
	}
	return ""
}

// inheritedSetters lists the setter names of the base classes.
func inheritedSetters(c *class, classes map[string]*class) []string {
	var out []string
	for b := classes[c.base]; b != nil; b = classes[b.base] {
		for _, s := range b.setters {
			out = append(out, s.name)
		}
	}
	return out
}

// Inputs returns the yaml prim's input args.
func (p *prim) Inputs() []arg {
	var out []arg
	for _, a := range p.Args {
		if a.Input {
			out = append(out, a)
		}
	}
	return out
}

// ---------------------------------------------------------------- ONNX ----

var (
	reRegistrar = regexp.MustCompile(`OnnxNodeRegistrar\s+\w+\s*\(\s*"([^"]+)"\s*,\s*new\s+(\w+)`)
	reParseDef  = regexp.MustCompile(`\b(\w+)::Parse\s*\(`)
	reMake      = regexp.MustCompile(`\bstd::make_(?:unique|shared)<\s*(?:(?:mindspore::)?(?:ops|lite)::)?(\w+)\s*>`)
)

// loadONNX maps every registered ONNX op type to the primitive its parser
// creates. Where a parser creates different primitives by case, the main one
// is the one created at the shallowest brace depth of Parse (the
// fall-through path, e.g. Conv2DFusion rather than Conv3D), the first one
// on a tie.
func loadONNX(src string, classes map[string]*class) (map[string]string, error) {
	files, err := filepath.Glob(filepath.Join(src, onnxDir, "*.cc"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no ONNX parsers under %s", filepath.Join(src, onnxDir))
	}
	sort.Strings(files)
	main := map[string]string{} // parser class -> primitive class
	type reg struct{ op, parser, file string }
	var regs []reg
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		s := stripCComments(string(data))
		for _, m := range reRegistrar.FindAllStringSubmatch(s, -1) {
			regs = append(regs, reg{m[1], m[2], filepath.Base(f)})
		}
		for _, m := range reParseDef.FindAllStringSubmatchIndex(s, -1) {
			body, ok := funcBody(s, m[1]-1)
			if !ok {
				continue
			}
			best, bestDepth := "", 1<<30
			for _, mm := range reMake.FindAllStringSubmatchIndex(body, -1) {
				name := body[mm[2]:mm[3]]
				if name == "" || name[0] < 'A' || name[0] > 'Z' {
					continue
				}
				d := strings.Count(body[:mm[0]], "{") - strings.Count(body[:mm[0]], "}")
				if d < bestDepth {
					best, bestDepth = name, d
				}
			}
			if best != "" {
				main[s[m[2]:m[3]]] = best
			}
		}
	}
	out := map[string]string{}
	for _, r := range regs {
		cls, ok := main[r.parser]
		if !ok {
			note("%s: ONNX %s: %s creates no recognizable primitive; left out", r.file, r.op, r.parser)
			continue
		}
		pn := cls
		if c, ok := classes[cls]; ok {
			pn = c.primName
		}
		if old, dup := out[r.op]; dup && old != pn {
			return nil, fmt.Errorf("ONNX op %s registered twice (%s, %s)", r.op, old, pn)
		}
		out[r.op] = pn
	}
	return out, nil
}

// ---------------------------------------------------------------- emit ----

func emit(prims map[string]*prim, onnx map[string]string) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`// Code generated by schemagen from MindSpore 2.7 / MindSpore Lite sources; DO NOT EDIT.

// The table below is derived from MindSpore and MindSpore Lite source files
// (mindspore/mindspore/ops/op_def/yaml, ops/infer, ops/infer/cxx_api,
// ops/op_def/*op_name.h and mindspore-lite/tools/converter/parser/onnx),
// Copyright Huawei Technologies Co., Ltd, licensed under the Apache License,
// Version 2.0 (http://www.apache.org/licenses/LICENSE-2.0). Each row names
// the upstream file it was generated from in Source. Regenerate with
// ` + "`go generate`" + ` in internal/mindir (see schemagen/main.go).

package mindir

import pb "gkconv/internal/mindir/mindirpb"

var primTable = []PrimSchema{
`)
	var names []string
	for n := range prims {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := prims[n]
		fmt.Fprintf(&b, "{Name: %s, Source: %s, Outputs: %d, Args: []PrimArg{\n", strconv.Quote(p.Name), strconv.Quote(p.Source), p.Outputs)
		for _, a := range p.Args {
			form := "FormAttr"
			if a.Input {
				form = "FormInput"
			}
			fmt.Fprintf(&b, "{Name: %s, Form: %s, Type: %s", strconv.Quote(a.Name), form, strconv.Quote(a.Type))
			if a.MindIR != "" {
				fmt.Fprintf(&b, ", MindIR: pb.AttributeProto_%s", a.MindIR)
			}
			if a.Elem != "" {
				fmt.Fprintf(&b, ", Elem: pb.AttributeProto_%s", a.Elem)
			}
			if a.Default != "" {
				fmt.Fprintf(&b, ", Default: %s", strconv.Quote(a.Default))
			}
			b.WriteString("},\n")
		}
		b.WriteString("}},\n")
	}
	b.WriteString("}\n\n// onnxToPrim: ONNX op type -> the primitive converter_lite's parser writes.\nvar onnxToPrim = map[string]string{\n")
	var ops []string
	for op := range onnx {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	for _, op := range ops {
		fmt.Fprintf(&b, "%s: %s,\n", strconv.Quote(op), strconv.Quote(onnx[op]))
	}
	b.WriteString("}\n")
	code, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("formatting the output: %v", err)
	}
	return code, nil
}
