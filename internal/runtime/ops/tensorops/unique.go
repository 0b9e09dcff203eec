package tensorops

import (
	"cmp"
	"math"
	"slices"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

func init() { opkernel.Register("Unique", uniqueOp) }

// uniqueOrder is a comparison of slices i and j of a tensor along an axis:
// negative when slice i sorts first.
type uniqueOrder func(i, j int) int

// lexOrder compares slices element by element (outer-major, as ir.UniqueKeys
// lays them out) with cmpElem.
func lexOrder[T any](v []T, outer, dim, inner int, cmpElem func(a, b T) int) uniqueOrder {
	return func(i, j int) int {
		for o := 0; o < outer; o++ {
			a, b := v[(o*dim+i)*inner:][:inner], v[(o*dim+j)*inner:][:inner]
			for k := range a {
				if c := cmpElem(a[k], b[k]); c != 0 {
					return c
				}
			}
		}
		return 0
	}
}

// nanLast orders numbers, with NaN after every number (as numpy's unique).
func nanLast(a, b float64) int {
	an, bn := math.IsNaN(a), math.IsNaN(b)
	switch {
	case an || bn:
		return cmp.Compare(b2i(an), b2i(bn))
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func orderOf(t *ir.Tensor, outer, dim, inner int) (uniqueOrder, error) {
	switch {
	case t.DType.IsFloat():
		f, err := t.Float64s()
		if err != nil {
			return nil, err
		}
		for i, v := range f {
			if v == 0 {
				f[i] = 0 // -0 equals +0
			}
		}
		return lexOrder(f, outer, dim, inner, nanLast), nil
	case t.DType == ir.Uint64:
		return lexOrder(t.U64(), outer, dim, inner, cmp.Compare[uint64]), nil
	default:
		v, err := t.Int64s()
		if err != nil {
			return nil, err
		}
		return lexOrder(v, outer, dim, inner, cmp.Compare[int64]), nil
	}
}

// uniqueOp: the distinct slices along axis (elements of the flattened input
// without axis) in sorted or first-occurrence order, with the index of
// each one's first occurrence, every slice's position among them and the
// counts.
func uniqueOp(_ *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
	if err := needIn(n, in, out, 1, 1); err != nil {
		return err
	}
	x := in[0]
	sz, err := byteElems(n, x, "input")
	if err != nil {
		return err
	}
	outer, dim, inner := 1, int(x.NumElements()), 1
	axis := -1
	if n.Attrs.Has("axis") {
		if axis, err = normAxis(n, n.Attrs.Int("axis", 0), len(x.Shape)); err != nil {
			return err
		}
		outer, dim, inner = outerDimInner(x.Shape, axis)
	}
	keys, err := ir.UniqueKeys(x, axis)
	if err != nil {
		return errf(n, "%v", err)
	}
	group := map[string]int{}
	var first []int // first occurrence of each distinct slice, in order
	for i, k := range keys {
		if _, ok := group[k]; !ok {
			group[k] = len(first)
			first = append(first, i)
		}
	}
	if n.Attrs.Int("sorted", 1) != 0 {
		order, err := orderOf(x, outer, dim, inner)
		if err != nil {
			return errf(n, "%v", err)
		}
		slices.SortStableFunc(first, order)
		for r, i := range first {
			group[keys[i]] = r
		}
	}
	u := len(first)
	wantY := []int64{int64(u)}
	if axis >= 0 {
		wantY = slices.Clone(x.Shape)
		wantY[axis] = int64(u)
	}
	if y := out[0]; y.DType != x.DType || !slices.Equal(y.Shape, wantY) {
		return errf(n, "output Y %s, expected %s%v", y, x.DType, wantY)
	}
	for k := 1; k < len(out); k++ {
		want := []int64{int64(u)}
		if k == 2 {
			want[0] = int64(dim)
		}
		if o := out[k]; o != nil && (o.DType != ir.Int64 || !slices.Equal(o.Shape, want)) {
			return errf(n, "output %d is %s, expected int64%v", k, o, want)
		}
	}
	row := inner * sz
	y := out[0].Data
	for o := 0; o < outer; o++ {
		for r, i := range first {
			copy(y[((o*u)+r)*row:][:row], x.Data[((o*dim)+i)*row:][:row])
		}
	}
	counts := make([]int64, u)
	inverse := make([]int64, dim)
	for i, k := range keys {
		g := group[k]
		inverse[i] = int64(g)
		counts[g]++
	}
	if len(out) > 1 && out[1] != nil {
		for r, i := range first {
			out[1].I64()[r] = int64(i)
		}
	}
	if len(out) > 2 && out[2] != nil {
		copy(out[2].I64(), inverse)
	}
	if len(out) > 3 && out[3] != nil {
		copy(out[3].I64(), counts)
	}
	return nil
}
