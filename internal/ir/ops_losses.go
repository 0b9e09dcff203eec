package ir

// lossNormOps: losses, normalisations and other math ops of ONNX (issue 13).
var lossNormOps = []OpInfo{}
