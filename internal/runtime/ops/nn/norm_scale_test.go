package nn

import (
	"math"
	"math/rand"
	"testing"

	"gkconv/internal/runtime/cpuisa"
	"gkconv/internal/runtime/opkernel"
)

// TestScaleShiftF32Exact: BatchNormalization's C affine map gives, at every
// ISA level and thread count, the bits of x*a rounded then + b rounded (the
// Go loop it replaced), planes off the vector widths included.
func TestScaleShiftF32Exact(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	everyLevel(t, func(t *testing.T, lv cpuisa.Level) {
		for _, sz := range [][3]int{{1, 3, 1}, {2, 5, 37}, {1, 16, 784}, {3, 7, 1000}} {
			nb, c, inner := sz[0], sz[1], sz[2]
			x := make([]float32, nb*c*inner)
			for i := range x {
				x[i] = float32(r.NormFloat64() * 3)
			}
			a, b := make([]float64, c), make([]float64, c)
			for i := range a {
				a[i], b[i] = r.NormFloat64(), r.NormFloat64()
			}
			for _, threads := range []int{1, 2} {
				y := make([]float32, len(x))
				scaleShiftF32(&opkernel.Ctx{Threads: threads}, nb*c, c, inner, x, y, a, b)
				for i, v := range x {
					p := i / inner
					want := float32(float32(v*float32(a[p%c])) + float32(b[p%c]))
					if math.Float32bits(y[i]) != math.Float32bits(want) {
						t.Fatalf("%s %v threads %d: y[%d] = %v, want %v", lv, sz, threads, i, y[i], want)
					}
				}
			}
		}
	})
}
