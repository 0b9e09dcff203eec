package cpu

import (
	"fmt"
	"strings"

	"gkconv/internal/kernels"
)

// Loop nests: the loops a stage runs in, adjacent dims merged into one loop
// where every access walks them contiguously, and how they are written
// (outer loops parallel tasks, the innermost SIMD).

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
// par: a task over the outer iterations, see parallelFor), the innermost
// one SIMD; a single loop is split into blocks so it can be both.
// simdClause is appended to the innermost simd pragma; pre (statements that
// use no variable of the innermost loop) is written just before it.
func (g *gen) writeLoops(w *strings.Builder, lc *loopCtx, pre, body string, par bool, simdClause string) {
	G := len(lc.gsize)
	ind := func(k int) string { return strings.Repeat("  ", k+2) }
	switch {
	case G == 0:
		w.WriteString(pre)
		w.WriteString(body)
	case G == 1:
		n := lc.gsize[0]
		if par && n > 2*blockElems {
			nb := (n + blockElems - 1) / blockElems
			var tb strings.Builder
			fmt.Fprintf(&tb, "%s  const int64_t e = b * %d + %d < %d ? b * %d + %d : %d;\n", ind(0), blockElems, blockElems, n, blockElems, blockElems, n)
			tb.WriteString(pre)
			fmt.Fprintf(&tb, "%s  #pragma omp simd%s\n", ind(0), simdClause)
			fmt.Fprintf(&tb, "%s  for (int64_t %s = b * %d; %s < e; %s++) {\n", ind(0), lc.vars[0], blockElems, lc.vars[0], lc.vars[0])
			tb.WriteString(body)
			fmt.Fprintf(&tb, "%s  }\n", ind(0))
			g.parallelFor(w, ind(0), nb, "b", "", tb.String(), "")
			return
		}
		w.WriteString(pre)
		fmt.Fprintf(w, "%s#pragma omp simd%s\n", ind(0), simdClause)
		fmt.Fprintf(w, "%sfor (int64_t %s = 0; %s < %d; %s++) {\n", ind(0), lc.vars[0], lc.vars[0], n, lc.vars[0])
		w.WriteString(body)
		fmt.Fprintf(w, "%s}\n", ind(0))
	case par:
		// the outer G-1 loops as one index t, each variable derived from it
		var tb strings.Builder
		n, div := int64(1), make([]int64, G-1)
		for k := G - 2; k >= 0; k-- {
			div[k] = n
			n *= lc.gsize[k]
		}
		for k := 0; k < G-1; k++ {
			fmt.Fprintf(&tb, "%s  const int64_t %s = t / %d %% %d;\n", ind(0), lc.vars[k], div[k], lc.gsize[k])
		}
		tb.WriteString(pre)
		fmt.Fprintf(&tb, "%s  #pragma omp simd%s\n", ind(0), simdClause)
		fmt.Fprintf(&tb, "%s  for (int64_t %s = 0; %s < %d; %s++) {\n", ind(0), lc.vars[G-1], lc.vars[G-1], lc.gsize[G-1], lc.vars[G-1])
		tb.WriteString(body)
		fmt.Fprintf(&tb, "%s  }\n", ind(0))
		g.parallelFor(w, ind(0), n, "t", "", tb.String(), "")
	default:
		for k := 0; k < G; k++ {
			if k == G-1 {
				w.WriteString(pre)
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

// writeOuterLoops writes plain loops (the first one a task over its
// iterations when par) around body.
func (g *gen) writeOuterLoops(w *strings.Builder, lc *loopCtx, body string, par bool) {
	G := len(lc.gsize)
	ind := func(k int) string { return strings.Repeat("  ", k+2) }
	if par && G > 0 {
		var tb strings.Builder
		for k := 1; k < G; k++ {
			fmt.Fprintf(&tb, "%sfor (int64_t %s = 0; %s < %d; %s++) {\n", ind(k), lc.vars[k], lc.vars[k], lc.gsize[k], lc.vars[k])
		}
		tb.WriteString(body)
		for k := G - 1; k >= 1; k-- {
			fmt.Fprintf(&tb, "%s}\n", ind(k))
		}
		g.parallelFor(w, ind(0), lc.gsize[0], lc.vars[0], "", tb.String(), "")
		return
	}
	for k := 0; k < G; k++ {
		fmt.Fprintf(w, "%sfor (int64_t %s = 0; %s < %d; %s++) {\n", ind(k), lc.vars[k], lc.vars[k], lc.gsize[k], lc.vars[k])
	}
	w.WriteString(body)
	for k := G - 1; k >= 0; k-- {
		fmt.Fprintf(w, "%s}\n", ind(k))
	}
}
