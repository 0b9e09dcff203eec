package ir

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Shape functions of the misc family (ops_misc.go): bit ops, window and
// mel-matrix generators, TfIdfVectorizer, CenterCropPad, Col2Im, Compress,
// OneHot, ReverseSequence and Unique. Ops whose output shape depends on
// input values (window sizes, Compress, OneHot's depth, Unique) read them
// when they are constants, as every input is at run time, and leave the
// dims unknown otherwise.

// inferBitCast: same shape, dtype attr to; the element sizes must match.
func inferBitCast(n *Node) error {
	x := n.Inputs[0]
	to := DType(n.Attrs.Int("to", 0))
	if !validDType(to) || to == String || to.Size() == 0 {
		return fmt.Errorf("attr to=%d is not a numeric dtype", to)
	}
	if x.DType != Undefined && x.DType.Size() != to.Size() {
		return fmt.Errorf("cannot bitcast %s (%d bytes) to %s (%d bytes)", x.DType, x.DType.Size(), to, to.Size())
	}
	setOutputLike(n, 0, to, x)
	return nil
}

// checkIntInputs rejects known non-integer dtypes among the inputs.
func checkIntInputs(n *Node) error {
	for i := range n.Inputs {
		if d := dtypeOf(n.Input(i)); d != Undefined && !d.IsInt() {
			return fmt.Errorf("%s must be an integer tensor, got %s", inputDesc(n, i), d)
		}
	}
	return nil
}

// inferBitwise: integer operands of one dtype, numpy broadcasting.
func inferBitwise(n *Node) error {
	if err := checkIntInputs(n); err != nil {
		return err
	}
	if n.Op == "BitShift" {
		if d := n.Attrs.String("direction", ""); d != "LEFT" && d != "RIGHT" {
			return fmt.Errorf("attr direction=%q, want LEFT or RIGHT", d)
		}
	}
	return inferBinary(n)
}

// inferBitwiseNot: an integer tensor, same shape.
func inferBitwiseNot(n *Node) error {
	if err := checkIntInputs(n); err != nil {
		return err
	}
	return inferUnary(n)
}

// inferCastLike: x's shape with the target's dtype (unknown until the
// target's is).
func inferCastLike(n *Node) error {
	setOutputLike(n, 0, dtypeOf(n.Inputs[1]), n.Inputs[0])
	return nil
}

// outputDatatype reads the generators' attr output_datatype (float32 by default).
func outputDatatype(n *Node) (DType, error) {
	dt := DType(n.Attrs.Int("output_datatype", int64(Float32)))
	if !validDType(dt) || dt == String || dt == Bool || dt.Size() == 0 || dt == Complex64 || dt == Complex128 {
		return Undefined, fmt.Errorf("attr output_datatype=%d is not a supported numeric dtype", dt)
	}
	return dt, nil
}

// inferWindow: input size (scalar); output [size].
func inferWindow(n *Node) error {
	if err := checkScalarInput(n, 0); err != nil {
		return err
	}
	dt, err := outputDatatype(n)
	if err != nil {
		return err
	}
	size, ok, err := constScalarInt(n, 0)
	if err != nil {
		return err
	}
	if !ok {
		setOutput(n, 0, dt, []int64{unknownDim})
		return nil
	}
	if size < 0 {
		return fmt.Errorf("%s: window size %d is negative", inputDesc(n, 0), size)
	}
	setOutput(n, 0, dt, []int64{size})
	return nil
}

// inferMelWeightMatrix: [dft_length/2+1, num_mel_bins].
func inferMelWeightMatrix(n *Node) error {
	for i := 0; i < 5; i++ {
		if err := checkScalarInput(n, i); err != nil {
			return err
		}
	}
	dt, err := outputDatatype(n)
	if err != nil {
		return err
	}
	shape := []int64{unknownDim, unknownDim}
	if dft, ok, err := constScalarInt(n, 1); err != nil {
		return err
	} else if ok {
		if dft <= 0 {
			return fmt.Errorf("%s: dft_length %d must be positive", inputDesc(n, 1), dft)
		}
		shape[0] = dft/2 + 1
	}
	if bins, ok, err := constScalarInt(n, 0); err != nil {
		return err
	} else if ok {
		if bins <= 0 {
			return fmt.Errorf("%s: num_mel_bins %d must be positive", inputDesc(n, 0), bins)
		}
		shape[1] = bins
	}
	setOutput(n, 0, dt, shape)
	return nil
}

// TfIdfPool is TfIdfVectorizer's n-gram pool read from its attributes:
// Grams[k] is the k-th n-gram (pool order: all 1-grams, then 2-grams, ...)
// and Index[k] its coordinate in the output, which has Size columns.
type TfIdfPool struct {
	Grams   [][]int64
	Index   []int64
	Size    int64
	MinN    int
	MaxN    int
	MaxSkip int
	Mode    string
	Weights []float64
}

// ReadTfIdfPool checks and reads TfIdfVectorizer's attributes.
func ReadTfIdfPool(a Attrs) (*TfIdfPool, error) {
	p := &TfIdfPool{
		MinN: int(a.Int("min_gram_length", 0)), MaxN: int(a.Int("max_gram_length", 0)),
		MaxSkip: int(a.Int("max_skip_count", 0)), Mode: a.String("mode", ""),
		Weights: a.Floats("weights", nil),
	}
	if len(a.Strings("pool_strings")) > 0 {
		return nil, fmt.Errorf("pool_strings: string n-grams are not supported")
	}
	switch {
	case p.Mode != "TF" && p.Mode != "IDF" && p.Mode != "TFIDF":
		return nil, fmt.Errorf("attr mode=%q, want TF, IDF or TFIDF", p.Mode)
	case p.MinN < 1 || p.MaxN < p.MinN:
		return nil, fmt.Errorf("gram lengths min %d, max %d", p.MinN, p.MaxN)
	case p.MaxSkip < 0:
		return nil, fmt.Errorf("max_skip_count %d is negative", p.MaxSkip)
	}
	pool := a.Ints("pool_int64s", nil)
	counts := a.Ints("ngram_counts", nil)
	p.Index = a.Ints("ngram_indexes", nil)
	for g := 0; g < len(counts); g++ {
		start, end := counts[g], int64(len(pool))
		if g+1 < len(counts) {
			end = counts[g+1]
		}
		size := int64(g + 1)
		if start < 0 || end < start || end > int64(len(pool)) || (end-start)%size != 0 {
			return nil, fmt.Errorf("ngram_counts %v do not split a pool of %d", counts, len(pool))
		}
		for i := start; i < end; i += size {
			p.Grams = append(p.Grams, pool[i:i+size])
		}
	}
	if len(p.Index) != len(p.Grams) {
		return nil, fmt.Errorf("%d ngram_indexes for %d n-grams", len(p.Index), len(p.Grams))
	}
	for _, ix := range p.Index {
		if ix < 0 {
			return nil, fmt.Errorf("ngram_indexes has a negative index %d", ix)
		}
		p.Size = max(p.Size, ix+1)
	}
	if len(p.Weights) > 0 && int64(len(p.Weights)) < p.Size {
		return nil, fmt.Errorf("%d weights for %d outputs", len(p.Weights), p.Size)
	}
	return p, nil
}

// inferTfIdf: [C] -> [size], [N, C] -> [N, size]; float32.
func inferTfIdf(n *Node) error {
	x := n.Inputs[0]
	if x.DType != Undefined && x.DType != Int32 && x.DType != Int64 {
		return fmt.Errorf("%s must be int32 or int64, got %s", inputDesc(n, 0), x.DType)
	}
	p, err := ReadTfIdfPool(n.Attrs)
	if err != nil {
		return err
	}
	switch {
	case x.Shape == nil:
		setOutput(n, 0, Float32, nil)
	case len(x.Shape) == 1:
		setOutput(n, 0, Float32, []int64{p.Size})
	case len(x.Shape) == 2:
		setOutput(n, 0, Float32, []int64{x.Shape[0], p.Size})
	default:
		return fmt.Errorf("%s must have rank 1 or 2, got %v", inputDesc(n, 0), x.Shape)
	}
	return nil
}

// CenterCropAxes returns the axes of CenterCropPad for an input of rank r.
func CenterCropAxes(a Attrs, r int) ([]int, error) {
	if !a.Has("axes") {
		axes := make([]int, r)
		for i := range axes {
			axes[i] = i
		}
		return axes, nil
	}
	return normAxes(a.Ints("axes", nil), r)
}

// inferCenterCropPad: x's shape with the axes' dims set from shape.
func inferCenterCropPad(n *Node) error {
	x := n.Inputs[0]
	if x.Shape == nil {
		setOutput(n, 0, x.DType, nil)
		return nil
	}
	axes, err := CenterCropAxes(n.Attrs, len(x.Shape))
	if err != nil {
		return err
	}
	out := cloneShape(x.Shape)
	shape, ok, err := constInts(n, 1)
	if err != nil {
		return err
	}
	if ok && len(shape) != len(axes) {
		return fmt.Errorf("%s has %d values for %d axes", inputDesc(n, 1), len(shape), len(axes))
	}
	for i, ax := range axes {
		out[ax] = unknownDim
		if ok {
			if shape[i] < 0 {
				return fmt.Errorf("%s: negative size %d", inputDesc(n, 1), shape[i])
			}
			out[ax] = shape[i]
		}
	}
	setOutput(n, 0, x.DType, out)
	return nil
}

// inferCol2Im: [N, C*prod(block), L] -> [N, C, image_shape...].
func inferCol2Im(n *Node) error {
	x := n.Inputs[0]
	if x.Shape != nil && len(x.Shape) != 3 {
		return fmt.Errorf("%s must have rank 3, got %v", inputDesc(n, 0), x.Shape)
	}
	r := vecLen(n.Inputs[1])
	img, imgOK, err := constInts(n, 1)
	if err != nil {
		return err
	}
	if imgOK {
		r = int64(len(img))
	}
	if r < 0 {
		setOutput(n, 0, x.DType, nil)
		return nil
	}
	block, blockOK, err := constInts(n, 2)
	if err != nil {
		return err
	}
	if blockOK && int64(len(block)) != r {
		return fmt.Errorf("block_shape %v and image_shape of %d dims", block, r)
	}
	out := unknownShape(int(r) + 2)
	if x.Shape != nil {
		out[0] = x.Shape[0]
		if blockOK && x.Shape[1] >= 0 {
			k := int64(1)
			for _, b := range block {
				if b <= 0 {
					return fmt.Errorf("block_shape %v must be positive", block)
				}
				k *= b
			}
			if x.Shape[1]%k != 0 {
				return fmt.Errorf("%s: dim 1 (%d) is not a multiple of the block size %d", inputDesc(n, 0), x.Shape[1], k)
			}
			out[1] = x.Shape[1] / k
		}
	}
	if imgOK {
		for i, d := range img {
			if d <= 0 {
				return fmt.Errorf("image_shape %v must be positive", img)
			}
			out[2+i] = d
		}
	}
	setOutput(n, 0, x.DType, out)
	return nil
}

// checkVector rejects an input of known rank other than 1.
func checkVector(n *Node, i int) error {
	if s := shapeOf(n.Input(i)); s != nil && len(s) != 1 {
		return fmt.Errorf("%s must be 1-D, got %v", inputDesc(n, i), s)
	}
	return nil
}

// inferCompress: the number of true conditions among the first ones, as
// many as the slices along axis (or the elements of the flattened input).
func inferCompress(n *Node) error {
	x := n.Inputs[0]
	if err := checkVector(n, 1); err != nil {
		return err
	}
	if x.Shape == nil {
		setOutput(n, 0, x.DType, nil)
		return nil
	}
	limit := NumElements(x.Shape)
	axis := -1
	if n.Attrs.Has("axis") {
		a, err := normAxis(n.Attrs.Int("axis", 0), len(x.Shape))
		if err != nil {
			return err
		}
		axis, limit = a, x.Shape[a]
	}
	cnt := int64(unknownDim)
	if cond, ok, err := constInts(n, 1); err != nil {
		return err
	} else if ok && limit >= 0 {
		// Conditions past the data select nothing (as onnxruntime).
		cond = cond[:min(int64(len(cond)), limit)]
		cnt = 0
		for _, v := range cond {
			if v != 0 {
				cnt++
			}
		}
	}
	if axis < 0 {
		setOutput(n, 0, x.DType, []int64{cnt})
		return nil
	}
	out := cloneShape(x.Shape)
	out[axis] = cnt
	setOutput(n, 0, x.DType, out)
	return nil
}

// inferOneHot: indices' shape with depth inserted at axis; values' dtype.
func inferOneHot(n *Node) error {
	ind, vals := n.Inputs[0], n.Inputs[2]
	if err := checkScalarInput(n, 1); err != nil {
		return err
	}
	if vals.ShapeKnown() && NumElements(vals.Shape) != 2 {
		return fmt.Errorf("%s must hold [off, on], got shape %v", inputDesc(n, 2), vals.Shape)
	}
	if ind.Shape == nil {
		setOutput(n, 0, vals.DType, nil)
		return nil
	}
	r := len(ind.Shape)
	axis, err := normAxis(n.Attrs.Int("axis", -1), r+1)
	if err != nil {
		return err
	}
	depth := int64(unknownDim)
	if d, ok, err := constFloats(n, 1); err != nil {
		return err
	} else if ok {
		if len(d) != 1 || !(d[0] >= 1) || d[0] > float64(math.MaxInt32) {
			return fmt.Errorf("%s: depth %v must be a positive scalar", inputDesc(n, 1), d)
		}
		depth = int64(d[0])
	}
	out := make([]int64, 0, r+1)
	out = append(out, ind.Shape[:axis]...)
	out = append(out, depth)
	out = append(out, ind.Shape[axis:]...)
	setOutput(n, 0, vals.DType, out)
	return nil
}

// inferReverseSequence: x's shape; sequence_lens is [batch].
func inferReverseSequence(n *Node) error {
	x, l := n.Inputs[0], n.Inputs[1]
	if err := checkVector(n, 1); err != nil {
		return err
	}
	if x.Shape != nil {
		if len(x.Shape) < 2 {
			return fmt.Errorf("%s must have rank >= 2, got %v", inputDesc(n, 0), x.Shape)
		}
		b, err := normAxis(n.Attrs.Int("batch_axis", 1), len(x.Shape))
		if err != nil {
			return err
		}
		t, err := normAxis(n.Attrs.Int("time_axis", 0), len(x.Shape))
		if err != nil {
			return err
		}
		if b == t || b > 1 || t > 1 {
			return fmt.Errorf("batch_axis %d and time_axis %d must be 0 and 1", b, t)
		}
		if l.Shape != nil && l.Shape[0] >= 0 && x.Shape[b] >= 0 && l.Shape[0] != x.Shape[b] {
			return fmt.Errorf("%d sequence_lens for a batch of %d", l.Shape[0], x.Shape[b])
		}
	}
	setOutputLike(n, 0, x.DType, x)
	return nil
}

// UniqueKeys returns one key per slice of t along axis (per element when
// axis < 0): equal keys are equal slices, with -0 equal to +0 and every NaN
// equal to every other (as numpy's unique).
func UniqueKeys(t *Tensor, axis int) ([]string, error) {
	if err := tensorDataOK(t); err != nil {
		return nil, err
	}
	sz := t.DType.Size()
	outer, dim, inner := int64(1), t.NumElements(), int64(1)
	if axis >= 0 {
		dim = t.Shape[axis]
		for _, d := range t.Shape[:axis] {
			outer *= d
		}
		for _, d := range t.Shape[axis+1:] {
			inner *= d
		}
	}
	keys := make([]string, dim)
	buf := make([]byte, 0, int(outer*inner)*sz)
	for i := int64(0); i < dim; i++ {
		buf = buf[:0]
		for o := int64(0); o < outer; o++ {
			off := (o*dim + i) * inner * int64(sz)
			buf = appendCanonical(buf, t.DType, t.Data[off:off+inner*int64(sz)])
		}
		keys[i] = string(buf)
	}
	return keys, nil
}

// appendCanonical appends elements with -0 and NaN of float dtypes canonicalised.
func appendCanonical(buf []byte, dt DType, b []byte) []byte {
	switch dt {
	case Float32, Float64:
		// float32 widens exactly: one canonical float64 form for both
		for i := 0; i+dt.Size() <= len(b); i += dt.Size() {
			var f float64
			if dt == Float32 {
				f = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[i:])))
			} else {
				f = math.Float64frombits(binary.LittleEndian.Uint64(b[i:]))
			}
			bits := math.Float64bits(f)
			if f == 0 {
				bits = 0
			} else if f != f {
				bits = 0x7ff8000000000000
			}
			buf = binary.LittleEndian.AppendUint64(buf, bits)
		}
	case Float16, BFloat16:
		expMask, mantMask := uint16(0x7c00), uint16(0x03ff)
		if dt == BFloat16 {
			expMask, mantMask = 0x7f80, 0x007f
		}
		for i := 0; i+2 <= len(b); i += 2 {
			h := binary.LittleEndian.Uint16(b[i:])
			if h&0x7fff == 0 {
				h = 0
			} else if h&expMask == expMask && h&mantMask != 0 {
				h = expMask | (mantMask+1)>>1
			}
			buf = binary.LittleEndian.AppendUint16(buf, h)
		}
	default:
		buf = append(buf, b...)
	}
	return buf
}

// inferUnique: Y [U] (or x's shape with U at axis), indices [U],
// inverse_indices [slices], counts [U]; U counted from x's data when known.
func inferUnique(n *Node) error {
	x := n.Inputs[0]
	axis := -1
	if n.Attrs.Has("axis") {
		if x.Shape == nil {
			for i := range n.Outputs {
				setOutput(n, i, Int64, []int64{unknownDim})
			}
			setOutput(n, 0, x.DType, nil)
			return nil
		}
		a, err := normAxis(n.Attrs.Int("axis", 0), len(x.Shape))
		if err != nil {
			return err
		}
		axis = a
	}
	u, slices := int64(unknownDim), int64(unknownDim)
	if x.Shape != nil {
		slices = NumElements(x.Shape)
		if axis >= 0 {
			slices = x.Shape[axis]
		}
	}
	if x.Const != nil && x.DType != String {
		keys, err := UniqueKeys(x.Const, axis)
		if err != nil {
			return fmt.Errorf("%s: %w", inputDesc(n, 0), err)
		}
		seen := map[string]bool{}
		for _, k := range keys {
			seen[k] = true
		}
		u = int64(len(seen))
	}
	if axis < 0 {
		setOutput(n, 0, x.DType, []int64{u})
	} else {
		y := cloneShape(x.Shape)
		y[axis] = u
		setOutput(n, 0, x.DType, y)
	}
	setOutput(n, 1, Int64, []int64{u})
	setOutput(n, 2, Int64, []int64{slices})
	setOutput(n, 3, Int64, []int64{u})
	return nil
}
