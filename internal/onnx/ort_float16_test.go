package onnx

import (
	"bytes"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gkconv/internal/ir"
	ob "gkconv/internal/onnx/onnxbuild"
)

// float16Chain: x (float32) -> Cast f16 -> Conv -> Add -> Identity -> Relu ->
// Identity -> Identity -> Sigmoid -> Cast f32 (graph output), plus a float16
// graph output after Clip (a float16 kernel) and a chain of the model's own
// Casts.
func float16Chain() *ob.Model {
	m := ob.New("f16", 17).Input("x", ob.Float, 1, 2, 4, 4).
		Output("y", ob.Float, 1, 2, 4, 4).Output("h", ob.Float16, 1, 2, 4, 4).Output("rt", ob.Float, 1, 2, 4, 4)
	half := func(name string, dims []int64, n int) *ob.Model {
		return m.Init(ob.Raw(name, ob.Float16, dims, bytes.Repeat([]byte{0x00, 0x3c}, n))) // 1.0
	}
	half("w", []int64{2, 2, 1, 1}, 4)
	half("b", []int64{1, 2, 1, 1}, 2)
	half("lo", nil, 1)
	m.Node("c16", "Cast", strs("x"), strs("x16"), ob.Int("to", int64(ob.Float16)))
	m.Node("conv", "Conv", strs("x16", "w"), strs("cv"))
	m.Node("add", "Add", strs("cv", "b"), strs("a"))
	m.Node("id0", "Identity", strs("a"), strs("ia"))
	m.Node("relu", "Relu", strs("ia"), strs("r"))
	m.Node("id1", "Identity", strs("r"), strs("i1"))
	m.Node("id2", "Identity", strs("i1"), strs("i2"))
	m.Node("sig", "Sigmoid", strs("i2"), strs("s"))
	m.Node("out", "Cast", strs("s"), strs("y"), ob.Int("to", int64(ob.Float)))
	m.Node("clip", "Clip", strs("r", "lo"), strs("h"))
	m.Node("up", "Cast", strs("a"), strs("a32"), ob.Int("to", int64(ob.Float)))
	m.Node("down", "Cast", strs("a32"), strs("a16"), ob.Int("to", int64(ob.Float16)))
	m.Node("back", "Cast", strs("a16"), strs("rt"), ob.Int("to", int64(ob.Float)))
	return m
}

func producers(g *ir.Graph) map[*ir.Value]*ir.Node {
	p := map[*ir.Value]*ir.Node{}
	for _, n := range g.Nodes {
		for _, o := range n.Outputs {
			p[o] = n
		}
	}
	return p
}

func TestORTFloat16Rewrite(t *testing.T) {
	model, err := parseModel(t, float16Chain(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := model.Graph
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	prod := producers(g)
	byOp := map[string][]*ir.Node{}
	for _, n := range g.Nodes {
		byOp[n.Op] = append(byOp[n.Op], n)
	}
	// Conv, Add, ReLU and Sigmoid have no float16 kernel in onnxruntime: they
	// compute in float32, and the Conv reads x itself (the model's input Cast
	// to float16 is removed with the Cast onnxruntime puts after it).
	for _, op := range []string{"Conv2D", "Add", "ReLU", "Sigmoid"} {
		for _, n := range byOp[op] {
			if n.Outputs[0].DType != ir.Float32 {
				t.Errorf("%s %s computes in %s, want float32", op, n.Name, n.Outputs[0].DType)
			}
		}
	}
	if conv := byOp["Conv2D"]; len(conv) != 1 || conv[0].Inputs[0] != g.Inputs[0] {
		t.Errorf("the Conv does not read the float32 input directly: %v", conv)
	}
	// The Identity chain between ReLU and Sigmoid keeps its float16 value in
	// onnxruntime (each Identity has a float16 kernel and a float16
	// neighbour): one rounding Cast before Sigmoid.
	sig := byOp["Sigmoid"][0]
	c := prod[sig.Inputs[0]]
	if c == nil || c.Op != "Cast" || prod[c.Inputs[0]] == nil || prod[c.Inputs[0]].Op != "Cast" ||
		prod[c.Inputs[0]].Outputs[0].DType != ir.Float16 {
		t.Errorf("Sigmoid's input is not the float16-rounded ReLU output: %v", c)
	}
	// Clip has a float16 kernel: it computes in float16 on the rounded ReLU.
	if clip := byOp["Clip"]; len(clip) != 1 || clip[0].Outputs[0].DType != ir.Float16 {
		t.Errorf("Clip: %v", clip)
	}
	// The graph output y: Sigmoid's float32 value, never rounded to float16.
	if p := prod[g.Outputs[0]]; p == nil || p.Op != "Cast" || prod[p.Inputs[0]] != sig {
		t.Errorf("output y is not a Cast of the Sigmoid's float32 result: %v", p)
	}
	// The model's float16 -> float32 -> float16 -> float32 chain on the Add:
	// onnxruntime removes the first pair (low -> high -> low loses nothing),
	// then the Cast it put after the float32 Add, so rt is the Add's float32
	// value, never rounded.
	rt := prod[g.Outputs[2]]
	if rt == nil || rt.Op != "Cast" || prod[rt.Inputs[0]] != byOp["Add"][0] {
		t.Errorf("rt is not a Cast of the float32 Add: %v <- %v", rt, prod[rt.Inputs[0]])
	}
	if !strings.Contains(g.Meta["onnx.float16_as_onnxruntime"], "float16 node(s) computed in float32") {
		t.Errorf("meta: %q", g.Meta["onnx.float16_as_onnxruntime"])
	}

	// KeepFloat16: the graph as it reads (every op in float16).
	keep, err := parseModel(t, float16Chain(), Options{KeepFloat16: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range keep.Graph.Nodes {
		if n.Op == "Conv2D" && n.Outputs[0].DType != ir.Float16 {
			t.Errorf("KeepFloat16: Conv computes in %s", n.Outputs[0].DType)
		}
	}
	if _, ok := keep.Graph.Meta["onnx.float16_as_onnxruntime"]; ok {
		t.Error("KeepFloat16 model says it was rewritten")
	}
}

// A float32 model without Casts is built once and not rewritten.
func TestORTFloat16RewriteLeavesFloat32Models(t *testing.T) {
	m := ob.New("f32", 17).Input("x", ob.Float, 2, 3).Output("y", ob.Float, 2, 3)
	m.Node("relu", "Relu", strs("x"), strs("y"))
	g := mustGraph(t, m)
	if _, ok := g.Meta["onnx.float16_as_onnxruntime"]; ok {
		t.Error("a float32 model was rewritten")
	}
}

// The table of onnxruntime's float16 kernels is what the pinned onnxruntime
// says (scripts/onnxruntime/fp16_kernels.py).
func TestORTFloat16KernelTable(t *testing.T) {
	root, _ := filepath.Abs("../..")
	py := filepath.Join(root, "build", "realmodels-venv", "bin", "python")
	if _, err := os.Stat(py); err != nil {
		t.Skipf("no onnxruntime venv at %s (make realmodels sets it up)", py)
	}
	out, err := exec.Command(py, filepath.Join(root, "scripts", "onnxruntime", "fp16_kernels.py")).Output()
	if err != nil {
		t.Skipf("fp16_kernels.py: %v", err)
	}
	want, err := format.Source(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("ort_fp16_kernels.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("ort_fp16_kernels.go differs from the installed onnxruntime's kernels: regenerate with\n  %s scripts/onnxruntime/fp16_kernels.py | gofmt > internal/onnx/ort_fp16_kernels.go", py)
	}
}
