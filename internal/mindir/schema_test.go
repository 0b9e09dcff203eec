package mindir

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "gkconv/internal/mindir/mindirpb"
)

// sgWant is one expected argument of a primitive row.
type sgWant struct {
	name   string
	form   ArgForm
	mindir pb.AttributeProto_AttributeType
	elem   pb.AttributeProto_AttributeType
	typ    string // "" = not checked
}

func sgAttr(name string, t pb.AttributeProto_AttributeType, typ string) sgWant {
	return sgWant{name: name, form: FormAttr, mindir: t, typ: typ}
}

func sgTuple(name string, elem pb.AttributeProto_AttributeType, typ string) sgWant {
	return sgWant{name: name, form: FormAttr, mindir: pb.AttributeProto_TUPLE, elem: elem, typ: typ}
}

func sgInput(name string) sgWant { return sgWant{name: name, form: FormInput} }

const (
	sgINT64   = pb.AttributeProto_INT64
	sgBOOL    = pb.AttributeProto_BOOL
	sgFLOAT   = pb.AttributeProto_FLOAT
	sgSTRING  = pb.AttributeProto_STRING
	sgTUPLE   = pb.AttributeProto_TUPLE
	sgTENSORS = pb.AttributeProto_TENSORS
	sgNONE    = pb.AttributeProto_UNDEFINED
)

// TestPrimSchemaRows checks the rows the converter depends on most.
func TestPrimSchemaRows(t *testing.T) {
	conv2DFusion := []sgWant{
		sgInput("x"), sgInput("weight"), sgInput("bias"), // converter_lite passes the ONNX inputs through (input override)
		sgAttr("in_channel", sgINT64, "int"),
		sgAttr("out_channel", sgINT64, "int"),
		sgTuple("kernel_size", sgINT64, "tuple[int]"),
		sgAttr("mode", sgINT64, "int"),
		sgAttr("pad_mode", sgINT64, "enum:PadMode"),
		sgTuple("pad", sgINT64, "tuple[int]"),
		sgTuple("stride", sgINT64, "tuple[int]"),
		sgTuple("dilation", sgINT64, "tuple[int]"),
		sgAttr("group", sgINT64, "int"),
		sgAttr("format", sgINT64, "enum:Format"),
		sgTuple("pad_list", sgINT64, "tuple[int]"),
		sgAttr("activation_type", sgINT64, "enum:ActivationType"),
	}
	cases := []struct {
		prim    string
		source  string // suffix of Source
		outputs int
		args    []sgWant
		exact   bool // the argument list is exactly args, in order
	}{
		{"Conv2DFusion", "ops/infer/cxx_api/conv2d_fusion.h", 1, conv2DFusion, true},
		{"Conv2D", "ops/infer/conv2d.h", 1, []sgWant{
			sgInput("x"), sgInput("w"),
			sgAttr("out_channel", sgINT64, "int"),
			sgTuple("kernel_size", sgINT64, "tuple[int]"),
			sgAttr("mode", sgINT64, "int"),
			// Overridden from mnist.mindir: Python's Conv2D writes strings.
			sgAttr("pad_mode", sgSTRING, "enum:PadMode|str"),
			sgTuple("pad", sgINT64, "tuple[int]"),
			sgTuple("stride", sgINT64, "tuple[int]"),
			sgTuple("dilation", sgINT64, "tuple[int]"),
			sgAttr("group", sgINT64, "int"),
			sgAttr("format", sgSTRING, "enum:Format|str"),
			sgTuple("pad_list", sgINT64, "tuple[int]"),
			sgAttr("groups", sgINT64, "int"),
		}, true},
		{"MatMulFusion", "ops/infer/cxx_api/mat_mul_fusion.h", 1, []sgWant{
			sgInput("input"), sgInput("mat2"), sgInput("bias"), // bias: converter_lite's third input (input override)
			sgAttr("transpose_a", sgBOOL, "bool"),
			sgAttr("transpose_b", sgBOOL, "bool"),
			sgAttr("activation_type", sgINT64, "enum:ActivationType"),
		}, true},
		{"ReduceFusion", "ops/infer/cxx_api/reduce_fusion.h", 1, []sgWant{
			sgInput("input_x"), sgInput("axis"),
			sgAttr("keep_dims", sgBOOL, "bool"),
			sgAttr("mode", sgINT64, "enum:ReduceMode"),
			sgAttr("reduce_to_end", sgBOOL, "bool"),
			sgAttr("coeff", sgFLOAT, "float"),
		}, false},
		{"Transpose", "op_def/yaml/transpose_op.yaml", 1, []sgWant{sgInput("input"), sgInput("input_perm")}, true},
		{"AddFusion", "ops/infer/cxx_api/add_fusion.h", 1, []sgWant{
			sgInput("x"), sgInput("y"), sgAttr("activation_type", sgINT64, "enum:ActivationType"),
		}, true},
		{"LayerNormFusion", "ops/infer/cxx_api/layer_norm_fusion.h", 3, []sgWant{
			sgInput("input_x"), sgInput("gamma"), sgInput("beta"),
			sgAttr("begin_norm_axis", sgINT64, "int"),
			sgAttr("begin_params_axis", sgINT64, "int"),
			sgAttr("epsilon", sgFLOAT, "float"),
			sgAttr("elementwise_affine", sgBOOL, "bool"),
		}, true},
		{"Custom", "ops/infer/custom.h", 1, []sgWant{
			sgAttr("type", sgSTRING, "str"),
			sgAttr("attr", sgTUPLE, ""),
		}, true},
		{"Softmax", "op_def/yaml/softmax_op.yaml", 1, []sgWant{sgInput("input"), sgTuple("axis", sgINT64, "tuple[int]")}, true},
		{"Concat", "op_def/yaml/concat_op.yaml", 1, []sgWant{sgInput("tensors"), sgAttr("axis", sgINT64, "int")}, true},
		{"StridedSlice", "op_def/yaml/strided_slice_op.yaml", 1, []sgWant{
			sgInput("input_x"), sgInput("begin"), sgInput("end"), sgInput("strides"),
			sgAttr("begin_mask", sgINT64, "int"),
			sgAttr("end_mask", sgINT64, "int"),
			sgAttr("ellipsis_mask", sgINT64, "int"),
			sgAttr("new_axis_mask", sgINT64, "int"),
			sgAttr("shrink_axis_mask", sgINT64, "int"),
		}, true},
		{"Gather", "op_def/yaml/gather_op.yaml", 1, []sgWant{
			sgInput("input_params"), sgInput("input_indices"), sgInput("axis"), sgAttr("batch_dims", sgINT64, "int"),
		}, true},
		{"Reshape", "op_def/yaml/reshape_op.yaml", 1, []sgWant{sgInput("input"), sgInput("shape")}, true},
		{"Cast", "op_def/yaml/cast_op.yaml", 1, []sgWant{sgInput("input"), {name: "dtype", form: FormInput, typ: "TypeId|dtype_to_type_id"}}, true},
		{"MaxPool", "ops/infer/max_pool.h", 1, []sgWant{
			sgInput("x"),
			sgTuple("kernel_size", sgINT64, "tuple[int]"),
			sgTuple("strides", sgINT64, "tuple[int]"),
			sgAttr("pad_mode", sgSTRING, "enum:PadMode|str"),
			sgAttr("format", sgSTRING, "enum:Format|str"),
		}, false},
		{"MatMul", "op_def/yaml/matmul_op.yaml", 1, []sgWant{
			sgInput("input"), sgInput("mat2"), sgAttr("transpose_a", sgBOOL, "bool"), sgAttr("transpose_b", sgBOOL, "bool"),
		}, false},
		{"BiasAdd", "op_def/yaml/bias_add_op.yaml", 1, []sgWant{
			sgInput("input_x"), sgInput("bias"),
			sgAttr("data_format", sgINT64, "int|str_to_enum"),
			sgAttr("format", sgSTRING, "str"),
		}, true},
		{"ArgMaxFusion", "ops/infer/cxx_api/arg_max_fusion.h", 1, []sgWant{
			sgAttr("keep_dims", sgBOOL, "bool"),
			sgAttr("top_k", sgINT64, "int"),
			sgAttr("axis", sgINT64, "int"),
			sgAttr("output_type", sgTENSORS, "TypeId"),
		}, false},
		{"PReLUFusion", "ops/infer/cxx_api/prelu_fusion.h", 1, []sgWant{
			sgAttr("channel_shared", sgBOOL, "bool"),
			sgTuple("slope", sgFLOAT, "tuple[float]"),
		}, false},
	}
	for _, c := range cases {
		p, ok := LookupPrim(c.prim)
		if !ok {
			t.Errorf("%s: not in the table", c.prim)
			continue
		}
		if !strings.HasSuffix(p.Source, c.source) {
			t.Errorf("%s: Source %q, want …%s", c.prim, p.Source, c.source)
		}
		if p.Outputs != c.outputs {
			t.Errorf("%s: Outputs %d, want %d", c.prim, p.Outputs, c.outputs)
		}
		if c.exact && len(p.Args) != len(c.args) {
			t.Errorf("%s: %d args %v, want %d", c.prim, len(p.Args), sgArgNames(p), len(c.args))
		}
		last := -1
		for _, w := range c.args {
			a, ok := p.Arg(w.name)
			if !ok {
				t.Errorf("%s: no argument %s (have %v)", c.prim, w.name, sgArgNames(p))
				continue
			}
			idx := sgArgIndex(p, w.name)
			if idx < last {
				t.Errorf("%s: argument %s out of order (have %v)", c.prim, w.name, sgArgNames(p))
			}
			last = idx
			if a.Form != w.form {
				t.Errorf("%s.%s: form %v, want %v", c.prim, w.name, a.Form, w.form)
			}
			if a.MindIR != w.mindir || a.Elem != w.elem {
				t.Errorf("%s.%s: MindIR %v/%v, want %v/%v", c.prim, w.name, a.MindIR, a.Elem, w.mindir, w.elem)
			}
			if w.typ != "" && a.Type != w.typ {
				t.Errorf("%s.%s: Type %q, want %q", c.prim, w.name, a.Type, w.typ)
			}
			if w.form == FormInput && a.MindIR != sgNONE {
				t.Errorf("%s.%s: input with a MindIR type %v", c.prim, w.name, a.MindIR)
			}
		}
	}
	// Defaults: optional attributes say so, required ones do not.
	if p, _ := LookupPrim("Conv2DFusion"); p != nil {
		if a, _ := p.Arg("kernel_size"); a.Optional() {
			t.Errorf("Conv2DFusion.kernel_size should be required (no Init default)")
		}
		if a, _ := p.Arg("group"); a.Default != "1" {
			t.Errorf("Conv2DFusion.group default %q, want 1", a.Default)
		}
	}
	if p, _ := LookupPrim("Softmax"); p != nil {
		if a, _ := p.Arg("axis"); a.Default != "-1" {
			t.Errorf("Softmax.axis default %q, want -1", a.Default)
		}
	}
	if p, _ := LookupPrim("Transpose"); p != nil && len(p.Inputs()) != 2 {
		t.Errorf("Transpose: inputs %v, want input and input_perm", p.Inputs())
	}
}

func sgArgNames(p *PrimSchema) []string {
	var out []string
	for _, a := range p.Args {
		out = append(out, a.Name)
	}
	return out
}

func sgArgIndex(p *PrimSchema, name string) int {
	for i, a := range p.Args {
		if a.Name == name {
			return i
		}
	}
	return -1
}

func TestOnnxPrim(t *testing.T) {
	for onnx, prim := range map[string]string{
		"Conv":               "Conv2DFusion",
		"Gemm":               "MatMulFusion",
		"MatMul":             "MatMulFusion",
		"Add":                "AddFusion",
		"Sub":                "SubFusion",
		"Mul":                "MulFusion",
		"Div":                "DivFusion",
		"Relu":               "Activation",
		"MaxPool":            "MaxPoolFusion",
		"AveragePool":        "AvgPoolFusion",
		"ReduceMean":         "ReduceFusion",
		"Pad":                "PadFusion",
		"Transpose":          "Transpose",
		"Reshape":            "Reshape",
		"Softmax":            "Softmax",
		"Slice":              "StridedSlice",
		"LayerNormalization": "LayerNormFusion",
		"ConvTranspose":      "Conv2dTransposeFusion",
		"Custom":             "Custom",
	} {
		if got := OnnxPrim(onnx); got != prim {
			t.Errorf("OnnxPrim(%q) = %q, want %q", onnx, got, prim)
		}
	}
	if got := OnnxPrim("NoSuchOnnxOp"); got != "" {
		t.Errorf("OnnxPrim(unknown) = %q, want empty", got)
	}
	// Every mapped primitive that MindSpore defines in the excerpt has a
	// row; the others are converter_lite-only ops (Constant, If, While, ...).
	converterOnly := map[string]bool{}
	for _, n := range []string{"Constant", "If", "While", "Einsum", "Rot90", "RandomUniformLike",
		"DequantizeLinear", "QuantizeLinear", "MVN", "Shrink", "TfIdfVectorizer", "SwinAttentionFFN",
		"SwinAttentionScore", "SwinTransformerLnQKV", "MegatronAllReduce", "MegatronMakeViewlessTensor",
		"MegatronScaledMaskedSoftmax", "MegatronLinearAllGather"} {
		converterOnly[n] = true
	}
	for onnx, prim := range onnxToPrim {
		if _, ok := LookupPrim(prim); !ok && !converterOnly[prim] {
			t.Errorf("ONNX %s -> %s: primitive has no schema row", onnx, prim)
		}
	}
}

func TestPrimTableWellFormed(t *testing.T) {
	if len(primTable) < 1000 {
		t.Fatalf("only %d primitives", len(primTable))
	}
	for i := range primTable {
		p := &primTable[i]
		if i > 0 && primTable[i-1].Name >= p.Name {
			t.Errorf("table not sorted / not unique at %s, %s", primTable[i-1].Name, p.Name)
		}
		if p.Source == "" || strings.HasPrefix(p.Source, "/") || strings.Contains(p.Source, "..") {
			t.Errorf("%s: Source %q is not a path relative to mindspore-src", p.Name, p.Source)
		}
		if p.Outputs == 0 || p.Outputs < -1 {
			t.Errorf("%s: Outputs %d", p.Name, p.Outputs)
		}
		// A name may be both an input and an attribute (upstream InTopK:
		// InitIOName({"x1", "x2", "k"}) and set_k); MindIR keeps inputs
		// positional and attributes named, so only a repeat within one form
		// is an error.
		seen := map[ArgForm]map[string]bool{FormInput: {}, FormAttr: {}}
		for _, a := range p.Args {
			if seen[a.Form][a.Name] {
				t.Errorf("%s: argument %s twice", p.Name, a.Name)
			}
			seen[a.Form][a.Name] = true
			switch a.Form {
			case FormInput:
				if a.MindIR != sgNONE || a.Elem != sgNONE {
					t.Errorf("%s.%s: input with a MindIR type", p.Name, a.Name)
				}
			case FormAttr:
				if a.MindIR == sgNONE {
					t.Errorf("%s.%s: attribute without a MindIR type", p.Name, a.Name)
				}
				seq := a.MindIR == sgTUPLE || a.MindIR == pb.AttributeProto_LIST
				if !seq && a.Elem != sgNONE {
					t.Errorf("%s.%s: element type on a scalar attribute", p.Name, a.Name)
				}
			}
			if a.Type == "" {
				t.Errorf("%s.%s: empty Type", p.Name, a.Name)
			}
		}
	}
	if got, _ := LookupPrim("EmbeddingApplyAdaGrad"); got == nil {
		t.Errorf("EmbeddingApplyAdaGrad (an optimizer, not a gradient op) is missing")
	}
	for _, grad := range []string{"ReluGrad", "AbsGrad", "BiasAddGrad"} {
		if _, ok := LookupPrim(grad); ok {
			t.Errorf("gradient op %s should be skipped", grad)
		}
	}
}

// attrCompatible says whether an attribute as found in a file MindSpore
// wrote fits the schema argument.
func sgAttrCompatible(a PrimArg, got *pb.AttributeProto) bool {
	gt := got.GetType()
	if gt == a.MindIR {
		if (gt == sgTUPLE || gt == pb.AttributeProto_LIST) && a.Elem != sgNONE {
			for _, v := range got.GetValues() {
				if v.GetType() != a.Elem {
					return false
				}
			}
		}
		return true
	}
	// "enum:X|str" and str_to_enum args: the string or the enum value.
	if strings.Contains(a.Type, "|str") {
		return gt == sgSTRING || gt == sgINT64
	}
	return false
}

// modelPrims lists (op_type, attributes) of every primitive of a model:
// ModelProto.primitives (ir 0.1.1) and nodes with inline attributes (0.1.0).
func sgModelPrims(mp *pb.ModelProto) map[string][][]*pb.AttributeProto {
	out := map[string][][]*pb.AttributeProto{}
	for _, p := range mp.GetPrimitives() {
		out[p.GetOpType()] = append(out[p.GetOpType()], p.GetAttribute())
	}
	graphs := append([]*pb.GraphProto{mp.GetGraph()}, mp.GetFunctions()...)
	for _, g := range graphs {
		for _, n := range g.GetNode() {
			op := n.GetOpType()
			if strings.Contains(op, ":") || len(n.GetAttribute()) == 0 {
				continue
			}
			out[op] = append(out[op], n.GetAttribute())
		}
	}
	return out
}

// TestPrimSchemaMatchesMindSporeFiles checks the table against files that
// MindSpore itself wrote: every attribute of a primitive in the table must
// have the schema's MindIR type. The per-instance bookkeeping attributes of
// Python primitives (input_names, output_names, ...) are not in the schema.
func TestPrimSchemaMatchesMindSporeFiles(t *testing.T) {
	dir := sharedDir(t, "corpus/mindir")
	files, _ := filepath.Glob(filepath.Join(dir, "*.mindir"))
	more, _ := filepath.Glob(filepath.Join(dir, "mindspore-tests", "*.mindir"))
	files = append(files, more...)
	sort.Strings(files)
	checked := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		mp := &pb.ModelProto{}
		if err := proto.Unmarshal(data, mp); err != nil {
			continue // encrypted test files
		}
		for op, insts := range sgModelPrims(mp) {
			p, ok := LookupPrim(op)
			if !ok {
				continue
			}
			for _, attrs := range insts {
				for _, at := range attrs {
					a, ok := p.Arg(at.GetName())
					if !ok || a.Form != FormAttr {
						continue
					}
					checked[op+"."+a.Name] = true
					if !sgAttrCompatible(a, at) {
						var elems []string
						for _, v := range at.GetValues() {
							elems = append(elems, v.GetType().String())
						}
						t.Errorf("%s: %s.%s is %v%v in the file, schema says %v/%v (%s)",
							filepath.Base(f), op, a.Name, at.GetType(), elems, a.MindIR, a.Elem, a.Type)
					}
				}
			}
		}
	}
	// The mnist attributes named in the task must all have been seen.
	for _, k := range []string{
		"Conv2D.kernel_size", "Conv2D.mode", "Conv2D.out_channel", "Conv2D.pad", "Conv2D.pad_mode",
		"Conv2D.format", "Conv2D.pad_list", "Conv2D.groups", "MaxPool.pad_mode", "MaxPool.kernel_size",
		"MaxPool.format", "MaxPool.strides", "MatMul.transpose_a", "MatMul.transpose_x1", "BiasAdd.format",
		"BiasAdd.data_format",
	} {
		if !checked[k] {
			t.Errorf("%s: not found in the MindSpore-written files", k)
		}
	}
}

// TestPrimsGenUpToDate regenerates the table from ../shared and compares it
// with the committed prims_gen.go byte for byte.
func TestPrimsGenUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("regenerating the schema table runs the go tool; skipped with -short")
	}
	src := sharedDir(t, "reference/mindspore-src")
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		if gobin, err = exec.LookPath("go"); err != nil {
			t.Skip("go tool not found: cannot run schemagen")
		}
	}
	out := filepath.Join(t.TempDir(), "prims_gen.go")
	cmd := exec.Command(gobin, "run", "./schemagen", "-src", src, "-out", out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("schemagen: %v\n%s", err, msg)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile("prims_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, committed) {
		gl, cl := strings.Split(string(got), "\n"), strings.Split(string(committed), "\n")
		for i := 0; i < len(gl) && i < len(cl); i++ {
			if gl[i] != cl[i] {
				t.Fatalf("prims_gen.go is stale (run go generate in internal/mindir); first difference at line %d:\n  generated: %s\n  committed: %s", i+1, gl[i], cl[i])
			}
		}
		t.Fatalf("prims_gen.go is stale (run go generate in internal/mindir): %d lines generated, %d committed", len(gl), len(cl))
	}
}
