#!/usr/bin/env bash
# A/B timing of two converter binaries on the same models, alternating them
# round by round on 1 thread, unfused (--optimize=none) and at opt_level 2:
#   scripts/ab_compare.sh OLD_BIN NEW_BIN [MODELS_DIR]
# MODELS_DIR holds <model>/model.onnx (make bench exports them to bench/models).
# Prints per model and variant: old and new median ms, and the median of the
# per-round new/old ratios with their range. State the CPU ISA with the
# figures (grep -o 'avx512f\|avx2' /proc/cpuinfo | sort -u).
set -u
old=$(realpath "${1:?usage: ab_compare.sh OLD_BIN NEW_BIN [MODELS_DIR]}")
new=$(realpath "${2:?}")
models_dir=${3:-bench/models}
cfg=$(cd "$(dirname "$0")/.." && pwd)/configs/akg.cfg
ROUNDS=${ROUNDS:-5}; LOOPS=${LOOPS:-10}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
grep -o 'avx512f\|avx2' /proc/cpuinfo | sort -u | tr '\n' ' '; echo
for m in ${MODELS:-bert_base gpt_small resnet50 mobilenet_v2}; do
  src=$models_dir/$m/model.onnx
  for v in old new; do
    bin=$old; [ $v = new ] && bin=$new
    for opt in O0 O2; do
      a=(--fmk=ONNX --modelFile="$src" --outputFile="$work/$m-$v-$opt" --kernelCacheDir="$work/cache-$v")
      if [ $opt = O0 ]; then a+=(--optimize=none); else a+=(--configFile="$cfg"); fi
      "$bin" "${a[@]}" > /dev/null 2>&1 || echo "convert failed: $m $v $opt"
    done
  done
  for opt in O0 O2; do
    o=(); n=()
    for ((r = 0; r < ROUNDS; r++)); do
      for v in old new; do
        bin=$old; [ $v = new ] && bin=$new
        "$bin" benchmark --modelFile="$work/$m-$v-$opt.mindir" --numThreads=1 --loopCount="$LOOPS" --warmUpLoopCount=2 \
          --resultFile="$work/r.json" > /dev/null 2>&1 || echo "benchmark failed: $m $v $opt"
        x=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["median_ms"])' "$work/r.json")
        if [ $v = old ]; then o+=("$x"); else n+=("$x"); fi
      done
    done
    python3 - "$m" "$opt" "${o[*]}" "${n[*]}" <<'PY'
import sys, statistics
m, opt = sys.argv[1], sys.argv[2]
o = [float(x) for x in sys.argv[3].split()]
n = [float(x) for x in sys.argv[4].split()]
r = [b / a for a, b in zip(o, n)]
print(f"| {m} | {opt} | {statistics.median(o):.2f} | {statistics.median(n):.2f} | {statistics.median(r):.3f} ({min(r):.3f}-{max(r):.3f}) |")
PY
  done
done
