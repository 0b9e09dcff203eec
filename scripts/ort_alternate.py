#!/usr/bin/env python3
"""Ours against onnxruntime on one model, alternating round by round:
`converter benchmark` (median of 20 runs after 5) and onnxruntime's Python
session at ORT_ENABLE_ALL (median of 20 after 5), same thread count; prints
both medians and the median of the per-round ratios with its range.

  ort_alternate.py CONVERTER MODEL.onnx MODEL.mindir THREADS ROUNDS

Inputs: random float32 of the model's shape (dynamic dims 1), the same for
both (our benchmark draws its own when no --inDataFile is given: the model's
time does not depend on the values). Needs build/realmodels-venv."""
import statistics
import subprocess
import sys
import time

import numpy as np
import onnxruntime as ort


def main():
    conv, onnx_path, mindir, threads, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    so = ort.SessionOptions()
    so.intra_op_num_threads, so.inter_op_num_threads = threads, 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    s = ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])
    feeds = {i.name: np.random.RandomState(0).rand(*[d if isinstance(d, int) else 1 for d in i.shape]).astype(np.float32)
             for i in s.get_inputs()}
    ours, theirs, ratios = [], [], []
    for _ in range(rounds):
        r = subprocess.run([conv, "benchmark", "--modelFile=" + mindir, "--numThreads=%d" % threads,
                            "--loopCount=20", "--warmUpLoopCount=5"], capture_output=True, text=True)
        if "MedianRunTime = " not in r.stdout:
            raise SystemExit("benchmark %s failed:\n%s%s" % (mindir, r.stdout, r.stderr))
        o = float(r.stdout.split("MedianRunTime = ")[1].split()[0])
        for _ in range(5):
            s.run(None, feeds)
        ts = []
        for _ in range(20):
            t0 = time.perf_counter()
            s.run(None, feeds)
            ts.append((time.perf_counter() - t0) * 1000)
        t = statistics.median(ts)
        ours.append(o)
        theirs.append(t)
        ratios.append(o / t)
    print("%s %dT ours %.2f ms onnxruntime %.2f ms ours/onnxruntime %.2f (%.2f-%.2f)" % (
        mindir, threads, statistics.median(ours), statistics.median(theirs), statistics.median(ratios), min(ratios), max(ratios)))


if __name__ == "__main__":
    main()
