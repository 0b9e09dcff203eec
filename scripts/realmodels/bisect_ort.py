"""First node where this converter and onnxruntime disagree.

bisect_ort.py MODEL_DIR CONVERTER [DATASET]: exposes every top-level node
output of MODEL_DIR/model.onnx as a graph output, runs it in onnxruntime
(ORT_DISABLE_ALL, 1 thread) and through `CONVERTER` (--optimize=none, then
`benchmark --outputDataDir`), and prints, in graph order, each node whose
output differs (max abs difference, count), the first one marked. Work
files go to MODEL_DIR/.bisect.
"""
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper
import onnxruntime as ort


def main():
    d, conv = sys.argv[1], sys.argv[2]
    ds = sys.argv[3] if len(sys.argv) > 3 else "test_data_set_0"
    work = os.path.join(d, ".bisect")
    os.makedirs(work, exist_ok=True)
    m = onnx.load(os.path.join(d, "model.onnx"))
    m = onnx.shape_inference.infer_shapes(m)
    typed = {v.name: v for v in list(m.graph.value_info) + list(m.graph.output)}
    have = {o.name for o in m.graph.output}
    order = []
    for n in m.graph.node:
        for o in n.output:
            if o and o not in have:
                vi = typed.get(o)
                if vi is None or vi.type.tensor_type.elem_type == 0:
                    continue
                m.graph.output.append(vi)
                have.add(o)
            if o:
                order.append((n.name or n.op_type, n.op_type, o))
    probe = os.path.join(work, "probe.onnx")
    onnx.save(m, probe)
    names = [i.name for i in m.graph.input if i.name not in {x.name for x in m.graph.initializer}]
    feeds = {}
    ins = sorted((f for f in os.listdir(os.path.join(d, ds)) if f.startswith("input_")), key=lambda f: int(f[6:-3]))
    for f, n in zip(ins, names):
        t = onnx.TensorProto()
        t.ParseFromString(open(os.path.join(d, ds, f), "rb").read())
        feeds[n] = numpy_helper.to_array(t)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    s = ort.InferenceSession(probe, so, providers=["CPUExecutionProvider"])
    outs = dict(zip([o.name for o in s.get_outputs()], s.run(None, feeds)))
    case = json.load(open(os.path.join(d, "case.json")))
    out = os.path.join(work, "probe")
    subprocess.run([conv, "--fmk=ONNX", "--modelFile=" + probe, "--outputFile=" + out, "--optimize=none",
                    "--inputShape=" + case["input_shape"]], check=True, stdout=subprocess.DEVNULL)
    got_dir = os.path.join(work, "got")
    subprocess.run([conv, "benchmark", "--modelFile=" + out + ".mindir", "--numThreads=1", "--loopCount=1",
                    "--warmUpLoopCount=0", "--outputDataDir=" + got_dir,
                    "--inDataFile=" + ",".join(os.path.join(d, ds, f) for f in ins)], check=True, stdout=subprocess.DEVNULL)
    got = {}
    for f in os.listdir(got_dir):
        t = onnx.TensorProto()
        t.ParseFromString(open(os.path.join(got_dir, f), "rb").read())
        got[t.name] = numpy_helper.to_array(t)
    first = True
    shown = 0
    for node, op, o in order:
        if o not in outs or o not in got:
            continue
        a, b = outs[o], got[o]
        if a.shape != b.shape:
            print(f"{'FIRST ' if first else ''}{node} ({op}) -> {o}: shape {b.shape} vs onnxruntime {a.shape}")
            first = False
            continue
        if a.dtype.kind in "fc":
            diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
        else:
            diff = np.abs(a.astype(np.int64) - b.astype(np.int64))
        n = int(np.count_nonzero(diff))
        if n:
            print(f"{'FIRST ' if first else ''}{node} ({op}) -> {o}: {n}/{a.size} differ, max {diff.max():.3g}")
            first = False
            shown += 1
            if shown >= 15:
                break
    if first:
        print("every exposed node output is bit-identical to onnxruntime's")


if __name__ == "__main__":
    main()
