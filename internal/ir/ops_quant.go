package ir

// quantOps: quantization: QDQ, QLinear and Integer ops (issue 13).
var quantOps = []OpInfo{}
