package nn

import (
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// inferRun runs op as the runtime does: shape inference on the inputs as
// constants, outputs allocated from it, then the kernel.
func inferRun(t *testing.T, op string, attrs ir.Attrs, in ...*ir.Tensor) (*ir.Tensor, error) {
	t.Helper()
	if attrs == nil {
		attrs = ir.Attrs{}
	}
	n := &ir.Node{Name: "t", Op: op, Attrs: attrs}
	for _, x := range in {
		if x == nil {
			n.Inputs = append(n.Inputs, nil)
			continue
		}
		n.Inputs = append(n.Inputs, &ir.Value{DType: x.DType, Shape: x.Shape, Const: x})
	}
	n.Outputs = []*ir.Value{{Name: "y", Producer: n}}
	if err := ir.InferNode(n); err != nil {
		return nil, err
	}
	y := ir.NewTensor(n.Outputs[0].DType, n.Outputs[0].Shape)
	for i := range y.Data {
		y.Data[i] = 0xCD
	}
	f, _ := opkernel.Lookup(op)
	return y, f(&opkernel.Ctx{Threads: 2}, n, in, []*ir.Tensor{y})
}

func mustRun(t *testing.T, op string, attrs ir.Attrs, in ...*ir.Tensor) *ir.Tensor {
	t.Helper()
	y, err := inferRun(t, op, attrs, in...)
	if err != nil {
		t.Fatal(err)
	}
	return y
}

func closeTo(t *testing.T, what string, got, want *ir.Tensor, tol float64) {
	t.Helper()
	g, _ := got.Float64s()
	w, _ := want.Float64s()
	if len(g) != len(w) {
		t.Fatalf("%s: %d elements, want %d", what, len(g), len(w))
	}
	for i := range g {
		if math.Abs(g[i]-w[i]) > tol {
			t.Fatalf("%s: element %d = %g, want %g", what, i, g[i], w[i])
		}
	}
}

// An identity AffineGrid sampled by GridSample with the same align_corners
// gives the input back, in 2-D and 3-D, float32 and float64.
func TestAffineGridGridSampleIdentity(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, c := range []struct {
		size  []int64
		theta []float32
	}{
		{[]int64{2, 3, 4, 5}, []float32{1, 0, 0, 0, 1, 0}},
		{[]int64{1, 2, 3, 4, 2}, []float32{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}},
	} {
		r := len(c.size) - 2
		nb := c.size[0]
		th := ir.NewTensor(ir.Float32, []int64{nb, int64(r), int64(r + 1)})
		for b := 0; b < int(nb); b++ {
			copy(th.F32()[b*len(c.theta):], c.theta)
		}
		x := randTensor(rng, c.size...)
		for _, align := range []int64{0, 1} {
			for _, mode := range []string{"linear", "bilinear", "nearest"} {
				a := ir.Attrs{"align_corners": ir.IntAttr(align)}
				grid := mustRun(t, "AffineGrid", a, th, ir.Int64Tensor([]int64{int64(len(c.size))}, c.size...))
				a["mode"] = ir.StringAttr(mode)
				y := mustRun(t, "GridSample", a, x, grid)
				closeTo(t, mode, y, x, 1e-5)
				// float64 through the same path
				x64 := toF64(x)
				y64 := mustRun(t, "GridSample", a, x64, toF64(grid))
				closeTo(t, mode+" float64", y64, x64, 1e-6) // the grid came from float32
			}
		}
	}
}

func toF64(t *ir.Tensor) *ir.Tensor {
	o := ir.NewTensor(ir.Float64, t.Shape)
	for i, v := range t.F32() {
		o.F64()[i] = float64(v)
	}
	return o
}

func TestAffineGridValues(t *testing.T) {
	th := f32([]int64{1, 2, 3}, 1, 0, 0, 0, 1, 0)
	y := mustRun(t, "AffineGrid", nil, th, ir.Int64Tensor([]int64{4}, 1, 1, 2, 3))
	if want := []int64{1, 2, 3, 2}; !slices.Equal(y.Shape, want) {
		t.Fatalf("shape %v, want %v", y.Shape, want)
	}
	expect(t, y, -2.0/3, -0.5, 0, -0.5, 2.0/3, -0.5, -2.0/3, 0.5, 0, 0.5, 2.0/3, 0.5)
	// align_corners: corners at -1 and 1; a translation and a swap of axes
	th = f32([]int64{1, 2, 3}, 0, 1, 0.5, 1, 0, 0)
	y = mustRun(t, "AffineGrid", ir.Attrs{"align_corners": ir.IntAttr(1)}, th, ir.Int64Tensor([]int64{4}, 1, 1, 2, 2))
	expect(t, y, -0.5, -1, -0.5, 1, 1.5, -1, 1.5, 1)
}

// GridSample's padding modes on X = [1, 2] (H 1, W 2) at x = -2 and 2
// (pixel -1.5 and 2.5 with align_corners 0).
func TestGridSamplePadding(t *testing.T) {
	x := f32([]int64{1, 1, 1, 2}, 1, 2)
	grid := f32([]int64{1, 1, 2, 2}, -2, 0, 2, 0)
	for _, c := range []struct {
		pad, mode string
		want      []float64
	}{
		{"zeros", "linear", []float64{0, 0}},
		{"border", "linear", []float64{1, 2}},
		{"reflection", "linear", []float64{1.5, 1.5}},
		{"zeros", "nearest", []float64{0, 0}},
		{"border", "nearest", []float64{1, 2}},
		{"border", "cubic", []float64{1, 2}},
	} {
		y := mustRun(t, "GridSample", ir.Attrs{"padding_mode": ir.StringAttr(c.pad), "mode": ir.StringAttr(c.mode)}, x, grid)
		g, _ := y.Float64s()
		for i := range g {
			if math.Abs(g[i]-c.want[i]) > 1e-6 {
				t.Errorf("%s %s: got %v, want %v", c.pad, c.mode, g, c.want)
				break
			}
		}
	}
}

func TestGridSampleNearestAndCubic(t *testing.T) {
	// pixel 0.5 rounds half to even: 0
	y := mustRun(t, "GridSample", ir.Attrs{"mode": ir.StringAttr("nearest"), "align_corners": ir.IntAttr(1)},
		f32([]int64{1, 1, 1, 2}, 10, 20), f32([]int64{1, 1, 1, 2}, 0, 0))
	expect(t, y, 10)
	// cubic convolution (A = -0.75) at 3.3 on a ramp: weights -0.11025,
	// 0.83125, 0.32625, -0.04725 on pixels 2..5 give 3.342
	ramp := ir.NewTensor(ir.Float32, []int64{1, 1, 2, 8})
	for i := range ramp.F32() {
		ramp.F32()[i] = float32(i % 8)
	}
	gx := float32(3.3*2/7 - 1)
	y = mustRun(t, "GridSample", ir.Attrs{"mode": ir.StringAttr("cubic"), "align_corners": ir.IntAttr(1), "padding_mode": ir.StringAttr("border")},
		ramp, f32([]int64{1, 1, 1, 2}, gx, -1))
	g, _ := y.Float64s()
	if math.Abs(g[0]-3.342) > 1e-4 {
		t.Errorf("cubic on a ramp at 3.3: %g, want 3.342", g[0])
	}
	if _, err := inferRun(t, "GridSample", ir.Attrs{"mode": ir.StringAttr("cubic")}, randTensor(rand.New(rand.NewSource(1)), 1, 1, 2, 2, 2), f32([]int64{1, 1, 1, 1, 3}, 0, 0, 0)); err == nil || !strings.Contains(err.Error(), "cubic") {
		t.Errorf("cubic on 5-D input: err = %v", err)
	}
	if _, err := inferRun(t, "GridSample", nil, f32([]int64{1, 1, 2, 2}, 1, 2, 3, 4), f32([]int64{1, 1, 1, 3}, 0, 0, 0)); err == nil {
		t.Error("3-coordinate grid on a 4-D input: no error")
	}
}

func TestMaxUnpool(t *testing.T) {
	a := ir.Attrs{"kernel_shape": ir.IntsAttr(2, 2), "strides": ir.IntsAttr(2, 2)}
	x := f32([]int64{1, 1, 2, 2}, 5, 6, 7, 8)
	idx := ir.Int64Tensor([]int64{1, 1, 2, 2}, 5, 7, 13, 15)
	y := mustRun(t, "MaxUnpool", a, x, idx)
	want := make([]float64, 16)
	want[5], want[7], want[13], want[15] = 5, 6, 7, 8
	expect(t, y, want...)
	// a larger output keeps the coordinates the indices name
	y = mustRun(t, "MaxUnpool", a, x, idx, ir.Int64Tensor([]int64{4}, 1, 1, 5, 5))
	want = make([]float64, 25)
	want[6], want[8], want[16], want[18] = 5, 6, 7, 8
	expect(t, y, want...)
	if _, err := inferRun(t, "MaxUnpool", a, x, ir.Int64Tensor([]int64{1, 1, 2, 2}, 5, 7, 13, 16)); err == nil {
		t.Error("index 16 of 16: no error")
	}
}

// naiveConv is a direct grouped 2-D convolution.
func naiveConv(x, w, b *ir.Tensor, group int, s, p, d [2]int) *ir.Tensor {
	nb, c, h, wi := int(x.Shape[0]), int(x.Shape[1]), int(x.Shape[2]), int(x.Shape[3])
	m, cg, kh, kw := int(w.Shape[0]), int(w.Shape[1]), int(w.Shape[2]), int(w.Shape[3])
	oh := (h+2*p[0]-(kh-1)*d[0]-1)/s[0] + 1
	ow := (wi+2*p[1]-(kw-1)*d[1]-1)/s[1] + 1
	y := ir.NewTensor(ir.Float32, []int64{int64(nb), int64(m), int64(oh), int64(ow)})
	xs, ws, ys := x.F32(), w.F32(), y.F32()
	for n := 0; n < nb; n++ {
		for oc := 0; oc < m; oc++ {
			gi := oc / (m / group)
			for i := 0; i < oh; i++ {
				for j := 0; j < ow; j++ {
					acc := float64(0)
					if b != nil {
						acc = float64(b.F32()[oc])
					}
					for ic := 0; ic < cg; ic++ {
						for u := 0; u < kh; u++ {
							for v := 0; v < kw; v++ {
								yy, xx := i*s[0]-p[0]+u*d[0], j*s[1]-p[1]+v*d[1]
								if yy < 0 || xx < 0 || yy >= h || xx >= wi {
									continue
								}
								acc += float64(xs[((n*c+gi*cg+ic)*h+yy)*wi+xx]) * float64(ws[((oc*cg+ic)*kh+u)*kw+v])
							}
						}
					}
					ys[((n*m+oc)*oh+i)*ow+j] = float32(acc)
				}
			}
		}
	}
	return y
}

func TestDeformConv(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	x := randTensor(rng, 2, 4, 6, 5)
	w := randTensor(rng, 6, 2, 3, 2)
	b := randTensor(rng, 6)
	a := ir.Attrs{"group": ir.IntAttr(2), "offset_group": ir.IntAttr(2), "pads": ir.IntsAttr(1, 0, 1, 0),
		"strides": ir.IntsAttr(2, 1), "dilations": ir.IntsAttr(1, 2)}
	want := naiveConv(x, w, b, 2, [2]int{2, 1}, [2]int{1, 0}, [2]int{1, 2})
	oh, ow := want.Shape[2], want.Shape[3]
	off := ir.NewTensor(ir.Float32, []int64{2, 2 * 2 * 6, oh, ow})
	y := mustRun(t, "DeformConv", a, x, w, off, b)
	closeTo(t, "zero offsets", y, want, 1e-4)
	// a mask of one half halves every term but the bias
	mask := ir.NewTensor(ir.Float32, []int64{2, 2 * 6, oh, ow})
	for i := range mask.F32() {
		mask.F32()[i] = 0.5
	}
	half := naiveConv(x, w, nil, 2, [2]int{2, 1}, [2]int{1, 0}, [2]int{1, 2})
	for i := range half.F32() {
		half.F32()[i] = half.F32()[i]/2 + b.F32()[(i/int(oh*ow))%6]
	}
	y = mustRun(t, "DeformConv", a, x, w, off, b, mask)
	closeTo(t, "mask 0.5", y, half, 1e-4)
	// a 1x1 kernel with offset (0, 0.5) averages a pixel with its right
	// neighbour; past the right edge the neighbour is zero
	x1 := f32([]int64{1, 1, 1, 3}, 2, 4, 8)
	off1 := f32([]int64{1, 2, 1, 3}, 0, 0, 0, 0.5, 0.5, 0.5)
	y = mustRun(t, "DeformConv", nil, x1, f32([]int64{1, 1, 1, 1}, 1), off1)
	expect(t, y, 3, 6, 4)
}

func TestRoiAlign(t *testing.T) {
	// X = x coordinate, so bilinear samples return their x
	x := ir.NewTensor(ir.Float32, []int64{1, 1, 4, 8})
	for i := range x.F32() {
		x.F32()[i] = float32(i % 8)
	}
	rois := f32([]int64{1, 4}, 1, 1, 5, 3)
	bi := ir.Int64Tensor([]int64{1}, 0)
	a := ir.Attrs{"output_height": ir.IntAttr(1), "output_width": ir.IntAttr(2), "sampling_ratio": ir.IntAttr(2)}
	expect(t, mustRun(t, "RoiAlign", a, x, rois, bi), 1.5, 3.5)
	a["coordinate_transformation_mode"] = ir.StringAttr("output_half_pixel")
	expect(t, mustRun(t, "RoiAlign", a, x, rois, bi), 2, 4)
	if _, err := inferRun(t, "RoiAlign", a, x, rois, ir.Int64Tensor([]int64{1}, 1)); err == nil {
		t.Error("batch index 1 of 1: no error")
	}
}
