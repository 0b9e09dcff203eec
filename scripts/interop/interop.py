"""MindSpore interop test: does a real MindSpore load and run what gkconv writes?

Usage (make interop runs it in build/interop-venv):
  python scripts/interop/interop.py [--files build/interop/files] [--converter ./converter]

For every .mindir in files/manifest.tsv (scripts/interop/files.sh writes both):
  1. load:  mindspore.load(file)  -> loaded, or MindSpore's error text;
  2. check: ./converter check on the same file: a file MindSpore refuses must
     not pass the checker (the checker is our statement of MindSpore's rules);
  3. run:   unfused files written with --primitiveSet=mindspore (variant "ms")
     whose primitives are all MindSpore's (no Custom node)
     run in mindspore.nn.GraphCell (GRAPH_MODE, CPU) on the test_data_set's
     inputs, and each output is compared with this converter's own
     `benchmark --outputDataDir` outputs on the same inputs (atol 1e-5, rtol 1e-4;
     float16 outputs atol 1e-3, rtol 1e-3).

MindSpore runs in worker processes (a crash in MindSpore is a result for that
file, not the end of the test). Results go to files/results.tsv and
files/interop.md (a Markdown table); the summary lines start with "interop:".
Exit status 1 when a file MindSpore refuses passes `converter check`, when a
run's numbers differ, or when a file fails in a way scripts/interop/known.tsv
does not list (each known failure there has its reason).
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import time

ATOL, RTOL = 1e-5, 1e-4
# float16 outputs: one float16 ulp is 1e-3 relative.
ATOL16, RTOL16 = 1e-3, 1e-3
HERE = os.path.dirname(os.path.abspath(__file__))


# ---------------------------------------------------------------- worker side

def worker():
    """Reads one JSON job per line on stdin, answers one JSON line each."""
    import numpy as np
    import mindspore as ms
    from mindspore.train import mind_ir_pb2
    import onnx
    from onnx import numpy_helper

    ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU")
    print(json.dumps({"ready": ms.__version__}), flush=True)

    def read_pb(p):
        t = onnx.TensorProto()
        with open(p, "rb") as f:
            t.ParseFromString(f.read())
        return numpy_helper.to_array(t)

    def primitives(path):
        m = mind_ir_pb2.ModelProto()
        with open(path, "rb") as f:
            m.ParseFromString(f.read())
        prims = {}
        for p in m.primitives:
            prims[p.name] = p.op_type
        ops = set()
        customs = set()

        def walk(g):
            for n in g.node:
                op = n.op_type
                if op.startswith("REF::"):
                    op = prims.get(op[5:], op[5:])
                ops.add(op)
                if op == "Custom":
                    for a in n.attribute:
                        if a.name == "type":
                            customs.add(a.s.decode())
            for p in m.primitives:
                pass
        walk(m.graph)
        for fn in m.functions:
            walk(fn)
        for p in m.primitives:
            if p.op_type == "Custom":
                for a in p.attribute:
                    if a.name == "type":
                        customs.add(a.s.decode())
        return sorted(ops), sorted(customs)

    for line in sys.stdin:
        job = json.loads(line)
        res = {"file": job["file"]}
        try:
            res["ops"], res["customs"] = primitives(job["path"])
        except Exception as e:  # not our job to judge here; load will say
            res["ops"], res["customs"] = [], []
            res["parse_error"] = str(e)[:300]
        t0 = time.time()
        try:
            g = ms.load(job["path"])
            res["load"] = "ok"
        except Exception as e:
            res["load"] = "error"
            res["load_error"] = " | ".join(x for x in str(e).splitlines() if x.strip() and not x.startswith("-"))[:1500]
            print(json.dumps(res), flush=True)
            continue
        res["load_s"] = round(time.time() - t0, 2)
        # A crash from here on is the run's, not the load's.
        print(json.dumps({"stage": "loaded"}), flush=True)
        if job.get("run"):
            try:
                ins = [ms.Tensor(read_pb(p)) for p in job["inputs"]]
                out = ms.nn.GraphCell(g)(*ins)
                if not isinstance(out, (tuple, list)):
                    out = [out]
                got = [o.asnumpy() for o in out]
                want = [read_pb(p) for p in job["ours"]]
                res["run"] = "ok"
                diffs = []
                if len(got) != len(want):
                    res["match"] = False
                    res["why"] = "MindSpore gives %d output(s), benchmark %d" % (len(got), len(want))
                else:
                    ok = True
                    for i, (a, b) in enumerate(zip(got, want)):
                        if a.shape != b.shape:
                            ok = False
                            diffs.append("output %d: shape %s vs %s" % (i, a.shape, b.shape))
                            continue
                        if a.dtype != b.dtype:
                            ok = False
                            diffs.append("output %d: dtype %s vs %s" % (i, a.dtype, b.dtype))
                            continue
                        if a.dtype.kind in "fc":
                            af, bf = a.astype(np.float64), b.astype(np.float64)
                            same_nan = np.isnan(af) == np.isnan(bf)
                            at, rt = (ATOL16, RTOL16) if a.dtype == np.float16 else (ATOL, RTOL)
                            close = np.isclose(af, bf, atol=at, rtol=rt, equal_nan=True)
                            bad = int((~close | ~same_nan).sum())
                            fin = np.isfinite(af) & np.isfinite(bf)
                            mx = float(np.abs(af - bf)[fin].max()) if fin.any() else 0.0
                        else:
                            bad = int((a != b).sum())
                            mx = float(np.abs(a.astype(np.float64) - b.astype(np.float64)).max()) if a.size else 0.0
                        diffs.append("output %d: max abs %.3g, %d/%d beyond tolerance" % (i, mx, bad, a.size))
                        ok = ok and bad == 0
                    res["match"] = ok
                    res["why"] = "; ".join(diffs)
            except Exception as e:
                res["run"] = "error"
                res["run_error"] = " | ".join(x for x in str(e).splitlines() if x.strip() and not x.startswith("-"))[:1500]
        print(json.dumps(res), flush=True)


# ---------------------------------------------------------------- parent side

class Workers:
    """One MindSpore worker process; restarted after a crash."""

    def __init__(self):
        self.p = None
        self.version = None

    def start(self):
        self.p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True, bufsize=1,
                                  env=dict(os.environ, GLOG_v="3"))
        first = self.p.stdout.readline()
        if not first:
            raise RuntimeError("the MindSpore worker did not start (import mindspore failed?)")
        self.version = json.loads(first)["ready"]

    def ask(self, job):
        if self.p is None or self.p.poll() is not None:
            self.start()
        self.p.stdin.write(json.dumps(job) + "\n")
        self.p.stdin.flush()
        loaded = False
        while True:
            line = self.p.stdout.readline()
            if not line:
                code = self.p.wait()
                self.p = None
                why = "MindSpore's process died (exit %s) on this file" % code
                if loaded:
                    return {"file": job["file"], "load": "ok", "run": "crash", "run_error": why + " while running it"}
                return {"file": job["file"], "load": "crash", "load_error": why + " while loading it"}
            msg = json.loads(line)
            if msg.get("stage") == "loaded":
                loaded = True
                continue
            return msg


def lite_primitives():
    """converter_lite's fusion primitives (MindSpore Lite's ops, declared in
    MindSpore's ops/infer/cxx_api): the schema table the converter's checker
    is generated into names each primitive's source file."""
    import re
    src = os.path.join(HERE, "..", "..", "internal", "mindir", "prims_gen.go")
    with open(src) as f:
        return set(re.findall(r'\{Name: "(\w+)", Source: "[^"]*/ops/infer/cxx_api/', f.read()))


def read_manifest(path):
    rows = []
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 6:
                continue
            rows.append(dict(zip(["file", "kind", "source", "tds", "variant", "status"], parts)))
    return rows


def read_known(path):
    known = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if not line.strip() or line.startswith("#"):
                    continue
                parts = line.rstrip("\n").split("\t")
                known[(parts[0], parts[1])] = parts[2] if len(parts) > 2 else ""
    return known


def known_match(known, name, stage):
    """known.tsv keys are file-name globs (fnmatch; the .mindir suffix may be
    left out) and a stage."""
    import fnmatch
    bare = name[:-len(".mindir")] if name.endswith(".mindir") else name
    for (pat, st), why in known.items():
        if st == stage and (fnmatch.fnmatch(name, pat) or fnmatch.fnmatch(bare, pat)):
            return why
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", default="build/interop/files")
    ap.add_argument("--converter", default="./converter")
    ap.add_argument("--known", default=os.path.join(HERE, "known.tsv"))
    ap.add_argument("--worker", action="store_true")
    a = ap.parse_args()
    if a.worker:
        worker()
        return 0
    rows = read_manifest(os.path.join(a.files, "manifest.tsv"))
    known = read_known(a.known)
    lite = lite_primitives()
    w = Workers()
    w.start()
    print("interop: MindSpore %s (CPU wheel, GRAPH_MODE), %d file(s) from %s" % (w.version, len(rows), a.files), flush=True)
    results = []
    for r in rows:
        res = {"file": r["file"], "kind": r["kind"], "variant": r["variant"]}
        if r["status"] != "ok":
            res["convert"] = r["status"]
            results.append(res)
            continue
        path = os.path.join(a.files, r["file"])
        chk = subprocess.run([a.converter, "check", "--modelFile=" + path], capture_output=True, text=True)
        res["check"] = "pass" if chk.returncode == 0 else "fail"
        if chk.returncode != 0:
            res["check_error"] = " | ".join(l for l in chk.stdout.splitlines() + chk.stderr.splitlines() if "violation" in l or l.startswith("ERROR"))[:600]
        job = {"file": r["file"], "path": path}
        ins = sorted(glob.glob(os.path.join(r["tds"], "input_*.pb"))) if r["tds"] != "-" else []
        if r["variant"] == "ms" and os.path.isdir(r["tds"]):
            ours = os.path.join(a.files, "ours", r["file"].replace("/", "_"))
            b = subprocess.run([a.converter, "benchmark", "--modelFile=" + path, "--inDataFile=" + ",".join(ins),
                                "--outputDataDir=" + ours, "--loopCount=1", "--warmUpLoopCount=0", "--numThreads=1"],
                               capture_output=True, text=True)
            if b.returncode == 0:
                job.update(run=True, inputs=ins, ours=sorted(glob.glob(os.path.join(ours, "output_*.pb")),
                                                            key=lambda p: int(p.rsplit("_", 1)[1].split(".")[0])))
            else:
                res["benchmark_error"] = (b.stdout + b.stderr).strip().splitlines()[-1][:300]
        if r["kind"] == "exported" and r["variant"] in ("none", "o2") and os.path.isdir(r["tds"]):
            # A MindSpore-exported network, converted: its outputs against
            # MindSpore's own (scripts/interop/export_nets.py wrote them).
            outs = sorted(glob.glob(os.path.join(r["tds"], "output_*.pb")),
                          key=lambda p: int(p.rsplit("_", 1)[1].split(".")[0]))
            atol = "1e-4" if "mixed_precision" in r["file"] else "1e-5"  # float16 layers
            b = subprocess.run([a.converter, "benchmark", "--modelFile=" + path, "--inDataFile=" + ",".join(ins),
                                "--benchmarkDataFile=" + ",".join(outs), "--atol=" + atol, "--rtol=1e-3",
                                "--loopCount=1", "--warmUpLoopCount=0", "--numThreads=1"], capture_output=True, text=True)
            res["vs_mindspore"] = "matched" if b.returncode == 0 else (b.stdout + b.stderr).strip().splitlines()[-1][:300]
        out = w.ask(job)
        res.update(out)
        if r["variant"] == "ms":
            # Eligible to run: every node a MindSpore primitive (no Custom
            # node, no converter_lite fusion primitive left where the
            # framework form has no MindSpore form for an op yet), with
            # inputs to run it on.
            res["lite_prims"] = sorted(set(res.get("ops", [])) & lite)
            res["eligible"] = (not res.get("customs") and not res["lite_prims"] and os.path.isdir(r["tds"])
                               and res.get("load") == "ok")
        results.append(res)
        if len(results) % 100 == 0:
            print("interop: %d/%d done" % (len(results), len(rows)), flush=True)
    return report(a, results, known, w.version)


def report(a, results, known, version):
    bad = []
    loaded = [r for r in results if r.get("load") == "ok"]
    tried = [r for r in results if "load" in r]
    refused = [r for r in tried if r.get("load") != "ok"]
    for r in refused:
        if r.get("check") == "pass":
            bad.append("%s: MindSpore refuses it (%s) but `converter check` passes it" % (r["file"], r.get("load_error", "")[:200]))
        if not known_match(known, r["file"], "load"):
            bad.append("%s: not loaded by MindSpore: %s" % (r["file"], r.get("load_error", "")[:300]))
    conv_failed = [r for r in results if "convert" in r]
    for r in conv_failed:
        if not known_match(known, r["file"], "convert"):
            bad.append("%s: conversion failed: %s" % (r["file"], r["convert"][:300]))
    exported = [r for r in results if "vs_mindspore" in r]
    for r in exported:
        if r["vs_mindspore"] != "matched" and not known_match(known, r["file"], "reference"):
            bad.append("%s: differs from MindSpore's own outputs: %s" % (r["file"], r["vs_mindspore"]))
    elig = [r for r in results if r.get("eligible")]
    ran = [r for r in elig if r.get("run") == "ok"]
    matched = [r for r in ran if r.get("match")]
    for r in elig:
        if r.get("run") == "ok" and not r.get("match"):
            if not known_match(known, r["file"], "match"):
                bad.append("%s: MindSpore's outputs differ from benchmark's: %s" % (r["file"], r.get("why", "")))
        elif r.get("benchmark_error"):
            bad.append("%s: converter benchmark failed on it: %s" % (r["file"], r["benchmark_error"]))
        elif r.get("run") != "ok":
            if not known_match(known, r["file"], "run"):
                bad.append("%s: MindSpore could not run it: %s" % (r["file"], r.get("run_error", "")[:300]))
    with open(os.path.join(a.files, "results.jsonl"), "w") as f:
        for r in results:
            f.write(json.dumps(r) + "\n")
    with open(os.path.join(a.files, "interop.md"), "w") as f:
        f.write("MindSpore %s (CPU). load: `mindspore.load`; check: `converter check`; run: `nn.GraphCell` "
                "vs `converter benchmark` (atol %g, rtol %g).\n\n" % (version, ATOL, RTOL))
        f.write("| file | load | check | run | detail |\n|---|---|---|---|---|\n")
        for r in results:
            if r["kind"] == "node" and r.get("load") == "ok" and (not r.get("eligible") or r.get("match")):
                continue  # the node tests: only the ones with something to say
            if "convert" in r:
                f.write("| %s | — | — | — | %s |\n" % (r["file"], md(r["convert"])))
                continue
            run = "—"
            detail = ""
            if r.get("load") != "ok":
                detail = r.get("load_error", "")
            elif r.get("eligible"):
                run = "matched" if r.get("match") else ("differs" if r.get("run") == "ok" else "error")
                detail = r.get("why", "") if r.get("run") == "ok" else r.get("run_error", r.get("benchmark_error", ""))
            elif "vs_mindspore" in r:
                detail = "vs MindSpore's outputs: " + r["vs_mindspore"]
            elif r.get("customs") or r.get("lite_prims"):
                detail = "not all MindSpore primitives: " + ", ".join((r.get("customs") or [])[:6] + (r.get("lite_prims") or [])[:6])
            f.write("| %s | %s | %s | %s | %s |\n" % (r["file"], r.get("load"), r.get("check"), run, md(detail)))
    by_kind = {}
    for r in results:
        k = by_kind.setdefault(r["kind"], [0, 0, 0, 0, 0, 0])
        k[5] += bool(r.get("lite_prims")) and not r.get("customs")
        k[0] += 1
        k[1] += r.get("load") == "ok"
        k[2] += bool(r.get("eligible"))
        k[3] += r.get("run") == "ok" and bool(r.get("eligible"))
        k[4] += bool(r.get("match")) and bool(r.get("eligible"))
    for kind, (n, l, e, rn, m, lp) in sorted(by_kind.items()):
        print("interop: %-9s files %4d, loaded %4d; unfused all-MindSpore-primitive %4d, ran %4d, matched %4d"
              " (%d more keep a converter_lite primitive)" % (kind, n, l, e, rn, m, lp))
    print("interop: MindSpore %s: loaded %d/%d written files (%d not converted); ran %d/%d eligible unfused files, %d matched benchmark (atol %g, rtol %g)"
          % (version, len(loaded), len(tried), len(conv_failed), len(ran), len(elig), len(matched), ATOL, RTOL))
    if exported:
        print("interop: MindSpore-exported networks converted (unfused and opt_level 2): %d/%d match MindSpore's own outputs"
              % (sum(r["vs_mindspore"] == "matched" for r in exported), len(exported)))
    print("interop: table in %s" % os.path.join(a.files, "interop.md"))
    for b in bad:
        print("interop: FAIL:", b)
    print("interop: %s" % ("PASS" if not bad else "FAILED (%d problem(s))" % len(bad)))
    return 1 if bad else 0


def md(s):
    return s.replace("|", "\\|").replace("\n", " ")[:400]


if __name__ == "__main__":
    sys.exit(main())
