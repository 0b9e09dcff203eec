#!/usr/bin/env python3
"""Static QDQ quantizer for gkconv's quantization tests and benchmarks.

Usage: build/realmodels-venv/bin/python scripts/qdq_quantize.py MODEL_DIR [MODEL_DIR...] [--out build/qdq]
(`make qdq` sets up that venv, pinned onnxruntime 1.30.0 / onnx 1.23.2 /
numpy 1.26.4, and runs this on the models TestQDQModels reads.)

MODEL_DIR holds model.onnx and test_data_set_0 (a corpus model of
../shared/corpus/models). For each, the script
  1. folds BatchNormalization into the Conv before it;
  2. calibrates per-tensor activation ranges on test_data_set_0
     (onnxruntime, with the tensors as extra outputs);
  3. writes OUT/<name>_qdq/model.onnx: Conv, MatMul and Gemm with a constant
     weight get QuantizeLinear/DequantizeLinear (QDQ) on their activation
     input (uint8, asymmetric, per tensor), DequantizeLinear on their weight
     (int8, symmetric, per output channel) and bias (int32, scale
     x_scale*w_scale, zero point 0), and Conv and MatMul a QDQ pair on their
     output (uint8), the form onnxruntime's QDQ quantizer writes;
  4. writes OUT/<name>_qdq/test_data_set_0 with the input and onnxruntime's
     outputs of the QDQ model (graph optimisation "all") as the reference.
"""
import os
import shutil
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper, TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))


def init_map(g):
    return {t.name: t for t in g.initializer}


def fold_batchnorm(m):
    """Conv -> BatchNormalization (constant parameters, the conv output read
    by the BN only) becomes one Conv with rescaled weights and a bias."""
    g = m.graph
    inits = init_map(g)
    consumers = {}
    for n in g.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    producer = {o: n for n in g.node for o in n.output}
    drop = []
    for bn in g.node:
        if bn.op_type != "BatchNormalization":
            continue
        conv = producer.get(bn.input[0])
        if conv is None or conv.op_type != "Conv" or len(consumers.get(conv.output[0], [])) != 1:
            continue
        if conv.input[1] not in inits or not all(x in inits for x in bn.input[1:5]):
            continue
        eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
        scale, b, mean, var = (numpy_helper.to_array(inits[x]).astype(np.float64) for x in bn.input[1:5])
        w = numpy_helper.to_array(inits[conv.input[1]]).astype(np.float64)
        bias = numpy_helper.to_array(inits[conv.input[2]]).astype(np.float64) if len(conv.input) > 2 and conv.input[2] else np.zeros(w.shape[0])
        f = scale / np.sqrt(var + eps)
        w2 = (w * f.reshape(-1, *([1] * (w.ndim - 1)))).astype(np.float32)
        b2 = ((bias - mean) * f + b).astype(np.float32)
        wn, bn_name = conv.name + "_wfold", conv.name + "_bfold"
        g.initializer.extend([numpy_helper.from_array(w2, wn), numpy_helper.from_array(b2, bn_name)])
        del conv.input[1:]
        conv.input.extend([wn, bn_name])
        conv.output[0] = bn.output[0]
        drop.append(bn)
    for n in drop:
        g.node.remove(n)
    used = {i for n in g.node for i in n.input}
    for t in list(g.initializer):
        if t.name not in used:
            g.initializer.remove(t)
    return len(drop)


def targets(m):
    """The Conv, MatMul and Gemm nodes with a constant 2-D+ weight input."""
    inits = init_map(m.graph)
    out = []
    for n in m.graph.node:
        if n.op_type in ("Conv", "MatMul", "Gemm") and len(n.input) > 1 and n.input[1] in inits:
            if n.op_type == "Gemm":
                attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
                if attrs.get("alpha", 1.0) != 1.0 or attrs.get("beta", 1.0) != 1.0 or attrs.get("transA", 0):
                    continue
            if n.op_type == "MatMul" and len(inits[n.input[1]].dims) != 2:
                continue
            out.append(n)
    return out


def read_tensor(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t


def numbered(data_dir, prefix):
    """data_dir's PREFIX_N.pb files in N order."""
    names = [f for f in os.listdir(data_dir) if f.startswith(prefix) and f.endswith(".pb")]
    return [os.path.join(data_dir, f) for f in sorted(names, key=lambda f: int(f[len(prefix):-3]))]


def run_ort(model_path, data_dir, save_dir):
    """Runs model_path on data_dir's inputs (matched by name, else by
    position) with onnxruntime's CPU provider at graph optimisation "all"
    and writes its outputs to save_dir as output_N.pb, named after the
    model's outputs."""
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(model_path, opts, providers=["CPUExecutionProvider"])
    input_names = [i.name for i in sess.get_inputs()]
    feeds = {}
    for k, p in enumerate(numbered(data_dir, "input_")):
        t = read_tensor(p)
        if t.name in input_names:
            key = t.name
        elif k < len(input_names):
            key = input_names[k]
        else:
            sys.exit("%s: more input files than model inputs" % p)
        feeds[key] = numpy_helper.to_array(t)
    outputs = sess.run(None, feeds)
    os.makedirs(save_dir, exist_ok=True)
    for k, (o, a) in enumerate(zip(sess.get_outputs(), outputs)):
        with open(os.path.join(save_dir, "output_%d.pb" % k), "wb") as f:
            f.write(numpy_helper.from_array(np.asarray(a), o.name).SerializeToString())


def calibrate(m, names, data_dir):
    """min and max of each tensor in names on data_dir's inputs."""
    cm = onnx.ModelProto()
    cm.CopyFrom(m)
    have = {o.name for o in cm.graph.output}
    extra = [x for x in names if x not in have]
    for x in extra:
        cm.graph.output.append(helper.make_tensor_value_info(x, TensorProto.FLOAT, None))
    with tempfile.TemporaryDirectory() as td:
        p = os.path.join(td, "calib.onnx")
        onnx.save(cm, p)
        out = os.path.join(td, "out")
        run_ort(p, data_dir, out)
        ranges = {}
        for i, o in enumerate(cm.graph.output):
            if o.name in names:
                a = numpy_helper.to_array(read_tensor(os.path.join(out, "output_%d.pb" % i)))
                ranges[o.name] = (float(a.min()), float(a.max()))
    return ranges


def uint8_params(lo, hi):
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = np.float32((hi - lo) / 255.0) if hi > lo else np.float32(1.0)
    zp = int(np.clip(np.round(-lo / scale), 0, 255))
    return scale, zp


def quantize(m, ranges):
    g = m.graph
    inits = init_map(g)
    new_inits, new_nodes = [], {}  # new_nodes: node name -> nodes to insert before it
    qdq_of = {}  # activation tensor -> its DQ output

    def const(name, arr):
        new_inits.append(numpy_helper.from_array(arr, name))
        return name

    def qdq(t, before):
        if t in qdq_of:
            return qdq_of[t]
        s, z = uint8_params(*ranges[t])
        sn, zn = const(t + "_scale", np.array(s, np.float32)), const(t + "_zp", np.array(z, np.uint8))
        q, dq = t + "_q", t + "_dq"
        new_nodes.setdefault(before, []).extend([
            helper.make_node("QuantizeLinear", [t, sn, zn], [q], name=t + "_Q"),
            helper.make_node("DequantizeLinear", [q, sn, zn], [dq], name=t + "_DQ")])
        qdq_of[t] = dq
        return dq

    out_qdq = []
    for n in targets(m):
        x = n.input[0]
        if x not in ranges:
            continue
        w = numpy_helper.to_array(inits[n.input[1]]).astype(np.float32)
        # output-channel axis of the weight
        axis = 0
        if n.op_type == "MatMul":
            axis = 1
        elif n.op_type == "Gemm":
            tb = next((a.i for a in n.attribute if a.name == "transB"), 0)
            axis = 0 if tb else 1
        red = tuple(i for i in range(w.ndim) if i != axis)
        amax = np.max(np.abs(w), axis=red)
        ws = np.where(amax > 0, amax / 127.0, 1.0).astype(np.float32)
        shape = [1] * w.ndim
        shape[axis] = -1
        wq = np.clip(np.round(w / ws.reshape(shape)), -127, 127).astype(np.int8)
        base = n.name or n.output[0]
        wn = const(base + "_w_q", wq)
        wsn = const(base + "_w_scale", ws)
        wzn = const(base + "_w_zp", np.zeros(ws.shape, np.int8))
        wdq = base + "_w_dq"
        nodes = [helper.make_node("DequantizeLinear", [wn, wsn, wzn], [wdq], name=base + "_w_DQ", axis=axis)]
        xdq = qdq(x, n.name)
        xs, _ = uint8_params(*ranges[x])
        n.input[0], n.input[1] = xdq, wdq
        if len(n.input) > 2 and n.input[2] in inits:
            b = numpy_helper.to_array(inits[n.input[2]]).astype(np.float32)
            if b.ndim == 1 and b.shape[0] == ws.shape[0]:
                bscale = (np.float32(xs) * ws).astype(np.float32)
                bq = np.round(b / bscale).astype(np.int32)
                bn_, bsn, bzn = const(base + "_b_q", bq), const(base + "_b_scale", bscale), const(base + "_b_zp", np.zeros(bq.shape, np.int32))
                bdq = base + "_b_dq"
                nodes.append(helper.make_node("DequantizeLinear", [bn_, bsn, bzn], [bdq], name=base + "_b_DQ", axis=0))
                n.input[2] = bdq
        new_nodes.setdefault(n.name, []).extend(nodes)
        if n.op_type in ("Conv", "MatMul") and n.output[0] in ranges:
            out_qdq.append(n)
    graph_outs = {o.name for o in g.output}
    after = {}
    for n in out_qdq:
        y = n.output[0]
        if y in graph_outs or y in qdq_of:
            # A graph output stays float; a tensor another quantized op
            # reads already has its QDQ pair (same scale) before that op.
            continue
        s, z = uint8_params(*ranges[y])
        sn, zn = const(y + "_scale", np.array(s, np.float32)), const(y + "_zp", np.array(z, np.uint8))
        raw = y + "_float"
        n.output[0] = raw
        after[n.name] = [helper.make_node("QuantizeLinear", [raw, sn, zn], [y + "_q"], name=y + "_Q"),
                         helper.make_node("DequantizeLinear", [y + "_q", sn, zn], [y], name=y + "_DQ")]
    nodes = []
    for n in g.node:
        nodes.extend(new_nodes.get(n.name, []))
        nodes.append(n)
        nodes.extend(after.get(n.name, []))
    del g.node[:]
    g.node.extend(nodes)
    used = {i for n in g.node for i in n.input}
    keep = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(keep + new_inits)


def main(argv):
    out_root = os.path.join(HERE, "..", "build", "qdq")
    dirs = []
    i = 0
    while i < len(argv):
        if argv[i] == "--out":
            out_root = argv[i + 1]
            i += 2
            continue
        dirs.append(argv[i])
        i += 1
    if not dirs:
        sys.exit(__doc__)
    for d in dirs:
        name = os.path.basename(os.path.normpath(d))
        m = onnx.load(os.path.join(d, "model.onnx"))
        for k, n in enumerate(m.graph.node):
            if not n.name:
                n.name = "%s_%d" % (n.op_type, k)
        folded = fold_batchnorm(m)
        data = os.path.join(d, "test_data_set_0")
        names = set()
        for n in targets(m):
            names.add(n.input[0])
            if n.op_type in ("Conv", "MatMul"):
                names.add(n.output[0])
        ranges = calibrate(m, names, data)
        quantize(m, ranges)
        onnx.checker.check_model(m)
        od = os.path.join(out_root, name + "_qdq")
        shutil.rmtree(od, ignore_errors=True)
        os.makedirs(od)
        mp = os.path.join(od, "model.onnx")
        onnx.save(m, mp)
        ds = os.path.join(od, "test_data_set_0")
        os.makedirs(ds)
        for f in os.listdir(data):
            if f.startswith("input_"):
                shutil.copy(os.path.join(data, f), ds)
        with tempfile.TemporaryDirectory() as td:
            run_ort(mp, ds, td)
            for f in os.listdir(td):
                if f.startswith("output_"):
                    shutil.copy(os.path.join(td, f), ds)
        counts = {}
        for n in m.graph.node:
            counts[n.op_type] = counts.get(n.op_type, 0) + 1
        print("%s: %d BatchNormalization folded, %d tensors calibrated -> %s %s" % (name, folded, len(ranges), mp, counts))


if __name__ == "__main__":
    main(sys.argv[1:])
