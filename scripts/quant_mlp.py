#!/usr/bin/env python3
"""A BERT-base-sized MatMul stack for DYNAMIC_QUANT speed checks.

Usage: build/realmodels-venv/bin/python scripts/quant_mlp.py OUT_DIR [--layers 4]
Writes OUT_DIR/model.onnx: input [1,128,768] through LAYERS blocks of
MatMul(768x3072) + Add + Relu + MatMul(3072x768) + Add + residual Add (the
feed-forward half of a BERT-base layer; seeded normal weights), plus
OUT_DIR/test_data_set_0 with one input and onnxruntime's float output, and
OUT_DIR/model_dq.onnx, onnxruntime's quantize_dynamic of it (the anchor).
"""
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto


def main():
    out = sys.argv[1]
    layers = int(sys.argv[sys.argv.index("--layers") + 1]) if "--layers" in sys.argv else 4
    os.makedirs(os.path.join(out, "test_data_set_0"), exist_ok=True)
    rng = np.random.default_rng(0)
    nodes, inits = [], []
    cur = "input"
    for i in range(layers):
        w1 = (rng.standard_normal((768, 3072)) * 0.03).astype(np.float32)
        b1 = (rng.standard_normal(3072) * 0.01).astype(np.float32)
        w2 = (rng.standard_normal((3072, 768)) * 0.02).astype(np.float32)
        b2 = (rng.standard_normal(768) * 0.01).astype(np.float32)
        for name, a in (("w1", w1), ("b1", b1), ("w2", w2), ("b2", b2)):
            inits.append(numpy_helper.from_array(a, "l%d_%s" % (i, name)))
        p = "l%d_" % i
        nodes += [
            helper.make_node("MatMul", [cur, p + "w1"], [p + "h"], name=p + "fc1"),
            helper.make_node("Add", [p + "h", p + "b1"], [p + "hb"], name=p + "bias1"),
            helper.make_node("Relu", [p + "hb"], [p + "r"], name=p + "relu"),
            helper.make_node("MatMul", [p + "r", p + "w2"], [p + "o"], name=p + "fc2"),
            helper.make_node("Add", [p + "o", p + "b2"], [p + "ob"], name=p + "bias2"),
            helper.make_node("Add", [p + "ob", cur], [p + "y"], name=p + "residual"),
        ]
        cur = p + "y"
    nodes.append(helper.make_node("Identity", [cur], ["output"], name="out"))
    g = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 128, 768])],
                          [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 128, 768])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="gkconv-quant-mlp")
    m.ir_version = 9
    path = os.path.join(out, "model.onnx")
    onnx.save(m, path)
    x = rng.standard_normal((1, 128, 768)).astype(np.float32)
    import onnxruntime as ort
    y = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"input": x})[0]
    open(os.path.join(out, "test_data_set_0", "input_0.pb"), "wb").write(numpy_helper.from_array(x, "input").SerializeToString())
    open(os.path.join(out, "test_data_set_0", "output_0.pb"), "wb").write(numpy_helper.from_array(y, "output").SerializeToString())
    from onnxruntime.quantization import quantize_dynamic, QuantType
    quantize_dynamic(path, os.path.join(out, "model_dq.onnx"), weight_type=QuantType.QInt8)
    print("wrote", path, "and model_dq.onnx")


if __name__ == "__main__":
    main()
