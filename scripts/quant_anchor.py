#!/usr/bin/env python3
"""Post-training quantization against onnxruntime's quantizers (issue 35's anchor).

Usage: build/realmodels-venv/bin/python scripts/quant_anchor.py ./converter OUT_DIR [--rounds 5] [--models resnet18_bn,mobilenet_v2_bn] [--threads 1]
(`make quantbench` runs it; ../shared/corpus/models must be beside the repo.)

For each corpus model (model.onnx + test_data_set_0):
  1. calibration data: 16 deterministic variants of the corpus input (flips,
     shifts, gains, noise; seed 1), written as BIN files (raw float32), and 3
     held-out variants (seed 2) never used for calibration;
  2. ours: `converter` with [common_quant_param] quant_type=FULL_QUANT,
     calibrate_size=16, MAX_MIN (and WEIGHT_QUANT);
  3. theirs: onnxruntime.quantization.quantize_static on the same 16 inputs
     (QDQ, per-channel int8 weights, uint8 activations, MinMax) of the same
     model with BatchNormalization folded by onnxruntime's pre-processing;
  4. accuracy: the cosine similarity of each quantized model's output to the
     float model's (onnxruntime float) on the held-out inputs, minimum over them;
  5. speed, 1 thread (or --threads N, ours and onnxruntime's alike), ROUNDS alternating rounds: our float model, our
     FULL_QUANT model (`converter benchmark` median) and onnxruntime's
     quantized model (session.run median); medians of per-round ratios with
     their range.
A BERT-base-sized MatMul stack and four whole BERT-base encoder layers
(scripts/quant_mlp.py, --encoder) do the same for DYNAMIC_QUANT against
onnxruntime's quantize_dynamic.
Prints one Markdown table; the CPU's ISA is in the first line.
"""
import os
import statistics
import subprocess
import sys
import time

# the thread count of every timed run, ours and onnxruntime's (--threads)
THREADS = int(sys.argv[sys.argv.index("--threads") + 1]) if "--threads" in sys.argv else 1

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

ort.set_default_logger_severity(3)
HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.environ.get("SHARED", os.path.join(HERE, "..", "..", "shared"))


def isa():
    flags = open("/proc/cpuinfo").read().split()
    best = next((f for f in ("avx512_vnni", "avx_vnni", "avx512f", "avx2") if f in flags), "generic")
    # AMX-INT8: both converters' int8 GEMMs use it (ours unless GKCONV_INT8_AMX=0)
    return best + (" + amx_int8" if "amx_int8" in flags else "")


def load_pb(p):
    t = onnx.TensorProto()
    t.ParseFromString(open(p, "rb").read())
    return numpy_helper.to_array(t)


def variants(x, n, seed):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        y = x.copy()
        if i % 2:
            y = y[..., ::-1]
        if y.ndim == 4:
            y = np.roll(y, int(rng.integers(-20, 20)), axis=2)
        y = y * rng.uniform(0.8, 1.2) + rng.normal(0, 0.1, y.shape)
        out.append(np.ascontiguousarray(y.astype(np.float32)))
    return out


def cos(a, b):
    a, b = a.ravel().astype(np.float64), b.ravel().astype(np.float64)
    return float(a @ b / np.sqrt((a @ a) * (b @ b)))


def ours_time(conv, mindir, inp, loops=10):
    r = subprocess.run([conv, "benchmark", "--modelFile=" + mindir, "--inDataFile=" + inp, "--numThreads=%d" % THREADS,
                        "--loopCount=%d" % loops, "--warmUpLoopCount=3"], capture_output=True, text=True)
    for line in r.stdout.splitlines():
        if "MedianRunTime = " in line:
            return float(line.split("MedianRunTime = ")[1].split()[0])
    raise SystemExit("benchmark %s failed:\n%s%s" % (mindir, r.stdout, r.stderr))


def ours_outputs(conv, mindir, inp, out_dir, count=1):
    os.makedirs(out_dir, exist_ok=True)
    r = subprocess.run([conv, "benchmark", "--modelFile=" + mindir, "--inDataFile=" + inp, "--numThreads=1",
                        "--loopCount=1", "--warmUpLoopCount=0", "--outputDataDir=" + out_dir], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit("benchmark %s failed:\n%s%s" % (mindir, r.stdout, r.stderr))
    outs = [load_pb(os.path.join(out_dir, "output_%d.pb" % i)) for i in range(count)]
    return outs[0] if count == 1 else outs


def ort_time(sess, name, x, loops=10):
    for _ in range(3):
        sess.run(None, {name: x})
    ts = []
    for _ in range(loops):
        t = time.perf_counter()
        sess.run(None, {name: x})
        ts.append((time.perf_counter() - t) * 1e3)
    return statistics.median(ts)


def session(path):
    so = ort.SessionOptions()
    so.intra_op_num_threads = THREADS
    so.inter_op_num_threads = 1
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def convert(conv, model, out, cfg_text, work, shape=None):
    cfg = out + ".cfg"
    open(cfg, "w").write(cfg_text)
    extra = (["--inputShape=" + shape] if shape else []) + ["--reportFile=" + out + ".json"]
    r = subprocess.run([conv, "--fmk=ONNX", "--modelFile=" + model, "--outputFile=" + out, "--configFile=" + cfg,
                        "--progress=off"] + extra, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit("convert %s failed:\n%s%s" % (model, r.stdout, r.stderr))
    return out + ".mindir"


def write_pb(x, name, path):
    open(path, "wb").write(numpy_helper.from_array(x, name).SerializeToString())


def ratio_range(a, b, rounds):
    rs = [x / y for x, y in zip(a, b)]
    return "%.2f (%.2f-%.2f)" % (statistics.median(rs), min(rs), max(rs))


def sample_sets(d, name, iname, work):
    """The 16 calibration inputs (BIN files in W/calib) and the 3 held-out
    ones (W/held_i.pb) from the model's test input; returns W, both lists,
    the calibration folder and the held-out files."""
    x = load_pb(os.path.join(d, "test_data_set_0", "input_0.pb"))
    calib, held = variants(x, 16, 1), variants(x, 3, 2)
    w = os.path.join(work, name)
    cdir = os.path.join(w, "calib")
    os.makedirs(cdir, exist_ok=True)
    for i, c in enumerate(calib):
        c.tofile(os.path.join(cdir, "%02d.bin" % i))
    ins = []
    for i, h in enumerate(held):
        p = os.path.join(w, "held_%d.pb" % i)
        write_pb(h, iname, p)
        ins.append(p)
    return w, calib, held, cdir, ins


def image_model(conv, name, work, rounds):
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process
    d = os.path.join(SHARED, "corpus", "models", name)
    model = os.path.join(d, "model.onnx")
    m = onnx.load(model)
    iname = m.graph.input[0].name
    w, calib, held, cdir, ins = sample_sets(d, name, iname, work)
    float_sess = session(model)
    refs = [float_sess.run(None, {iname: h})[0] for h in held]
    fq = convert(conv, model, os.path.join(w, "full_quant"),
                 "[common_quant_param]\nquant_type=FULL_QUANT\nbit_num=8\n[data_preprocess_param]\n"
                 "calibrate_path=%s:%s\ncalibrate_size=16\ninput_type=BIN\n[full_quant_param]\nactivation_quant_method=MAX_MIN\n" % (iname, cdir), w)
    wq = convert(conv, model, os.path.join(w, "weight_quant"), "[common_quant_param]\nquant_type=WEIGHT_QUANT\nbit_num=8\n", w)
    fl = convert(conv, model, os.path.join(w, "float"), "[graph_kernel_param]\nopt_level=2\n", w)
    ours_cos = min(cos(ours_outputs(conv, fq, p, os.path.join(w, "out_fq_%d" % i)), r) for i, (p, r) in enumerate(zip(ins, refs)))
    wq_cos = min(cos(ours_outputs(conv, wq, p, os.path.join(w, "out_wq_%d" % i)), r) for i, (p, r) in enumerate(zip(ins, refs)))

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter([{iname: c} for c in calib])

        def get_next(self):
            return next(self.it, None)

    pre = os.path.join(w, "pre.onnx")
    quant_pre_process(model, pre, skip_symbolic_shape=True)
    oq = os.path.join(w, "ort_qdq.onnx")
    quantize_static(pre, oq, Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    ort_q = session(oq)
    ort_cos = min(cos(ort_q.run(None, {iname: h})[0], r) for h, r in zip(held, refs))
    t_fl, t_fq, t_ort = [], [], []
    for _ in range(rounds):
        t_fl.append(ours_time(conv, fl, ins[0]))
        t_fq.append(ours_time(conv, fq, ins[0]))
        t_ort.append(ort_time(ort_q, iname, held[0]))
    return ("| %s | FULL_QUANT MAX_MIN | %.5f | %.5f | %s | %s |" % (name, ours_cos, ort_cos, ratio_range(t_fl, t_fq, rounds), ratio_range(t_fq, t_ort, rounds)),
            "| %s | WEIGHT_QUANT 8 bit | %.5f | | | |" % (name, wq_cos))


def real_model(conv, d, work):
    """A model of the real-model corpus (build/realmodels, `make realmodels`):
    FULL_QUANT and WEIGHT_QUANT accuracy on held-out variants of its input,
    every output (the minimum cosine over outputs and inputs)."""
    import json
    name = os.path.basename(d.rstrip("/"))
    case = json.load(open(os.path.join(d, "case.json")))
    shape = case.get("input_shape")
    model = os.path.join(d, "model.onnx")
    m = onnx.load(model)
    inits = {t.name for t in m.graph.initializer}
    iname = [i.name for i in m.graph.input if i.name not in inits][0]
    w, calib, held, cdir, ins = sample_sets(d, name, iname, work)
    fs = session(model)
    nout = len(fs.get_outputs())
    refs = [fs.run(None, {iname: h}) for h in held]
    rows = []
    for label, cfg in (("FULL_QUANT MAX_MIN", "[common_quant_param]\nquant_type=FULL_QUANT\n[data_preprocess_param]\n"
                        "calibrate_path=%s:%s\ncalibrate_size=16\ninput_type=BIN\n" % (iname, cdir)),
                       ("WEIGHT_QUANT 8 bit", "[common_quant_param]\nquant_type=WEIGHT_QUANT\n"),
                       ("DYNAMIC_QUANT", "[common_quant_param]\nquant_type=DYNAMIC_QUANT\n")):
        tag = label.split()[0].lower()
        try:
            mf = convert(conv, model, os.path.join(w, tag), cfg, w, shape)
            rq = json.load(open(os.path.join(w, tag) + ".json"))["quantization"]
            if not rq["quantized"]:
                rows.append("| %s (real) | %s | nothing to quantize (%d candidates kept float) | | | |" % (name, label, len(rq["kept_float"])))
                continue
            worst = 1.0
            for i, (p, r) in enumerate(zip(ins, refs)):
                outs = ours_outputs(conv, mf, p, os.path.join(w, "out_%s_%d" % (tag, i)), nout)
                outs = outs if nout > 1 else [outs]
                worst = min([worst] + [cos(o, rr) for o, rr in zip(outs, r)])
            rows.append("| %s (real) | %s (%d nodes) | %.5f | | | |" % (name, label, len(rq["quantized"]), worst))
        except SystemExit as e:
            rows.append("| %s (real) | %s | failed: %s | | | |" % (name, label, str(e).splitlines()[-1][:120]))
    return rows


def mlp(conv, work, rounds, encoder=False):
    w = os.path.join(work, "encoder" if encoder else "mlp")
    subprocess.run([sys.executable, os.path.join(HERE, "quant_mlp.py"), w] + (["--encoder"] if encoder else []),
                   check=True, capture_output=True)
    model, inp = os.path.join(w, "model.onnx"), os.path.join(w, "test_data_set_0", "input_0.pb")
    x = load_pb(inp)
    ref = session(model).run(None, {"input": x})[0]
    dq = convert(conv, model, os.path.join(w, "dynamic_quant"), "[graph_kernel_param]\nopt_level=2\n[common_quant_param]\nquant_type=DYNAMIC_QUANT\n", w)
    fl = convert(conv, model, os.path.join(w, "float"), "[graph_kernel_param]\nopt_level=2\n", w)
    ours_cos = cos(ours_outputs(conv, dq, inp, os.path.join(w, "out_dq")), ref)
    ort_q = session(os.path.join(w, "model_dq.onnx"))
    ort_cos = cos(ort_q.run(None, {"input": x})[0], ref)
    t_fl, t_dq, t_ort = [], [], []
    for _ in range(rounds):
        t_fl.append(ours_time(conv, fl, inp))
        t_dq.append(ours_time(conv, dq, inp))
        t_ort.append(ort_time(ort_q, "input", x))
    what = "BERT-base encoder x4 (quant_mlp.py --encoder)" if encoder else "BERT-base FFN x4 (quant_mlp.py)"
    return "| %s | DYNAMIC_QUANT | %.5f | %.5f | %s | %s |" % (
        what, ours_cos, ort_cos, ratio_range(t_fl, t_dq, rounds), ratio_range(t_dq, t_ort, rounds))


def bert_base(conv, model, work, rounds):
    """DYNAMIC_QUANT on make bench's 12-layer bert_base export (bench/models,
    made by scripts/bench.sh with Debian's python3-torch): the cosine of each
    output to onnxruntime float over 3 held-out token sequences (the
    minimum), onnxruntime's quantize_dynamic on the same file, and the
    speed against our float model and onnxruntime's quantized one."""
    from onnxruntime.quantization import QuantType, quantize_dynamic
    w = os.path.join(work, "bert_base")
    os.makedirs(w, exist_ok=True)
    rng = np.random.default_rng(35)
    ids = [rng.integers(1, 30522, size=(1, 128), dtype=np.int64) for _ in range(3)]
    inps = []
    for i, x in enumerate(ids):
        inps.append(os.path.join(w, "input_%d.pb" % i))
        write_pb(x, "input_ids", inps[-1])
    fp = session(model)
    dq = convert(conv, model, os.path.join(w, "dynamic_quant"), "[graph_kernel_param]\nopt_level=2\n[common_quant_param]\nquant_type=DYNAMIC_QUANT\n", w)
    fl = convert(conv, model, os.path.join(w, "float"), "[graph_kernel_param]\nopt_level=2\n", w)
    qpath = os.path.join(w, "model_dq.onnx")
    if not os.path.isfile(qpath):
        quantize_dynamic(model, qpath, weight_type=QuantType.QInt8)
    oq = session(qpath)
    ours_cos, ort_cos = 1.0, 1.0
    for i, x in enumerate(ids):
        ref = fp.run(None, {"input_ids": x})
        got = ours_outputs(conv, dq, inps[i], os.path.join(w, "out_dq_%d" % i), count=len(ref))
        theirs = oq.run(None, {"input_ids": x})
        for k in range(len(ref)):
            ours_cos = min(ours_cos, cos(got[k], ref[k]))
            ort_cos = min(ort_cos, cos(theirs[k], ref[k]))
    t_fl, t_dq, t_ort = [], [], []
    for _ in range(rounds):
        t_fl.append(ours_time(conv, fl, inps[0]))
        t_dq.append(ours_time(conv, dq, inps[0]))
        t_ort.append(ort_time(oq, "input_ids", ids[0]))
    return "| bert_base, 12 layers (make bench's export) | DYNAMIC_QUANT | %.5f | %.5f | %s | %s |" % (
        ours_cos, ort_cos, ratio_range(t_fl, t_dq, rounds), ratio_range(t_dq, t_ort, rounds))


def main():
    conv, work = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 5
    models = [m for m in sys.argv[sys.argv.index("--models") + 1].split(",") if m] if "--models" in sys.argv else ["resnet18_bn", "mobilenet_v2_bn"]
    os.makedirs(work, exist_ok=True)
    print("ISA: %s; %d thread(s); %d alternating rounds; onnxruntime %s" % (isa(), THREADS, rounds, ort.__version__))
    print("| model | quantization | cosine ours (min over 3 held-out) | cosine onnxruntime | speed-up over our float | ours / onnxruntime quantized |")
    print("|---|---|---|---|---|---|")
    for name in models:
        for row in image_model(conv, name, work, rounds):
            print(row, flush=True)
    print(mlp(conv, work, rounds), flush=True)
    print(mlp(conv, work, rounds, encoder=True), flush=True)
    bert = os.path.join(HERE, "..", "bench", "models", "bert_base", "model.onnx")
    if os.path.isfile(bert):
        print(bert_base(conv, bert, work, rounds), flush=True)
    else:
        print("| bert_base, 12 layers | skipped: %s missing (make bench exports it; needs python3-torch) | | | | |" % bert, flush=True)
    real = sys.argv[sys.argv.index("--realmodels") + 1] if "--realmodels" in sys.argv else os.path.join(HERE, "..", "build", "realmodels")
    for name in ("ocr_det_tiny", "mtcnn_onet", "mtcnn_pnet", "basic_pitch"):
        d = os.path.join(real, name)
        if os.path.isfile(os.path.join(d, "case.json")):
            for row in real_model(conv, d, work):
                print(row, flush=True)


if __name__ == "__main__":
    main()
