#!/usr/bin/env python3
"""The per-op sweep of make bench (issue 34): one single-op ONNX model per
op, converted at opt_level 2 and timed by `converter benchmark` on 1 thread,
against onnxruntime's in-session time (ORT_ENABLE_ALL, 1 thread) of the same
model and input, alternating ours and onnxruntime round by round. Prints a
markdown table: medians, the median of the per-round ratios with its range,
our bandwidth (input + output bytes over our median time) and its share of
STREAM triad when --triad GB/s is given, then the ops over 1.5x.

  opsweep.py CONVERTER OUTDIR [--rounds 5] [--loops 20] [--triad GBs] [--only Op,Op]

Needs onnx and onnxruntime (build/realmodels-venv: scripts/realmodels/setup.sh).
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

IMG = [1, 64, 112, 112]   # a CNN activation
SEQ = [1, 128, 768]       # a transformer activation
F = TensorProto.FLOAT


def c(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def unary(op, shape=IMG, lo=-4.0, hi=4.0, **attrs):
    return dict(op=op, shape=shape, lo=lo, hi=hi, nodes=[helper.make_node(op, ["x"], ["y"], **attrs)], inits=[])


def with_const(op, shape, const, lo=-4.0, hi=4.0, label=None, **attrs):
    return dict(op=label or op, shape=shape, lo=lo, hi=hi,
                nodes=[helper.make_node(op, ["x", "k"], ["y"], **attrs)], inits=[c("k", const)])


def sweep():
    ch = IMG[1]
    rng = np.random.RandomState(34)
    slope = rng.rand(ch, 1, 1).astype(np.float32) * 0.3
    cases = [
        unary("Relu"), unary("Sigmoid"), unary("Tanh"), unary("Exp", lo=-8, hi=8), unary("Log", lo=0.01, hi=8),
        unary("Sqrt", lo=0, hi=8), unary("Abs"), unary("Neg"), unary("Reciprocal", lo=0.5, hi=8), unary("Erf"),
        unary("Softplus"), unary("Softsign"), unary("Elu"), unary("Selu"), unary("Celu"), unary("Mish"),
        unary("HardSigmoid"), unary("HardSwish"), unary("LeakyRelu", alpha=0.1), unary("ThresholdedRelu"),
        unary("Sin"), unary("Cos"), unary("Floor"), unary("Ceil"), unary("Round"), unary("Sign"),
        with_const("Pow", IMG, np.float32(2.0), lo=0, hi=4, label="Pow^2"),
        with_const("Pow", IMG, np.float32(3.0), lo=0, hi=4, label="Pow^3"),
        with_const("Pow", IMG, np.float32(0.5), lo=0, hi=4, label="Pow^0.5"),
        with_const("PRelu", IMG, slope, label="PRelu"),
        with_const("Add", IMG, rng.rand(ch, 1, 1).astype(np.float32), label="Add (per channel)"),
        with_const("Mul", IMG, rng.rand(ch, 1, 1).astype(np.float32), label="Mul (per channel)"),
        with_const("Div", IMG, rng.rand(ch, 1, 1).astype(np.float32) + 0.5, label="Div (per channel)"),
        dict(op="Clip", shape=IMG, lo=-8, hi=8, nodes=[helper.make_node("Clip", ["x", "a", "b"], ["y"])],
             inits=[c("a", np.float32(0)), c("b", np.float32(6))]),
        dict(op="Cast f32->f16->f32", shape=IMG, lo=-4, hi=4,
             nodes=[helper.make_node("Cast", ["x"], ["h"], to=TensorProto.FLOAT16),
                    helper.make_node("Cast", ["h"], ["y"], to=F)], inits=[]),
        dict(op="MaxPool 3x3 s1", shape=IMG, lo=-4, hi=4,
             nodes=[helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])], inits=[]),
        dict(op="AveragePool 3x3 s1", shape=IMG, lo=-4, hi=4,
             nodes=[helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])], inits=[]),
        unary("GlobalAveragePool"),
        dict(op="ReduceMean (HW)", shape=IMG, lo=-4, hi=4,
             nodes=[helper.make_node("ReduceMean", ["x", "ax"], ["y"], keepdims=1)], inits=[c("ax", np.array([2, 3], np.int64))]),
        dict(op="ArgMax (C)", shape=IMG, lo=-4, hi=4,
             nodes=[helper.make_node("ArgMax", ["x"], ["y"], axis=1)], inits=[]),
        dict(op="BatchNormalization", shape=IMG, lo=-4, hi=4,
             nodes=[helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"])],
             inits=[c("s", rng.rand(ch).astype(np.float32)), c("b", rng.rand(ch).astype(np.float32)),
                    c("m", rng.rand(ch).astype(np.float32)), c("v", rng.rand(ch).astype(np.float32) + 0.5)]),
        dict(op="InstanceNormalization", shape=IMG, lo=-4, hi=4,
             nodes=[helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"])],
             inits=[c("s", rng.rand(ch).astype(np.float32)), c("b", rng.rand(ch).astype(np.float32))]),
        dict(op="Resize linear 2x", shape=[1, 64, 56, 56], lo=-4, hi=4,
             nodes=[helper.make_node("Resize", ["x", "", "sc"], ["y"], mode="linear")],
             inits=[c("sc", np.array([1, 1, 2, 2], np.float32))]),
        dict(op="Resize nearest 2x", shape=[1, 64, 56, 56], lo=-4, hi=4,
             nodes=[helper.make_node("Resize", ["x", "", "sc"], ["y"], mode="nearest")],
             inits=[c("sc", np.array([1, 1, 2, 2], np.float32))]),
        dict(op="Where (x>0)", shape=IMG, lo=-4, hi=4,
             nodes=[helper.make_node("Greater", ["x", "z"], ["g"]), helper.make_node("Where", ["g", "x", "z"], ["y"])],
             inits=[c("z", np.float32(0))]),
        dict(op="Transpose NCHW->NHWC", shape=IMG, lo=-4, hi=4,
             nodes=[helper.make_node("Transpose", ["x"], ["y"], perm=[0, 2, 3, 1])], inits=[]),
        dict(op="Softmax (last)", shape=SEQ, lo=-4, hi=4,
             nodes=[helper.make_node("Softmax", ["x"], ["y"], axis=-1)], inits=[]),
        dict(op="LayerNormalization", shape=SEQ, lo=-4, hi=4,
             nodes=[helper.make_node("LayerNormalization", ["x", "s", "b"], ["y"], axis=-1)],
             inits=[c("s", rng.rand(SEQ[-1]).astype(np.float32)), c("b", rng.rand(SEQ[-1]).astype(np.float32))]),
        dict(op="TopK 5 (last)", shape=SEQ, lo=-4, hi=4,
             nodes=[helper.make_node("TopK", ["x", "k"], ["y", "i"], axis=-1)], inits=[c("k", np.array([5], np.int64))]),
        dict(op="Expand (broadcast row)", shape=[1, 1, 768], lo=-4, hi=4,
             nodes=[helper.make_node("Expand", ["x", "s"], ["y"])], inits=[c("s", np.array([1, 128, 768], np.int64))]),
    ]
    return cases


def build(case, path):
    outs = [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None) for o in case["nodes"][-1].output]
    g = helper.make_graph(case["nodes"], "op", [helper.make_tensor_value_info("x", F, case["shape"])], outs, case["inits"])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)], producer_name="gkconv-opsweep")
    m.ir_version = 9
    m = onnx.shape_inference.infer_shapes(m)
    onnx.save(m, path)
    return m


def ours(conv, mindir, inp, loops):
    r = subprocess.run([conv, "benchmark", "--modelFile=" + mindir, "--inDataFile=" + inp, "--numThreads=1",
                        "--loopCount=%d" % loops, "--warmUpLoopCount=5"], capture_output=True, text=True)
    for line in r.stdout.splitlines():
        if "MedianRunTime = " in line:
            return float(line.split("MedianRunTime = ")[1].split()[0])
    raise SystemExit("benchmark %s failed:\n%s%s" % (mindir, r.stdout, r.stderr))


def theirs(sess, x, loops):
    for _ in range(5):
        sess.run(None, {"x": x})
    ts = []
    for _ in range(loops):
        t = time.perf_counter()
        sess.run(None, {"x": x})
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("converter")
    ap.add_argument("outdir")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--loops", type=int, default=20)
    ap.add_argument("--triad", type=float, default=0)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    cfg = os.path.join(a.outdir, "o2.cfg")
    with open(cfg, "w") as f:
        f.write("[graph_kernel_param]\nopt_level=2\n")
    only = set(filter(None, a.only.split(",")))
    rows, slow = [], []
    for case in sweep():
        if only and case["op"] not in only:
            continue
        key = "".join(ch if ch.isalnum() else "_" for ch in case["op"])
        onnx_path = os.path.join(a.outdir, key + ".onnx")
        m = build(case, onnx_path)
        x = np.random.RandomState(1).uniform(case["lo"], case["hi"], case["shape"]).astype(np.float32)
        inp = os.path.join(a.outdir, key + ".input.pb")
        with open(inp, "wb") as f:
            f.write(numpy_helper.from_array(x, "x").SerializeToString())
        out = os.path.join(a.outdir, key)
        r = subprocess.run([a.converter, "--fmk=ONNX", "--modelFile=" + onnx_path, "--outputFile=" + out,
                            "--configFile=" + cfg], capture_output=True, text=True)
        if r.returncode != 0:
            rows.append("| %s | %s | conversion failed: %s | | | | |" % (case["op"], case["shape"], r.stderr.strip().splitlines()[-1:]))
            continue
        so = ort.SessionOptions()
        so.intra_op_num_threads, so.inter_op_num_threads = 1, 1
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        sess = ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])
        outs = sess.run(None, {"x": x})
        nbytes = x.nbytes + sum(np.asarray(o).nbytes for o in outs)
        o_ms, t_ms, ratios = [], [], []
        for _ in range(a.rounds):
            o = ours(a.converter, out + ".mindir", inp, a.loops)
            t = theirs(sess, x, a.loops)
            o_ms.append(o)
            t_ms.append(t)
            ratios.append(o / t)
        ratio = statistics.median(ratios)
        gbs = nbytes / (statistics.median(o_ms) / 1000) / 1e9
        stream = " %.0f%% |" % (100 * gbs / a.triad) if a.triad else " |"
        rows.append("| %s | %s | %.3f | %.3f | %.2f (%.2f-%.2f) | %.1f |%s" % (
            case["op"], "x".join(map(str, case["shape"])), statistics.median(o_ms), statistics.median(t_ms),
            ratio, min(ratios), max(ratios), gbs, stream))
        if ratio > 1.5:
            slow.append("%s %.2f" % (case["op"], ratio))
        print(rows[-1], file=sys.stderr, flush=True)
    print("| op | input | ours ms | onnxruntime ms | ratio (range) | ours GB/s | of STREAM triad |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(r)
    print()
    print("Over 1.5x onnxruntime: %s" % (", ".join(slow) if slow else "none"))


if __name__ == "__main__":
    main()
