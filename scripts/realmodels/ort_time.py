"""Time onnxruntime on one real-model case: ort_time.py MODEL THREADS LOOPS WARMUP INPUT.pb...

Prints the median of LOOPS timed runs in ms (ORT_ENABLE_ALL, intra_op_num_threads
THREADS, one inter-op thread), the inputs matched to the model's by position.
scripts/bench.sh's real-model table runs it with build/realmodels-venv's python.
"""
import statistics
import sys
import time

import onnxruntime as ort
from onnx import TensorProto, numpy_helper

model, threads, loops, warmup = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
arrays = []
for path in sys.argv[5:]:
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    arrays.append(numpy_helper.to_array(t))
so = ort.SessionOptions()
so.intra_op_num_threads = threads
so.inter_op_num_threads = 1
so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
feed = {i.name: a for i, a in zip(sess.get_inputs(), arrays)}
for _ in range(warmup):
    sess.run(None, feed)
times = []
for _ in range(loops):
    t0 = time.perf_counter()
    sess.run(None, feed)
    times.append((time.perf_counter() - t0) * 1e3)
print("%.4f" % statistics.median(times))
