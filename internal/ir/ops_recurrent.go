package ir

// recurrentOps: recurrent ops: LSTM, GRU, RNN (issue 13).
var recurrentOps = []OpInfo{}
