package convert

import (
	"math"

	"gkconv/internal/akgcfg"
)

// FULL_QUANT activation ranges: how the calibration run's statistics of one
// activation tensor become the range its uint8 quantization covers, per
// [full_quant_param] activation_quant_method, following MindSpore Lite's
// DataDistribution (tools/converter/quantizer/data_distribution.cc):
//
//   - MAX_MIN: the real minimum and maximum over every calibration sample.
//   - KL: a histogram of |x| in klBins bins over [0, max|x|] (all samples);
//     the threshold bin i in [128, klBins) minimising the KL divergence
//     between the reference distribution (bins < i, the tail's mass added
//     to bin i-1) and its 128-level quantization expanded back over the
//     non-empty bins; T = (i + 0.5) * bin width. MindSpore Lite quantizes
//     to [-T, T]; here the range is [-T, T] clipped to the real range
//     (max(min, -T), min(max, T)), so a non-negative tensor (after a ReLU)
//     keeps all 256 uint8 levels for [0, T].
//   - REMOVAL_OUTLIER: per sample, the 0.0001 and 0.9999 quantiles (the
//     elements at index int(0.0001*n) and int(0.9999*n) in sorted order),
//     averaged over the samples.
//
// Every range is then widened to include 0 (uint8Params), as the QDQ
// quantizer scripts/qdq_quantize.py and onnxruntime do.

const (
	klBins      = 2048
	klQuantBins = 128
	outlierLo   = 0.0001
	outlierHi   = 0.9999
)

// actStats collects one activation tensor's statistics over the samples.
type actStats struct {
	n        int // samples seen (pass 1)
	min, max float64
	// REMOVAL_OUTLIER: per-sample quantiles.
	qmin, qmax []float64
	// KL: histogram of |x| over [0, absMax] (pass 2).
	hist []float64
}

func newActStats() *actStats {
	return &actStats{min: math.Inf(1), max: math.Inf(-1)}
}

func (s *actStats) absMax() float64 { return math.Max(math.Abs(s.min), math.Abs(s.max)) }

// observe is pass 1 on one sample's values.
func (s *actStats) observe(x []float32, method akgcfg.ActivationQuantMethod, scratch *[]float32) {
	if len(x) == 0 {
		return
	}
	s.n++
	lo, hi := float64(x[0]), float64(x[0])
	for _, v := range x {
		f := float64(v)
		if f < lo {
			lo = f
		}
		if f > hi {
			hi = f
		}
	}
	s.min, s.max = math.Min(s.min, lo), math.Max(s.max, hi)
	if method == akgcfg.RemovalOutlier {
		buf := append((*scratch)[:0], x...)
		*scratch = buf
		i := int(outlierLo * float64(len(buf)))
		j := int(outlierHi * float64(len(buf)))
		if j >= len(buf) {
			j = len(buf) - 1
		}
		s.qmin = append(s.qmin, float64(nthElement(buf, i)))
		s.qmax = append(s.qmax, float64(nthElement(buf, j)))
	}
}

// histogram is pass 2 (KL): |x| into klBins bins over [0, absMax].
func (s *actStats) histogram(x []float32) {
	if s.hist == nil {
		s.hist = make([]float64, klBins)
	}
	am := s.absMax()
	if am == 0 {
		return
	}
	w := am / klBins
	for _, v := range x {
		b := int(math.Abs(float64(v)) / w)
		if b >= klBins {
			b = klBins - 1
		}
		s.hist[b]++
	}
}

// rangeOf is the range method picks from s.
func (s *actStats) rangeOf(method akgcfg.ActivationQuantMethod) (lo, hi float64) {
	if s.n == 0 {
		return 0, 0
	}
	switch method {
	case akgcfg.RemovalOutlier:
		for i := range s.qmin {
			lo += s.qmin[i]
			hi += s.qmax[i]
		}
		return lo / float64(len(s.qmin)), hi / float64(len(s.qmax))
	case akgcfg.KL:
		am := s.absMax()
		if am == 0 || s.hist == nil {
			return s.min, s.max
		}
		t := (float64(klThreshold(s.hist)) + 0.5) * am / klBins
		return math.Max(s.min, -t), math.Min(s.max, t)
	}
	return s.min, s.max
}

// klThreshold is the threshold bin of hist (klBins bins) minimising the KL
// divergence of its klQuantBins-level quantization.
func klThreshold(hist []float64) int {
	best, bestKL := klQuantBins, math.Inf(1)
	tail := 0.0
	for _, v := range hist[klQuantBins:] {
		tail += v
	}
	ref := make([]float64, len(hist))
	exp := make([]float64, len(hist))
	q := make([]float64, klQuantBins)
	for i := klQuantBins; i < len(hist); i++ {
		copy(ref, hist[:i])
		ref[i-1] += tail
		tail -= hist[i]
		r := ref[:i]
		e := exp[:i]
		for k := range e {
			e[k] = 0
		}
		for k := range q {
			q[k] = 0
		}
		// Quantize bins [0, i) into klQuantBins levels of width i/klQuantBins
		// (fractional bin overlaps), then spread each level's mass evenly
		// over the non-empty source bins it covers.
		width := float64(i) / klQuantBins
		for k := 0; k < klQuantBins; k++ {
			start, end := float64(k)*width, float64(k+1)*width
			count := 0.0
			for b := int(start); b < i && float64(b) < end; b++ {
				ov := math.Min(end, float64(b+1)) - math.Max(start, float64(b))
				if ov <= 0 {
					continue
				}
				q[k] += ov * hist[b]
				if hist[b] != 0 {
					count += ov
				}
			}
			if count == 0 {
				continue
			}
			avg := q[k] / count
			for b := int(start); b < i && float64(b) < end; b++ {
				ov := math.Min(end, float64(b+1)) - math.Max(start, float64(b))
				if ov > 0 && hist[b] != 0 {
					e[b] += avg * ov
				}
			}
		}
		kl := klDivergence(r, e)
		if kl < bestKL {
			bestKL, best = kl, i
		}
	}
	return best
}

// klDivergence is KL(p || q) of the normalised histograms; a bin with mass
// in p and none in q counts with q's smallest positive mass.
func klDivergence(p, q []float64) float64 {
	var sp, sq float64
	for i := range p {
		sp += p[i]
		sq += q[i]
	}
	if sp == 0 || sq == 0 {
		return math.Inf(1)
	}
	const eps = 1e-12
	kl := 0.0
	for i := range p {
		if p[i] == 0 {
			continue
		}
		pi := p[i] / sp
		qi := q[i] / sq
		if qi < eps {
			qi = eps
		}
		kl += pi * math.Log(pi/qi)
	}
	return kl
}

// nthElement returns the k-th smallest element of a (reordering a).
func nthElement(a []float32, k int) float32 {
	lo, hi := 0, len(a)-1
	for lo < hi {
		// median of three pivot
		mid := lo + (hi-lo)/2
		if a[mid] < a[lo] {
			a[mid], a[lo] = a[lo], a[mid]
		}
		if a[hi] < a[lo] {
			a[hi], a[lo] = a[lo], a[hi]
		}
		if a[hi] < a[mid] {
			a[hi], a[mid] = a[mid], a[hi]
		}
		p := a[mid]
		i, j := lo, hi
		for i <= j {
			for a[i] < p {
				i++
			}
			for a[j] > p {
				j--
			}
			if i <= j {
				a[i], a[j] = a[j], a[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return a[k]
		}
	}
	return a[k]
}

// uint8Params is the uint8 asymmetric scale and zero point of [lo, hi],
// widened to include 0 (scripts/qdq_quantize.py's uint8_params): scale
// (hi-lo)/255 in float32 (1 for an empty range), zero point
// round_half_even(-lo/scale) clamped to [0, 255].
func uint8Params(lo, hi float64) (float32, uint8) {
	lo, hi = math.Min(lo, 0), math.Max(hi, 0)
	scale := float32(1)
	if hi > lo {
		scale = float32((hi - lo) / 255)
	}
	zp := math.RoundToEven(-lo / float64(scale))
	return scale, uint8(math.Max(0, math.Min(255, zp)))
}
