package ir

import "fmt"

func init() { RegisterInfer(OpPackedMatMul, inferPackedMatMul) }

// inferPackedMatMul: inputs A (rank >= 1, last dim k, or with transpose_a
// and rank >= 2 the last two dims [k, m]) and Bpacked (1-D, PackedLen(k, n,
// nr) floats), optionally a bias of n values added after the product; output A.shape[:-1] + [n] (transpose_a: A.shape[:-2] + [m, n]).
func inferPackedMatMul(n *Node) error {
	if err := checkInputs(n, 2, 3); err != nil {
		return err
	}
	if err := checkOutputs(n, 1, 1); err != nil {
		return err
	}
	k, nn, nr := n.Attrs.Int("k", -1), n.Attrs.Int("n", -1), n.Attrs.Int("nr", -1)
	if k < 0 || nn < 0 || nr < 1 {
		return fmt.Errorf("attrs k, n (>= 0) and nr (>= 1) are required, got k=%d n=%d nr=%d", k, nn, nr)
	}
	a, b := n.Inputs[0], n.Inputs[1]
	if b.Shape != nil {
		want := int64(PackedLen(int(k), int(nn), int(nr)))
		if len(b.Shape) != 1 || (b.Shape[0] >= 0 && b.Shape[0] != want) {
			return fmt.Errorf("%s: packed B must be 1-D with %d elements for k=%d n=%d nr=%d, got %v",
				inputDesc(n, 1), want, k, nn, nr, b.Shape)
		}
	}
	if len(n.Inputs) == 3 && n.Inputs[2] != nil && n.Inputs[2].ShapeKnown() {
		bias := n.Inputs[2]
		cnt := int64(1)
		for _, d := range bias.Shape {
			cnt *= d
		}
		if cnt != nn {
			return fmt.Errorf("%s: bias must hold n=%d values, got shape %v", inputDesc(n, 2), nn, bias.Shape)
		}
	}
	dt := firstDType(a, b)
	if a.Shape == nil {
		setOutput(n, 0, dt, nil)
		return nil
	}
	r := len(a.Shape)
	if r == 0 {
		return fmt.Errorf("%s must have rank >= 1, got a scalar", inputDesc(n, 0))
	}
	out := cloneShape(a.Shape)
	ka := a.Shape[r-1]
	if n.Attrs.Int("transpose_a", 0) != 0 && r >= 2 {
		ka = a.Shape[r-2]
		out = out[:r-1]
		out[r-2] = a.Shape[r-1]
	} else {
		out = out[:r-1]
	}
	if ka >= 0 && ka != k {
		return fmt.Errorf("%s %v gives K=%d, packed B has k=%d", inputDesc(n, 0), a.Shape, ka, k)
	}
	setOutput(n, 0, dt, append(out, nn))
	return nil
}
