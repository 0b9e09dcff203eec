package ascend

import (
	"gkconv/internal/kerneltest"
	"strings"
	"testing"

	"gkconv/internal/ir"
)

// cubeCase builds a fused body around one MatMul.
type cubeCase struct {
	name  string
	build func(g *ir.Graph)
}

func f32In(g *ir.Graph, name string, shape ...int64) *ir.Value {
	v := &ir.Value{Name: name, DType: ir.Float32, Shape: shape}
	g.Inputs = append(g.Inputs, v)
	return v
}

func f32Const(g *ir.Graph, name string, vals []float32, shape ...int64) *ir.Value {
	return g.AddConst(name, ir.Float32Tensor(shape, vals...))
}

func i64Const(g *ir.Graph, name string, vals ...int64) *ir.Value {
	return g.AddConst(name, ir.Int64Tensor([]int64{int64(len(vals))}, vals...))
}

func op(g *ir.Graph, name, o string, in ...*ir.Value) *ir.Value {
	return g.AddNode(name, o, in, name+"_out").Outputs[0]
}

func matmul(g *ir.Graph, a, b *ir.Value, ta, tb bool) *ir.Value {
	n := g.AddNode("mm", "MatMul", []*ir.Value{a, b}, "mm_out")
	if ta {
		n.Attrs["transpose_a"] = ir.IntAttr(1)
	}
	if tb {
		n.Attrs["transpose_b"] = ir.IntAttr(1)
	}
	return n.Outputs[0]
}

var cubeCases = []cubeCase{
	{"multi_tile_bias_relu", func(g *ir.Graph) {
		// 3x(300x70 @ 70x1000): several base tiles per core and tails in
		// M, N and K; bias through SetBias, a second output reusing it.
		a, b, bias, r := f32In(g, "a", 3, 300, 70), f32In(g, "b", 70, 1000), f32In(g, "bias", 1000), f32In(g, "r", 3, 300, 1000)
		y := op(g, "add", "Add", matmul(g, a, b, false, false), bias)
		g.Outputs = append(g.Outputs, op(g, "relu", "ReLU", y), op(g, "mul", "Mul", r, y))
	}},
	{"transposed_batch_broadcast", func(g *ir.Graph) {
		// A^T of [2,1,24,40], B^T of [5,33,24]: out [2,5,40,33]; a constant
		// vector along N (filled), a row scalar input, the product itself
		// as an output.
		a, b, s := f32In(g, "a", 2, 1, 24, 40), f32In(g, "b", 5, 33, 24), f32In(g, "s", 2, 5, 40, 1)
		cv := make([]float32, 33)
		for i := range cv {
			cv[i] = float32(i)*0.25 - 3
		}
		p := matmul(g, a, b, true, true)
		x := op(g, "half", "Mul", p, f32Const(g, "h", []float32{0.5}))
		x = op(g, "addc", "Add", x, f32Const(g, "cv", cv, 33))
		x = op(g, "sub", "Sub", s, x)
		g.Outputs = append(g.Outputs, op(g, "tanh", "Tanh", x), p)
	}},
	{"vector_a_reshaped", func(g *ir.Graph) {
		// [2,12] -> [24] @ [4,24,17]: out [4,17].
		a, b := f32In(g, "a", 2, 12), f32In(g, "b", 4, 24, 17)
		av := op(g, "flat", "Reshape", a, i64Const(g, "sh", 24))
		g.Outputs = append(g.Outputs, op(g, "sq", "Square", matmul(g, av, b, false, false)))
	}},
	{"vector_b", func(g *ir.Graph) {
		// [6,10,24] @ [24]: out [6,10] (N = 1), plus a residual.
		a, b, r := f32In(g, "a", 6, 10, 24), f32In(g, "b", 24), f32In(g, "r", 6, 10)
		g.Outputs = append(g.Outputs, op(g, "add", "Add", matmul(g, a, b, false, false), r))
	}},
	{"reshape_around", func(g *ir.Graph) {
		// bert's attention output projection: reshape, Gemm (B^T), bias,
		// reshape back.
		a, w, bias := f32In(g, "a", 32, 2, 64), f32In(g, "w", 128, 128), f32In(g, "bias", 128)
		x := op(g, "r1", "Reshape", a, i64Const(g, "s1", 32, 128))
		x = op(g, "add", "Add", matmul(g, x, w, false, true), bias)
		g.Outputs = append(g.Outputs, op(g, "r2", "Reshape", x, i64Const(g, "s2", 32, 1, 128)))
	}},
}

func gkNode(t *testing.T, name string, build func(g *ir.Graph)) *ir.Node {
	t.Helper()
	body := ir.NewGraph(name)
	build(body)
	if err := ir.InferShapes(body); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return &ir.Node{Name: name, Op: ir.OpGraphKernel, Inputs: body.Inputs, Outputs: body.Outputs, Attrs: ir.Attrs{}, Body: body}
}

// TestCubeKernels runs MatMul bodies the corpus lacks (tiles and tails,
// transposes, batch broadcasting, 1-D operands, element-wise filled
// operands, the product as an output) on the emulation against the
// runtime's op library.
func TestCubeKernels(t *testing.T) {
	needCXX(t)
	for i, c := range cubeCases {
		t.Run(c.name, func(t *testing.T) {
			n := gkNode(t, c.name, c.build)
			if err := NewBuilder(Options{}).BuildKernels([]*ir.Node{n}); err != nil {
				t.Fatal(err)
			}
			if e := n.Attrs.String(ir.GKKernelError, ""); e != "" {
				t.Fatalf("no source: %s", e)
			}
			if s := n.Attrs.String(ir.GKStrategy, ""); s != "cube" {
				t.Fatalf("strategy %q, want cube", s)
			}
			src := string(n.Attrs[ir.GKKernelAscendC].B)
			for _, want := range []string{"lib/matmul_intf.h", "REGIST_MATMUL_OBJ", "mm.SetTensorA(", "GetTensorC<true>", "mm.End();"} {
				if !strings.Contains(src, want) {
					t.Errorf("source lacks %q", want)
				}
			}
			in := kerneltest.BodyInputs(n.Body, int64(100+i))
			got, err := (&Emulator{}).Run(n, in)
			if err != nil {
				t.Fatal(err)
			}
			want := kerneltest.RefRun(t, n.Body, in)
			// The cube sums each dot product in its own block order and the
			// op library in OpenBLAS's (whose kernel depends on the CPU), so
			// a cancelling sum can differ by a few ulps of its terms: 1e-5 was
			// exceeded (1.01e-5) on an AVX-512 machine.
			for k := range want {
				kerneltest.CompareTensors(t, c.name, got[k], want[k], 3e-5)
			}
		})
	}
}

// TestCubeBias checks that an Add of a vector along N becomes SetBias.
func TestCubeBias(t *testing.T) {
	n := gkNode(t, "bias", cubeCases[0].build)
	src, _, err := Generate("k", n.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(src, "mm.SetBias(gin2[nb0]);") || !strings.Contains(src, "tiling.isBias = 1;") {
		t.Errorf("bias Add not mapped to SetBias:\n%s", src)
	}
}

// TestCubeEmulationLimits: the emulation rejects tilings the Cube cannot
// run, so a generator bug shows as a failure, not as a silent result.
func TestCubeEmulationLimits(t *testing.T) {
	needCXX(t)
	for _, c := range []struct{ from, to, want string }{
		{"tiling.baseK = 64;", "tiling.baseK = 60;", "multiples of 16 and baseK of 32 bytes"},
		{"tiling.baseK = 64;", "tiling.baseK = 256;", "L0A capacity exceeded"},
		{"tiling.dbL0C = 1;", "tiling.dbL0C = 4;", "L0C capacity exceeded"},
		{"mm.SetTail(tm, tn);", "mm.SetTail(tm + 1, tn);", "out of range"},
	} {
		n := gkNode(t, "limits", cubeCases[0].build)
		if err := NewBuilder(Options{}).BuildKernels([]*ir.Node{n}); err != nil {
			t.Fatal(err)
		}
		src := string(n.Attrs[ir.GKKernelAscendC].B)
		if !strings.Contains(src, c.from) {
			t.Fatalf("source lacks %q", c.from)
		}
		n.Attrs[ir.GKKernelAscendC] = ir.BytesAttr([]byte(strings.Replace(src, c.from, c.to, 1)))
		_, err := (&Emulator{}).Run(n, kerneltest.BodyInputs(n.Body, 1))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s -> %s: error %v, want %q", c.from, c.to, err, c.want)
		}
	}
}

// TestCubeRejects: bodies the cube strategy cannot write get an error that
// names the node, and no source.
func TestCubeRejects(t *testing.T) {
	for _, c := range []struct {
		name, want string
		build      func(g *ir.Graph)
	}{
		{"computed_operand", "node mm: MatMul operand exp_out is computed", func(g *ir.Graph) {
			a, b := f32In(g, "a", 4, 8), f32In(g, "b", 8, 16)
			g.Outputs = append(g.Outputs, matmul(g, op(g, "exp", "Exp", a), b, false, false))
		}},
		{"reduce_after", "node sum: ReduceSum result [1 1] after the MatMul", func(g *ir.Graph) {
			a, b := f32In(g, "a", 4, 8), f32In(g, "b", 8, 16)
			g.Outputs = append(g.Outputs, op(g, "sum", "ReduceSum", matmul(g, a, b, false, false)))
		}},
	} {
		n := gkNode(t, c.name, c.build)
		if err := NewBuilder(Options{}).BuildKernels([]*ir.Node{n}); err != nil {
			t.Fatal(err)
		}
		if e := n.Attrs.String(ir.GKKernelError, ""); !strings.Contains(e, c.want) || n.Attrs.Has(ir.GKKernelAscendC) {
			t.Errorf("%s: kernel_error %q, want %q and no source", c.name, e, c.want)
		}
	}
}
