#!/usr/bin/env python3
"""One line per converted model from its --reportFile JSON: fused kernels,
compiler runs, cache hits (of which from the remote cache, when there is
one) and seconds.

Usage: summary.py REPORT.json...
"""
import json
import os
import sys


def line(path):
    with open(path) as f:
        r = json.load(f)
    b = r.get("kernel_build") or {}
    m = b.get("remote")
    remote = ""
    if m:
        remote = " (%d remote, %d uploaded, %d remote errors)" % (
            m.get("remote_hits", 0), m.get("remote_puts", 0), m.get("remote_errors", 0))
    name = os.path.basename(path)
    if name.endswith(".report.json"):
        name = name[: -len(".report.json")]
    return "%-40s %3d kernels %3d compiled %3d cache hits%s %5.2fs" % (
        name, len(r.get("kernels") or []), b.get("compiled", 0), b.get("cache_hits", 0), remote, r.get("seconds", 0))


def main(paths):
    if not paths:
        sys.exit("summary.py: no reports (no models were converted)")
    bad = 0
    for p in paths:
        try:
            print(line(p))
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as e:
            print("summary.py: %s: %s" % (p, e), file=sys.stderr)
            bad += 1
    if bad:
        sys.exit(1)


if __name__ == "__main__":
    main(sys.argv[1:])
