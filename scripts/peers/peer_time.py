"""Time one peer engine on one ONNX model, the way make bench times ours.

    peer_time.py MODEL PEER [--threads N] [--runs R] [--warmup W]
                 [--shape NAME=AxBxC ...] [--prepare-timeout S] [--budget-s S]

PEER is onnxruntime, openvino, iree or tvm. The model is prepared once
(converted and compiled; not timed) and, for iree and tvm whose compiles are
slow, the compiled artifact is cached under build/peers/<model hash>/. Then,
in this process, WARMUP untimed and RUNS timed inferences on seeded random
inputs of the model's static shapes, each timed alone by the wall clock.
Prints one JSON line: {"peer", "version", "median_ms", "min_ms", "max_ms",
"runs", ...}, or {"peer", "error": "why"} with exit status 0 when the peer
cannot run this model (not installed, dynamic input shape, import or compile
failure, prepare timeout), so that scripts/bench.sh goes on with the others.

Run it with build/peers-venv/bin/python (scripts/peers/setup.sh makes it).
"""
import argparse
import hashlib
import importlib.metadata
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

PEERS = ("onnxruntime", "openvino", "iree", "tvm")
# The distribution whose version is reported for each peer.
PEER_PACKAGE = {
    "onnxruntime": "onnxruntime",
    "openvino": "openvino",
    "iree": "iree-base-runtime",
    "tvm": "apache-tvm",
}
REPO = Path(__file__).resolve().parents[2]
INT_INPUT_MAX = 100  # random integer inputs lie in [0, 100): valid token ids for any vocabulary


class PeerError(Exception):
    """A clean "this peer cannot run this model": reported, not raised."""


def emit(record):
    print(json.dumps(record), flush=True)


def first_error_line(text):
    """The line of a tool's or traceback's output that says what went wrong."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in lines:
        if "error:" in line.lower() and not line.startswith("File "):
            return line[:300]
    return (lines[-1] if lines else "no output")[:300]


def peer_version(peer):
    try:
        return importlib.metadata.version(PEER_PACKAGE[peer])
    except importlib.metadata.PackageNotFoundError:
        reason_file = Path(sys.prefix) / f".failed-{peer}"
        reason = reason_file.read_text().strip() if reason_file.exists() else "not in this Python"
        raise PeerError(f"{PEER_PACKAGE[peer]} not installed ({reason}); run scripts/peers/setup.sh")


def model_hash(path, shapes):
    """sha256 of the model file and the shape overrides, remembered by path,
    size and mtime so that each round does not rehash a 400 MB model."""
    st = path.stat()
    index_path = REPO / "build/peers/hashes.json"
    key = f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}"
    try:
        index = json.loads(index_path.read_text())
    except (OSError, ValueError):
        index = {}
    if key not in index:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        index[key] = h.hexdigest()[:16]
        index_path.parent.mkdir(parents=True, exist_ok=True)
        index_path.write_text(json.dumps(index, indent=1))
    suffix = ""
    if shapes:
        suffix = "-" + hashlib.sha256(json.dumps(shapes, sort_keys=True).encode()).hexdigest()[:8]
    return index[key] + suffix


def input_specs(model_path, shapes):
    """[(name, numpy dtype, shape)] of the graph inputs that are not initializers."""
    import onnx
    from onnx import helper

    graph = onnx.load(str(model_path), load_external_data=False).graph
    initializers = {t.name for t in graph.initializer}
    specs = []
    for value in graph.input:
        if value.name in initializers:
            continue
        tensor_type = value.type.tensor_type
        if value.name in shapes:
            shape = shapes[value.name]
        else:
            shape = []
            for dim in tensor_type.shape.dim:
                if not dim.HasField("dim_value") or dim.dim_value <= 0:
                    raise PeerError(
                        f"input {value.name} has a dynamic dimension ({dim.dim_param or '?'}); "
                        f"give --shape {value.name}=AxB..."
                    )
                shape.append(dim.dim_value)
        specs.append((value.name, helper.tensor_dtype_to_np_dtype(tensor_type.elem_type), list(shape)))
    return specs


def random_inputs(specs, seed=1):
    import numpy as np

    rng = np.random.default_rng(seed)
    arrays = []
    for _, dtype, shape in specs:
        if np.issubdtype(dtype, np.floating):
            arrays.append(rng.standard_normal(shape).astype(dtype))
        elif dtype == np.bool_:
            arrays.append(rng.integers(0, 2, shape).astype(np.bool_))
        else:
            arrays.append(rng.integers(0, INT_INPUT_MAX, shape).astype(dtype))
    return arrays


def static_model(model_path, specs, shapes, work):
    """The model itself, or (with --shape overrides) a copy whose inputs carry
    the overriding static shapes, for importers that read shapes from the file."""
    if not shapes:
        return model_path
    import onnx

    model = onnx.load(str(model_path))
    by_name = {name: shape for name, _, shape in specs}
    for value in model.graph.input:
        if value.name in shapes:
            dims = value.type.tensor_type.shape.dim
            del dims[:]
            for d in by_name[value.name]:
                dims.add().dim_value = d
    out = work / "static.onnx"
    large = model.ByteSize() > (1 << 31) - (1 << 26)
    onnx.save(model, str(out), save_as_external_data=large, location="static.onnx.data")
    return out


def run_tool(args, log):
    """Runs a compiler step; a failure becomes a PeerError with its error line."""
    with open(log, "w") as f:
        rc = subprocess.run(args, stdout=f, stderr=subprocess.STDOUT).returncode
    if rc != 0:
        raise PeerError(f"{Path(args[0]).name} failed: {first_error_line(Path(log).read_text(errors='replace'))}")


# --- prepare: the slow compiles, run in a child process under a timeout -----


def prepare_iree(model_path, specs, shapes, work):
    bindir = Path(sys.executable).parent
    src = static_model(model_path, specs, shapes, work)
    mlir = work / "model.mlir"
    run_tool([str(bindir / "iree-import-onnx"), str(src), "-o", str(mlir)], work / "import.log")
    # host: the compile machine's own CPU features (AVX2 or AVX-512), like
    # the -march=native our kernels and onnxruntime's MLAS dispatch use.
    run_tool(
        [
            str(bindir / "iree-compile"),
            str(mlir),
            "--iree-hal-target-backends=llvm-cpu",
            "--iree-llvmcpu-target-cpu=host",
            "-o",
            str(work / "model.vmfb.tmp"),
        ],
        work / "compile.log",
    )
    mlir.unlink()  # hundreds of MB of inlined weights; the .vmfb holds them too
    os.replace(work / "model.vmfb.tmp", work / "model.vmfb")


def tvm_target():
    import tvm
    from tvm.target import codegen

    # TVM 0.27 takes targets only as dicts and rejects mcpu=native with its
    # own LLVM triple, so name the host CPU as LLVM sees it (e.g. znver3).
    return tvm.target.Target({"kind": "llvm", "mcpu": codegen.llvm_get_system_cpu()})


def prepare_tvm(model_path, specs, shapes, work):
    import onnx
    import tvm
    from tvm.relax.frontend.onnx import from_onnx

    model = onnx.load(str(model_path))
    # Relax is TVM's only frontend since relay's removal; the weights are
    # folded in as constants (keep_params_in_input=False) so the build sees them.
    mod = from_onnx(model, shape_dict={name: shape for name, _, shape in specs}, keep_params_in_input=False)
    executable = tvm.compile(mod, target=tvm_target())
    executable.export_library(str(work / "model.so.tmp.so"))
    os.replace(work / "model.so.tmp.so", work / "model.so")


PREPARED_FILE = {"iree": "model.vmfb", "tvm": "model.so"}
PREPARE = {"iree": prepare_iree, "tvm": prepare_tvm}


def ensure_prepared(args, specs, shapes, work):
    """Compiles into WORK once; a failure or timeout is remembered there too
    (prepare.error) so that later rounds report it without compiling again."""
    done = work / PREPARED_FILE[args.peer]
    failed = work / "prepare.error"
    if done.exists():
        return done
    if failed.exists():
        raise PeerError(failed.read_text().strip())
    work.mkdir(parents=True, exist_ok=True)
    child = [sys.executable, __file__, str(args.model), args.peer, "--prepare-only"]
    for name, shape in shapes.items():
        child += ["--shape", f"{name}={'x'.join(map(str, shape))}"]
    t0 = time.time()
    # A session of its own so that a timeout also ends iree-compile, the
    # child's child.
    proc = subprocess.Popen(child, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=args.prepare_timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        why = f"timed out preparing after {args.prepare_timeout:.0f} s"
        failed.write_text(why + "\n")
        raise PeerError(why)
    if not done.exists():
        why = None
        for line in out.splitlines():
            try:
                why = json.loads(line).get("error")
            except ValueError:
                pass
        why = why or f"prepare failed: {first_error_line(err)}"
        failed.write_text(why + "\n")
        raise PeerError(why)
    (work / "prepare_seconds").write_text("%.1f\n" % (time.time() - t0))
    return done


# --- load: a callable that runs one inference, outputs on the host ----------


def load_onnxruntime(args, specs, arrays, work):
    import onnxruntime as ort

    # As scripts/realmodels/ort_time.py: all graph optimizations, THREADS
    # intra-op threads, one inter-op thread.
    so = ort.SessionOptions()
    so.intra_op_num_threads = args.threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(str(args.model), so, providers=["CPUExecutionProvider"])
    feed = {name: a for (name, _, _), a in zip(specs, arrays)}
    return lambda: sess.run(None, feed)


def load_openvino(args, specs, arrays, work):
    import openvino as ov

    core = ov.Core()
    model = core.read_model(str(args.model))
    if args.shapes:
        model.reshape({name: shape for name, _, shape in specs})
    compiled = core.compile_model(
        model,
        "CPU",
        {
            "INFERENCE_NUM_THREADS": args.threads,
            "PERFORMANCE_HINT": "LATENCY",
            # float32 like ours and onnxruntime: on CPUs with AMX or
            # AVX512_BF16 OpenVINO would otherwise compute in bf16.
            "INFERENCE_PRECISION_HINT": "f32",
        },
    )
    request = compiled.create_infer_request()
    feed = {name: a for (name, _, _), a in zip(specs, arrays)}
    return lambda: request.infer(feed, share_inputs=True, share_outputs=True)


def load_iree(args, specs, arrays, work):
    import iree.runtime as rt

    vmfb = ensure_prepared(args, specs, args.shapes, work)
    # local-task's worker count is the task topology's group count; the
    # flag must be set before the driver is created.
    rt.flags.parse_flags(f"--task_topology_max_group_count={args.threads}")
    config = rt.Config("local-task")
    module = rt.VmModule.mmap(config.vm_instance, str(vmfb))
    context = rt.SystemContext(config=config)
    context.add_vm_module(module)
    entry = [n for n in module.function_names if not n.startswith("__") and not n.endswith("$async")]
    if len(entry) != 1:
        raise PeerError(f"expected one entry function in the IREE module, found {module.function_names}")
    fn = context.modules[module.name][entry[0]]
    device_inputs = [rt.asdevicearray(config.device, a) for a in arrays]

    def run():
        out = fn(*device_inputs)
        for o in out if isinstance(out, (list, tuple)) else [out]:
            o.to_host()

    return run


def load_tvm(args, specs, arrays, work):
    # The thread pool reads TVM_NUM_THREADS when tvm is first imported.
    os.environ["TVM_NUM_THREADS"] = str(args.threads)
    so = ensure_prepared(args, specs, args.shapes, work)
    import tvm
    from tvm import relax

    vm = relax.VirtualMachine(tvm.runtime.load_module(str(so)), tvm.cpu())
    inputs = [tvm.runtime.tensor(a) for a in arrays]
    main = vm["main"]
    return lambda: main(*inputs)


LOAD = {"onnxruntime": load_onnxruntime, "openvino": load_openvino, "iree": load_iree, "tvm": load_tvm}


def parse_shape(text):
    name, _, dims = text.partition("=")
    if not dims:
        raise argparse.ArgumentTypeError(f"--shape wants NAME=AxBxC, got {text}")
    return name, [int(d) for d in dims.replace(",", "x").split("x")]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model", type=Path)
    p.add_argument("peer", choices=PEERS)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--runs", type=int, default=10, help="timed inferences")
    p.add_argument("--warmup", type=int, default=10, help="untimed inferences first")
    p.add_argument("--shape", type=parse_shape, action="append", default=[], help="NAME=AxBxC for a dynamic input")
    p.add_argument("--prepare-timeout", type=float, default=600, help="seconds allowed to compile (iree, tvm)")
    p.add_argument(
        "--budget-s",
        type=float,
        default=0,
        help="stop warming up / timing once this many seconds are spent (at least 1 warm-up and 3 timed runs); 0: no limit",
    )
    p.add_argument("--prepare-only", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    args.shapes = dict(args.shape)
    record = {"peer": args.peer, "threads": args.threads}
    try:
        record["version"] = peer_version(args.peer)
        specs = input_specs(args.model, args.shapes)
        work = REPO / "build/peers" / model_hash(args.model, args.shapes) / f"{args.peer}-{record['version']}"
        if args.prepare_only:
            work.mkdir(parents=True, exist_ok=True)
            PREPARE[args.peer](args.model, specs, args.shapes, work)
            return
        arrays = random_inputs(specs)
        run = LOAD[args.peer](args, specs, arrays, work)
    except PeerError as e:
        record["error"] = str(e)
        emit(record)
        return
    except Exception as e:  # an engine's own failure on this model: report it, go on
        record["error"] = first_error_line(f"{type(e).__name__}: {e}")
        emit(record)
        return
    try:
        start = time.perf_counter()
        warm = 0
        while warm < args.warmup:
            run()
            warm += 1
            if args.budget_s and time.perf_counter() - start > args.budget_s / 2:
                break
        times = []
        start = time.perf_counter()
        while len(times) < args.runs:
            t0 = time.perf_counter()
            run()
            times.append((time.perf_counter() - t0) * 1e3)
            if args.budget_s and len(times) >= 3 and time.perf_counter() - start > args.budget_s:
                break
    except Exception as e:
        record["error"] = "inference failed: " + first_error_line(f"{type(e).__name__}: {e}")
        emit(record)
        return
    record.update(
        median_ms=round(statistics.median(times), 4),
        min_ms=round(min(times), 4),
        max_ms=round(max(times), 4),
        runs=len(times),
        warmup=warm,
    )
    emit(record)


if __name__ == "__main__":
    main()
