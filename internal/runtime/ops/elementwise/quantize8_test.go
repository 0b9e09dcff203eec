package elementwise

import (
	"math"
	"math/rand"
	"slices"
	"testing"

	"gkconv/internal/runtime/cpuisa"
)

// TestQuantize8RunMatchesGo: the vectorised per-tensor 8-bit quantizer
// agrees byte for byte with the Go loop (and so with QuantizeF32) on random
// values, exact ties (k + 0.5 times the scale), NaN, infinities and values
// far outside the range, for uint8 and int8 bounds and odd lengths.
func TestQuantize8RunMatchesGo(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for _, c := range []struct {
		scale      float32
		zp, lo, hi int64
	}{{0.05, 128, 0, 255}, {0.013, 3, 0, 255}, {0.1, 0, -128, 127}, {1, -7, -128, 127}, {0.5, 255, 0, 255}} {
		for _, n := range []int{0, 1, 15, 16, 17, 1000} {
			xs := make([]float32, n)
			for i := range xs {
				switch i % 7 {
				case 0:
					xs[i] = (float32(r.Intn(600)-300) + 0.5) * c.scale // ties
				case 1:
					xs[i] = float32(math.NaN())
				case 2:
					xs[i] = float32(math.Inf(1 - 2*(i%2)))
				case 3:
					xs[i] = float32(r.NormFloat64() * 1e4)
				default:
					xs[i] = float32(r.NormFloat64()) * c.scale * 100
				}
			}
			got, want := make([]byte, n), make([]byte, n)
			quantize8(nil, xs, c.scale, c.zp, c.lo, c.hi, got)
			for i, x := range xs {
				want[i] = byte(QuantizeF32(x, c.scale, c.zp, c.lo, c.hi))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("scale %v zp %d n %d: x[%d] = %v -> %d, want %d", c.scale, c.zp, n, i, xs[i], got[i], want[i])
				}
			}
			goQuantize8(got, xs, c.scale, float32(c.lo-c.zp), float32(c.hi-c.zp), float32(min(max(0, c.lo-c.zp), c.hi-c.zp)), int(c.zp))
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("Go loop: scale %v zp %d: x[%d] = %v -> %d, want %d", c.scale, c.zp, i, xs[i], got[i], want[i])
				}
			}
		}
	}
}

// TestDequantize8RunMatchesGo: the vectorised per-tensor 8-bit dequantizer
// agrees bit for bit with (x - zp) * scale in Go for every byte value.
func TestDequantize8RunMatchesGo(t *testing.T) {
	x := make([]byte, 256+13)
	for i := range x {
		x[i] = byte(i * 7)
	}
	for _, sg := range []bool{false, true} {
		for _, c := range []struct {
			zp    int
			scale float32
		}{{128, 0.0371}, {0, 1e-3}, {-5, 3.3}, {255, 0.2}} {
			for _, n := range []int{0, 1, 17, len(x)} {
				got, want := make([]float32, n), make([]float32, n)
				dequantize8Run(got, x[:n], sg, c.zp, c.scale)
				goDequantize8(want, x[:n], sg, c.zp, c.scale)
				for i := range got {
					q := int(x[i])
					if sg {
						q = int(int8(x[i]))
					}
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) || want[i] != float32(q-c.zp)*c.scale {
						t.Fatalf("signed %v zp %d scale %v: x[%d] = %d -> %v, want %v", sg, c.zp, c.scale, i, x[i], got[i], want[i])
					}
				}
			}
		}
	}
}

// TestMinMaxRunMatchesGo: the vectorised range of DynamicQuantizeLinear is
// the Go loop's, tails, all-positive data (0 stays in the range) and NaN
// included.
func TestMinMaxRunMatchesGo(t *testing.T) {
	defer cpuisa.Force(cpuisa.Detected())
	for _, lv := range []cpuisa.Level{cpuisa.Portable, cpuisa.AVX2, cpuisa.AVX512} {
		if err := cpuisa.Force(lv); err != nil {
			t.Logf("%v: %v", lv, err)
			continue
		}
		x := make([]float32, 1000)
		for i := range x {
			x[i] = float32((i*7919)%2001-1000) / 37
		}
		for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 33, 333, 1000} {
			lo, hi := minMaxRun(x[:n])
			glo, ghi := goMinMax(x[:n])
			if lo != glo || hi != ghi {
				t.Fatalf("%v n=%d: C [%g, %g], Go [%g, %g]", lv, n, lo, hi, glo, ghi)
			}
		}
		// the extremes in every lane and in the tail
		for at := 0; at < 40; at++ {
			y := make([]float32, 40)
			for i := range y {
				y[i] = float32(i%7) - 3
			}
			y[at], y[(at+5)%40] = -50, 60
			if lo, hi := minMaxRun(y); lo != -50 || hi != 60 {
				t.Fatalf("%v extremes at %d: [%g, %g]", lv, at, lo, hi)
			}
		}
		pos := []float32{3, 1, 2}
		if lo, hi := minMaxRun(pos); lo != 0 || hi != 3 {
			t.Fatalf("%v positive data: [%g, %g], want [0, 3]", lv, lo, hi)
		}
		for _, at := range []int{0, 15, 500, 999} {
			y := slices.Clone(x)
			y[at] = float32(math.NaN())
			if lo, hi := minMaxRun(y); lo == lo || hi == hi {
				t.Fatalf("%v NaN input at %d: [%g, %g], want NaN", lv, at, lo, hi)
			}
		}
	}
}
