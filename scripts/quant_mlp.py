#!/usr/bin/env python3
"""A BERT-base-sized MatMul stack for DYNAMIC_QUANT speed checks.

Usage: build/realmodels-venv/bin/python scripts/quant_mlp.py OUT_DIR [--layers 4] [--encoder]
Writes OUT_DIR/model.onnx: input [1,128,768] through LAYERS blocks of
MatMul(768x3072) + Add + Relu + MatMul(3072x768) + Add + residual Add (the
feed-forward half of a BERT-base layer; seeded normal weights); with
--encoder, whole BERT-base encoder layers instead (post-LayerNorm: Q, K, V
projections, 12 heads of 64 with the scaled Softmax(Q K^T) V, the output
projection, residual and LayerNormalization, then the feed-forward half with
the Erf GELU, residual and LayerNormalization), plus
OUT_DIR/test_data_set_0 with one input and onnxruntime's float output, and
OUT_DIR/model_dq.onnx, onnxruntime's quantize_dynamic of it (the anchor).
"""
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto


def encoder(rng, layers):
    """BERT-base encoder layers on [1, 128, 768] (see the module doc)."""
    nodes, inits = [], []

    def const(name, a):
        inits.append(numpy_helper.from_array(np.asarray(a), name))
        return name

    def node(op, ins, out, **attrs):
        nodes.append(helper.make_node(op, ins, [out], name=out, **attrs))
        return out

    heads, dh, d, ff = 12, 64, 768, 3072
    const("split_shape", np.array([1, 128, heads, dh], np.int64))
    const("merge_shape", np.array([1, 128, d], np.int64))
    const("inv_sqrt_dh", np.array(1.0 / np.sqrt(dh), np.float32))
    const("inv_sqrt2", np.array(1.0 / np.sqrt(2.0), np.float32))
    const("one", np.array(1.0, np.float32))
    const("half", np.array(0.5, np.float32))
    cur = "input"
    for i in range(layers):
        p = "l%d_" % i

        def dense(x, k, n, tag, scale=0.03):
            w = const(p + tag + "_w", (rng.standard_normal((k, n)) * scale).astype(np.float32))
            b = const(p + tag + "_b", (rng.standard_normal(n) * 0.01).astype(np.float32))
            return node("Add", [node("MatMul", [x, w], p + tag), b], p + tag + "_biased")

        def layernorm(x, tag):
            g = const(p + tag + "_g", (1 + rng.standard_normal(d) * 0.05).astype(np.float32))
            b = const(p + tag + "_beta", (rng.standard_normal(d) * 0.05).astype(np.float32))
            return node("LayerNormalization", [x, g, b], p + tag, axis=-1, epsilon=1e-12)

        def split(x, tag, perm):
            return node("Transpose", [node("Reshape", [x, "split_shape"], p + tag + "_r")], p + tag + "_t", perm=perm)

        q = split(dense(cur, d, d, "q"), "qh", [0, 2, 1, 3])
        k = split(dense(cur, d, d, "k"), "kh", [0, 2, 3, 1])
        v = split(dense(cur, d, d, "v"), "vh", [0, 2, 1, 3])
        scores = node("Mul", [node("MatMul", [q, k], p + "qk"), "inv_sqrt_dh"], p + "scores")
        ctx = node("MatMul", [node("Softmax", [scores], p + "probs", axis=-1), v], p + "ctx")
        merged = node("Reshape", [node("Transpose", [ctx], p + "ctx_t", perm=[0, 2, 1, 3]), "merge_shape"], p + "merged")
        attn = dense(merged, d, d, "o", 0.02)
        h = layernorm(node("Add", [attn, cur], p + "res1"), "ln1")
        u = dense(h, d, ff, "fc1")
        erf = node("Erf", [node("Mul", [u, "inv_sqrt2"], p + "u_s")], p + "erf")
        gelu = node("Mul", [node("Mul", [u, node("Add", [erf, "one"], p + "erf1")], p + "ug"), "half"], p + "gelu")
        f = dense(gelu, ff, d, "fc2", 0.02)
        cur = layernorm(node("Add", [f, h], p + "res2"), "ln2")
    return nodes, inits, cur


def main():
    out = sys.argv[1]
    layers = int(sys.argv[sys.argv.index("--layers") + 1]) if "--layers" in sys.argv else 4
    os.makedirs(os.path.join(out, "test_data_set_0"), exist_ok=True)
    rng = np.random.default_rng(0)
    nodes, inits = [], []
    cur = "input"
    if "--encoder" in sys.argv:
        nodes, inits, cur = encoder(rng, layers)
    for i in range(0 if "--encoder" in sys.argv else layers):
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
