package ir

import (
	"fmt"
	"strings"
)

// recurrentOps: recurrent ops: LSTM, GRU, RNN (issue 13).
//
// MindSpore's LSTM and GRU primitives do not mean what ONNX's ops mean
// (MindSpore's LSTM takes one flat weight in its own gate order and has no
// sequence_lens, activations, clip or peepholes; converter_lite's ONNX
// parser maps clip onto LSTM's dropout), so these rows are written to MindIR
// as Custom(gkconv.<op>).
var recurrentOps = []OpInfo{
	{Name: "LSTM", Onnx: "LSTM", In: Arity{3, 8}, Out: Arity{0, 3}, Infer: inferRecurrent, Pattern: PatternOpaque, Note: "ONNX LSTM (opset 7-22): inputs X, W, R, B?, sequence_lens?, initial_h?, initial_c?, P?; outputs Y?, Y_h?, Y_c?; ONNX attrs; MindIR: Custom gkconv.LSTM (MindSpore's LSTM primitive takes one flat weight in another gate order, without sequence_lens, activations, clip or peepholes)"},
	{Name: "GRU", Onnx: "GRU", In: Arity{3, 6}, Out: Arity{0, 2}, Infer: inferRecurrent, Pattern: PatternOpaque, Note: "ONNX GRU (opset 7-22): inputs X, W, R, B?, sequence_lens?, initial_h?; outputs Y?, Y_h?; ONNX attrs; MindIR: Custom gkconv.GRU (MindSpore's GRU primitive is another op)"},
	{Name: "RNN", Onnx: "RNN", In: Arity{3, 6}, Out: Arity{0, 2}, Infer: inferRecurrent, Pattern: PatternOpaque, Note: "ONNX RNN (opset 7-22): inputs X, W, R, B?, sequence_lens?, initial_h?; outputs Y?, Y_h?; ONNX attrs; MindIR: Custom gkconv.RNN (MindSpore has no such primitive)"},
}

// RecurrentGates is the number of gates of a recurrent op (4 for LSTM's
// i, o, f, c; 3 for GRU's z, r, h; 1 for RNN), 0 for other ops.
func RecurrentGates(op string) int {
	switch op {
	case "LSTM":
		return 4
	case "GRU":
		return 3
	case "RNN":
		return 1
	}
	return 0
}

// RecurrentActivationCount is how many activations one direction of op
// uses: f, g, h for LSTM; f, g for GRU; f for RNN.
func RecurrentActivationCount(op string) int {
	switch op {
	case "LSTM":
		return 3
	case "GRU":
		return 2
	case "RNN":
		return 1
	}
	return 0
}

// RecurrentDefaultActivations are ONNX's default activations of one
// direction of op.
func RecurrentDefaultActivations(op string) []string {
	switch op {
	case "LSTM":
		return []string{"Sigmoid", "Tanh", "Tanh"}
	case "GRU":
		return []string{"Sigmoid", "Tanh"}
	}
	return []string{"Tanh"}
}

// recurrentActivations are the activation names ONNX allows (compared
// case-insensitively, as onnxruntime does).
var recurrentActivations = map[string]bool{
	"relu": true, "tanh": true, "sigmoid": true, "affine": true, "leakyrelu": true,
	"thresholdedrelu": true, "scaledtanh": true, "hardsigmoid": true, "elu": true,
	"softsign": true, "softplus": true,
}

// RecurrentGeom is the geometry of an LSTM, GRU or RNN node. Dims may be
// unknown (< 0) while shapes are not known.
type RecurrentGeom struct {
	Gates         int   // gates per direction
	Dirs          int64 // 1, or 2 for bidirectional
	Seq, Batch    int64
	Input, Hidden int64
	Layout        int64 // 0: X is [seq, batch, input]; 1: [batch, seq, input]
	Direction     string
}

// RecurrentGeometry reads and checks the geometry of recurrent node n.
func RecurrentGeometry(n *Node) (*RecurrentGeom, error) {
	g := &RecurrentGeom{Gates: RecurrentGates(n.Op), Seq: unknownDim, Batch: unknownDim, Input: unknownDim, Hidden: unknownDim}
	if g.Gates == 0 {
		return nil, fmt.Errorf("%s is not a recurrent op", n.Op)
	}
	g.Direction = n.Attrs.String("direction", "forward")
	switch g.Direction {
	case "forward", "reverse":
		g.Dirs = 1
	case "bidirectional":
		g.Dirs = 2
	default:
		return nil, fmt.Errorf("direction %q is not forward, reverse or bidirectional", g.Direction)
	}
	g.Layout = n.Attrs.Int("layout", 0)
	if g.Layout != 0 && g.Layout != 1 {
		return nil, fmt.Errorf("layout %d is not 0 or 1", g.Layout)
	}
	if n.Attrs.Has("hidden_size") {
		g.Hidden = n.Attrs.Int("hidden_size", 0)
		if g.Hidden <= 0 {
			return nil, fmt.Errorf("hidden_size %d must be positive", g.Hidden)
		}
	}
	G := int64(g.Gates)
	x, w, r := shapeOf(n.Input(0)), shapeOf(n.Input(1)), shapeOf(n.Input(2))
	if x != nil {
		if len(x) != 3 {
			return nil, fmt.Errorf("%s %v must be 3-D", inputDesc(n, 0), x)
		}
		g.Seq, g.Batch, g.Input = x[0], x[1], x[2]
		if g.Layout == 1 {
			g.Seq, g.Batch = x[1], x[0]
		}
	}
	// hd collects the hidden size from every place that says it; W and R
	// are [dirs, G*hidden, input] and [dirs, G*hidden, hidden].
	hd := []int64{g.Hidden}
	for i, s := range [][]int64{w, r} {
		if s == nil {
			continue
		}
		if len(s) != 3 || (s[1] >= 0 && s[1]%G != 0) {
			return nil, fmt.Errorf("%s %v must be [%d, %d x hidden_size, %s]", inputDesc(n, i+1), s, g.Dirs, G, [...]string{"input_size", "hidden_size"}[i])
		}
		if err := sameDims("num_directions", g.Dirs, s[0]); err != nil {
			return nil, fmt.Errorf("%s %v: %w", inputDesc(n, i+1), s, err)
		}
		if s[1] >= 0 {
			hd = append(hd, s[1]/G)
		}
	}
	if w != nil {
		if err := sameDims("input size", g.Input, w[2]); err != nil {
			return nil, err
		}
	}
	if r != nil {
		hd = append(hd, r[2])
	}
	if err := sameDims("hidden size", hd...); err != nil {
		return nil, err
	}
	for _, d := range hd {
		if d >= 0 {
			g.Hidden = d
		}
	}
	if g.Input < 0 && w != nil {
		g.Input = w[2]
	}
	if b := shapeOf(n.Input(3)); b != nil {
		if len(b) != 2 || sameDims("", b[0], g.Dirs) != nil || sameDims("", b[1], mulDims(2*G, g.Hidden)) != nil {
			return nil, fmt.Errorf("%s (B) %v must be [%d, %d]", inputDesc(n, 3), b, g.Dirs, mulDims(2*G, g.Hidden))
		}
	}
	if s := n.Input(4); s != nil {
		if s.DType != Undefined && s.DType != Int32 && s.DType != Int64 {
			return nil, fmt.Errorf("%s (sequence_lens) has dtype %s, want int32", inputDesc(n, 4), s.DType)
		}
		if s.Shape != nil && (len(s.Shape) != 1 || sameDims("", s.Shape[0], g.Batch) != nil) {
			return nil, fmt.Errorf("%s (sequence_lens) %v must be [%d]", inputDesc(n, 4), s.Shape, g.Batch)
		}
	}
	state := []int{5}
	if n.Op == "LSTM" {
		state = append(state, 6)
	}
	for _, i := range state {
		s := shapeOf(n.Input(i))
		if s == nil {
			continue
		}
		want := g.StateShape()
		ok := len(s) == 3
		for k := 0; ok && k < 3; k++ {
			ok = sameDims("", s[k], want[k]) == nil
		}
		if !ok {
			return nil, fmt.Errorf("%s (initial state) %v must be %v", inputDesc(n, i), s, want)
		}
	}
	if n.Op == "LSTM" {
		if p := shapeOf(n.Input(7)); p != nil {
			if len(p) != 2 || sameDims("", p[0], g.Dirs) != nil || sameDims("", p[1], mulDims(3, g.Hidden)) != nil {
				return nil, fmt.Errorf("%s (P) %v must be [%d, %d]", inputDesc(n, 7), p, g.Dirs, mulDims(3, g.Hidden))
			}
		}
	}
	return g, nil
}

// YShape is the shape of output Y.
func (g *RecurrentGeom) YShape() []int64 {
	if g.Layout == 1 {
		return []int64{g.Batch, g.Seq, g.Dirs, g.Hidden}
	}
	return []int64{g.Seq, g.Dirs, g.Batch, g.Hidden}
}

// StateShape is the shape of the initial and final states (initial_h,
// initial_c, Y_h, Y_c).
func (g *RecurrentGeom) StateShape() []int64 {
	if g.Layout == 1 {
		return []int64{g.Batch, g.Dirs, g.Hidden}
	}
	return []int64{g.Dirs, g.Batch, g.Hidden}
}

// inferRecurrent is the shape function of LSTM, GRU and RNN.
func inferRecurrent(n *Node) error {
	dt := dtypeOf(n.Input(0))
	if dt != Undefined && !dt.IsFloat() {
		return fmt.Errorf("%s has dtype %s, want a float type", inputDesc(n, 0), dt)
	}
	for _, i := range []int{1, 2, 3, 5, 6, 7} {
		if i == 6 || i == 7 {
			if n.Op != "LSTM" {
				continue
			}
		}
		if d := dtypeOf(n.Input(i)); d != Undefined && dt != Undefined && d != dt {
			return fmt.Errorf("%s has dtype %s, want %s", inputDesc(n, i), d, dt)
		}
	}
	if err := checkRecurrentActivations(n); err != nil {
		return err
	}
	if n.Op == "LSTM" && n.Attrs.Int("input_forget", 0) != 0 && n.Attrs.Int("input_forget", 0) != 1 {
		return fmt.Errorf("input_forget %d is not 0 or 1", n.Attrs.Int("input_forget", 0))
	}
	g, err := RecurrentGeometry(n)
	if err != nil {
		return err
	}
	setOutput(n, 0, dt, g.YShape())
	setOutput(n, 1, dt, g.StateShape())
	setOutput(n, 2, dt, g.StateShape())
	return nil
}

// checkRecurrentActivations checks the activations attribute: one list per
// direction (both directions' for bidirectional, or one list for both),
// each name one ONNX allows.
func checkRecurrentActivations(n *Node) error {
	acts := n.Attrs.Strings("activations")
	if len(acts) == 0 {
		return nil
	}
	dirs := 1
	if n.Attrs.String("direction", "forward") == "bidirectional" {
		dirs = 2
	}
	// onnxruntime takes one direction's list for both directions too.
	if k := RecurrentActivationCount(n.Op); len(acts) != k && len(acts) != k*dirs {
		return fmt.Errorf("activations %v: want %d names (%d per direction)", acts, k*dirs, k)
	}
	for _, a := range acts {
		if !recurrentActivations[strings.ToLower(a)] {
			return fmt.Errorf("activation %q is not one ONNX defines for %s", a, n.Op)
		}
	}
	return nil
}
