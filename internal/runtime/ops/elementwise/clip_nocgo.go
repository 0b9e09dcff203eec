//go:build !cgo

package elementwise

func f32Clip(d, s []float32, lo, hi float32) {
	for i, x := range s[:len(d)] {
		if x < lo {
			x = lo
		}
		if x > hi {
			x = hi
		}
		d[i] = x
	}
}
