package elementwise

import "math"

// Op codes shared by the C kernels and their Go fallbacks.
const (
	bAdd = iota
	bSub
	bMul
	bDiv
	bMax
	bMin
	bSqDiff
	bPReLU
)

const (
	uReLU = iota
	uSigmoid
	uTanh
	uExp
	uErf
	uGeLU
	uGeLUTanh
	uLog
	uMish
	uSin
	uCos
)

const (
	upElu = iota
	upSelu
	upCelu
)

// goUnaryParamF32 is gk_unary_param_f32 in Go (exp in float64, rounded).
func goUnaryParamF32(op int, d, s []float32, a, b float32) {
	s = s[:len(d)]
	exp := func(x float32) float32 { return float32(math.Exp(float64(x))) }
	for i, x := range s {
		switch op {
		case upElu:
			if d[i] = x; x < 0 {
				d[i] = a * (exp(x) - 1)
			}
		case upSelu:
			if d[i] = b * x; !(x > 0) {
				d[i] = b * (a*exp(x) - a)
			}
		case upCelu:
			e := a * (exp(x*(1/a)) - 1)
			d[i] = max(x, 0) + min(e, 0) // NaN propagates through Go's max
		}
	}
}

func nanMax[T float](x, y T) T {
	if x != x || x > y {
		return x
	}
	return y
}

func nanMin[T float](x, y T) T {
	if x != x || x < y {
		return x
	}
	return y
}

func goBinaryF32(op int, d, a []float32, sa int, b []float32, sb int) {
	var f func(x, y float32) float32
	switch op {
	case bAdd:
		if sa == 1 && sb == 1 {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] + b[i]
			}
			return
		}
		f = func(x, y float32) float32 { return x + y }
	case bSub:
		f = func(x, y float32) float32 { return x - y }
	case bMul:
		if sa == 1 && sb == 1 {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] * b[i]
			}
			return
		}
		f = func(x, y float32) float32 { return x * y }
	case bDiv:
		f = func(x, y float32) float32 { return x / y }
	case bMax:
		f = nanMax[float32]
	case bMin:
		f = nanMin[float32]
	case bSqDiff:
		f = func(x, y float32) float32 { return (x - y) * (x - y) }
	case bPReLU:
		f = floatArith[float32](opPReLU, false)
	}
	applyRow(f, d, a, sa, b, sb)
}

func goUnaryF32(op int, d, s []float32) {
	s = s[:len(d)]
	switch op {
	case uReLU:
		for i, x := range s {
			if x < 0 {
				x = 0
			}
			d[i] = x
		}
	case uSigmoid:
		for i, x := range s {
			d[i] = ortLogistic(x)
		}
	case uTanh:
		for i, x := range s {
			d[i] = float32(math.Tanh(float64(x)))
		}
	case uExp:
		for i, x := range s {
			d[i] = float32(math.Exp(float64(x)))
		}
	case uErf:
		for i, x := range s {
			d[i] = ortErf(x)
		}
	case uGeLU:
		for i, x := range s {
			d[i] = float32(gelu64(float64(x)))
		}
	case uGeLUTanh:
		for i, x := range s {
			d[i] = float32(geluTanh64(float64(x)))
		}
	case uLog:
		for i, x := range s {
			d[i] = float32(math.Log(float64(x)))
		}
	case uMish:
		for i, x := range s {
			d[i] = float32(float64(x) * math.Tanh(softplus64(float64(x))))
		}
	case uSin:
		for i, x := range s {
			d[i] = float32(math.Sin(float64(x)))
		}
	case uCos:
		for i, x := range s {
			d[i] = float32(math.Cos(float64(x)))
		}
	}
}

func sigmoid64(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

func gelu64(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }

func geluTanh64(x float64) float64 {
	return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
}

func goSoftmaxRowsF32(d, s []float32, rows, n int, logsm bool) {
	for r := 0; r < rows; r++ {
		softmaxStrided(d[r*n:], s[r*n:], n, 1, logsm)
	}
}

// softmaxStrided computes one softmax over n elements spaced stride apart.
func softmaxStrided[T float](d, s []T, n, stride int, logsm bool) {
	mx := math.Inf(-1)
	for i := 0; i < n; i++ {
		mx = math.Max(mx, float64(s[i*stride]))
	}
	if math.IsInf(mx, -1) {
		mx = 0
	}
	var sum float64
	for i := 0; i < n; i++ {
		e := math.Exp(float64(s[i*stride]) - mx)
		if !logsm {
			d[i*stride] = T(e)
		}
		sum += e
	}
	if logsm {
		off := mx + math.Log(sum)
		for i := 0; i < n; i++ {
			d[i*stride] = T(float64(s[i*stride]) - off)
		}
		return
	}
	inv := 1 / sum
	for i := 0; i < n; i++ {
		d[i*stride] = T(float64(d[i*stride]) * inv)
	}
}

// goBinaryRowsF32 is f32BinaryRows in Go: row r of d is a's row r (op) b[r]
// when aFull, else a[r] (op) b's row r.
func goBinaryRowsF32(op int, d, a, b []float32, aFull bool, rows, n int) {
	for r := 0; r < rows; r++ {
		if aFull {
			goBinaryF32(op, d[r*n:(r+1)*n], a[r*n:], 1, b[r:], 0)
		} else {
			goBinaryF32(op, d[r*n:(r+1)*n], a[r:], 0, b[r*n:], 1)
		}
	}
}
