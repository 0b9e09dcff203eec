package ir

import "fmt"

// Shape functions of the ops that reshape or move data: Reshape, Flatten,
// Squeeze, Unsqueeze, Transpose, Concat, Split, Slice, Gather, GatherD, Pad,
// Tile, DepthToSpace, SpaceToDepth.

// inferReshape: inputs x, shape; 0 copies x's dim (unless allowzero), one -1
// takes the remaining elements.
func inferReshape(n *Node) error {
	x := n.Inputs[0]
	target, ok, err := constInts(n, 1)
	if err != nil {
		return err
	}
	if !ok {
		if l := vecLen(n.Inputs[1]); l >= 0 {
			setOutput(n, 0, x.DType, unknownShape(int(l)))
		} else {
			setOutput(n, 0, x.DType, nil)
		}
		return nil
	}
	allowZero := n.Attrs.Int("allowzero", 0) != 0
	out := make([]int64, len(target))
	inferAt, hasZero := -1, false
	for i, d := range target {
		switch {
		case d == -1:
			if inferAt >= 0 {
				return fmt.Errorf("%s: shape %v has more than one -1", inputDesc(n, 1), target)
			}
			inferAt = i
			out[i] = unknownDim
		case d < -1:
			return fmt.Errorf("%s: shape %v has invalid dim %d", inputDesc(n, 1), target, d)
		case d == 0 && !allowZero:
			switch {
			case x.Shape == nil:
				out[i] = unknownDim
			case i >= len(x.Shape):
				return fmt.Errorf("%s: shape %v copies dim %d, but x has shape %v", inputDesc(n, 1), target, i, x.Shape)
			default:
				out[i] = x.Shape[i]
			}
		default:
			hasZero = hasZero || d == 0
			out[i] = d
		}
	}
	if allowZero && hasZero && inferAt >= 0 {
		return fmt.Errorf("%s: shape %v mixes 0 and -1 with allowzero=1", inputDesc(n, 1), target)
	}
	total := int64(unknownDim)
	if x.Shape != nil {
		total = NumElements(x.Shape)
	}
	if inferAt >= 0 {
		rest := int64(1)
		for i, d := range out {
			if i != inferAt {
				rest = mulDims(rest, d)
			}
		}
		if total >= 0 && rest >= 0 {
			if rest == 0 || total%rest != 0 {
				return fmt.Errorf("%s: cannot reshape x %v (%d elements) to %v", inputDesc(n, 1), x.Shape, total, target)
			}
			out[inferAt] = total / rest
		}
	} else if p := NumElements(out); total >= 0 && p >= 0 && p != total {
		return fmt.Errorf("%s: cannot reshape x %v (%d elements) to %v (%d elements)", inputDesc(n, 1), x.Shape, total, out, p)
	}
	setOutput(n, 0, x.DType, out)
	return nil
}

// inferFlatten: 2-D [prod(d[:axis]), prod(d[axis:])]; axis in [-r, r].
func inferFlatten(n *Node) error {
	x := n.Inputs[0]
	if x.Shape == nil {
		setOutput(n, 0, x.DType, unknownShape(2))
		return nil
	}
	r := len(x.Shape)
	axis := n.Attrs.Int("axis", 1)
	if axis < -int64(r) || axis > int64(r) {
		return fmt.Errorf("attribute axis %d is out of range for rank %d", axis, r)
	}
	if axis < 0 {
		axis += int64(r)
	}
	setOutput(n, 0, x.DType, []int64{mulDims(x.Shape[:axis]...), mulDims(x.Shape[axis:]...)})
	return nil
}

// inferSqueeze: inputs x, axes?; without axes every dim of size 1 goes.
func inferSqueeze(n *Node) error {
	x := n.Inputs[0]
	axes, ok, err := constInts(n, 1)
	if err != nil {
		return err
	}
	if n.Input(1) != nil && !ok {
		l := vecLen(n.Inputs[1])
		switch {
		case x.Shape == nil || l <= 0:
			// l == 0 squeezes all unit dims, which needs the data anyway.
			setOutput(n, 0, x.DType, nil)
		case l > int64(len(x.Shape)):
			return fmt.Errorf("%s: %d axes for a rank-%d input", inputDesc(n, 1), l, len(x.Shape))
		default:
			setOutput(n, 0, x.DType, unknownShape(len(x.Shape)-int(l)))
		}
		return nil
	}
	if x.Shape == nil {
		setOutput(n, 0, x.DType, nil)
		return nil
	}
	out := make([]int64, 0, len(x.Shape))
	if len(axes) == 0 {
		for _, d := range x.Shape {
			if d < 0 {
				// Whether it is squeezed decides the rank.
				setOutput(n, 0, x.DType, nil)
				return nil
			}
			if d != 1 {
				out = append(out, d)
			}
		}
		setOutput(n, 0, x.DType, out)
		return nil
	}
	ax, err := normAxes(axes, len(x.Shape))
	if err != nil {
		return fmt.Errorf("%s: %w", inputDesc(n, 1), err)
	}
	drop := make([]bool, len(x.Shape))
	for _, a := range ax {
		if d := x.Shape[a]; d >= 0 && d != 1 {
			return fmt.Errorf("%s: cannot squeeze axis %d of size %d (x %v)", inputDesc(n, 1), a, d, x.Shape)
		}
		drop[a] = true
	}
	for i, d := range x.Shape {
		if !drop[i] {
			out = append(out, d)
		}
	}
	setOutput(n, 0, x.DType, out)
	return nil
}

// inferUnsqueeze: inputs x, axes; axes index the output.
func inferUnsqueeze(n *Node) error {
	x := n.Inputs[0]
	axes, ok, err := constInts(n, 1)
	if err != nil {
		return err
	}
	if !ok {
		if l := vecLen(n.Inputs[1]); x.Shape != nil && l >= 0 {
			setOutput(n, 0, x.DType, unknownShape(len(x.Shape)+int(l)))
		} else {
			setOutput(n, 0, x.DType, nil)
		}
		return nil
	}
	if x.Shape == nil {
		setOutput(n, 0, x.DType, nil)
		return nil
	}
	r := len(x.Shape) + len(axes)
	ax, err := normAxes(axes, r)
	if err != nil {
		return fmt.Errorf("%s: %w", inputDesc(n, 1), err)
	}
	ins := make([]bool, r)
	for _, a := range ax {
		ins[a] = true
	}
	out := make([]int64, r)
	j := 0
	for i := range out {
		if ins[i] {
			out[i] = 1
		} else {
			out[i] = x.Shape[j]
			j++
		}
	}
	setOutput(n, 0, x.DType, out)
	return nil
}

// inferTranspose: attr perm, default reversed axes.
func inferTranspose(n *Node) error {
	x := n.Inputs[0]
	perm := n.Attrs.Ints("perm", nil)
	if !n.Attrs.Has("perm") {
		if x.Shape == nil {
			setOutput(n, 0, x.DType, nil)
			return nil
		}
		out := make([]int64, len(x.Shape))
		for i, d := range x.Shape {
			out[len(out)-1-i] = d
		}
		setOutput(n, 0, x.DType, out)
		return nil
	}
	r := len(perm)
	if x.Shape != nil && len(x.Shape) != r {
		return fmt.Errorf("attribute perm %v has %d entries for rank-%d %s", perm, r, len(x.Shape), inputDesc(n, 0))
	}
	seen := make([]bool, r)
	for _, p := range perm {
		if p < 0 || p >= int64(r) || seen[p] {
			return fmt.Errorf("attribute perm %v is not a permutation of 0..%d", perm, r-1)
		}
		seen[p] = true
	}
	if x.Shape == nil {
		setOutput(n, 0, x.DType, unknownShape(r))
		return nil
	}
	out := make([]int64, r)
	for i, p := range perm {
		out[i] = x.Shape[p]
	}
	setOutput(n, 0, x.DType, out)
	return nil
}

// inferConcat: attr axis (ONNX requires it; 0 as MindSpore's default when
// absent). Other dims must agree.
func inferConcat(n *Node) error {
	var out []int64
	first := -1
	for i, v := range n.Inputs {
		if v == nil {
			return fmt.Errorf("input %d is missing", i)
		}
		if v.Shape == nil {
			continue
		}
		if first < 0 {
			first = i
			out = cloneShape(v.Shape)
			continue
		}
		if len(v.Shape) != len(out) {
			return fmt.Errorf("%s has rank %d (shape %v), %s has rank %d",
				inputDesc(n, i), len(v.Shape), v.Shape, inputDesc(n, first), len(out))
		}
	}
	if err := sameDType(n, allInputs(n)...); err != nil {
		return err
	}
	dt := firstDType(n.Inputs...)
	if first < 0 {
		setOutput(n, 0, dt, nil)
		return nil
	}
	ax, err := normAxis(n.Attrs.Int("axis", 0), len(out))
	if err != nil {
		return fmt.Errorf("attribute axis: %w", err)
	}
	sum := int64(0)
	for i, v := range n.Inputs {
		if v.Shape == nil {
			sum = unknownDim
			continue
		}
		for k, d := range v.Shape {
			if k == ax {
				if sum >= 0 && d >= 0 {
					sum += d
				} else {
					sum = unknownDim
				}
				continue
			}
			switch {
			case d < 0:
			case out[k] < 0:
				out[k] = d
			case out[k] != d:
				return fmt.Errorf("%s has shape %v: dim %d is %d, expected %d", inputDesc(n, i), v.Shape, k, d, out[k])
			}
		}
	}
	out[ax] = sum
	setOutput(n, 0, dt, out)
	return nil
}

// inferSplit: inputs x, split?; attrs axis, num_outputs. Without split the
// dim is cut into ceil-sized chunks, one per output (ONNX 18 rule).
func inferSplit(n *Node) error {
	x := n.Inputs[0]
	nout := len(n.Outputs)
	if n.Attrs.Has("num_outputs") {
		if k := n.Attrs.Int("num_outputs", 0); k != int64(nout) {
			return fmt.Errorf("attribute num_outputs is %d but the node has %d outputs", k, nout)
		}
	}
	split, ok, err := constInts(n, 1)
	if err != nil {
		return err
	}
	if ok && len(split) == 0 {
		ok = false // an empty split tensor means "not given" in older exporters
	}
	if ok && len(split) != nout {
		return fmt.Errorf("%s: %d split sizes for %d outputs", inputDesc(n, 1), len(split), nout)
	}
	if x.Shape == nil {
		for i := range n.Outputs {
			setOutput(n, i, x.DType, nil)
		}
		return nil
	}
	ax, err := normAxis(n.Attrs.Int("axis", 0), len(x.Shape))
	if err != nil {
		return fmt.Errorf("attribute axis: %w", err)
	}
	d := x.Shape[ax]
	sizes := make([]int64, nout)
	switch {
	case ok:
		sum := int64(0)
		for i, s := range split {
			if s < 0 {
				return fmt.Errorf("%s: negative split size %d", inputDesc(n, 1), s)
			}
			sizes[i] = s
			sum += s
		}
		if d >= 0 && sum != d {
			return fmt.Errorf("%s: split sizes %v sum to %d, but axis %d of x %v is %d", inputDesc(n, 1), split, sum, ax, x.Shape, d)
		}
	case n.Input(1) != nil && !isEmptyInput(n, 1), d < 0:
		for i := range sizes {
			sizes[i] = unknownDim
		}
	default:
		chunk := ceilDiv(d, int64(nout))
		for i := range sizes {
			sizes[i] = chunk
		}
		sizes[nout-1] = d - chunk*int64(nout-1)
		if sizes[nout-1] < 0 {
			return fmt.Errorf("cannot split axis %d of size %d into %d outputs", ax, d, nout)
		}
	}
	for i, s := range sizes {
		out := cloneShape(x.Shape)
		out[ax] = s
		setOutput(n, i, x.DType, out)
	}
	return nil
}

// sliceLen is the ONNX Slice output length of one axis of size d.
func sliceLen(d, start, end, step int64) int64 {
	if start < 0 {
		start += d
	}
	if end < 0 {
		end += d
	}
	if step > 0 {
		start, end = clampInt64(start, 0, d), clampInt64(end, 0, d)
		if end <= start {
			return 0
		}
		return ceilDiv(end-start, step)
	}
	start, end = clampInt64(start, 0, d-1), clampInt64(end, -1, d-1)
	if start <= end {
		return 0
	}
	// -step may overflow for MinInt64; any step beyond d gives one element.
	if step < -d {
		return 1
	}
	return ceilDiv(start-end, -step)
}

// inferSlice: inputs data, starts, ends, axes?, steps?; rank is kept.
func inferSlice(n *Node) error {
	x := n.Inputs[0]
	starts, sok, err := constInts(n, 1)
	if err != nil {
		return err
	}
	ends, eok, err := constInts(n, 2)
	if err != nil {
		return err
	}
	axes, aok, err := constInts(n, 3)
	if err != nil {
		return err
	}
	steps, tok, err := constInts(n, 4)
	if err != nil {
		return err
	}
	hasAxes, hasSteps := n.Input(3) != nil, n.Input(4) != nil
	if sok && eok && len(starts) != len(ends) {
		return fmt.Errorf("%s has %d entries, %s has %d", inputDesc(n, 1), len(starts), inputDesc(n, 2), len(ends))
	}
	for _, c := range []struct {
		i    int
		ok   bool
		vals []int64
	}{{3, aok, axes}, {4, tok, steps}} {
		if c.ok && sok && len(c.vals) != len(starts) {
			return fmt.Errorf("%s has %d entries, %s has %d", inputDesc(n, c.i), len(c.vals), inputDesc(n, 1), len(starts))
		}
	}
	if tok {
		for _, s := range steps {
			if s == 0 {
				return fmt.Errorf("%s: step is 0", inputDesc(n, 4))
			}
		}
	}
	if x.Shape == nil {
		setOutput(n, 0, x.DType, nil)
		return nil
	}
	r := len(x.Shape)
	if hasAxes && !aok {
		// Which axes are sliced is unknown.
		setOutput(n, 0, x.DType, unknownShape(r))
		return nil
	}
	var ax []int
	if hasAxes {
		if ax, err = normAxes(axes, r); err != nil {
			return fmt.Errorf("%s: %w", inputDesc(n, 3), err)
		}
	} else {
		l := int(vecLen(n.Inputs[1]))
		if l < 0 {
			l = int(vecLen(n.Inputs[2]))
		}
		if l < 0 {
			setOutput(n, 0, x.DType, unknownShape(r))
			return nil
		}
		if l > r {
			return fmt.Errorf("%s: %d starts for rank-%d data", inputDesc(n, 1), l, r)
		}
		ax = make([]int, l)
		for i := range ax {
			ax[i] = i
		}
	}
	out := cloneShape(x.Shape)
	known := sok && eok && (!hasSteps || tok)
	for i, a := range ax {
		d := x.Shape[a]
		if !known || d < 0 {
			out[a] = unknownDim
			continue
		}
		step := int64(1)
		if hasSteps {
			step = steps[i]
		}
		out[a] = sliceLen(d, starts[i], ends[i], step)
	}
	setOutput(n, 0, x.DType, out)
	return nil
}

// inferGather: data[:axis] + indices.shape + data[axis+1:].
func inferGather(n *Node) error {
	data, idx := n.Inputs[0], n.Inputs[1]
	if idx.DType != Undefined && !idx.DType.IsInt() {
		return fmt.Errorf("%s: indices must be integers, got %s", inputDesc(n, 1), idx.DType)
	}
	if data.Shape == nil {
		setOutput(n, 0, data.DType, nil)
		return nil
	}
	ax, err := normAxis(n.Attrs.Int("axis", 0), len(data.Shape))
	if err != nil {
		return fmt.Errorf("attribute axis: %w", err)
	}
	if idx.Shape == nil {
		setOutput(n, 0, data.DType, nil)
		return nil
	}
	out := make([]int64, 0, len(data.Shape)-1+len(idx.Shape))
	out = append(out, data.Shape[:ax]...)
	out = append(out, idx.Shape...)
	out = append(out, data.Shape[ax+1:]...)
	setOutput(n, 0, data.DType, out)
	return nil
}

// inferGatherD (ONNX GatherElements): output has the indices' shape.
func inferGatherD(n *Node) error {
	data, idx := n.Inputs[0], n.Inputs[1]
	if idx.DType != Undefined && !idx.DType.IsInt() {
		return fmt.Errorf("%s: indices must be integers, got %s", inputDesc(n, 1), idx.DType)
	}
	r := -1
	if data.Shape != nil {
		r = len(data.Shape)
	}
	if idx.Shape != nil {
		if r >= 0 && len(idx.Shape) != r {
			return fmt.Errorf("%s: indices rank %d differs from data rank %d", inputDesc(n, 1), len(idx.Shape), r)
		}
		r = len(idx.Shape)
	}
	if r >= 0 {
		if _, err := normAxis(n.Attrs.Int("axis", 0), r); err != nil {
			return fmt.Errorf("attribute axis: %w", err)
		}
	}
	setOutputLike(n, 0, data.DType, idx)
	return nil
}

// inferPad: inputs data, pads, constant_value?, axes?; pads are all begins
// then all ends over axes; negative pads crop.
func inferPad(n *Node) error {
	switch mode := n.Attrs.String("mode", "constant"); mode {
	case "constant", "reflect", "edge", "wrap":
	default:
		return fmt.Errorf("attribute mode %q is not constant, reflect, edge or wrap", mode)
	}
	x := n.Inputs[0]
	pads, pok, err := constInts(n, 1)
	if err != nil {
		return err
	}
	axes, aok, err := constInts(n, 3)
	if err != nil {
		return err
	}
	if x.Shape == nil {
		setOutput(n, 0, x.DType, nil)
		return nil
	}
	r := len(x.Shape)
	if n.Input(3) != nil && !aok {
		setOutput(n, 0, x.DType, unknownShape(r))
		return nil
	}
	var ax []int
	if n.Input(3) != nil {
		if ax, err = normAxes(axes, r); err != nil {
			return fmt.Errorf("%s: %w", inputDesc(n, 3), err)
		}
	} else {
		ax = make([]int, r)
		for i := range ax {
			ax[i] = i
		}
	}
	out := cloneShape(x.Shape)
	if !pok {
		for _, a := range ax {
			out[a] = unknownDim
		}
		setOutput(n, 0, x.DType, out)
		return nil
	}
	if len(pads) != 2*len(ax) {
		return fmt.Errorf("%s: %d pads for %d axes (want %d)", inputDesc(n, 1), len(pads), len(ax), 2*len(ax))
	}
	for i, a := range ax {
		if out[a] < 0 {
			continue
		}
		out[a] += pads[i] + pads[i+len(ax)]
		if out[a] < 0 {
			return fmt.Errorf("%s: pads %v make axis %d of x %v negative", inputDesc(n, 1), pads, a, x.Shape)
		}
	}
	setOutput(n, 0, x.DType, out)
	return nil
}

// inferTile: inputs x, repeats (one per axis).
func inferTile(n *Node) error {
	x := n.Inputs[0]
	reps, ok, err := constInts(n, 1)
	if err != nil {
		return err
	}
	if !ok {
		switch {
		case x.Shape != nil:
			setOutput(n, 0, x.DType, unknownShape(len(x.Shape)))
		case vecLen(n.Inputs[1]) >= 0:
			setOutput(n, 0, x.DType, unknownShape(int(vecLen(n.Inputs[1]))))
		default:
			setOutput(n, 0, x.DType, nil)
		}
		return nil
	}
	for _, rp := range reps {
		if rp < 0 {
			return fmt.Errorf("%s: negative repeat in %v", inputDesc(n, 1), reps)
		}
	}
	if x.Shape == nil {
		setOutput(n, 0, x.DType, unknownShape(len(reps)))
		return nil
	}
	if len(reps) != len(x.Shape) {
		return fmt.Errorf("%s: %d repeats for rank-%d x", inputDesc(n, 1), len(reps), len(x.Shape))
	}
	out := make([]int64, len(reps))
	for i, d := range x.Shape {
		out[i] = mulDims(d, reps[i])
		if reps[i] == 0 {
			out[i] = 0
		}
	}
	setOutput(n, 0, x.DType, out)
	return nil
}

// blockSize reads the required blocksize attr.
func blockSize(n *Node) (int64, error) {
	b := n.Attrs.Int("blocksize", 0)
	if b <= 0 {
		return 0, fmt.Errorf("attribute blocksize must be positive, got %d", b)
	}
	return b, nil
}

// inferDepthToSpace: [N, C, H, W] -> [N, C/b², H·b, W·b].
func inferDepthToSpace(n *Node) error {
	b, err := blockSize(n)
	if err != nil {
		return err
	}
	if m := n.Attrs.String("mode", "DCR"); m != "DCR" && m != "CRD" {
		return fmt.Errorf("attribute mode %q is not DCR or CRD", m)
	}
	x := n.Inputs[0]
	if x.Shape == nil {
		setOutput(n, 0, x.DType, unknownShape(4))
		return nil
	}
	if len(x.Shape) != 4 {
		return fmt.Errorf("%s must be 4-D, got %v", inputDesc(n, 0), x.Shape)
	}
	c := x.Shape[1]
	if c >= 0 && c%(b*b) != 0 {
		return fmt.Errorf("%s: channels %d not divisible by blocksize² %d", inputDesc(n, 0), c, b*b)
	}
	if c >= 0 {
		c /= b * b
	}
	setOutput(n, 0, x.DType, []int64{x.Shape[0], c, mulDims(x.Shape[2], b), mulDims(x.Shape[3], b)})
	return nil
}

// inferSpaceToDepth: [N, C, H, W] -> [N, C·b², H/b, W/b].
func inferSpaceToDepth(n *Node) error {
	b, err := blockSize(n)
	if err != nil {
		return err
	}
	x := n.Inputs[0]
	if x.Shape == nil {
		setOutput(n, 0, x.DType, unknownShape(4))
		return nil
	}
	if len(x.Shape) != 4 {
		return fmt.Errorf("%s must be 4-D, got %v", inputDesc(n, 0), x.Shape)
	}
	out := []int64{x.Shape[0], mulDims(x.Shape[1], b*b), x.Shape[2], x.Shape[3]}
	for i := 2; i < 4; i++ {
		if d := x.Shape[i]; d >= 0 {
			if d%b != 0 {
				return fmt.Errorf("%s: dim %d (%d) not divisible by blocksize %d", inputDesc(n, 0), i, d, b)
			}
			out[i] = d / b
		}
	}
	setOutput(n, 0, x.DType, out)
	return nil
}
