package ir

// miscOps: bit, signal and miscellaneous tensor ops of ONNX (issue 13).
var miscOps = []OpInfo{}
