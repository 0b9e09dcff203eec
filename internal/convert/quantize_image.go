package convert

import (
	"fmt"
	"image"
	_ "image/gif" // decoders image.Decode picks by content
	_ "image/jpeg"
	_ "image/png"
	"math"
	"os"

	"gkconv/internal/akgcfg"
	"gkconv/internal/ir"
)

// readImage reads one input_type=IMAGE calibration file for graph input in,
// preprocessed as converter_lite does (tools/converter/preprocess): decode
// (JPEG, PNG, GIF), channels in image_to_format order (BGR when unset, as
// OpenCV's imread gives), resize (OpenCV's INTER_NEAREST, INTER_LINEAR or
// INTER_CUBIC sampling), center crop, then (x - mean) / std per channel.
// The result fills a [1,C,H,W] or [1,H,W,C] float32 (or, unnormalised,
// uint8) input.
func readImage(path string, in *ir.Value, im akgcfg.ImagePreprocess) (*ir.Tensor, error) {
	bad := func(format string, args ...any) error {
		return Errorf(CodeParamInvalid, "FULL_QUANT: calibration image %s for input %q: %s", path, in.Name, fmt.Sprintf(format, args...))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, bad("%v", err)
	}
	defer f.Close()
	src, _, err := image.Decode(f)
	if err != nil {
		return nil, bad("not a JPEG, PNG or GIF image: %v", err)
	}
	b := src.Bounds()
	w, h := b.Dx(), b.Dy()
	if w <= 0 || h <= 0 || int64(w)*int64(h) > 1<<28 {
		return nil, bad("image size %dx%d", w, h)
	}
	ch := 3
	if im.ToFormat == "GRAY" {
		ch = 1
	}
	px := make([]float64, w*h*ch) // HWC
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			r, g, bl, _ := src.At(b.Min.X+x, b.Min.Y+y).RGBA()
			R, G, B := float64(r>>8), float64(g>>8), float64(bl>>8)
			o := (y*w + x) * ch
			switch im.ToFormat {
			case "GRAY": // OpenCV's BGR2GRAY weights
				px[o] = math.Round(0.299*R + 0.587*G + 0.114*B)
			case "RGB":
				px[o], px[o+1], px[o+2] = R, G, B
			default:
				px[o], px[o+1], px[o+2] = B, G, R
			}
		}
	}
	if im.ResizeWidth > 0 {
		px = resizeHWC(px, w, h, ch, im.ResizeWidth, im.ResizeHeight, im.ResizeMethod)
		w, h = im.ResizeWidth, im.ResizeHeight
	}
	if im.CropWidth > 0 {
		if im.CropWidth > w || im.CropHeight > h {
			return nil, bad("center crop %dx%d is larger than the image (%dx%d)", im.CropWidth, im.CropHeight, w, h)
		}
		x0, y0 := (w-im.CropWidth)/2, (h-im.CropHeight)/2
		c := make([]float64, im.CropWidth*im.CropHeight*ch)
		for y := 0; y < im.CropHeight; y++ {
			copy(c[y*im.CropWidth*ch:(y+1)*im.CropWidth*ch], px[((y0+y)*w+x0)*ch:((y0+y)*w+x0+im.CropWidth)*ch])
		}
		px, w, h = c, im.CropWidth, im.CropHeight
	}
	for _, l := range [][]float64{im.Mean, im.Std} {
		if len(l) != 0 && len(l) != ch {
			return nil, bad("normalize_mean/normalize_std have %d values for %d channels", len(l), ch)
		}
	}
	for i := range px {
		c := i % ch
		if len(im.Mean) > 0 {
			px[i] -= im.Mean[c]
		}
		if len(im.Std) > 0 {
			px[i] /= im.Std[c]
		}
	}
	s := in.Shape
	nchw := len(s) == 4 && s[0] == 1 && s[1] == int64(ch) && s[2] == int64(h) && s[3] == int64(w)
	nhwc := len(s) == 4 && s[0] == 1 && s[1] == int64(h) && s[2] == int64(w) && s[3] == int64(ch)
	if !nchw && !nhwc {
		return nil, bad("the preprocessed image is %dx%d with %d channel(s), the input is %v (want [1,%d,%d,%d] or [1,%d,%d,%d]; set resize_*/center_crop_*)",
			w, h, ch, s, ch, h, w, h, w, ch)
	}
	t := ir.NewTensor(in.DType, in.Shape)
	at := func(i int) int { // HWC index -> tensor index
		if nhwc {
			return i
		}
		c, p := i%ch, i/ch
		return c*w*h + p
	}
	switch in.DType {
	case ir.Float32:
		d := t.F32()
		for i, v := range px {
			d[at(i)] = float32(v)
		}
	case ir.Uint8:
		if len(im.Mean)+len(im.Std) > 0 {
			return nil, bad("a uint8 input takes the pixels as they are; remove normalize_mean/normalize_std")
		}
		d := t.U8()
		for i, v := range px {
			d[at(i)] = uint8(math.Max(0, math.Min(255, math.RoundToEven(v))))
		}
	default:
		return nil, bad("input dtype %s (IMAGE calibration fills float32 or uint8 inputs)", in.DType)
	}
	return t, nil
}

// resizeHWC resamples an HWC image with OpenCV's conventions: pixel centres
// aligned (src = (dst + 0.5) * scale - 0.5) for LINEAR and CUBIC (a = -0.75,
// borders replicated), src = floor(dst * scale) for NEAREST.
func resizeHWC(px []float64, w, h, ch, nw, nh int, method string) []float64 {
	out := make([]float64, nw*nh*ch)
	sx, sy := float64(w)/float64(nw), float64(h)/float64(nh)
	clamp := func(v, n int) int { return max(0, min(n-1, v)) }
	switch method {
	case "NEAREST":
		for y := 0; y < nh; y++ {
			yy := clamp(int(math.Floor(float64(y)*sy)), h)
			for x := 0; x < nw; x++ {
				xx := clamp(int(math.Floor(float64(x)*sx)), w)
				copy(out[(y*nw+x)*ch:(y*nw+x+1)*ch], px[(yy*w+xx)*ch:(yy*w+xx+1)*ch])
			}
		}
	case "CUBIC":
		const a = -0.75
		cubic := func(t float64) [4]float64 {
			f := func(x float64) float64 {
				x = math.Abs(x)
				if x <= 1 {
					return (a+2)*x*x*x - (a+3)*x*x + 1
				}
				if x < 2 {
					return a*x*x*x - 5*a*x*x + 8*a*x - 4*a
				}
				return 0
			}
			return [4]float64{f(1 + t), f(t), f(1 - t), f(2 - t)}
		}
		for y := 0; y < nh; y++ {
			fy := (float64(y)+0.5)*sy - 0.5
			y0 := int(math.Floor(fy))
			wy := cubic(fy - float64(y0))
			for x := 0; x < nw; x++ {
				fx := (float64(x)+0.5)*sx - 0.5
				x0 := int(math.Floor(fx))
				wx := cubic(fx - float64(x0))
				for c := 0; c < ch; c++ {
					v := 0.0
					for j := 0; j < 4; j++ {
						row := clamp(y0-1+j, h) * w
						for i := 0; i < 4; i++ {
							v += wy[j] * wx[i] * px[(row+clamp(x0-1+i, w))*ch+c]
						}
					}
					out[(y*nw+x)*ch+c] = v
				}
			}
		}
	default: // LINEAR
		for y := 0; y < nh; y++ {
			fy := math.Max(0, (float64(y)+0.5)*sy-0.5)
			y0 := min(int(fy), h-1)
			y1 := min(y0+1, h-1)
			dy := fy - float64(y0)
			for x := 0; x < nw; x++ {
				fx := math.Max(0, (float64(x)+0.5)*sx-0.5)
				x0 := min(int(fx), w-1)
				x1 := min(x0+1, w-1)
				dx := fx - float64(x0)
				for c := 0; c < ch; c++ {
					p := func(yy, xx int) float64 { return px[(yy*w+xx)*ch+c] }
					out[(y*nw+x)*ch+c] = (1-dy)*((1-dx)*p(y0, x0)+dx*p(y0, x1)) + dy*((1-dx)*p(y1, x0)+dx*p(y1, x1))
				}
			}
		}
	}
	return out
}
