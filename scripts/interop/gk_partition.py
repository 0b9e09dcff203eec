"""Compare MindSpore's own graph-kernel partition with gkconv's.

Usage (in build/interop-venv):
  python scripts/interop/gk_partition.py OUTDIR [--converter ./converter]

For every network NAME below, in a fresh OUTDIR/NAME:
  1. a child process runs the network in MindSpore (GRAPH_MODE, CPU) with
     graph-kernel fusion on (MS_DEV_GRAPH_KERNEL_FLAGS="--opt_level=2
     --dump_as_text") and reads MindSpore's partition back from what it dumps
     into the cwd: akg_kernel_meta/*.info (one JSON per compiled fused kernel,
     its final basic ops in "op_desc"), graph_kernel_dump/
     graph_kernel_cluster_*.txt (the clusters as first formed) and, from the
     IR it saves under ms_ir/, the kernel graph as built (which ops ran
     outside any fused kernel). Inputs and MindSpore's fused output go to
     ms/*.bin, the partition to ms.json;
  2. a second child, with fusion off, exports the same network to
     OUTDIR/NAME/model.mindir (the unfused graph: MindSpore's fusion is a
     backend pass and never reaches the export, but a separate process without
     the flag makes sure of it);
  3. this process converts model.mindir with the converter (opt_level=2),
     reads the kernels from its --reportFile (and the ops left outside them
     from `converter inspect`), and runs `converter benchmark` on MindSpore's
     inputs against MindSpore's fused output.
Per network it prints both partitions and whether every kernel holds the same
multiset of ops, then writes OUTDIR/partition.md (a Markdown table) and
OUTDIR/partition.json.

Exit status: 1 when MindSpore's fusion itself failed (the run raised, or no
kernels were dumped), else 0: differing partitions, and a failed export,
conversion or benchmark, are findings this report prints, not errors of it.
"""
import argparse
import collections
import glob
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.abspath(__file__)
MS_FLAGS = "--opt_level=2 --dump_as_text"
# The ops our CPU expander list expands and MindSpore 2.7's does not
# (graph_kernel_expander_cloud.cc: LayerNorm and Softmax on GPU only; Erf is
# our own CPU expansion).
MS_CPU_NOT_EXPANDED = "LayerNorm,Softmax,Erf"
NETWORK_NAMES = ["mynet", "mynet_myop", "layernorm_gelu_softmax"]

# MindSpore's and gkconv's spellings of the same basic op. Only plain renames
# belong here (nothing that changes what an op computes), so that a real
# difference in how an op was expanded still shows up as a difference.
# (MindSpore's CPU kernel graph keeps ops.div as Div; gkconv reports RealDiv.)
OP_ALIASES = {
    "RealDiv": "Div",
}


def norm_op(name):
    return OP_ALIASES.get(name, name)


# ------------------------------------------------------------ networks

def build_network(name):
    """(cell, [numpy inputs]) for NAME. MindSpore is imported by the caller
    first, so that its environment flags are already in place."""
    import mindspore as ms
    from mindspore import nn, ops

    # Seeded inputs, so that the fusing run and the export see the same
    # numbers and a rerun gives the same files.
    rng = np.random.default_rng(0)

    class MyNet(nn.Cell):
        # The seed document's MyNet.
        def construct(self, x):
            a = ops.mul(x, 2.0)
            return ops.add(a, 1.0)

    class MyOp(nn.Cell):
        def construct(self, x, y):
            a = ops.sub(x, y)
            return ops.mul(a, x)

    class MyNetMyOp(nn.Cell):
        def __init__(self):
            super().__init__()
            self.my_op = MyOp()

        def construct(self, x, y):
            a = ops.mul(x, 2.0)
            b = ops.pow(a, 3.0)
            return self.my_op(b, y)

    class LayerNormGeluSoftmax(nn.Cell):
        def __init__(self):
            super().__init__()
            self.ln = nn.LayerNorm((64,), begin_norm_axis=-1, begin_params_axis=-1)

        def construct(self, x):
            return ops.softmax(ops.gelu(self.ln(x)), axis=-1)

    def f32(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    if name == "mynet":
        return MyNet(), [f32(4, 4)]
    if name == "mynet_myop":
        return MyNetMyOp(), [f32(4, 4), f32(4, 4)]
    if name == "layernorm_gelu_softmax":
        return LayerNormGeluSoftmax(), [f32(8, 64)]
    raise ValueError("unknown network %r" % name)


# ------------------------------------------------------------ children

def child_fuse(name, workdir):
    """Runs NAME with MindSpore's graph-kernel fusion in WORKDIR and writes
    WORKDIR/ms.json. Run as its own process: the flags are read once, when
    mindspore is imported, and the dumps land in the cwd."""
    os.chdir(workdir)
    os.environ["MS_DEV_GRAPH_KERNEL_FLAGS"] = MS_FLAGS
    # The .info files only hold what was fused; the saved IR of the built
    # kernel graph also shows what MindSpore left unfused.
    os.environ["MS_DEV_SAVE_GRAPHS"] = "1"
    os.environ["MS_DEV_SAVE_GRAPHS_PATH"] = "ms_ir"
    import mindspore as ms
    # In 2.7.2 the flag alone already fuses on CPU in GRAPH_MODE (checked
    # without jit_config too); O1 is the jit level MindSpore documents
    # graph-kernel fusion under, so ask for it explicitly rather than rely on
    # the default.
    ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU")
    ms.set_context(jit_config={"jit_level": "O1"})
    net, inputs = build_network(name)
    out = net(*[ms.Tensor(a) for a in inputs])
    out = out.asnumpy()

    os.makedirs("ms", exist_ok=True)
    for i, a in enumerate(inputs):
        a.tofile(os.path.join("ms", "input_%d.bin" % i))
    out.tofile(os.path.join("ms", "output_0.bin"))

    clusters = parse_cluster_dumps(glob.glob("graph_kernel_dump/graph_kernel_cluster_*.txt"))
    kernels = parse_info_files(glob.glob("akg_kernel_meta/*.info"), clusters)
    built = sorted(glob.glob("ms_ir/graph_build_0_*.ir"))
    result = {
        "mindspore": ms.__version__,
        "flags": MS_FLAGS,
        "kernels": kernels,
        "clusters": clusters,
        "executed": parse_built_graph(built[-1]) if built else None,
        "output_shape": list(out.shape),
        "output": out.tolist(),
    }
    with open("ms.json", "w") as f:
        json.dump(result, f, indent=1)
    if not kernels:
        # Nothing compiled: fusion did not happen, which is the one failure
        # this report must not hide.
        sys.exit("MindSpore wrote no akg_kernel_meta/*.info (graph_kernel_dump: %s): fusion did not run"
                 % (os.listdir("graph_kernel_dump") if os.path.isdir("graph_kernel_dump") else "missing"))


def parse_cluster_dumps(paths):
    """Clusters from graph_kernel_cluster_*.txt, in the order MindSpore formed
    them: [{"name": "GraphKernel_Mul_Add_fusion", "ops": [...]}]. These are
    the ops before the later passes (simplify, split) inside each cluster."""
    clusters = []
    head = re.compile(r"^Source nodes of \S*/(GraphKernel_\S+?)-op\d+")
    node = re.compile(r"^\s+\S*/(\w+)-op\d+\s*=")
    for path in sorted(paths):
        with open(path) as f:
            for line in f:
                m = head.match(line)
                if m:
                    clusters.append({"name": m.group(1), "ops": []})
                    continue
                m = node.match(line)
                if m and clusters:
                    clusters[-1]["ops"].append(m.group(1))
    return clusters


def parse_built_graph(path):
    """The entry kernel graph's compute nodes in execution order, from a
    saved graph_build_*.ir: op names (PrimFunc_X -> X) and, for each fused
    kernel (a call of its seg_trans sub-graph), "GraphKernel". Bookkeeping nodes (Load, TupleGetItem, MakeTuple,
    UpdateState, Depend) are not PrimFunc_ nodes and drop out."""
    with open(path) as f:
        text = f.read()
    entry = re.search(r"^# IR entry: @(\S+)", text, re.M)
    body = re.search(r"^subgraph @%s\(.*?\) \{\n(.*?)^\}" % re.escape(entry.group(1)), text, re.M | re.S) if entry else None
    if not body:
        return None
    ops = []
    for line in body.group(1).splitlines():
        m = re.match(r"^\s+%\d+\(\S+\) = (?:PrimFunc_(\w+)\(|call @(\S+?)\()", line)
        if m:
            ops.append(m.group(1) or "GraphKernel")
    return ops


def parse_info_files(paths, clusters):
    """MindSpore's compiled kernels, [{"name": "Fused_...", "ops": [...]}],
    ordered like the clusters they came from (the .info files carry no
    execution order; their names repeat the cluster's op list)."""
    kernels = []
    for path in paths:
        with open(path) as f:
            info = json.load(f)
        kernels.append({"name": info["op"], "ops": [d["name"] for d in info["op_desc"]],
                        "file": os.path.basename(path)})

    def stem(n):
        # Fused_Mul_Add_fusion_<hash> and GraphKernel_Mul_Add_fusion share "Mul_Add".
        n = re.sub(r"^(Fused|GraphKernel)_", "", n)
        return re.sub(r"_fusion.*$", "", n)

    order = [stem(c["name"]) for c in clusters]
    kernels.sort(key=lambda k: (order.index(stem(k["name"])) if stem(k["name"]) in order else len(order),
                                k["name"]))
    return kernels


def child_export(name, path):
    """Exports NAME unfused to PATH (.mindir)."""
    # No graph-kernel flag in this process: the export must be the plain graph.
    os.environ.pop("MS_DEV_GRAPH_KERNEL_FLAGS", None)
    import mindspore as ms
    ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU")
    net, inputs = build_network(name)
    # export appends ".mindir" itself.
    ms.export(net, *[ms.Tensor(a) for a in inputs], file_name=path[:-len(".mindir")], file_format="MINDIR")


# ------------------------------------------------------------ parent

def run_child(args, cwd, log):
    """Runs this script as a child; returns (ok, tail of its output)."""
    with open(log, "w") as f:
        p = subprocess.run([sys.executable, HERE] + args, cwd=cwd, stdout=f, stderr=subprocess.STDOUT)
    with open(log) as f:
        text = f.read()
    return p.returncode == 0, "\n".join(text.strip().splitlines()[-15:])


def convert(converter, model, workdir, cfg):
    """Converts MODEL with gkconv; returns (report dict, output .mindir)."""
    out = os.path.join(workdir, "gkconv")
    report = os.path.join(workdir, "gkconv_report.json")
    cmd = [converter, "--fmk=MINDIR", "--modelFile=" + model, "--outputFile=" + out,
           "--configFile=" + cfg, "--reportFile=" + report]
    p = subprocess.run(cmd, capture_output=True, text=True)
    log = p.stdout + p.stderr
    with open(os.path.join(workdir, "gkconv.log"), "w") as f:
        f.write(" ".join(cmd) + "\n" + log)
    if p.returncode != 0 or not os.path.exists(report):
        raise RuntimeError("converter failed (rc %d): %s" % (p.returncode, log.strip()[-2000:]))
    with open(report) as f:
        return json.load(f), out + ".mindir"


def benchmark(converter, model, workdir, n_inputs):
    """Runs our converted model on MindSpore's inputs against MindSpore's
    fused output (converter benchmark's default atol 1e-4, rtol 1e-3);
    returns a one-line verdict."""
    ins = ",".join(os.path.join(workdir, "ms", "input_%d.bin" % i) for i in range(n_inputs))
    result = os.path.join(workdir, "gkconv_benchmark.json")
    cmd = [converter, "benchmark", "--modelFile=" + model, "--inDataFile=" + ins,
           "--benchmarkDataFile=" + os.path.join(workdir, "ms", "output_0.bin"),
           "--loopCount=1", "--warmUpLoopCount=0", "--resultFile=" + result]
    p = subprocess.run(cmd, capture_output=True, text=True)
    with open(os.path.join(workdir, "gkconv_benchmark.log"), "w") as f:
        f.write(" ".join(cmd) + "\n" + p.stdout + p.stderr)
    try:
        with open(result) as f:
            acc = json.load(f)["accuracy"]
        err = max(a["max_abs_error"] for a in acc)
        return "%s, max abs error %.3g" % ("pass" if p.returncode == 0 else "FAIL", err)
    except (OSError, ValueError, KeyError):
        last = (p.stdout + p.stderr).strip().splitlines()[-1:] or ["(no output)"]
        return "FAILED: " + last[0]


def unfused_ops(converter, model):
    """Ops of our converted model outside any fused kernel, from the op
    histogram `converter inspect` prints (the report only counts nodes)."""
    p = subprocess.run([converter, "inspect", "--modelFile=" + model], capture_output=True, text=True)
    ops, inside = [], False
    for line in p.stdout.splitlines():
        if line.startswith("Ops:"):
            inside = True
        elif inside and line.startswith("  "):
            op, n = line.split()
            if op != "GraphKernel":
                ops += [op] * int(n)
        elif inside:
            break
    return ops


def counts(ops):
    return collections.Counter(norm_op(o) for o in ops)


def fmt_counts(c):
    return "{" + ", ".join("%s%s" % (o, "" if n == 1 else "x%d" % n) for o, n in sorted(c.items())) + "}"


def compare(ms_kernels, our_kernels, ms_unfused, our_unfused):
    """'same partition', or 'differs: ...': the kernels without a twin of
    the same op multiset on the other side, and the ops each side left
    unfused. Kernel order does not matter."""
    mine = collections.Counter(tuple(sorted(counts(k["ops"]).items())) for k in ms_kernels)
    ours = collections.Counter(tuple(sorted(counts(k["ops"]).items())) for k in our_kernels)
    left_ms, left_ours = counts(ms_unfused or []), counts(our_unfused)
    if mine == ours and (ms_unfused is None or left_ms == left_ours):
        return "same partition"
    parts = []
    if mine != ours:
        if len(ms_kernels) != len(our_kernels):
            parts.append("%d MindSpore kernel(s) vs %d ours" % (len(ms_kernels), len(our_kernels)))
        tot_ms = sum((counts(k["ops"]) for k in ms_kernels), collections.Counter())
        tot_ours = sum((counts(k["ops"]) for k in our_kernels), collections.Counter())
        if tot_ms == tot_ours:
            parts.append("the same ops fused, split into kernels differently")
        for k, n in (mine - ours).items():
            parts.append("MindSpore-only kernel %s%s" % (fmt_counts(dict(k)), "" if n == 1 else " x%d" % n))
        for k, n in (ours - mine).items():
            parts.append("our-only kernel %s%s" % (fmt_counts(dict(k)), "" if n == 1 else " x%d" % n))
    if ms_unfused is not None and left_ms != left_ours:
        parts.append("unfused: MindSpore %s, ours %s" % (fmt_counts(left_ms), fmt_counts(left_ours)))
    return "differs: " + "; ".join(parts)


def md_cell(kernels, unfused, with_pattern=False):
    cells = []
    for k in kernels:
        s = " ".join(k["ops"])
        if with_pattern and k.get("pattern"):
            s += " (%s)" % k["pattern"]
        cells.append("[" + s + "]")
    if unfused:
        cells.append("unfused: " + " ".join(unfused))
    return "<br>".join(cells) or "(none)"


def do_network(name, outdir, converter, cfg):
    workdir = os.path.join(outdir, name)
    # Fresh: MindSpore would otherwise reuse (and we would parse) an older
    # run's akg_kernel_meta. export leaves model.mindir read-only, which
    # rmtree handles as the folder itself is writable.
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    row = {"network": name}

    ok, tail = run_child(["--_fuse", name, workdir], workdir, os.path.join(workdir, "ms_fuse.log"))
    if not ok:
        row["ms_error"] = tail
        return row
    with open(os.path.join(workdir, "ms.json")) as f:
        row["ms"] = json.load(f)
    executed = row["ms"]["executed"]
    row["ms_unfused"] = None if executed is None else [o for o in executed if o != "GraphKernel"]

    exportdir = os.path.join(workdir, "export")
    os.makedirs(exportdir)
    model = os.path.join(workdir, "model.mindir")
    ok, tail = run_child(["--_export", name, model], exportdir, os.path.join(workdir, "export.log"))
    if not ok or not os.path.exists(model):
        row["error"] = "export failed: " + tail
        return row

    try:
        report, converted = convert(converter, model, workdir, cfg)
    except RuntimeError as e:
        row["error"] = str(e)
        return row
    row["ours"] = [{"name": k.get("name"), "ops": k.get("ops", []), "pattern": k.get("pattern", ""),
                    "status": k.get("status", "")} for k in report.get("kernels", [])]
    row["ours_graph"] = report.get("graph", {})
    row["ours_unfused"] = unfused_ops(converter, converted)
    row["same"] = compare(row["ms"]["kernels"], row["ours"], row["ms_unfused"], row["ours_unfused"])
    # Again with MindSpore 2.7's CPU expand list (LayerNorm, Softmax and Erf
    # are expanded on GPU only there; ours follows converter_lite's, which
    # expands them on CPU): the same expansions, so what is left to compare
    # is the clustering and splitting.
    msdir = os.path.join(workdir, "ms_expand_list")
    os.makedirs(msdir)
    try:
        report2, converted2 = convert(converter, model, msdir, cfg + ".ms_expand")
        ours2 = [{"name": k.get("name"), "ops": k.get("ops", []), "pattern": k.get("pattern", "")}
                 for k in report2.get("kernels", [])]
        row["same_ms_expand"] = compare(row["ms"]["kernels"], ours2, row["ms_unfused"], unfused_ops(converter, converted2))
    except RuntimeError as e:
        row["same_ms_expand"] = "conversion failed: " + str(e).splitlines()[0]
    n_inputs = len(glob.glob(os.path.join(workdir, "ms", "input_*.bin")))
    row["benchmark"] = benchmark(converter, converted, workdir, n_inputs)
    return row


def print_row(row):
    print("== %s" % row["network"])
    if "ms_error" in row:
        print("  MindSpore fusion FAILED:\n    " + row["ms_error"].replace("\n", "\n    "))
        return
    ms = row["ms"]
    print("  MindSpore %s (%s): %d kernel(s)" % (ms["mindspore"], ms["flags"], len(ms["kernels"])))
    for k in ms["kernels"]:
        print("    %-50s %s" % (k["name"], " ".join(k["ops"])))
    for c in ms["clusters"]:
        print("    (cluster as formed: %s: %s)" % (c["name"], " ".join(c["ops"])))
    if ms["executed"] is not None:
        print("    kernel graph as run: " + " ".join(ms["executed"]))
    print("  MindSpore output: shape %s, first values %s" % (
        ms["output_shape"], np.round(np.ravel(ms["output"])[:4], 5).tolist()))
    if "error" in row:
        print("  ours FAILED: " + row["error"])
        return
    g = row["ours_graph"]
    print("  ours: %d kernel(s), graph nodes %s -> %s" % (len(row["ours"]), g.get("nodes_before"), g.get("nodes_after")))
    for k in row["ours"]:
        print("    %-50s %s  [%s, %s]" % (k["name"], " ".join(k["ops"]), k["pattern"], k["status"]))
    print("    unfused: " + (" ".join(row["ours_unfused"]) or "(none)"))
    print("  partition: " + row["same"])
    print("  partition with MindSpore's CPU expand list (disable_expand_ops=%s): %s" % (MS_CPU_NOT_EXPANDED, row["same_ms_expand"]))
    print("  our model on MindSpore's inputs vs MindSpore's fused output: " + row["benchmark"])


def table(rows):
    def esc(t):
        return t.replace("|", "\\|")

    lines = ["| network | MindSpore kernels | ours | same? | same with MindSpore's CPU expand list? |", "|---|---|---|---|---|"]
    for r in rows:
        if "ms_error" in r:
            lines.append("| %s | FAILED: %s | | |" % (r["network"], esc(r["ms_error"].splitlines()[-1])))
            continue
        msk = md_cell(r["ms"]["kernels"], r["ms_unfused"])
        if "error" in r:
            lines.append("| %s | %s | FAILED: %s | |" % (r["network"], msk, esc(r["error"].splitlines()[0])))
            continue
        lines.append("| %s | %s | %s | %s | %s |" % (r["network"], msk, md_cell(r["ours"], r["ours_unfused"], True),
                                                    esc(r["same"]), esc(r["same_ms_expand"])))
    aliases = ", ".join("%s=%s" % kv for kv in sorted(OP_ALIASES.items()))
    version = next((r["ms"]["mindspore"] for r in rows if "ms" in r), "?")
    lines += ["",
              "Each [..] is one fused kernel's ops in order. \"same?\" compares each kernel's op multiset "
              "(kernel order ignored) and the ops left unfused; spellings normalised: %s (nothing else)." % aliases,
              "MindSpore %s, CPU, GRAPH_MODE, MS_DEV_GRAPH_KERNEL_FLAGS=\"%s\": kernels from akg_kernel_meta/*.info "
              "op_desc, unfused ops from the saved graph_build IR." % (version, MS_FLAGS),
              "Ours: converter --fmk=MINDIR on mindspore.export's unfused model.mindir, [graph_kernel_param] "
              "opt_level=2: kernels and pattern from --reportFile, unfused ops from converter inspect; the last column adds "
              "disable_expand_ops=%s (what MindSpore 2.7 expands on GPU only)." % MS_CPU_NOT_EXPANDED]
    return "\n".join(lines) + "\n"


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "--_fuse":
        return child_fuse(sys.argv[2], sys.argv[3])
    if len(sys.argv) >= 4 and sys.argv[1] == "--_export":
        return child_export(sys.argv[2], sys.argv[3])

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--converter", default="./converter")
    args = ap.parse_args()
    outdir = os.path.abspath(args.outdir)
    converter = os.path.abspath(args.converter)
    if not os.access(converter, os.X_OK):
        sys.exit("gk_partition: no converter at %s (go build -o converter ./cmd/converter)" % converter)
    os.makedirs(outdir, exist_ok=True)
    cfg = os.path.join(outdir, "gk.cfg")
    with open(cfg, "w") as f:
        f.write("[graph_kernel_param]\nopt_level=2\n")
    with open(cfg + ".ms_expand", "w") as f:
        f.write("[graph_kernel_param]\nopt_level=2\ndisable_expand_ops=%s\n" % MS_CPU_NOT_EXPANDED)

    rows = []
    for name in NETWORK_NAMES:
        row = do_network(name, outdir, converter, cfg)
        print_row(row)
        rows.append(row)

    md = table(rows)
    with open(os.path.join(outdir, "partition.md"), "w") as f:
        f.write(md)
    with open(os.path.join(outdir, "partition.json"), "w") as f:
        json.dump(rows, f, indent=1)
    print()
    print(md, end="")
    if any("ms_error" in r for r in rows):
        print("gk_partition: MindSpore graph-kernel fusion failed (see above)")
        return 1
    if any("error" in r for r in rows):
        print("gk_partition: a step other than MindSpore's fusion failed (see above)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
