package ir

// miscOps: bit, signal and miscellaneous tensor ops of ONNX (issue 13).
// Their shape functions are in infer_misc_ops.go.
var miscOps = []OpInfo{
	// bits
	{Name: "BitCast", Onnx: "BitCast", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferBitCast, Pattern: PatternOpaque, Note: "attr to: ONNX dtype number of the same element size (same shape, bytes reinterpreted)"},
	{Name: "BitShift", Onnx: "BitShift", In: Arity{2, 2}, Out: Arity{1, 1}, Infer: inferBitwise, Pattern: PatternOpaque, Note: "unsigned ints; attr direction LEFT|RIGHT; shifts past the width give 0"},
	{Name: "BitwiseAnd", Onnx: "BitwiseAnd", In: Arity{2, 2}, Out: Arity{1, 1}, Infer: inferBitwise, Pattern: PatternOpaque},
	{Name: "BitwiseOr", Onnx: "BitwiseOr", In: Arity{2, 2}, Out: Arity{1, 1}, Infer: inferBitwise, Pattern: PatternOpaque},
	{Name: "BitwiseXor", Onnx: "BitwiseXor", In: Arity{2, 2}, Out: Arity{1, 1}, Infer: inferBitwise, Pattern: PatternOpaque},
	{Name: "BitwiseNot", Onnx: "BitwiseNot", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferBitwiseNot, Pattern: PatternOpaque},
	// CastLike keeps its target input only when the target's dtype is not
	// known while building (the ONNX reader makes a Cast otherwise).
	{Name: "CastLike", Onnx: "CastLike", In: Arity{2, 2}, Out: Arity{1, 1}, Infer: inferCastLike, Pattern: PatternOpaque, Note: "inputs x, target: Cast of x to target's dtype; only where the target's dtype is unknown when the ONNX model is read"},
	// signal
	{Name: "BlackmanWindow", Onnx: "BlackmanWindow", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferWindow, Pattern: PatternOpaque, Note: "input size (scalar); attrs periodic, output_datatype as ONNX"},
	{Name: "HammingWindow", Onnx: "HammingWindow", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferWindow, Pattern: PatternOpaque, Note: "as BlackmanWindow"},
	{Name: "HannWindow", Onnx: "HannWindow", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferWindow, Pattern: PatternOpaque, Note: "as BlackmanWindow"},
	{Name: "MelWeightMatrix", Onnx: "MelWeightMatrix", In: Arity{5, 5}, Out: Arity{1, 1}, Infer: inferMelWeightMatrix, Pattern: PatternOpaque, Note: "inputs num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz; attr output_datatype"},
	{Name: "TfIdfVectorizer", Onnx: "TfIdfVectorizer", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferTfIdf, Pattern: PatternOpaque, Note: "int32/int64 inputs (pool_int64s); ONNX attrs"},
	// tensor ops
	{Name: "CenterCropPad", Onnx: "CenterCropPad", In: Arity{2, 2}, Out: Arity{1, 1}, Infer: inferCenterCropPad, Pattern: PatternOpaque, Note: "inputs x, shape; attr axes"},
	{Name: "Col2Im", Onnx: "Col2Im", In: Arity{3, 3}, Out: Arity{1, 1}, Infer: inferCol2Im, Pattern: PatternOpaque, Note: "ONNX form: inputs x [N, C*prod(block), L], image_shape, block_shape; attrs dilations, pads, strides (MindSpore's Col2Im takes [N, C, prod(block), L])"},
	{Name: "Compress", Onnx: "Compress", In: Arity{2, 2}, Out: Arity{1, 1}, Infer: inferCompress, Pattern: PatternOpaque, Note: "inputs x, condition (bool 1-D); attr axis (absent: flattened); data-dependent output shape"},
	{Name: "OneHot", Onnx: "OneHot", In: Arity{3, 3}, Out: Arity{1, 1}, Infer: inferOneHot, Pattern: PatternOpaque, Note: "ONNX form: inputs indices, depth, values [off, on]; attr axis"},
	{Name: "ReverseSequence", Onnx: "ReverseSequence", In: Arity{2, 2}, Out: Arity{1, 1}, Infer: inferReverseSequence, Pattern: PatternOpaque, Note: "inputs x, sequence_lens; attrs batch_axis, time_axis"},
	{Name: "Unique", Onnx: "Unique", In: Arity{1, 1}, Out: Arity{1, 4}, Infer: inferUnique, Pattern: PatternOpaque, Note: "ONNX form: outputs Y, indices, inverse_indices, counts; attrs axis, sorted; data-dependent output shape"},
}
