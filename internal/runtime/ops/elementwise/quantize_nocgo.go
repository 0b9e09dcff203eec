//go:build !cgo

package elementwise

func quantize8Run(y []byte, xs []float32, scale, flo, fhi, fnan float32, zp int) {
	goQuantize8(y, xs, scale, flo, fhi, fnan, zp)
}

func dequantize8Run(y []float32, x []byte, signed bool, zp int, scale float32) {
	goDequantize8(y, x, signed, zp, scale)
}

func minMaxRun(xs []float32) (lo, hi float32) { return goMinMax(xs) }
