package ir

import (
	"fmt"
	"sort"
	"strings"
)

// Shape function of Einsum (attr equation; implicit or explicit output,
// ellipsis broadcasting as numpy).

// einsumTerm is one operand's subscripts: the letters in order and where
// the ellipsis sits among them (-1: none).
type einsumTerm struct {
	labels   []byte
	ellipsis int
}

func parseEinsumTerm(s string) (einsumTerm, error) {
	t := einsumTerm{ellipsis: -1}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '.':
			if !strings.HasPrefix(s[i:], "...") {
				return t, fmt.Errorf("term %q: '.' outside an ellipsis", s)
			}
			if t.ellipsis >= 0 {
				return t, fmt.Errorf("term %q has more than one ellipsis", s)
			}
			t.ellipsis = len(t.labels)
			i += 3
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			t.labels = append(t.labels, c)
			i++
		default:
			return t, fmt.Errorf("term %q: invalid character %q", s, c)
		}
	}
	return t, nil
}

func inferEinsum(n *Node) error {
	eq := strings.ReplaceAll(n.Attrs.String("equation", ""), " ", "")
	if eq == "" {
		return fmt.Errorf("attribute equation is missing")
	}
	lhs, rhs, explicit := strings.Cut(eq, "->")
	if explicit && strings.Contains(rhs, "->") {
		return fmt.Errorf("equation %q has more than one ->", eq)
	}
	parts := strings.Split(lhs, ",")
	if len(parts) != len(n.Inputs) {
		return fmt.Errorf("equation %q has %d operands, node has %d inputs", eq, len(parts), len(n.Inputs))
	}
	dt := firstDType(n.Inputs...)

	sizes := map[byte]int64{}
	count := map[byte]int{}
	var ell []int64 // broadcast shape of the ellipsis dims
	anyEll, ellUnknown := false, false
	for i, p := range parts {
		t, err := parseEinsumTerm(p)
		if err != nil {
			return fmt.Errorf("equation %q: %w", eq, err)
		}
		v := n.Inputs[i]
		if v == nil {
			return fmt.Errorf("input %d is missing", i)
		}
		shape := v.Shape
		erank := 0
		if t.ellipsis >= 0 {
			anyEll = true
		}
		switch {
		case shape == nil:
			if t.ellipsis >= 0 {
				ellUnknown = true
			}
		case t.ellipsis >= 0:
			erank = len(shape) - len(t.labels)
			if erank < 0 {
				return fmt.Errorf("%s has rank %d, fewer than the %d labels of %q", inputDesc(n, i), len(shape), len(t.labels), p)
			}
			if ell, err = broadcastShapes(ellOrEmpty(ell), shape[t.ellipsis:t.ellipsis+erank]); err != nil {
				return fmt.Errorf("%s: ellipsis dims: %w", inputDesc(n, i), err)
			}
		case len(shape) != len(t.labels):
			return fmt.Errorf("%s has rank %d, but term %q has %d labels", inputDesc(n, i), len(shape), p, len(t.labels))
		}
		for j, l := range t.labels {
			count[l]++
			d := int64(unknownDim)
			if shape != nil {
				k := j
				if t.ellipsis >= 0 && j >= t.ellipsis {
					k += erank
				}
				d = shape[k]
			}
			old, seen := sizes[l]
			if !seen {
				sizes[l] = d
				continue
			}
			m, ok := broadcastDim(old, d) // size 1 broadcasts, as in numpy
			if !ok {
				return fmt.Errorf("%s: label %q has size %d, elsewhere %d", inputDesc(n, i), l, d, old)
			}
			sizes[l] = m
		}
	}

	var outTerm einsumTerm
	if explicit {
		t, err := parseEinsumTerm(rhs)
		if err != nil {
			return fmt.Errorf("equation %q: output %w", eq, err)
		}
		seen := map[byte]bool{}
		for _, l := range t.labels {
			if _, ok := sizes[l]; !ok {
				return fmt.Errorf("equation %q: output label %q is in no operand", eq, l)
			}
			if seen[l] {
				return fmt.Errorf("equation %q: output label %q is repeated", eq, l)
			}
			seen[l] = true
		}
		outTerm = t
	} else {
		outTerm.ellipsis = -1
		if anyEll {
			outTerm.ellipsis = 0
		}
		for l, c := range count {
			if c == 1 {
				outTerm.labels = append(outTerm.labels, l)
			}
		}
		sort.Slice(outTerm.labels, func(a, b int) bool { return outTerm.labels[a] < outTerm.labels[b] })
	}
	if outTerm.ellipsis >= 0 && ellUnknown {
		setOutput(n, 0, dt, nil)
		return nil
	}
	out := make([]int64, 0, len(outTerm.labels)+len(ell))
	for j, l := range outTerm.labels {
		if j == outTerm.ellipsis {
			out = append(out, ell...)
		}
		out = append(out, sizes[l])
	}
	if outTerm.ellipsis >= len(outTerm.labels) {
		out = append(out, ell...)
	}
	setOutput(n, 0, dt, out)
	return nil
}

// ellOrEmpty turns a not-yet-set ellipsis shape into rank 0, so the first
// operand's dims become the accumulator.
func ellOrEmpty(s []int64) []int64 {
	if s == nil {
		return []int64{}
	}
	return s
}
