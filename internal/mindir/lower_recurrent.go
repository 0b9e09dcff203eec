package mindir

import (
	"fmt"

	"gkconv/internal/ir"
)

// lowerRecurrentTable and liftRecurrentTable: the issue-13 op family's MindSpore
// primitives (written by lower, read back by lift); IR ops of the family
// that have no MindSpore primitive are written as Custom(type="gkconv.<op>").
//
// The IR's LSTM, GRU and RNN are ONNX's: MindSpore's LSTM primitive means
// something else (one flat weight, oneDNN's gate order, no sequence_lens,
// activations, clip or peepholes; converter_lite's ONNX parser maps clip onto
// its dropout), so nothing is lowered to it and our files carry
// Custom(gkconv.LSTM). The reader lifts MindSpore's own LSTM (nn.LSTM of
// MindSpore 1.x files) into ONNX LSTMs, one per layer.
var lowerRecurrentTable = schemaGated(map[string]lowerFunc{})

var liftRecurrentTable = map[string]func(*mnode) (any, error){
	"LSTM": liftMSLSTM,
}

// msLSTMGate maps ONNX's LSTM gate order (i, o, f, c) to the gate order of
// MindSpore's CPU LSTM weights (oneDNN's i, f, c, o).
var msLSTMGate = [4]int64{0, 3, 1, 2}

// liftMSLSTM reads MindSpore's LSTM(x, h, c, w) with attributes input_size,
// hidden_size, num_layers, has_bias, bidirectional (dropout applies only in
// training). w is the flat constant weight of MindSpore's CPU kernel:
// every layer's input weights [dirs, 4, hidden, in] (oneDNN's ldgoi, as
// MindSpore 1.x's lstm_cpu_kernel.cc hands them to oneDNN), then
// every layer's recurrent weights [dirs, 4, hidden, hidden], then, with
// has_bias, one bias [dirs, 4, hidden] per layer. Outputs y [seq, batch,
// dirs*hidden], h and c [layers*dirs, batch, hidden], and the training-only
// reserve and state.
func liftMSLSTM(m *mnode) (any, error) {
	var ins [4]*ir.Value // x, h, c, w
	for i := range ins {
		v, err := m.tensor(i)
		if err != nil {
			return nil, err
		}
		ins[i] = v
	}
	x, h0, c0, wv := ins[0], ins[1], ins[2], ins[3]
	var geo [5]int64 // input_size, hidden_size, num_layers, has_bias, bidirectional
	for i, name := range []string{"input_size", "hidden_size", "num_layers", "has_bias", "bidirectional"} {
		var err error
		if geo[i], err = m.intArg(-1, -1, name); err != nil {
			return nil, err
		}
		if geo[i] < 0 {
			return nil, unsupported("LSTM without attribute %s", name)
		}
	}
	in, hid, layers, hasBias := int(geo[0]), int(geo[1]), int(geo[2]), geo[3] != 0
	dirs := 1
	direction := "forward"
	if geo[4] != 0 {
		dirs, direction = 2, "bidirectional"
	}
	G := 4 * hid
	inSize := func(l int) int {
		if l == 0 {
			return in
		}
		return dirs * hid
	}
	var wSize, rSize int
	for l := 0; l < layers; l++ {
		wSize += dirs * G * inSize(l)
		rSize += dirs * G * hid
	}
	total := wSize + rSize
	if hasBias {
		total += layers * dirs * G
	}
	if in <= 0 || hid <= 0 || layers <= 0 {
		return nil, unsupported("LSTM with input_size %d, hidden_size %d, num_layers %d", in, hid, layers)
	}
	if ws := wv.Shape; ws != nil && mulDimsKnown(ws) >= 0 && mulDimsKnown(ws) != int64(total) {
		return nil, fmt.Errorf("LSTM weights %v have %d values, want %d for input_size %d, hidden_size %d, %d layer(s), %d direction(s), has_bias %v", ws, mulDimsKnown(ws), total, in, hid, layers, dirs, hasBias)
	}
	flat := m.emit1("Reshape", nil, wv, m.ints64("w_flat", []int64{int64(total)}))
	// block takes the dirs*4*hidden*k weights at off (MindSpore's [dirs,
	// 4, hidden, k], gates i, f, c, o) as ONNX's [dirs, 4*hidden, k]
	// (gates i, o, f, c). The weights may be a graph input (a checkpoint's
	// parameter), so these are graph ops, folded when the weights are
	// constants.
	block := func(name string, off, k int) *ir.Value {
		n := dirs * G * k
		part := m.emit1("Slice", nil, flat, m.ints64(name+"_start", []int64{int64(off)}), m.ints64(name+"_end", []int64{int64(off + n)}),
			m.ints64(name+"_axis", []int64{0}), m.ints64(name+"_step", []int64{1}))
		part = m.emit1("Reshape", nil, part, m.ints64(name+"_gates", []int64{int64(dirs), 4, int64(hid), int64(k)}))
		part = m.emit1("Gather", ir.Attrs{"axis": ir.IntAttr(1)}, part, m.ints64(name+"_gate_order", msLSTMGate[:]))
		return m.emit1("Reshape", nil, part, m.ints64(name+"_shape", []int64{int64(dirs), int64(G), int64(k)}))
	}
	var hs, cs []*ir.Value
	layerIn := x
	wOff, rOff, bOff := 0, wSize, wSize+rSize
	for l := 0; l < layers; l++ {
		sfx := fmt.Sprintf("l%d_", l)
		k := inSize(l)
		W := block(sfx+"W", wOff, k)
		R := block(sfx+"R", rOff, hid)
		wOff += dirs * G * k
		rOff += dirs * G * hid
		// B: MindSpore's one bias as W's bias, the recurrent bias zero.
		zero := m.konst(sfx+"Rb", ir.NewTensor(ir.Float32, []int64{int64(dirs), int64(G)}))
		wb := zero
		if hasBias {
			wb = m.emit1("Reshape", nil, block(sfx+"B", bOff, 1), m.ints64(sfx+"B_shape", []int64{int64(dirs), int64(G)}))
			bOff += dirs * G
		}
		B := m.emit1("Concat", ir.Attrs{"axis": ir.IntAttr(1)}, wb, zero)
		hl, cl := h0, c0
		if layers > 1 {
			starts, ends, axes := m.ints64(sfx+"state_start", []int64{int64(l * dirs)}), m.ints64(sfx+"state_end", []int64{int64((l + 1) * dirs)}), m.ints64(sfx+"state_axis", []int64{0})
			steps := m.ints64(sfx+"state_step", []int64{1})
			hl = m.emit1("Slice", nil, h0, starts, ends, axes, steps)
			cl = m.emit1("Slice", nil, c0, starts, ends, axes, steps)
		}
		n := m.emit("LSTM", []*ir.Value{layerIn, W, R, B, nil, hl, cl}, 3,
			ir.Attrs{"hidden_size": ir.IntAttr(int64(hid)), "direction": ir.StringAttr(direction)})
		// Y [seq, dirs, batch, hidden] -> [seq, batch, dirs*hidden]
		yt := m.emit1("Transpose", ir.Attrs{"perm": ir.IntsAttr(0, 2, 1, 3)}, n.Outputs[0])
		layerIn = m.emit1("Reshape", nil, yt, m.ints64(sfx+"y_shape", []int64{0, 0, int64(dirs * hid)}))
		hs, cs = append(hs, n.Outputs[1]), append(cs, n.Outputs[2])
	}
	join := func(vs []*ir.Value) *ir.Value {
		if len(vs) == 1 {
			return vs[0]
		}
		return m.emit1("Concat", ir.Attrs{"axis": ir.IntAttr(0)}, vs...)
	}
	return tuple{layerIn, join(hs), join(cs), poisonVal{}, poisonVal{}}, nil
}

// mulDimsKnown is the product of dims, -1 when one is unknown.
func mulDimsKnown(ds []int64) int64 {
	p := int64(1)
	for _, d := range ds {
		if d < 0 {
			return -1
		}
		p *= d
	}
	return p
}
