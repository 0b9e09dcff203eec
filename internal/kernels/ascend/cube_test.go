package ascend

import (
	"gkconv/internal/kerneltest"
	"gkconv/internal/testkit"
	"strings"
	"testing"

	"gkconv/internal/ir"
)

// cubeCase builds a fused body around one MatMul.
type cubeCase struct {
	name  string
	build func(g *testkit.Graph)
}

func f32Const(g *testkit.Graph, name string, vals []float32, shape ...int64) *ir.Value {
	return g.Const(name, ir.Float32Tensor(shape, vals...))
}

func i64Const(g *testkit.Graph, name string, vals ...int64) *ir.Value {
	return g.Const(name, ir.Int64Tensor([]int64{int64(len(vals))}, vals...))
}

func matmul(g *testkit.Graph, a, b *ir.Value, ta, tb bool) *ir.Value {
	attrs := ir.Attrs{}
	if ta {
		attrs["transpose_a"] = ir.IntAttr(1)
	}
	if tb {
		attrs["transpose_b"] = ir.IntAttr(1)
	}
	return g.Node("mm", "MatMul", attrs, a, b)
}

var cubeCases = []cubeCase{
	{"multi_tile_bias_relu", func(g *testkit.Graph) {
		// 3x(300x70 @ 70x1000): several base tiles per core and tails in
		// M, N and K; bias through SetBias, a second output reusing it.
		a, b, bias, r := g.Input("a", 3, 300, 70), g.Input("b", 70, 1000), g.Input("bias", 1000), g.Input("r", 3, 300, 1000)
		y := g.Node("add", "Add", nil, matmul(g, a, b, false, false), bias)
		g.G.Outputs = append(g.G.Outputs, g.Node("relu", "ReLU", nil, y), g.Node("mul", "Mul", nil, r, y))
	}},
	{"transposed_batch_broadcast", func(g *testkit.Graph) {
		// A^T of [2,1,24,40], B^T of [5,33,24]: out [2,5,40,33]; a constant
		// vector along N (filled), a row scalar input, the product itself
		// as an output.
		a, b, s := g.Input("a", 2, 1, 24, 40), g.Input("b", 5, 33, 24), g.Input("s", 2, 5, 40, 1)
		cv := make([]float32, 33)
		for i := range cv {
			cv[i] = float32(i)*0.25 - 3
		}
		p := matmul(g, a, b, true, true)
		x := g.Node("half", "Mul", nil, p, f32Const(g, "h", []float32{0.5}))
		x = g.Node("addc", "Add", nil, x, f32Const(g, "cv", cv, 33))
		x = g.Node("sub", "Sub", nil, s, x)
		g.G.Outputs = append(g.G.Outputs, g.Node("tanh", "Tanh", nil, x), p)
	}},
	{"vector_a_reshaped", func(g *testkit.Graph) {
		// [2,12] -> [24] @ [4,24,17]: out [4,17].
		a, b := g.Input("a", 2, 12), g.Input("b", 4, 24, 17)
		av := g.Node("flat", "Reshape", nil, a, i64Const(g, "sh", 24))
		g.G.Outputs = append(g.G.Outputs, g.Node("sq", "Square", nil, matmul(g, av, b, false, false)))
	}},
	{"vector_b", func(g *testkit.Graph) {
		// [6,10,24] @ [24]: out [6,10] (N = 1), plus a residual.
		a, b, r := g.Input("a", 6, 10, 24), g.Input("b", 24), g.Input("r", 6, 10)
		g.G.Outputs = append(g.G.Outputs, g.Node("add", "Add", nil, matmul(g, a, b, false, false), r))
	}},
	{"reshape_around", func(g *testkit.Graph) {
		// bert's attention output projection: reshape, Gemm (B^T), bias,
		// reshape back.
		a, w, bias := g.Input("a", 32, 2, 64), g.Input("w", 128, 128), g.Input("bias", 128)
		x := g.Node("r1", "Reshape", nil, a, i64Const(g, "s1", 32, 128))
		x = g.Node("add", "Add", nil, matmul(g, x, w, false, true), bias)
		g.G.Outputs = append(g.G.Outputs, g.Node("r2", "Reshape", nil, x, i64Const(g, "s2", 32, 1, 128)))
	}},
}

func gkNode(t *testing.T, name string, build func(g *testkit.Graph)) *ir.Node {
	t.Helper()
	g := testkit.New(t, name)
	build(g)
	return g.GraphKernel(name, g.G.Outputs...)
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
		build      func(g *testkit.Graph)
	}{
		{"computed_operand", "node mm: MatMul operand exp_out0 is computed", func(g *testkit.Graph) {
			a, b := g.Input("a", 4, 8), g.Input("b", 8, 16)
			g.G.Outputs = append(g.G.Outputs, matmul(g, g.Node("exp", "Exp", nil, a), b, false, false))
		}},
		{"reduce_after", "node sum: ReduceSum result [1 1] after the MatMul", func(g *testkit.Graph) {
			a, b := g.Input("a", 4, 8), g.Input("b", 8, 16)
			g.G.Outputs = append(g.G.Outputs, g.Node("sum", "ReduceSum", nil, matmul(g, a, b, false, false)))
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

// TestDeviceMathRefused: an op whose libm call the device math lacks
// (kernels.libmUnary without Device) is refused by name, on the vector
// path and on the cube path's epilogue; one it has is not.
func TestDeviceMathRefused(t *testing.T) {
	body := func(op string, cube bool) *ir.Graph {
		return gkNode(t, op, func(g *testkit.Graph) {
			x := g.Input("x", 4, 8)
			if cube {
				x = g.Op("MatMul", nil, x, g.Input("w", 8, 8))
			}
			g.G.Outputs = append(g.G.Outputs, g.Op(op, nil, x))
		}).Body
	}
	for _, cube := range []bool{false, true} {
		if _, _, err := Generate("gk_sin", body("Sin", cube)); err == nil || !strings.Contains(err.Error(), "Sin has no device implementation") {
			t.Errorf("Sin (cube %v): %v; want it refused by name", cube, err)
		}
		if _, _, err := Generate("gk_tanh", body("Tanh", cube)); err != nil {
			t.Errorf("Tanh (cube %v): %v", cube, err)
		}
	}
}
