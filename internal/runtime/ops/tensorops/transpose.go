package tensorops

import (
	"sort"
	"unsafe"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

func init() {
	regMove("Transpose", firstIn, transposeOp[uint8], transposeOp[uint16], transposeOp[uint32], transposeOp[uint64], transposeOp[b16], transposeOp[string])
}

func transposeOp[T any](ctx *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := needIn(n, in, out, 1, 1); err != nil {
		return err
	}
	x := in[0]
	rank := len(x.Shape)
	perm := make([]int, rank)
	if p := n.Attrs.Ints("perm", nil); p != nil {
		if len(p) != rank {
			return errf(n, "perm %v has %d entries for rank %d", p, len(p), rank)
		}
		seen := make([]bool, rank)
		for i, v := range p {
			a, err := normAxis(n, v, rank)
			if err != nil || seen[a] {
				return errf(n, "perm %v is not a permutation of 0..%d", p, rank-1)
			}
			seen[a] = true
			perm[i] = a
		}
	} else {
		for i := range perm {
			perm[i] = rank - 1 - i
		}
	}
	for i, a := range perm {
		if i >= len(out[0].Shape) || out[0].Shape[i] != x.Shape[a] {
			return errf(n, "output shape %v does not match input %v permuted by %v", out[0].Shape, x.Shape, perm)
		}
	}
	src, err := elems[T](n, x, "input")
	if err != nil {
		return err
	}
	dst, err := elems[T](n, out[0], "output")
	if err != nil {
		return err
	}
	transposeT(ctx, dst, src, dims(x.Shape), perm)
	return nil
}

// simplifyPerm drops size-1 dims and merges input dims that stay adjacent and
// in order in the output, so e.g. (0,2,3,1) on [1,S,H,D] becomes a plain 2-D
// transpose of [S,H*D]. It returns the reduced input shape and permutation.
func simplifyPerm(shape, perm []int) ([]int, []int) {
	newIdx := make([]int, len(shape))
	var s []int
	for i, d := range shape {
		if d == 1 {
			newIdx[i] = -1
			continue
		}
		newIdx[i] = len(s)
		s = append(s, d)
	}
	var p []int
	for _, a := range perm {
		if newIdx[a] >= 0 {
			p = append(p, newIdx[a])
		}
	}
	// groups of consecutive input dims, in output order
	type group struct{ first, last int }
	var groups []group
	for _, a := range p {
		if k := len(groups) - 1; k >= 0 && groups[k].last+1 == a {
			groups[k].last = a
		} else {
			groups = append(groups, group{a, a})
		}
	}
	order := make([]int, len(groups)) // group indices sorted by input position
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return groups[order[a]].first < groups[order[b]].first })
	rs := make([]int, len(groups))
	pos := make([]int, len(groups))
	for k, g := range order {
		size := 1
		for d := groups[g].first; d <= groups[g].last; d++ {
			size *= s[d]
		}
		rs[k] = size
		pos[g] = k
	}
	rp := make([]int, len(groups))
	for i := range groups {
		rp[i] = pos[i]
	}
	return rs, rp
}

// transposeT writes dst (output dim i = input dim perm[i]) from src of the
// given input shape.
func transposeT[T any](ctx *opkernel.Ctx, dst, src []T, shape, perm []int) {
	total := prod(shape)
	if total == 0 {
		return
	}
	s, p := simplifyPerm(shape, perm)
	r := len(s)
	if r <= 1 {
		parCopy(ctx, dst, src)
		return
	}
	inStride := make([]int, r)
	st := 1
	for d := r - 1; d >= 0; d-- {
		inStride[d] = st
		st *= s[d]
	}
	// strides of the input walked in output order
	os := make([]int, r)
	ws := make([]int, r)
	for i, a := range p {
		os[i] = s[a]
		ws[i] = inStride[a]
	}
	if p[r-1] == r-1 {
		transposeRuns(ctx, dst, src, os, ws)
		return
	}
	transposeTiles(ctx, dst, src, os, ws, p)
}

// transposeRuns handles permutations that keep the innermost input dim
// innermost: the output is a sequence of contiguous input runs.
func transposeRuns[T any](ctx *opkernel.Ctx, dst, src []T, os, ws []int) {
	r := len(os)
	runLen := os[r-1]
	outer := len(dst) / runLen
	odims, ostr := os[:r-1], ws[:r-1]
	run[T](ctx, outer, runLen, func(start, end int) {
		idx := make([]int, len(odims))
		off := 0
		rem := start
		for d := len(odims) - 1; d >= 0; d-- {
			idx[d] = rem % odims[d]
			rem /= odims[d]
			off += idx[d] * ostr[d]
		}
		last := len(odims) - 1
		for o := start; o < end; o++ {
			copy(dst[o*runLen:(o+1)*runLen], src[off:off+runLen])
			// odometer step
			for d := last; d >= 0; d-- {
				idx[d]++
				off += ostr[d]
				if idx[d] < odims[d] {
					break
				}
				off -= idx[d] * ostr[d]
				idx[d] = 0
			}
		}
	})
}

// tile is the block edge of the 2-D transpose: 32x32 blocks of 4-byte
// elements are 4 KiB per side, well inside L1.
const tile = 32

// transposeTiles handles permutations that move the innermost input dim:
// each batch (all dims but the output-last and the input-last) is a 2-D
// transpose dst[i*ldo+k] = src[k*ldi+i], done in cache-sized tiles.
func transposeTiles[T any](ctx *opkernel.Ctx, dst, src []T, os, ws, p []int) {
	r := len(os)
	q := 0 // output position of the innermost input dim
	for i, a := range p {
		if a == r-1 {
			q = i
		}
	}
	outStride := make([]int, r)
	st := 1
	for d := r - 1; d >= 0; d-- {
		outStride[d] = st
		st *= os[d]
	}
	rows, cols := os[q], os[r-1] // i runs over rows, k over cols
	ldi, ldo := ws[r-1], outStride[q]
	// batch dims: output dims other than q and r-1
	var bDims, bIn, bOut []int
	for i := 0; i < r-1; i++ {
		if i != q {
			bDims = append(bDims, os[i])
			bIn = append(bIn, ws[i])
			bOut = append(bOut, outStride[i])
		}
	}
	// 4-byte elements go to C by bands of 256 rows (1 KiB of each source
	// row per visit instead of 128 bytes: fewer pages touched per byte)
	band := tile
	var z T
	if unsafe.Sizeof(z) == 4 && transposeInC {
		band = 256
	}
	rowTiles := (rows + band - 1) / band
	items := prod(bDims) * rowTiles
	run[T](ctx, items, band*cols, func(start, end int) {
		for it := start; it < end; it++ {
			b, rt := it/rowTiles, it%rowTiles
			inOff, outOff := 0, 0
			for d := len(bDims) - 1; d >= 0; d-- {
				c := b % bDims[d]
				b /= bDims[d]
				inOff += c * bIn[d]
				outOff += c * bOut[d]
			}
			i0 := rt * band
			i1 := min(i0+band, rows)
			// 4-byte elements: one C call for the whole band of rows (its
			// 8x8 register blocks stream the columns; a call per tile cost
			// as much as the tile)
			if transposeBlock32(dst[outOff:], src[inOff:], i0, i1, 0, cols, ldi, ldo) {
				continue
			}
			for k0 := 0; k0 < cols; k0 += tile {
				k1 := min(k0+tile, cols)
				transposeBlock(dst[outOff:], src[inOff:], i0, i1, k0, k1, ldi, ldo)
			}
		}
	})
}

// transposeBlock moves one tile: dst[i*ldo+k] = src[k*ldi+i]. Groups of 8
// output rows read 8 adjacent source elements at once (one cache line for
// 4-byte types) and write 8 sequential streams.
func transposeBlock[T any](dst, src []T, i0, i1, k0, k1, ldi, ldo int) {
	if transposeBlock32(dst, src, i0, i1, k0, k1, ldi, ldo) {
		return
	}
	transposeBlockGo(dst, src, i0, i1, k0, k1, ldi, ldo)
}

// transposeBlockGo is transposeBlock in Go (other element sizes, no cgo).
func transposeBlockGo[T any](dst, src []T, i0, i1, k0, k1, ldi, ldo int) {
	i := i0
	w := k1 - k0
	for ; i+8 <= i1; i += 8 {
		d0 := dst[(i+0)*ldo+k0:][:w]
		d1 := dst[(i+1)*ldo+k0:][:w]
		d2 := dst[(i+2)*ldo+k0:][:w]
		d3 := dst[(i+3)*ldo+k0:][:w]
		d4 := dst[(i+4)*ldo+k0:][:w]
		d5 := dst[(i+5)*ldo+k0:][:w]
		d6 := dst[(i+6)*ldo+k0:][:w]
		d7 := dst[(i+7)*ldo+k0:][:w]
		p := k0*ldi + i
		for k := 0; k < w; k++ {
			s := src[p : p+8 : p+8]
			d0[k], d1[k], d2[k], d3[k] = s[0], s[1], s[2], s[3]
			d4[k], d5[k], d6[k], d7[k] = s[4], s[5], s[6], s[7]
			p += ldi
		}
	}
	for ; i < i1; i++ {
		d := dst[i*ldo+k0 : i*ldo+k1]
		p := k0*ldi + i
		for k := range d {
			d[k] = src[p]
			p += ldi
		}
	}
}
