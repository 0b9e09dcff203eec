package ir

// indexingOps: indexing, scatter/gather, detection and signal ops (issue 13).
// Shape functions are in infer_indexing.go and infer_detect.go.
var indexingOps = []OpInfo{
	{Name: "GatherNd", Onnx: "GatherND", In: Arity{2, 2}, Out: Arity{1, 1}, Infer: inferGatherNd, Pattern: PatternOpaque, Note: "ONNX GatherND; attr batch_dims (MindSpore's GatherNd: batch_dims 0 only)"},
	{Name: "ScatterElements", Onnx: "ScatterElements", OnnxAliases: []string{"Scatter"}, In: Arity{3, 3}, Out: Arity{1, 1}, Infer: inferScatterElements, Pattern: PatternOpaque, Note: "inputs data, indices, updates; attrs axis, reduction (none|add|mul|max|min); also ONNX Scatter (opset 9/10)"},
	{Name: "ScatterNdUpdate", Onnx: "ScatterND", In: Arity{3, 3}, Out: Arity{1, 1}, Infer: inferScatterNd, Pattern: PatternOpaque, Note: "ONNX ScatterND: inputs data, indices, updates; attr reduction (none|add|mul|max|min); MindSpore's ScatterNdUpdate is reduction none"},
	{Name: "TensorScatter", Onnx: "TensorScatter", In: Arity{2, 3}, Out: Arity{1, 1}, Infer: inferTensorScatter, Pattern: PatternOpaque, Note: "ONNX TensorScatter (opset 24): inputs past_cache, update, write_indices?; attrs axis (-2), mode (linear|circular)"},
	{Name: "NonZero", Onnx: "NonZero", In: Arity{1, 1}, Out: Arity{1, 1}, Infer: inferNonZero, Pattern: PatternOpaque, Note: "output [rank, count] int64; count is data dependent (known at run time)"},
	{Name: "NonMaxSuppression", Onnx: "NonMaxSuppression", In: Arity{2, 5}, Out: Arity{1, 1}, Infer: inferNonMaxSuppression, Pattern: PatternOpaque, Note: "inputs boxes, scores, max_output_boxes_per_class?, iou_threshold?, score_threshold?; attr center_point_box; output [selected, 3] int64, selected data dependent (known at run time)"},
	{Name: "GridSample", Onnx: "GridSample", In: Arity{2, 2}, Out: Arity{1, 1}, Infer: inferGridSample, Pattern: PatternOpaque, Note: "any spatial rank; attrs mode (linear|nearest|cubic; opset-16 names bilinear/bicubic normalised), padding_mode, align_corners; MindSpore GridSampler2D/GridSampler3D"},
	{Name: "AffineGrid", Onnx: "AffineGrid", In: Arity{2, 2}, Out: Arity{1, 1}, Infer: inferAffineGrid, Pattern: PatternOpaque, Note: "inputs theta, size; attr align_corners"},
	{Name: "RoiAlign", Onnx: "RoiAlign", In: Arity{3, 3}, Out: Arity{1, 1}, Infer: inferRoiAlign, Pattern: PatternOpaque, Note: "inputs X, rois [R,4], batch_indices [R]; ONNX attrs"},
	{Name: "MaxUnpool", Onnx: "MaxUnpool", In: Arity{2, 3}, Out: Arity{1, 1}, Infer: inferMaxUnpool, Pattern: PatternOpaque, Note: "inputs X, I (indices into the flattened output), output_shape?; attrs kernel_shape, pads, strides"},
	{Name: "DeformConv", Onnx: "DeformConv", In: Arity{3, 5}, Out: Arity{1, 1}, Infer: inferDeformConv, Pattern: PatternOpaque, Note: "inputs X, W, offset, B?, mask?; ONNX attrs (dilations, group, kernel_shape, offset_group, pads, strides)"},
}
