#!/usr/bin/env python3
"""How much of a model's 8-bit quantization error its weights alone force.

Usage: build/realmodels-venv/bin/python scripts/quant_sensitivity.py MODEL.onnx HELD_0.pb [HELD_1.pb ...]

Adds to every Conv/Gemm/MatMul weight random uniform noise of +-0.5 (then
+-0.25, +-0.125) times its 8-bit per-output-channel step (max|w|/127: +-0.5
is the rounding error's own size and distribution), runs the float model in onnxruntime on
the given inputs (ONNX TensorProto files) and prints the minimum cosine of
the output to the unperturbed model's. When the full-step row is already
near a quantized model's cosine, the model itself (not the quantizer's
rounding or its activation ranges) sets the limit: mobilenet_v2_bn of the
corpus, random weights through 52 convolutions, gives 0.989 here against
0.991 for our WEIGHT_QUANT and 0.974 for FULL_QUANT (docs/quantization.md).
"""
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper


def run(model, x):
    s = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return s.run(None, {s.get_inputs()[0].name: x})[0].ravel()


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    path, inputs = sys.argv[1], sys.argv[2:]
    xs = []
    for p in inputs:
        t = onnx.TensorProto()
        with open(p, "rb") as f:
            t.ParseFromString(f.read())
        xs.append(numpy_helper.to_array(t))
    base = onnx.load(path)
    ref = [run(base, x) for x in xs]
    weights = {n.input[1] for n in base.graph.node if n.op_type in ("Conv", "Gemm", "MatMul") and len(n.input) > 1}
    rng = np.random.default_rng(0)
    for frac in (1.0, 0.5, 0.25):
        m = onnx.load(path)
        for init in m.graph.initializer:
            if init.name not in weights:
                continue
            w = numpy_helper.to_array(init).astype(np.float32)
            if w.ndim < 2:
                continue
            step = np.abs(w).max(axis=tuple(range(1, w.ndim)), keepdims=True) / 127.0
            w = w + rng.uniform(-0.5, 0.5, w.shape).astype(np.float32) * step * frac
            init.CopyFrom(numpy_helper.from_array(w.astype(np.float32), init.name))
        got = [run(m, x) for x in xs]
        cos = min(float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b))) for a, b in zip(ref, got))
        print("weight noise +-%.3f x the 8-bit per-channel step: cosine %.5f" % (0.5 * frac, cos))


if __name__ == "__main__":
    main()
