package ir

import "testing"

func TestInferRecurrent(t *testing.T) {
	bi := Attrs{"direction": StringAttr("bidirectional"), "hidden_size": IntAttr(4)}
	l1 := Attrs{"layout": IntAttr(1), "hidden_size": IntAttr(4)}
	runInferTable(t, []inferCase{
		{name: "lstm forward", op: "LSTM", inputs: []*Value{tVal(Float32, 5, 2, 3), tVal(Float32, 1, 16, 3), tVal(Float32, 1, 16, 4)},
			attrs: Attrs{"hidden_size": IntAttr(4)}, want: []outWant{tOut(Float32, 5, 1, 2, 4), tOut(Float32, 1, 2, 4), tOut(Float32, 1, 2, 4)}},
		{name: "lstm hidden from R", op: "LSTM", inputs: []*Value{tVal(Float32, 5, 2, 3), tVal(Float32, 1, 16, 3), tVal(Float32, 1, 16, 4)},
			want: []outWant{tOut(Float32, 5, 1, 2, 4), tOut(Float32, 1, 2, 4), tOut(Float32, 1, 2, 4)}},
		{name: "gru bidirectional", op: "GRU", inputs: []*Value{tVal(Float64, 5, 2, 3), tVal(Float64, 2, 12, 3), tVal(Float64, 2, 12, 4), tVal(Float64, 2, 24)},
			attrs: bi, want: []outWant{tOut(Float64, 5, 2, 2, 4), tOut(Float64, 2, 2, 4)}},
		{name: "rnn layout 1", op: "RNN", inputs: []*Value{tVal(Float32, 2, 5, 3), tVal(Float32, 1, 4, 3), tVal(Float32, 1, 4, 4), nil, nil, tVal(Float32, 2, 1, 4)},
			attrs: l1, want: []outWant{tOut(Float32, 2, 5, 1, 4), tOut(Float32, 2, 1, 4)}},
		{name: "unknown dims", op: "RNN", inputs: []*Value{tVal(Float32, -1, -1, 3), tVal(Float32, 1, 4, 3), tVal(Float32, 1, 4, 4)},
			want: []outWant{tOut(Float32, -1, 1, -1, 4), tOut(Float32, 1, -1, 4)}},
		{name: "directions", op: "RNN", inputs: []*Value{tVal(Float32, 5, 2, 3), tVal(Float32, 1, 4, 3), tVal(Float32, 1, 4, 4)},
			attrs: bi, nout: 2, err: "num_directions"},
		{name: "gates", op: "GRU", inputs: []*Value{tVal(Float32, 5, 2, 3), tVal(Float32, 1, 16, 3), tVal(Float32, 1, 16, 4)},
			nout: 2, err: "3 x hidden_size"},
		{name: "input size", op: "RNN", inputs: []*Value{tVal(Float32, 5, 2, 3), tVal(Float32, 1, 4, 2), tVal(Float32, 1, 4, 4)},
			nout: 2, err: "input size"},
		{name: "hidden_size", op: "RNN", inputs: []*Value{tVal(Float32, 5, 2, 3), tVal(Float32, 1, 4, 3), tVal(Float32, 1, 4, 4)},
			attrs: Attrs{"hidden_size": IntAttr(5)}, nout: 2, err: "hidden size"},
		{name: "bias", op: "LSTM", inputs: []*Value{tVal(Float32, 5, 2, 3), tVal(Float32, 1, 16, 3), tVal(Float32, 1, 16, 4), tVal(Float32, 1, 16)},
			nout: 3, err: "(B)"},
		{name: "initial_h layout", op: "RNN", inputs: []*Value{tVal(Float32, 5, 2, 3), tVal(Float32, 1, 4, 3), tVal(Float32, 1, 4, 4), nil, nil, tVal(Float32, 2, 1, 4)},
			nout: 2, err: "initial state"},
		{name: "peepholes", op: "LSTM", inputs: []*Value{tVal(Float32, 5, 2, 3), tVal(Float32, 1, 16, 3), tVal(Float32, 1, 16, 4), nil, nil, nil, nil, tVal(Float32, 1, 16)},
			nout: 3, err: "(P)"},
		{name: "sequence_lens dtype", op: "GRU", inputs: []*Value{tVal(Float32, 5, 2, 3), tVal(Float32, 1, 12, 3), tVal(Float32, 1, 12, 4), nil, tVal(Float32, 2)},
			nout: 2, err: "sequence_lens"},
		{name: "activation", op: "GRU", inputs: []*Value{tVal(Float32, 5, 2, 3), tVal(Float32, 1, 12, 3), tVal(Float32, 1, 12, 4)},
			attrs: Attrs{"activations": StringsAttr("Sigmoid", "Gelu")}, nout: 2, err: "Gelu"},
		{name: "activation count", op: "LSTM", inputs: []*Value{tVal(Float32, 5, 2, 3), tVal(Float32, 1, 16, 3), tVal(Float32, 1, 16, 4)},
			attrs: Attrs{"activations": StringsAttr("Sigmoid", "Tanh")}, nout: 3, err: "want 3 names"},
		{name: "direction", op: "RNN", inputs: []*Value{tVal(Float32, 5, 2, 3), tVal(Float32, 1, 4, 3), tVal(Float32, 1, 4, 4)},
			attrs: Attrs{"direction": StringAttr("sideways")}, nout: 2, err: "direction"},
		{name: "int X", op: "RNN", inputs: []*Value{tVal(Int32, 5, 2, 3), tVal(Int32, 1, 4, 3), tVal(Int32, 1, 4, 4)},
			nout: 2, err: "float type"},
	})
}
