package convert

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gkconv/internal/akgcfg"
	"gkconv/internal/ir"
	"gkconv/internal/onnx"
	"gkconv/internal/runtime"
)

// loadAnf loads an ONNX model and runs what Convert runs before quantize:
// constant folding and converter_lite's fusion passes.
func loadAnf(t *testing.T, path string) *ir.Graph {
	t.Helper()
	g, closeModel, err := Load("ONNX", path, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeModel)
	rep := newReport()
	if _, err := fold(g, rep); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := akgcfg.Load("", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := anfFuse(g, cfg, cfg.Backend(akgcfg.CPU), fuseOptions{}, rep); err != nil {
		t.Fatal(err)
	}
	return g
}

// variant is a deterministic variation of an image batch x (NCHW
// float32): a horizontal flip, a shift of up to 16 pixels, a gain and
// offset, and Gaussian noise, all from seed.
func variant(x *ir.Tensor, seed int64) *ir.Tensor {
	r := rand.New(rand.NewSource(seed))
	n, c, h, w := int(x.Shape[0]), int(x.Shape[1]), int(x.Shape[2]), int(x.Shape[3])
	out := ir.NewTensor(ir.Float32, x.Shape)
	src, dst := x.F32(), out.F32()
	flip := r.Intn(2) == 1
	dy, dx := r.Intn(33)-16, r.Intn(33)-16
	gain := float32(0.7 + 0.6*r.Float64())
	off := float32(0.4 * (r.Float64() - 0.5))
	sigma := float32(0.05 + 0.2*r.Float64())
	for b := 0; b < n; b++ {
		for ch := 0; ch < c; ch++ {
			base := (b*c + ch) * h * w
			for i := 0; i < h; i++ {
				si := (i + dy + h) % h
				for j := 0; j < w; j++ {
					sj := (j + dx + w) % w
					if flip {
						sj = w - 1 - sj
					}
					dst[base+i*w+j] = src[base+si*w+sj]*gain + off + sigma*float32(r.NormFloat64())
				}
			}
		}
	}
	return out
}

// writeCalib writes count variants of x (seeds seed0...) as BIN files.
func writeCalib(t *testing.T, x *ir.Tensor, count int, seed0 int64) string {
	dir := t.TempDir()
	for i := 0; i < count; i++ {
		v := variant(x, seed0+int64(i))
		if i == 0 {
			v = x
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("sample_%03d.bin", i)), v.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func fullQuantConfig(input, dir string, m akgcfg.ActivationQuantMethod) *akgcfg.QuantConfig {
	return &akgcfg.QuantConfig{Type: akgcfg.FullQuant, BitNum: 8, MinQuantWeightSize: 0, MinQuantWeightChannel: 16,
		CalibratePath: map[string]string{input: dir}, CalibrateSize: 16, InputType: "BIN",
		ActivationMethod: m, PerChannel: true}
}

// fullQuantMinCos is the held-out cosine (worst of the 3 held-out inputs)
// each model and method must reach: regression floors a little under what
// this implementation measures (resnet18_bn: MAX_MIN 0.9987, REMOVAL_OUTLIER
// 0.9987, KL 0.887; mobilenet_v2_bn: MAX_MIN 0.975, REMOVAL_OUTLIER 0.963,
// KL 0.641). The goal, 0.99 with MAX_MIN, holds for resnet18_bn
// only: mobilenet_v2_bn's per-tensor uint8 activations after its depthwise
// convs cost more (fake-quant QDQ without the integer kernels measures the
// same 0.98, so it is the quantization, not the kernels).
var fullQuantMinCos = map[string]map[akgcfg.ActivationQuantMethod]float64{
	"resnet18_bn":     {akgcfg.MaxMin: 0.99, akgcfg.RemovalOutlier: 0.99, akgcfg.KL: 0.85},
	"mobilenet_v2_bn": {akgcfg.MaxMin: 0.97, akgcfg.RemovalOutlier: 0.955, akgcfg.KL: 0.6},
}

// TestFullQuant quantizes resnet18_bn and mobilenet_v2_bn with FULL_QUANT
// on 16 calibration inputs (the corpus input and seeded variants), checks
// that every quantized Conv2D became a QLinearConv (no float Conv2D left
// but the kept ones) and that on 3 other inputs the quantized model's
// output has cosine >= fullQuantMinCos against the float model's, both
// run with the runtime.
func TestFullQuant(t *testing.T) {
	shared := sharedDir(t)
	type fqCase struct {
		model string
		m     akgcfg.ActivationQuantMethod
		bc    bool // bias_correction
	}
	var cases []fqCase
	for _, model := range []string{"resnet18_bn", "mobilenet_v2_bn"} {
		for _, m := range []akgcfg.ActivationQuantMethod{akgcfg.MaxMin, akgcfg.KL, akgcfg.RemovalOutlier} {
			cases = append(cases, fqCase{model, m, false})
		}
	}
	cases = append(cases, fqCase{"mobilenet_v2_bn", akgcfg.MaxMin, true})
	for _, tc := range cases {
		model, m := tc.model, tc.m
		name := model + "_" + m.String()
		if tc.bc {
			name += "_bias_correction"
		}
		{
			t.Run(name, func(t *testing.T) {
				if testing.Short() && (m != akgcfg.MaxMin || tc.bc) {
					t.Skip("-short: MAX_MIN only")
				}
				dir := filepath.Join(shared, "corpus", "models", model)
				path := filepath.Join(dir, "model.onnx")
				if _, err := os.Stat(path); err != nil {
					t.Skipf("%s absent", path)
				}
				x, _, err := onnx.ReadTensorFile(filepath.Join(dir, "test_data_set_0", "input_0.pb"))
				if err != nil {
					t.Fatal(err)
				}
				gf := loadAnf(t, path)
				gq := loadAnf(t, path)
				if len(gq.Inputs) != 1 {
					t.Fatalf("%d inputs", len(gq.Inputs))
				}
				calib := writeCalib(t, x, 16, 1000)
				rq := &ReportQuantization{}
				q := fullQuantConfig(gq.Inputs[0].Name, calib, m)
				q.BiasCorrection = tc.bc
				if err := fullQuant(context.Background(), gq, q, path, rq); err != nil {
					t.Fatal(err)
				}
				ops := map[string]int{}
				for _, n := range gq.Nodes {
					ops[n.Op]++
				}
				keptConv := 0
				for _, k := range rq.KeptFloat {
					if k.Op == "Conv2D" {
						keptConv++
					}
				}
				qConv := 0
				for _, n := range rq.Quantized {
					if n.Op == "Conv2D" {
						qConv++
					}
					if n.Cosine == nil || *n.Cosine < -1-1e-9 || *n.Cosine > 1+1e-9 {
						t.Errorf("%s: per-layer cosine %v", n.Name, ptrVal(n.Cosine))
					}
				}
				if qConv == 0 || ops["QLinearConv"] != qConv {
					t.Errorf("%d convs quantized, %d QLinearConv in the graph", qConv, ops["QLinearConv"])
				}
				if ops["Conv2D"] != keptConv {
					t.Errorf("%d float Conv2D left, %d kept in float: %v", ops["Conv2D"], keptConv, rq.KeptFloat)
				}
				if rq.Calibration == nil || rq.Calibration.Samples != 16 {
					t.Fatalf("calibration report %+v", rq.Calibration)
				}
				sf, err := runtime.NewSession(gf, runtime.Options{})
				if err != nil {
					t.Fatal(err)
				}
				sq, err := runtime.NewSession(gq, runtime.Options{})
				if err != nil {
					t.Fatal(err)
				}
				var acc cosAcc
				minCos := 1.0
				for s := int64(0); s < 3; s++ {
					in := []*ir.Tensor{variant(x, 5000+s)}
					of, err := sf.Run(in)
					if err != nil {
						t.Fatal(err)
					}
					oq, err := sq.Run(in)
					if err != nil {
						t.Fatal(err)
					}
					var one cosAcc
					one.add(floatsOf(oq[0]), floatsOf(of[0]))
					acc.add(floatsOf(oq[0]), floatsOf(of[0]))
					if c := one.cos(); c < minCos {
						minCos = c
					}
				}
				t.Logf("%s %s bias_correction=%v: quantized %d (QLinearConv %d, QLinearMatMul %d), kept %d; calibration cosine %v; held-out cosine %.5f (worst sample %.5f); weights %d -> %d bytes",
					model, m, tc.bc, len(rq.Quantized), ops["QLinearConv"], ops["QLinearMatMul"], len(rq.KeptFloat),
					rq.Calibration.OutputCosine, acc.cos(), minCos, rq.WeightBytesBefore, rq.WeightBytesAfter)
				if want := fullQuantMinCos[model][m]; minCos < want {
					t.Errorf("held-out cosine %.5f < %.3f", minCos, want)
				}
			})
		}
	}
}

// TestFullQuantCalibrationErrors: a graph input without a folder, an empty
// folder and a file of the wrong size are errors naming what is wrong.
func TestFullQuantCalibrationErrors(t *testing.T) {
	g := ir.NewGraph("g")
	g.Inputs = []*ir.Value{{Name: "x", DType: ir.Float32, Shape: []int64{1, 4}}}
	q := &akgcfg.QuantConfig{Type: akgcfg.FullQuant, CalibrateSize: 2, InputType: "BIN", CalibratePath: map[string]string{"y": t.TempDir()}}
	if _, err := readCalibration(g, q); err == nil || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("missing folder: %v", err)
	}
	dir := t.TempDir()
	q.CalibratePath = map[string]string{"x": dir}
	if _, err := readCalibration(g, q); err == nil || !strings.Contains(err.Error(), "no calibration files") {
		t.Errorf("empty folder: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "a.bin"), make([]byte, 16), 0o644)
	os.WriteFile(filepath.Join(dir, "b.bin"), make([]byte, 12), 0o644)
	os.WriteFile(filepath.Join(dir, "c.bin"), make([]byte, 16), 0o644)
	if _, err := readCalibration(g, q); err == nil || !strings.Contains(err.Error(), "b.bin") || !strings.Contains(err.Error(), "16 bytes") {
		t.Errorf("wrong size: %v", err)
	}
	q.CalibrateSize = 1
	cs, err := readCalibration(g, q)
	if err != nil || len(cs.samples) != 1 {
		t.Errorf("calibrate_size 1: %v", err)
	}
}

// TestFullQuantRanges checks the range methods on known data.
func TestFullQuantRanges(t *testing.T) {
	x := make([]float32, 100000)
	r := rand.New(rand.NewSource(1))
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	x[5] = 100 // one outlier
	var scratch []float32
	for _, m := range []akgcfg.ActivationQuantMethod{akgcfg.MaxMin, akgcfg.KL, akgcfg.RemovalOutlier} {
		s := newActStats()
		s.observe(x, m, &scratch)
		if m == akgcfg.KL {
			s.histogram(x)
		}
		lo, hi := s.rangeOf(m)
		t.Logf("%s: [%.3f, %.3f]", m, lo, hi)
		switch m {
		case akgcfg.MaxMin:
			if hi != 100 {
				t.Errorf("MAX_MIN max %v", hi)
			}
		default:
			if hi > 10 || hi < 2 || lo < -10 || lo > -2 {
				t.Errorf("%s did not clip the outlier: [%v, %v]", m, lo, hi)
			}
		}
	}
	if s, z := uint8Params(0, 6); z != 0 || s != float32(6.0/255) {
		t.Errorf("uint8Params(0,6) = %v %v", s, z)
	}
}

func ptrVal(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
