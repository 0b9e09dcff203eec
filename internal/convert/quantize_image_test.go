package convert

import (
	"image"
	"image/color"
	"image/png"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gkconv/internal/akgcfg"
	"gkconv/internal/ir"
)

func writePNG(t *testing.T, path string, w, h int, pix func(x, y int) color.RGBA) {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.SetRGBA(x, y, pix(x, y))
		}
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
}

// TestReadImage: channel order (BGR unless image_to_format says), resize,
// center crop, normalisation and the NCHW/NHWC layouts.
func TestReadImage(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.png")
	writePNG(t, p, 4, 2, func(x, y int) color.RGBA { return color.RGBA{uint8(10 * x), uint8(100 + y), 200, 255} })
	nchw := &ir.Value{Name: "x", DType: ir.Float32, Shape: []int64{1, 3, 2, 4}}
	got, err := readImage(p, nchw, akgcfg.ImagePreprocess{})
	if err != nil {
		t.Fatal(err)
	}
	d := got.F32()
	if d[0] != 200 || d[8+1] != 100 || d[16+3] != 30 { // B plane first; G at (0,1); R at (0,3)
		t.Errorf("BGR NCHW: %v", d)
	}
	nhwc := &ir.Value{Name: "x", DType: ir.Float32, Shape: []int64{1, 2, 2, 3}}
	got, err = readImage(p, nhwc, akgcfg.ImagePreprocess{ToFormat: "RGB", CropWidth: 2, CropHeight: 2,
		Mean: []float64{10, 0, 0}, Std: []float64{2, 1, 1}})
	if err != nil {
		t.Fatal(err)
	}
	if d := got.F32(); d[0] != 0 || d[1] != 100 || d[3] != 5 { // crop starts at x=1: R=10 -> (10-10)/2; next pixel R=20 -> 5
		t.Errorf("RGB NHWC crop+normalize: %v", d)
	}
	small := &ir.Value{Name: "x", DType: ir.Float32, Shape: []int64{1, 1, 1, 2}}
	got, err = readImage(p, small, akgcfg.ImagePreprocess{ToFormat: "GRAY", ResizeWidth: 2, ResizeHeight: 1, ResizeMethod: "LINEAR"})
	if err != nil || len(got.F32()) != 2 {
		t.Fatalf("gray resize: %v %v", got, err)
	}
	if _, err := readImage(p, nchw, akgcfg.ImagePreprocess{ResizeWidth: 8, ResizeHeight: 8}); err == nil || !strings.Contains(err.Error(), "want [1,3,8,8]") {
		t.Errorf("shape mismatch: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "b.png")
	os.WriteFile(bad, []byte("not an image"), 0o644)
	if _, err := readImage(bad, nchw, akgcfg.ImagePreprocess{}); err == nil || !strings.Contains(err.Error(), "b.png") {
		t.Errorf("bad image: %v", err)
	}
	for _, m := range []string{"NEAREST", "LINEAR", "CUBIC"} {
		flat := resizeHWC([]float64{5, 5, 5, 5}, 2, 2, 1, 3, 5, m)
		for _, v := range flat {
			if v < 5-1e-9 || v > 5+1e-9 {
				t.Errorf("%s resize of a flat image: %v", m, flat)
				break
			}
		}
	}
}

// TestFullQuantImages: FULL_QUANT calibrated on PNG files through the
// config file's image preprocessing.
func TestFullQuantImages(t *testing.T) {
	model := filepath.Join(sharedDir(t), "corpus", "models", "squeezenet1_1", "model.onnx")
	dir := t.TempDir()
	rng := rand.New(rand.NewSource(3))
	for i := 0; i < 4; i++ {
		writePNG(t, filepath.Join(dir, "img"+string(rune('a'+i))+".png"), 256, 240, func(x, y int) color.RGBA {
			return color.RGBA{uint8(x + rng.Intn(30)), uint8(y), uint8((x * y) >> 8), 255}
		})
	}
	o := onnxOptions(t, model)
	o.ConfigFile = writeConfig(t, "[common_quant_param]\nquant_type=FULL_QUANT\n[data_preprocess_param]\ncalibrate_path=input:"+dir+
		"\ncalibrate_size=4\ninput_type=IMAGE\nimage_to_format=RGB\nnormalize_mean=[123.675,116.28,103.53]\nnormalize_std=[58.395,57.12,57.375]\n"+
		"resize_width=256\nresize_height=256\ncenter_crop_width=224\ncenter_crop_height=224\n")
	_, rep := convertOK(t, o)
	q := rep.Quantization
	if q == nil || q.Calibration == nil || q.Calibration.Samples != 4 || len(q.Quantized) == 0 {
		t.Fatalf("report %+v", q)
	}
	for name, c := range q.Calibration.OutputCosine {
		if c < 0.95 {
			t.Errorf("%s: calibration cosine %.4f", name, c)
		}
		t.Logf("%s: %d nodes quantized, calibration cosine %.5f", name, len(q.Quantized), c)
	}
}
