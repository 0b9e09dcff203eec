#!/usr/bin/env bash
# make bench: regenerate the big models, convert them, and time ours against
# onnxruntime 1.30 on 1 thread, alternating the two programs in one run.
# Writes bench/results.md (a markdown table of medians and ratios).
#
# Needs ../shared (export_models.py, run_ort.js), Debian python3-torch,
# python3-torchvision, python3-onnx, and node with onnxruntime-node 1.30
# under $ORT_DIR (default /tmp/ort); it installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
SHARED=${SHARED:-../shared}
MODELS_DIR=${MODELS_DIR:-bench/models}
ORT_DIR=${ORT_DIR:-/tmp/ort}
ROUNDS=${ROUNDS:-5}          # alternations
LOOPS=${LOOPS:-10}           # timed runs per program per round
MODELS=${MODELS-"resnet50 mobilenet_v2 bert_base gpt_small"}   # "" skips the onnxruntime table
FUSION_MODELS=${FUSION_MODELS-"bert_base gpt_small"}
FUSION_ROUNDS=${FUSION_ROUNDS:-9}
OUT=bench/results.md
mkdir -p "$MODELS_DIR" bench/out

if ! /usr/bin/python3 -c 'import torch, torchvision, onnx' 2>/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-torch python3-torchvision python3-onnx >/dev/null
fi
if [ ! -d "$ORT_DIR/node_modules/onnxruntime-node" ]; then
  mkdir -p "$ORT_DIR"
  (cd "$ORT_DIR" && npm init -y >/dev/null && npm install --ignore-scripts onnxruntime-node@1.30.0 protobufjs@7 long >/dev/null)
fi
cp "$SHARED/tools/ort/run_ort.js" "$ORT_DIR/run_ort.js"

# resnet50 is always needed: the conversion-time line uses it.
for m in $(printf '%s\n' $MODELS $FUSION_MODELS resnet50 | sort -u); do
  [ -f "$MODELS_DIR/$m/model.onnx" ] || /usr/bin/python3 "$SHARED/tools/export_models.py" "$MODELS_DIR" "$m"
done

median() { python3 -c 'import sys,statistics; print("%.3f" % statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }

# Variants: name|config file ("" = --optimize=none)
VARIANTS=${VARIANTS:-"none|"}
{
  echo "| model | variant | ours median ms | ORT median ms | ours/ORT |"
  echo "|---|---|---|---|---|"
} > "$OUT"
for m in $MODELS; do
  src="$MODELS_DIR/$m/model.onnx"
  for v in $VARIANTS; do
    vname=${v%%|*}; cfg=${v#*|}
    mindir="bench/out/${m}_${vname}"
    args=(--fmk=ONNX --modelFile="$src" --outputFile="$mindir")
    if [ -n "$cfg" ]; then args+=(--configFile="$cfg"); else args+=(--optimize=none); fi
    ./converter "${args[@]}" >/dev/null
    ours=(); ort=()
    for ((r = 0; r < ROUNDS; r++)); do
      ./converter benchmark --modelFile="$mindir.mindir" --numThreads=1 --loopCount="$LOOPS" --warmUpLoopCount=2 \
        --resultFile=bench/out/r.json >/dev/null
      ours+=("$(python3 -c 'import json;print(json.load(open("bench/out/r.json"))["median_ms"])')")
      o=$(node "$ORT_DIR/run_ort.js" "$src" --random --threads 1 --opt all --runs "$LOOPS" --warmup 2 --json)
      ort+=("$(python3 -c 'import json,sys;print(json.loads(sys.argv[1])["timing"]["median_ms"])' "$o")")
    done
    a=$(median "${ours[@]}"); b=$(median "${ort[@]}")
    ratio=$(python3 -c "print('%.2f' % ($a/$b))")
    echo "| $m | $vname | $a | $b | $ratio |" | tee -a "$OUT"
  done
done

# Fusion: the same runtime at opt_level 2 vs --optimize=none (issue target >= 1.25x).
# Accuracy first: both variants against the reference outputs that
# export_models.py saved with the model (PyTorch's; onnxruntime's when
# missing), benchmark --atol=1e-4 --rtol=1e-3; the script stops on failure.
{
  echo
  echo "| model | opt_level 0 median ms | opt_level 2 median ms | speedup: median of rounds (range) | kernels | max abs error vs reference (O0 / O2) |"
  echo "|---|---|---|---|---|---|"
} >> "$OUT"
for m in $FUSION_MODELS; do
  src="$MODELS_DIR/$m/model.onnx"
  ./converter --fmk=ONNX --modelFile="$src" --outputFile="bench/out/${m}_none" --optimize=none >/dev/null
  ./converter --fmk=ONNX --modelFile="$src" --outputFile="bench/out/${m}_o2" --configFile=configs/akg.cfg \
    --reportFile="bench/out/${m}_o2.report.json" >/dev/null
  ref="$MODELS_DIR/$m/test_data_set_0"
  if [ ! -f "$ref/output_0.pb" ]; then
    ref="bench/out/ref_$m"
    mkdir -p "$ref"
    node "$ORT_DIR/run_ort.js" "$src" --threads 1 --runs 1 --warmup 0 --save-out "$ref" --quiet >/dev/null
  fi
  outs=$(ls "$ref"/output_*.pb | sort -V | paste -sd, -)
  errs=()
  for v in none o2; do
    ./converter benchmark --modelFile="bench/out/${m}_${v}.mindir" --inDataFile="$ref/input_0.pb" --benchmarkDataFile="$outs" \
      --numThreads=1 --loopCount=1 --warmUpLoopCount=0 --resultFile=bench/out/acc.json >/dev/null
    errs+=("$(python3 -c 'import json;print("%.1e" % max(o["max_abs_error"] for o in json.load(open("bench/out/acc.json"))["accuracy"]))')")
  done
  o0=(); o2=()
  for ((r = 0; r < FUSION_ROUNDS; r++)); do
    for v in none o2; do
      ./converter benchmark --modelFile="bench/out/${m}_${v}.mindir" --numThreads=1 --loopCount="$LOOPS" \
        --warmUpLoopCount=2 --resultFile=bench/out/r.json >/dev/null
      t=$(python3 -c 'import json;print(json.load(open("bench/out/r.json"))["median_ms"])')
      if [ $v = none ]; then o0+=("$t"); else o2+=("$t"); fi
    done
  done
  a=$(median "${o0[@]}"); b=$(median "${o2[@]}")
  k=$(python3 -c "import json;print(len(json.load(open('bench/out/${m}_o2.report.json'))['kernels']))")
  # The speedup is the median of the per-round ratios: both variants of a
  # round ran back to back, so a slow stretch of the shared machine cancels.
  sp=$(python3 -c '
import sys, statistics
n = len(sys.argv) // 2
a, b = sys.argv[1:n + 1], sys.argv[n + 1:]
r = [float(x) / float(y) for x, y in zip(a, b)]
print("%.2f (%.2f-%.2f)" % (statistics.median(r), min(r), max(r)))' "${o0[@]}" "${o2[@]}")
  echo "| $m | $a | $b | $sp | $k | ${errs[0]} / ${errs[1]} |" | tee -a "$OUT"
done

# Fused kernel bandwidth against STREAM triad (1 thread).
gcc -O3 -march=native -fopenmp -o bench/out/stream "$SHARED/tools/bench/stream.c"
triad=$(OMP_NUM_THREADS=1 bench/out/stream | awk '/Triad/ {print $2}')
{
  echo
  echo "STREAM triad, 1 thread: ${triad} GB/s"
  echo
  echo "| fused kernel (1 thread) | GB/s best call (median) | % of triad (best vs best) |"
  echo "|---|---|---|"
} >> "$OUT"
# Like STREAM's own figure (the best of its 19 timed passes), each kernel is
# timed 20 times one call at a time and its best call is compared; the
# median call is shown too (this shared machine slows single calls a lot).
go test -run '^$' -bench 'Affine16M|LayerNorm512x4096|Softmax512x4096' -benchtime 1x -count 20 ./internal/kernels/ |
  awk '/^Benchmark/ { for (i = 1; i <= NF; i++) if ($i == "GB/s") print $1, $(i-1) }' |
  python3 -c '
import sys, statistics
triad = float(sys.argv[1])
runs = {}
for line in sys.stdin:
    name, gbs = line.split()
    runs.setdefault(name, []).append(float(gbs))
for name, v in runs.items():
    print("| %s | %.1f (median %.1f) | %.0f%% |" % (name, max(v), statistics.median(v), 100 * max(v) / triad))
' "$triad" | tee -a "$OUT"

# Conversion time of resnet50 at opt_level 2: cold and warm kernel cache.
cache=$(mktemp -d)
cold=$( { /usr/bin/time -f %e ./converter --fmk=ONNX --modelFile="$MODELS_DIR/resnet50/model.onnx" --outputFile=bench/out/r50_o2 \
  --configFile=configs/akg.cfg --kernelCacheDir="$cache" >/dev/null; } 2>&1 | tail -1)
warm=$( { /usr/bin/time -f %e ./converter --fmk=ONNX --modelFile="$MODELS_DIR/resnet50/model.onnx" --outputFile=bench/out/r50_o2 \
  --configFile=configs/akg.cfg --kernelCacheDir="$cache" >/dev/null; } 2>&1 | tail -1)
rm -rf "$cache"
printf '\nresnet50 conversion at opt_level 2: cold kernel cache %s s, warm %s s\n' "$cold" "$warm" | tee -a "$OUT"
echo "wrote $OUT"
