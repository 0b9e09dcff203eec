package nn

import (
	"slices"
	"sort"
	"strings"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// einsumSpec is a parsed equation: every operand and the output as lists of
// label ids (letters 0..51, ellipsis dims 52+i counted from the left of the
// broadcast ellipsis), and the size of every label.
type einsumSpec struct {
	ops    [][]int
	out    []int
	size   map[int]int
	labels []int // every label, output ones first
}

func labelOf(ch byte) (int, bool) {
	switch {
	case ch >= 'a' && ch <= 'z':
		return int(ch - 'a'), true
	case ch >= 'A' && ch <= 'Z':
		return 26 + int(ch-'A'), true
	}
	return 0, false
}

func parseEinsum(eq string, shapes [][]int64) (*einsumSpec, error) {
	eq = strings.ReplaceAll(eq, " ", "")
	lhs, rhs, explicit := strings.Cut(eq, "->")
	terms := strings.Split(lhs, ",")
	if len(terms) != len(shapes) {
		return nil, errString("equation %q has %d operands, node has %d inputs", eq, len(terms), len(shapes))
	}
	sp := &einsumSpec{size: map[int]int{}}
	ellRank := 0
	type parsed struct {
		pre, post []int
		ell       bool
	}
	parseTerm := func(t string) (parsed, error) {
		var p parsed
		for i := 0; i < len(t); i++ {
			if strings.HasPrefix(t[i:], "...") {
				if p.ell {
					return p, errString("two ellipses in %q", t)
				}
				p.ell = true
				i += 2
				continue
			}
			l, ok := labelOf(t[i])
			if !ok {
				return p, errString("bad character %q in equation %q", t[i], eq)
			}
			if p.ell {
				p.post = append(p.post, l)
			} else {
				p.pre = append(p.pre, l)
			}
		}
		return p, nil
	}
	ps := make([]parsed, len(terms))
	for i, t := range terms {
		p, err := parseTerm(t)
		if err != nil {
			return nil, err
		}
		nl := len(p.pre) + len(p.post)
		r := len(shapes[i])
		if (!p.ell && nl != r) || (p.ell && nl > r) {
			return nil, errString("term %q does not match operand rank %d", t, r)
		}
		if p.ell {
			ellRank = max(ellRank, r-nl)
		}
		ps[i] = p
	}
	ell := func(k int) []int { // labels of the last k ellipsis dims
		l := make([]int, k)
		for i := range l {
			l[i] = 52 + ellRank - k + i
		}
		return l
	}
	for i, p := range ps {
		var ls []int
		ls = append(ls, p.pre...)
		if p.ell {
			ls = append(ls, ell(len(shapes[i])-len(p.pre)-len(p.post))...)
		}
		ls = append(ls, p.post...)
		for j, l := range ls {
			d := int(shapes[i][j])
			if old, ok := sp.size[l]; ok && old != d {
				if old == 1 && l >= 52 {
					sp.size[l] = d
				} else if !(d == 1 && l >= 52) {
					return nil, errString("label size mismatch %d vs %d in %q", old, d, eq)
				}
			} else if !ok {
				sp.size[l] = d
			}
		}
		sp.ops = append(sp.ops, ls)
	}
	if explicit {
		p, err := parseTerm(rhs)
		if err != nil {
			return nil, err
		}
		sp.out = append(sp.out, p.pre...)
		if p.ell {
			sp.out = append(sp.out, ell(ellRank)...)
		}
		sp.out = append(sp.out, p.post...)
		seen := map[int]bool{}
		for _, l := range sp.out {
			if _, ok := sp.size[l]; !ok || seen[l] {
				return nil, errString("output label repeated or not in inputs in %q", eq)
			}
			seen[l] = true
		}
	} else {
		sp.out = ell(ellRank)
		count := map[int]int{}
		for _, ls := range sp.ops {
			for _, l := range ls {
				count[l]++
			}
		}
		var once []int
		for l, c := range count {
			if c == 1 && l < 52 {
				once = append(once, l)
			}
		}
		// implicit output: labels seen once, in ASCII order (numpy's)
		sort.Slice(once, func(a, b int) bool { return labelASCII(once[a]) < labelASCII(once[b]) })
		sp.out = append(sp.out, once...)
	}
	inOut := map[int]bool{}
	for _, l := range sp.out {
		inOut[l] = true
		sp.labels = append(sp.labels, l)
	}
	var rest []int
	for l := range sp.size {
		if !inOut[l] {
			rest = append(rest, l)
		}
	}
	sort.Ints(rest)
	sp.labels = append(sp.labels, rest...)
	return sp, nil
}

func labelASCII(l int) byte {
	if l < 26 {
		return byte('a' + l)
	}
	return byte('A' + l - 26)
}

// einsum is ONNX Einsum.
func einsum(ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if len(in) == 0 {
		return errf(n, "no inputs")
	}
	if err := need(n, in, len(in)); err != nil {
		return err
	}
	if hasHalf(in...) {
		return viaF32(ctx, n, in, out, einsum)
	}
	shapes := make([][]int64, len(in))
	for i, t := range in {
		if t.DType != in[0].DType {
			return errf(n, "inputs have different dtypes")
		}
		shapes[i] = t.Shape
	}
	sp, err := parseEinsum(n.Attrs.String("equation", ""), shapes)
	if err != nil {
		return errf(n, "%v", err)
	}
	want := make([]int64, len(sp.out))
	for i, l := range sp.out {
		want[i] = int64(sp.size[l])
	}
	y := out[0]
	if !slices.Equal(want, y.Shape) || y.DType != in[0].DType {
		return errf(n, "output %s, expected %s%v", y, in[0].DType, want)
	}
	switch y.DType {
	case ir.Float32:
		return einsumT(ctx, sp, in, y, sgemm)
	case ir.Float64:
		return einsumT(ctx, sp, in, y, dgemm)
	case ir.Int32:
		return einsumT(ctx, sp, in, y, gemmNaive[int32])
	case ir.Int64:
		return einsumT(ctx, sp, in, y, gemmNaive[int64])
	case ir.Uint32:
		return einsumT(ctx, sp, in, y, gemmNaive[uint32])
	case ir.Uint64:
		return einsumT(ctx, sp, in, y, gemmNaive[uint64])
	}
	return opkernel.Unsupportedf(n, "dtype %s", y.DType)
}

func einsumT[T number](ctx *opkernel.Ctx, sp *einsumSpec, in []*ir.Tensor, y *ir.Tensor, gemm gemmFunc[T]) error {
	ops := make([][]T, len(in))
	for i, t := range in {
		ops[i] = slice[T](t)
	}
	dst := slice[T](y)
	if len(sp.ops) == 2 && einsumGEMM(ctx, sp, in, ops, dst, gemm) {
		return nil
	}
	einsumLoop(sp, in, ops, dst)
	return nil
}

// labelStrides gives, per label in sp.labels order, the element stride of
// an operand with labels ls and shape shape: repeated labels add up (a
// diagonal), absent or broadcast (size-1) labels have stride 0.
func labelStrides(sp *einsumSpec, ls []int, shape []int64) []int {
	pos := map[int]int{}
	for i, l := range sp.labels {
		pos[l] = i
	}
	st := make([]int, len(sp.labels))
	s := 1
	for j := len(ls) - 1; j >= 0; j-- {
		if shape[j] != 1 || sp.size[ls[j]] == 1 {
			st[pos[ls[j]]] += s
		}
		s *= int(shape[j])
	}
	return st
}

// einsumLoop is the general path: one odometer over every label.
func einsumLoop[T number](sp *einsumSpec, in []*ir.Tensor, ops [][]T, dst []T) {
	nl := len(sp.labels)
	dims := make([]int, nl)
	total := 1
	for i, l := range sp.labels {
		dims[i] = sp.size[l]
		total *= dims[i]
	}
	clear(dst)
	if total == 0 {
		return
	}
	strides := make([][]int, len(ops)+1)
	for k := range ops {
		strides[k] = labelStrides(sp, sp.ops[k], in[k].Shape)
	}
	outShape := make([]int64, len(sp.out))
	for i, l := range sp.out {
		outShape[i] = int64(sp.size[l])
	}
	strides[len(ops)] = labelStrides(sp, sp.out, outShape)
	offs := make([]int, len(ops)+1)
	idx := make([]int, nl)
	for t := 0; t < total; t++ {
		v := ops[0][offs[0]]
		for k := 1; k < len(ops); k++ {
			v *= ops[k][offs[k]]
		}
		dst[offs[len(ops)]] += v
		for d := nl - 1; d >= 0; d-- {
			idx[d]++
			for k := range offs {
				offs[k] += strides[k][d]
			}
			if idx[d] < dims[d] {
				break
			}
			for k := range offs {
				offs[k] -= strides[k][d] * idx[d]
			}
			idx[d] = 0
		}
	}
}

// einsumGEMM runs a two-operand contraction as a batched GEMM when every
// label occurs once per operand, no ellipsis dim broadcasts and no label is
// summed out of a single operand; it reports whether it did.
func einsumGEMM[T number](ctx *opkernel.Ctx, sp *einsumSpec, in []*ir.Tensor, ops [][]T, dst []T, gemm gemmFunc[T]) bool {
	a, b := sp.ops[0], sp.ops[1]
	inA, inB, inO := map[int]bool{}, map[int]bool{}, map[int]bool{}
	for _, l := range a {
		if inA[l] {
			return false
		}
		inA[l] = true
	}
	for _, l := range b {
		if inB[l] {
			return false
		}
		inB[l] = true
	}
	for _, l := range sp.out {
		inO[l] = true
	}
	for k, ls := range sp.ops {
		for j, l := range ls {
			if int(in[k].Shape[j]) != sp.size[l] {
				return false // broadcast ellipsis dim
			}
		}
	}
	var batch, ms, ns, ks []int
	for _, l := range sp.out {
		switch {
		case inA[l] && inB[l]:
			batch = append(batch, l)
		case inA[l]:
			ms = append(ms, l)
		case inB[l]:
			ns = append(ns, l)
		}
	}
	for _, l := range a {
		if !inO[l] {
			if !inB[l] {
				return false
			}
			ks = append(ks, l)
		}
	}
	for _, l := range b {
		if !inO[l] && !inA[l] {
			return false
		}
	}
	sz := func(ls []int) int {
		p := 1
		for _, l := range ls {
			p *= sp.size[l]
		}
		return p
	}
	nb, m, nn, k := sz(batch), sz(ms), sz(ns), sz(ks)
	at := permuteTo(ops[0], a, in[0].Shape, concat(batch, ms, ks))
	bt := permuteTo(ops[1], b, in[1].Shape, concat(batch, ks, ns))
	mid := concat(batch, ms, ns)
	res := dst
	if !equalInts(mid, sp.out) {
		res = make([]T, nb*m*nn)
	}
	if m*nn > 0 {
		gemm := gemmOn(ctx, gemm)
		for t := 0; t < nb; t++ {
			if k == 0 {
				clear(res[t*m*nn : (t+1)*m*nn])
				continue
			}
			gemm(false, false, m, nn, k, 1, at[t*m*k:], k, bt[t*k*nn:], nn, 0, res[t*m*nn:], nn)
		}
	}
	if !equalInts(mid, sp.out) {
		midShape := make([]int64, len(mid))
		for i, l := range mid {
			midShape[i] = int64(sp.size[l])
		}
		copy(dst, permuteTo(res, mid, midShape, sp.out))
	}
	return true
}

func concat(ls ...[]int) []int {
	var r []int
	for _, l := range ls {
		r = append(r, l...)
	}
	return r
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// permuteTo returns src (labels from, shape) with its dims reordered to the
// label order to; src itself when the order already matches.
func permuteTo[T any](src []T, from []int, shape []int64, to []int) []T {
	if equalInts(from, to) {
		return src
	}
	pos := map[int]int{}
	for i, l := range from {
		pos[l] = i
	}
	r := len(from)
	inStr := make([]int, r)
	s := 1
	for i := r - 1; i >= 0; i-- {
		inStr[i] = s
		s *= int(shape[i])
	}
	dims := make([]int, r)
	strides := make([]int, r)
	for i, l := range to {
		dims[i] = int(shape[pos[l]])
		strides[i] = inStr[pos[l]]
	}
	dst := make([]T, s)
	if s == 0 {
		return dst
	}
	idx := make([]int, r)
	off := 0
	last := r - 1
	for t := 0; t < s; {
		// innermost dim as a run
		if r == 0 {
			dst[0] = src[0]
			break
		}
		st := strides[last]
		o := off
		for i := 0; i < dims[last]; i++ {
			dst[t] = src[o]
			o += st
			t++
		}
		for d := last - 1; d >= 0; d-- {
			idx[d]++
			off += strides[d]
			if idx[d] < dims[d] {
				break
			}
			off -= strides[d] * idx[d]
			idx[d] = 0
		}
	}
	return dst
}
