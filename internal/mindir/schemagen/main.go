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
//
// One file per upstream source: yaml.go reads the op_def YAML, cpp.go the
// C++ headers, onnx.go converter_lite's ONNX parsers; main.go merges them,
// applies the overrides and emits the table.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"os"
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

// emit renders the merged primitives and the ONNX mapping as the gofmt'ed
// source of prims_gen.go.
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
