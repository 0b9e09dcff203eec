package nn

import (
	"encoding/binary"
	"math"
	"slices"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// Generators of the ONNX signal ops (BlackmanWindow, HammingWindow,
// HannWindow, MelWeightMatrix) and TfIdfVectorizer. Values are computed in
// float64 and written in the output's dtype (attr output_datatype).

func init() {
	for _, op := range []string{"BlackmanWindow", "HammingWindow", "HannWindow"} {
		opkernel.Register(op, windowOp)
	}
	opkernel.Register("MelWeightMatrix", melWeightMatrixOp)
	opkernel.Register("TfIdfVectorizer", tfIdfOp)
}

// putValues writes vals into t: floats rounded to t's dtype, integers
// truncated toward zero (as a cast).
func putValues(n *ir.Node, t *ir.Tensor, vals []float64) error {
	if t.NumElements() != int64(len(vals)) || len(t.Data) < len(vals)*t.DType.Size() {
		return errf(n, "output %s for %d values", t, len(vals))
	}
	if t.DType.IsFloat() {
		for i, v := range vals {
			t.PutFloat(i, v)
		}
		return nil
	}
	if !t.DType.IsInt() {
		return opkernel.Unsupportedf(n, "output dtype %s", t.DType)
	}
	sz := t.DType.Size()
	for i, v := range vals {
		u := uint64(int64(v))
		switch sz {
		case 1:
			t.Data[i] = byte(u)
		case 2:
			binary.LittleEndian.PutUint16(t.Data[2*i:], uint16(u))
		case 4:
			binary.LittleEndian.PutUint32(t.Data[4*i:], uint32(u))
		default:
			binary.LittleEndian.PutUint64(t.Data[8*i:], u)
		}
	}
	return nil
}

// scalarIn reads input i as one number.
func scalarIn(n *ir.Node, in []*ir.Tensor, i int) (float64, error) {
	if i >= len(in) || in[i] == nil {
		return 0, errf(n, "input %d is missing", i)
	}
	v, err := in[i].Float64s()
	if err != nil || len(v) != 1 {
		return 0, errf(n, "input %d must be a scalar, got %s", i, in[i])
	}
	return v[0], nil
}

// windowOp: w[k] = sum_j (-1)^j a_j cos(2 pi j k / N'), N' = N when
// periodic (the default), N-1 otherwise.
func windowOp(_ *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	size, err := scalarIn(n, in, 0)
	if err != nil {
		return err
	}
	if len(out) < 1 || out[0] == nil || size < 0 || out[0].NumElements() != int64(size) {
		return errf(n, "window of %g for output %v", size, out)
	}
	var a []float64
	switch n.Op {
	case "BlackmanWindow":
		a = []float64{0.42, 0.5, 0.08}
	case "HammingWindow":
		a = []float64{25.0 / 46, 21.0 / 46}
	default:
		a = []float64{0.5, 0.5}
	}
	cnt := int(size)
	span := float64(cnt)
	if n.Attrs.Int("periodic", 1) == 0 {
		span--
	}
	w := make([]float64, cnt)
	for k := range w {
		sign := 1.0
		for j, aj := range a {
			w[k] += sign * aj * math.Cos(2*math.Pi*float64(j*k)/span)
			sign = -sign
		}
	}
	return putValues(n, out[0], w)
}

// melWeightMatrixOp follows the ONNX definition: num_mel_bins+2 points
// from the lower edge, (upper-lower)/(num_mel_bins+2) apart on the mel
// scale (so the last stops short of the upper edge), mapped to FFT bins
// (floor((dft_length+1)*hz/sample_rate)), and a triangle per mel bin.
func melWeightMatrixOp(_ *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	var v [5]float64
	for i := range v {
		x, err := scalarIn(n, in, i)
		if err != nil {
			return err
		}
		v[i] = x
	}
	bins, dft, rate, lo, hi := int(v[0]), int(v[1]), v[2], v[3], v[4]
	specBins := dft/2 + 1
	if len(out) < 1 || out[0] == nil || !slices.Equal(out[0].Shape, []int64{int64(specBins), int64(bins)}) {
		return errf(n, "output %v for %d mel bins of %d spectrogram bins", out, bins, specBins)
	}
	if rate <= 0 {
		return errf(n, "sample_rate %g must be positive", rate)
	}
	mel := func(hz float64) float64 { return 2595 * math.Log10(1+hz/700) }
	loMel, hiMel := mel(lo), mel(hi)
	step := (hiMel - loMel) / float64(bins+2) // the ONNX definition's step (not bins+1)
	fb := make([]int, bins+2)
	for i := range fb {
		hz := 700 * (math.Pow(10, (float64(i)*step+loMel)/2595) - 1)
		fb[i] = int(math.Floor(float64(dft+1) * hz / rate))
	}
	w := make([]float64, specBins*bins)
	// Bins past the spectrogram (edges beyond Nyquist) are left out.
	set := func(j, i int, x float64) {
		if j >= 0 && j < specBins {
			w[j*bins+i] = x
		}
	}
	for i := 0; i < bins; i++ {
		l, c, h := fb[i], fb[i+1], fb[i+2]
		if c == l {
			set(c, i, 1)
		} else {
			for j := max(l, 0); j <= min(c, specBins-1); j++ {
				set(j, i, float64(j-l)/float64(c-l))
			}
		}
		if h > c {
			for j := max(c, 0); j < min(h, specBins); j++ {
				set(j, i, float64(h-j)/float64(h-c))
			}
		}
	}
	return putValues(n, out[0], w)
}

// tfIdfOp counts, per row, the pool's n-grams: for each skip s in
// 0..max_skip_count, the n-grams x[i], x[i+s+1], ..., of lengths
// min..max_gram_length (1-grams once, not per skip); then weighs the
// counts by mode.
func tfIdfOp(_ *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if len(in) < 1 || in[0] == nil || len(out) < 1 || out[0] == nil {
		return errf(n, "needs one input and one output")
	}
	x, o := in[0], out[0]
	p, err := ir.ReadTfIdfPool(n.Attrs)
	if err != nil {
		return errf(n, "%v", err)
	}
	if x.DType != ir.Int32 && x.DType != ir.Int64 {
		return opkernel.Unsupportedf(n, "input dtype %s", x.DType)
	}
	vals, err := x.Int64s()
	if err != nil {
		return errf(n, "%v", err)
	}
	rows, cols := 1, 0
	switch len(x.Shape) {
	case 1:
		cols = int(x.Shape[0])
	case 2:
		rows, cols = int(x.Shape[0]), int(x.Shape[1])
	default:
		return errf(n, "input %s must have rank 1 or 2", x)
	}
	want := []int64{p.Size}
	if len(x.Shape) == 2 {
		want = []int64{int64(rows), p.Size}
	}
	if o.DType != ir.Float32 || !slices.Equal(o.Shape, want) {
		return errf(n, "output %s, expected float32%v", o, want)
	}
	key := func(g []int64) string {
		b := make([]byte, 0, 8*len(g))
		for _, v := range g {
			b = binary.LittleEndian.AppendUint64(b, uint64(v))
		}
		return string(b)
	}
	pool := map[string]int64{}
	for k, g := range p.Grams {
		pool[key(g)] = p.Index[k]
	}
	res := make([]float64, rows*int(p.Size))
	gram := make([]int64, 0, p.MaxN)
	for r := 0; r < rows; r++ {
		row, cnt := vals[r*cols:(r+1)*cols], res[r*int(p.Size):(r+1)*int(p.Size)]
		minN := p.MinN
		for skip := 0; skip <= p.MaxSkip && minN <= p.MaxN; skip++ {
			for i := range row {
				gram = gram[:0]
				for j := i; j < len(row) && len(gram) < p.MaxN; j += skip + 1 {
					gram = append(gram, row[j])
					if len(gram) < minN {
						continue
					}
					if ix, ok := pool[key(gram)]; ok {
						cnt[ix]++
					}
				}
			}
			if minN == 1 {
				minN = 2 // 1-grams do not depend on the skip: count them once
			}
		}
		for ix, c := range cnt {
			w := 1.0
			if len(p.Weights) > 0 {
				w = p.Weights[ix]
			}
			switch p.Mode {
			case "IDF":
				if c > 0 {
					cnt[ix] = w
				}
			case "TFIDF":
				cnt[ix] = c * w
			}
		}
	}
	return putValues(n, o, res)
}
