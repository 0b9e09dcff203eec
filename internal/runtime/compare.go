package runtime

import (
	"fmt"
	"math"
	"slices"

	"gkconv/internal/ir"
)

// Accuracy compares one output with its reference, with the metrics that
// MindSpore Lite's benchmark prints plus element-wise tolerances.
type Accuracy struct {
	Name          string  `json:"name"`
	Elements      int64   `json:"elements"`
	MaxAbsErr     float64 `json:"max_abs_error"`
	MaxRelErr     float64 `json:"max_rel_error"`
	MeanBiasPct   float64 `json:"mean_bias_percent"` // MindSpore Lite's "mean bias", in %
	Cosine        float64 `json:"cosine_similarity"`
	Mismatches    int64   `json:"mismatches"` // elements outside atol + rtol*|ref|
	FirstMismatch string  `json:"first_mismatch,omitempty"`
	Pass          bool    `json:"pass"`
}

// Compare checks got against want: |a-b| <= atol + rtol*|b| element-wise,
// NaN matching NaN and equal infinities matching. meanBiasThreshold (in %,
// <= 0 to ignore) is MindSpore Lite's --accuracyThreshold.
func Compare(name string, got, want *ir.Tensor, atol, rtol, meanBiasThreshold float64) (Accuracy, error) {
	acc := Accuracy{Name: name}
	if !slices.Equal(got.Shape, want.Shape) {
		// A scalar [] against [1] and the like are the same data.
		if got.NumElements() != want.NumElements() {
			return acc, fmt.Errorf("output %s: shape %v, reference %v", name, got.Shape, want.Shape)
		}
	}
	if got.DType == ir.String || want.DType == ir.String {
		acc.Elements = got.NumElements()
		for i := range got.Strings {
			if got.Strings[i] != want.Strings[i] {
				acc.Mismatches++
			}
		}
		acc.Pass = acc.Mismatches == 0
		acc.Cosine = 1
		return acc, nil
	}
	a, err := got.Float64s()
	if err != nil {
		return acc, fmt.Errorf("output %s: %v", name, err)
	}
	b, err := want.Float64s()
	if err != nil {
		return acc, fmt.Errorf("reference %s: %v", name, err)
	}
	if got.DType == ir.Uint64 || got.DType == ir.Int64 {
		// Exact integer comparison: float64 loses bits above 2^53.
		ai, _ := got.Int64s()
		bi, _ := want.Int64s()
		for i := range ai {
			if ai[i] != bi[i] && acc.FirstMismatch == "" {
				acc.FirstMismatch = fmt.Sprintf("index %d: got %d, want %d", i, ai[i], bi[i])
			}
		}
	}
	acc.Elements = int64(len(a))
	var dot, na, nb, biasSum float64
	biasN := 0
	for i := range a {
		x, y := a[i], b[i]
		if math.IsNaN(x) || math.IsNaN(y) {
			if !(math.IsNaN(x) && math.IsNaN(y)) {
				acc.Mismatches++
				if acc.FirstMismatch == "" {
					acc.FirstMismatch = fmt.Sprintf("index %d: got %g, want %g", i, x, y)
				}
			}
			continue
		}
		if math.IsInf(x, 0) || math.IsInf(y, 0) {
			if x != y {
				acc.Mismatches++
				if acc.FirstMismatch == "" {
					acc.FirstMismatch = fmt.Sprintf("index %d: got %g, want %g", i, x, y)
				}
			}
			continue
		}
		d := math.Abs(x - y)
		if d > acc.MaxAbsErr {
			acc.MaxAbsErr = d
		}
		if ay := math.Abs(y); ay > 0 {
			if r := d / ay; r > acc.MaxRelErr {
				acc.MaxRelErr = r
			}
		}
		if d > atol+rtol*math.Abs(y) {
			acc.Mismatches++
			if acc.FirstMismatch == "" {
				acc.FirstMismatch = fmt.Sprintf("index %d: got %g, want %g (|diff| %.3g)", i, x, y, d)
			}
		}
		// MindSpore Lite: mean over elements of |a-b|/(|b|+1e-7)... it skips
		// tiny references to avoid dividing by ~0.
		if math.Abs(y) > 1e-7 {
			biasSum += d / math.Abs(y)
			biasN++
		} else {
			biasSum += d
			biasN++
		}
		dot += x * y
		na += x * x
		nb += y * y
	}
	if biasN > 0 {
		acc.MeanBiasPct = biasSum / float64(biasN) * 100
	}
	switch {
	case na == 0 && nb == 0:
		acc.Cosine = 1
	case na == 0 || nb == 0:
		acc.Cosine = 0
	default:
		acc.Cosine = dot / math.Sqrt(na*nb)
	}
	acc.Pass = acc.Mismatches == 0 && acc.FirstMismatch == ""
	if meanBiasThreshold > 0 && acc.MeanBiasPct > meanBiasThreshold {
		acc.Pass = false
	}
	return acc, nil
}
