package kernels

import (
	"encoding/json"
	"fmt"
	"gkconv/internal/repotest"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"gkconv/internal/ir"
)

func akgInfoDir(t *testing.T) string { return repotest.SharedDir(t, "corpus/akg-info") }

// metaKeys are top-level keys that depend on the MindSpore version or
// feature flags rather than on the kernel (the optional keys of
// mindspore/ccsrc/kernel/graph_kernel/graph_kernel_json_generator.cc).
var metaKeys = map[string]bool{
	"version": true, "target_info": true, "compute_capability": true, "node_name": true, "op_full_name": true,
	"parallel_fusion": true, "buffer_stitch": true, "id": true,
}

// TestInfoGolden reads every AKG kernel-info file of the corpus into a
// body graph and writes it back with InfoJSONFor: the result must have the
// structure of AKG's file (top-level keys, op order and keys, input_desc
// nesting, tensor keys, constant values, attr names, tensor linking).
func TestInfoGolden(t *testing.T) {
	root := akgInfoDir(t)
	var files []string
	for _, proc := range []string{"aicore", "cuda", "cpu"} {
		m, _ := filepath.Glob(filepath.Join(root, proc, "*"))
		files = append(files, m...)
	}
	if len(files) < 40 {
		t.Fatalf("found %d kernel-info files, want the 42 of the corpus", len(files))
	}
	for _, f := range files {
		name := filepath.Base(filepath.Dir(f)) + "/" + filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			g, meta, err := ReadInfo(data)
			if err != nil {
				t.Fatal(err)
			}
			n := &ir.Node{Name: "k", Op: ir.OpGraphKernel, Body: g, Attrs: ir.Attrs{ir.GKKernelName: ir.StringAttr(meta.Op)}}
			for _, v := range g.Inputs {
				n.Inputs = append(n.Inputs, &ir.Value{Name: v.Name, DType: v.DType, Shape: v.Shape})
			}
			for _, v := range g.Outputs {
				n.Outputs = append(n.Outputs, &ir.Value{Name: v.Name, DType: v.DType, Shape: v.Shape, Producer: n})
			}
			tgt := InfoTarget{Process: meta.Process}
			if a, ok := meta.TargetInfo["arch"].(string); ok {
				tgt.Soc, tgt.Arch = a, a
			}
			if s, ok := meta.TargetInfo["system"].(string); ok {
				tgt.System = s
			}
			if s, ok := meta.TargetInfo["feature"].(string); ok {
				tgt.Feature = s
			}
			out, err := InfoJSONFor(n, tgt)
			if err != nil {
				t.Fatal(err)
			}
			compareInfo(t, data, out)
			// Reading what was written gives the same graph again.
			g2, _, err := ReadInfo(out)
			if err != nil {
				t.Fatalf("re-read: %v", err)
			}
			if len(g2.Nodes) != len(g.Nodes) || len(g2.Inputs) != len(g.Inputs) || len(g2.Outputs) != len(g.Outputs) {
				t.Errorf("re-read graph differs: %d/%d/%d vs %d/%d/%d nodes/inputs/outputs",
					len(g2.Nodes), len(g2.Inputs), len(g2.Outputs), len(g.Nodes), len(g.Inputs), len(g.Outputs))
			}
		})
	}
}

type jTensor map[string]any

type jOp struct {
	Attr       any         `json:"attr"`
	InputDesc  [][]jTensor `json:"input_desc"`
	Name       string      `json:"name"`
	OutputDesc []jTensor   `json:"output_desc"`
}

type jInfo struct {
	InputDesc  [][]jTensor `json:"input_desc"`
	Op         string      `json:"op"`
	OpDesc     []jOp       `json:"op_desc"`
	OutputDesc []jTensor   `json:"output_desc"`
	Process    string      `json:"process"`
}

func compareInfo(t *testing.T, orig, got []byte) {
	t.Helper()
	var ko, kg map[string]json.RawMessage
	if err := json.Unmarshal(orig, &ko); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got, &kg); err != nil {
		t.Fatalf("written JSON does not parse: %v", err)
	}
	if a, b := keySet(ko, metaKeys), keySet(kg, metaKeys); !reflect.DeepEqual(a, b) {
		t.Errorf("top-level keys %v, AKG has %v", b, a)
	}
	var o, g jInfo
	if err := json.Unmarshal(orig, &o); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	if o.Op != g.Op || o.Process != g.Process {
		t.Errorf("op/process %q/%q, AKG has %q/%q", g.Op, g.Process, o.Op, o.Process)
	}
	checkList := func(what string, a, b [][]jTensor) {
		if len(a) != len(b) {
			t.Errorf("%s: %d entries, AKG has %d", what, len(b), len(a))
			return
		}
		for i := range a {
			if len(a[i]) != len(b[i]) {
				t.Errorf("%s[%d]: %d tensors, AKG has %d", what, i, len(b[i]), len(a[i]))
				continue
			}
			for j := range a[i] {
				checkTensor(t, fmt.Sprintf("%s[%d][%d]", what, i, j), a[i][j], b[i][j])
			}
		}
	}
	checkList("input_desc", o.InputDesc, g.InputDesc)
	checkList("output_desc", [][]jTensor{o.OutputDesc}, [][]jTensor{g.OutputDesc})
	if len(o.OpDesc) != len(g.OpDesc) {
		t.Fatalf("%d ops, AKG has %d", len(g.OpDesc), len(o.OpDesc))
	}
	// Tensor linking: every reference resolves to the same graph input,
	// op output or constant in both files.
	ro, rg := linker(o), linker(g)
	for i := range o.OpDesc {
		a, b := o.OpDesc[i], g.OpDesc[i]
		what := fmt.Sprintf("op_desc[%d] %s", i, a.Name)
		if a.Name != b.Name {
			t.Errorf("%s: written as %s", what, b.Name)
		}
		if an, bn := attrNames(a.Attr), attrNames(b.Attr); !reflect.DeepEqual(an, bn) {
			t.Errorf("%s: attrs %v, AKG has %v", what, bn, an)
		}
		checkList(what+" input_desc", a.InputDesc, b.InputDesc)
		checkList(what+" output_desc", [][]jTensor{a.OutputDesc}, [][]jTensor{b.OutputDesc})
		for x := range a.InputDesc {
			for y := range a.InputDesc[x] {
				if x < len(b.InputDesc) && y < len(b.InputDesc[x]) {
					if p, q := ro(a.InputDesc[x][y]), rg(b.InputDesc[x][y]); p != q {
						t.Errorf("%s input %d.%d links to %s, AKG to %s", what, x, y, q, p)
					}
				}
			}
		}
	}
	for i := range o.OutputDesc {
		if i < len(g.OutputDesc) {
			if p, q := ro(o.OutputDesc[i]), rg(g.OutputDesc[i]); p != q {
				t.Errorf("output %d links to %s, AKG to %s", i, q, p)
			}
		}
	}
}

func keySet(m map[string]json.RawMessage, skip map[string]bool) []string {
	var ks []string
	for k := range m {
		if !skip[k] {
			ks = append(ks, k)
		}
	}
	sort.Strings(ks)
	return ks
}

// checkTensor compares a tensor description: keys (format may be added
// where AKG's file omits it), dtype, shape and constant value.
func checkTensor(t *testing.T, what string, a, b jTensor) {
	t.Helper()
	var ka, kb []string
	for k := range a {
		ka = append(ka, k)
	}
	for k := range b {
		if _, ok := a[k]; ok || k != "format" {
			kb = append(kb, k)
		}
	}
	sort.Strings(ka)
	sort.Strings(kb)
	if !reflect.DeepEqual(ka, kb) {
		t.Errorf("%s: keys %v, AKG has %v", what, kb, ka)
	}
	for _, k := range []string{"data_type", "shape", "value"} {
		if k == "value" && isEmptyShape(a["shape"]) {
			continue // AKG dumps uninitialised memory for zero-element constants
		}
		if k == "value" && (a["data_type"] == "float16" || a["data_type"] == "bfloat16") {
			// The constant holds the value rounded to its type.
			x, ok1 := a[k].(float64)
			y, ok2 := b[k].(float64)
			if ok1 && ok2 && math.Abs(x-y) <= 4e-3*math.Abs(x) {
				continue
			}
		}
		if !reflect.DeepEqual(a[k], b[k]) {
			t.Errorf("%s: %s %v, AKG has %v", what, k, b[k], a[k])
		}
	}
}

func attrNames(a any) []string {
	l, _ := a.([]any)
	var names []string
	for _, e := range l {
		if m, ok := e.(map[string]any); ok {
			names = append(names, fmt.Sprint(m["name"]))
		}
	}
	sort.Strings(names)
	return names
}

// linker returns a function naming what a tensor reference resolves to.
func linker(k jInfo) func(jTensor) string {
	def := map[string]string{}
	idx := 0
	for _, l := range k.InputDesc {
		for _, tn := range l {
			def[fmt.Sprint(tn["tensor_name"])] = fmt.Sprintf("input %d", idx)
			idx++
		}
	}
	for i, op := range k.OpDesc {
		for j, tn := range op.OutputDesc {
			def[fmt.Sprint(tn["tensor_name"])] = fmt.Sprintf("op %d output %d", i, j)
		}
	}
	return func(tn jTensor) string {
		if v, ok := tn["value"]; ok {
			if isEmptyShape(tn["shape"]) {
				return "constant (empty)"
			}
			if f, ok := v.(float64); ok && (tn["data_type"] == "float16" || tn["data_type"] == "bfloat16") {
				return fmt.Sprintf("constant %.2g", f)
			}
			return "constant " + strings.TrimSpace(fmt.Sprint(v))
		}
		if d, ok := def[fmt.Sprint(tn["tensor_name"])]; ok {
			return d
		}
		return "undefined " + fmt.Sprint(tn["tensor_name"])
	}
}

func isEmptyShape(s any) bool {
	l, _ := s.([]any)
	for _, d := range l {
		if f, ok := d.(float64); ok && f == 0 {
			return true
		}
	}
	return false
}
