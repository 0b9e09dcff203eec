"""Find the first node where MindSpore and this converter disagree.

Usage (in build/interop-venv):
  python scripts/interop/bisect_ms.py TESTDIR [--converter ./converter] [--out DIR]

TESTDIR holds model.onnx and test_data_set_0 (an ONNX backend test). Every
intermediate value becomes a graph output (onnx), the model is converted
unfused with --primitiveSet=mindspore, run in MindSpore (nn.GraphCell) and by
`converter benchmark --outputDataDir`, and the values are compared in graph
order (atol 1e-5, rtol 1e-4): the first that differs names the node whose
MindSpore semantics differ, with its op and a few values.
"""
import argparse
import glob
import os
import subprocess
import sys

import mindspore as ms  # before onnx: protobuf 7 descriptor clash otherwise
import numpy as np
import onnx
from onnx import numpy_helper, shape_inference


def read_pb(p):
    t = onnx.TensorProto()
    with open(p, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("testdir")
    ap.add_argument("--converter", default="./converter")
    ap.add_argument("--out", default="build/interop/bisect")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    m = onnx.load(os.path.join(a.testdir, "model.onnx"))
    m = shape_inference.infer_shapes(m)
    typed = {vi.name: vi for vi in list(m.graph.value_info) + list(m.graph.output)}
    have = {o.name for o in m.graph.output}
    order = []
    for n in m.graph.node:
        for o in n.output:
            if o and o in typed:
                order.append((o, n.op_type, n.name))
                if o not in have:
                    m.graph.output.append(typed[o])
                    have.add(o)
    model = os.path.join(a.out, "model.onnx")
    onnx.save(m, model)
    out = os.path.join(a.out, "model")
    subprocess.run([a.converter, "--fmk=ONNX", "--modelFile=" + model, "--outputFile=" + out, "--optimize=none",
                    "--primitiveSet=mindspore"], check=True, capture_output=True)
    ins = sorted(glob.glob(os.path.join(a.testdir, "test_data_set_0", "input_*.pb")))
    ours_dir = os.path.join(a.out, "ours")
    subprocess.run([a.converter, "benchmark", "--modelFile=" + out + ".mindir", "--inDataFile=" + ",".join(ins),
                    "--outputDataDir=" + ours_dir, "--loopCount=1", "--warmUpLoopCount=0"], check=True, capture_output=True)
    ours = {}
    for p in glob.glob(os.path.join(ours_dir, "output_*.pb")):
        t = onnx.TensorProto()
        with open(p, "rb") as f:
            t.ParseFromString(f.read())
        ours[t.name] = numpy_helper.to_array(t)
    ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU")
    got = ms.nn.GraphCell(ms.load(out + ".mindir"))(*[ms.Tensor(read_pb(p)) for p in ins])
    names = [o.name for o in m.graph.output]
    got = dict(zip(names, [g.asnumpy() for g in (got if isinstance(got, (tuple, list)) else [got])]))
    for name, op, node in order:
        if name not in got or name not in ours:
            continue
        x, y = got[name], ours[name]
        if x.shape != y.shape or x.dtype != y.dtype:
            print("first difference: %s (%s, node %s): shape/dtype %s %s vs %s %s" % (name, op, node, x.shape, x.dtype, y.shape, y.dtype))
            return 1
        if x.dtype.kind in "fc":
            bad = ~np.isclose(x, y, atol=1e-5, rtol=1e-4, equal_nan=True)
        else:
            bad = x != y
        if bad.any():
            print("first difference: %s (%s, node %s): %d/%d values; MindSpore %s, ours %s" % (
                name, op, node, int(bad.sum()), x.size, x[bad][:4], y[bad][:4]))
            return 1
    print("no difference in %d values" % len(order))
    return 0


if __name__ == "__main__":
    sys.exit(main())
