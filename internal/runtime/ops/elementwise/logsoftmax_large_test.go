package elementwise

import (
	"math"
	"testing"
)

// TestLogSoftmaxLargeValues: log-softmax of values near 10000 keeps the
// float32 precision of x - max (ONNX's test_logsoftmax_large_number; the
// MindSpore interop run found the kernel 2.4e-4 off there when it
// subtracted max + log(sum) in one float).
func TestLogSoftmaxLargeValues(t *testing.T) {
	for _, n := range []int{4, 37} {
		x := make([]float32, n)
		for i := range x {
			x[i] = 10000 + float32(i%7)
		}
		d := make([]float32, n)
		f32SoftmaxRows(d, x, 1, n, true)
		mx := 10006.0
		if n < 7 {
			mx = 10000 + float64(n-1)
		}
		var sum float64
		for _, v := range x {
			sum += math.Exp(float64(v) - mx)
		}
		for i, v := range x {
			want := float64(v) - mx - math.Log(sum)
			if math.Abs(float64(d[i])-want) > 1e-6 {
				t.Fatalf("n=%d: y[%d] = %v, want %v", n, i, d[i], want)
			}
		}
	}
}
