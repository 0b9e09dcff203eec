package cpu

import (
	"fmt"
	"strings"

	"gkconv/internal/kernels"
)

// Loop nests: the loops a stage runs in, adjacent dims merged into one loop
// where every access walks them contiguously, and how they are written
// (outer loops OpenMP-parallel, the innermost SIMD).

// loopCtx describes the loops a stage runs in: original dims, how they are
// merged into loop groups, and the variable of each group.
type loopCtx struct {
	dims  []int64
	grp   []int // group of each original dim; -1 for a size-1 dim
	glast []int // last original dim of each group
	gsize []int64
	vars  []string
	rec   [][]int64 // strides of every access (collection run)
}

// newLoopCtx builds loops over dims; merge lists, for each original dim, whether
// it merges with the previous kept dim.
func newLoopCtx(dims []int64, merge []bool, varFor func(g int, first int) string) *loopCtx {
	lc := &loopCtx{dims: dims, grp: make([]int, len(dims))}
	for i, d := range dims {
		if d == 1 {
			lc.grp[i] = -1
			continue
		}
		if merge != nil && merge[i] && len(lc.glast) > 0 {
			gi := len(lc.glast) - 1
			lc.grp[i] = gi
			lc.glast[gi] = i
			lc.gsize[gi] *= d
			continue
		}
		lc.grp[i] = len(lc.glast)
		lc.glast = append(lc.glast, i)
		lc.gsize = append(lc.gsize, d)
		lc.vars = append(lc.vars, varFor(len(lc.glast)-1, i))
	}
	return lc
}

// mergePlan merges adjacent kept dims where every recorded access walks them
// as one contiguous run (stride[l] == stride[l+1]*dims[l+1]).
func mergePlan(dims []int64, rec [][]int64) []bool {
	merge := make([]bool, len(dims))
	prev := -1
	for i, d := range dims {
		if d == 1 {
			continue
		}
		if prev >= 0 {
			ok := true
			for _, s := range rec {
				if s[prev] != s[i]*d {
					ok = false
					break
				}
			}
			merge[i] = ok
		}
		prev = i
	}
	return merge
}

// offset writes the element offset of an access with the given strides.
func (lc *loopCtx) offset(strides []int64) string {
	lc.rec = append(lc.rec, strides)
	var terms []string
	for gi, last := range lc.glast {
		s := strides[last]
		if s == 0 {
			continue
		}
		if s == 1 {
			terms = append(terms, lc.vars[gi])
		} else {
			terms = append(terms, fmt.Sprintf("%s*%d", lc.vars[gi], s))
		}
	}
	if len(terms) == 0 {
		return "0"
	}
	return strings.Join(terms, " + ")
}

// accessStrides turns a value's index map into per-loop-dim strides.
func (lc *loopCtx) accessStrides(shape []int64, m []int) []int64 {
	st := kernels.Strides(shape)
	s := make([]int64, len(lc.dims))
	for a, l := range m {
		if l >= 0 {
			s[l] += st[a]
		}
	}
	return s
}

// writeLoops wraps body in the loops of lc: the outer loops parallel (when
// par), the innermost one SIMD; a single loop is split into blocks so it can
// be both. simdClause is appended to the innermost simd pragma.
func writeLoops(w *strings.Builder, lc *loopCtx, body string, par bool, simdClause string) {
	G := len(lc.gsize)
	ind := func(k int) string { return strings.Repeat("  ", k+2) }
	switch {
	case G == 0:
		w.WriteString(body)
	case G == 1:
		n := lc.gsize[0]
		if par && n > 2*blockElems {
			nb := (n + blockElems - 1) / blockElems
			fmt.Fprintf(w, "%s#pragma omp parallel for schedule(static)\n", ind(0))
			fmt.Fprintf(w, "%sfor (int64_t b = 0; b < %d; b++) {\n", ind(0), nb)
			fmt.Fprintf(w, "%s  const int64_t e = b * %d + %d < %d ? b * %d + %d : %d;\n", ind(0), blockElems, blockElems, n, blockElems, blockElems, n)
			fmt.Fprintf(w, "%s  #pragma omp simd%s\n", ind(0), simdClause)
			fmt.Fprintf(w, "%s  for (int64_t %s = b * %d; %s < e; %s++) {\n", ind(0), lc.vars[0], blockElems, lc.vars[0], lc.vars[0])
			w.WriteString(body)
			fmt.Fprintf(w, "%s  }\n%s}\n", ind(0), ind(0))
			return
		}
		fmt.Fprintf(w, "%s#pragma omp simd%s\n", ind(0), simdClause)
		fmt.Fprintf(w, "%sfor (int64_t %s = 0; %s < %d; %s++) {\n", ind(0), lc.vars[0], lc.vars[0], n, lc.vars[0])
		w.WriteString(body)
		fmt.Fprintf(w, "%s}\n", ind(0))
	default:
		if par {
			if G > 2 {
				fmt.Fprintf(w, "%s#pragma omp parallel for collapse(%d) schedule(static)\n", ind(0), G-1)
			} else {
				fmt.Fprintf(w, "%s#pragma omp parallel for schedule(static)\n", ind(0))
			}
		}
		for k := 0; k < G; k++ {
			if k == G-1 {
				fmt.Fprintf(w, "%s#pragma omp simd%s\n", ind(k), simdClause)
			}
			fmt.Fprintf(w, "%sfor (int64_t %s = 0; %s < %d; %s++) {\n", ind(k), lc.vars[k], lc.vars[k], lc.gsize[k], lc.vars[k])
		}
		w.WriteString(body)
		for k := G - 1; k >= 0; k-- {
			fmt.Fprintf(w, "%s}\n", ind(k))
		}
	}
}

// writeOuterLoops writes plain loops (the first parallel when par) with the
// innermost SIMD only when the body is a plain statement list.
func writeOuterLoops(w *strings.Builder, lc *loopCtx, body string, par bool) {
	G := len(lc.gsize)
	ind := func(k int) string { return strings.Repeat("  ", k+2) }
	for k := 0; k < G; k++ {
		if k == 0 && par {
			fmt.Fprintf(w, "%s#pragma omp parallel for schedule(static)\n", ind(k))
		}
		fmt.Fprintf(w, "%sfor (int64_t %s = 0; %s < %d; %s++) {\n", ind(k), lc.vars[k], lc.vars[k], lc.gsize[k], lc.vars[k])
	}
	w.WriteString(body)
	for k := G - 1; k >= 0; k-- {
		fmt.Fprintf(w, "%s}\n", ind(k))
	}
}
