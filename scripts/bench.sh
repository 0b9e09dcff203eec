#!/usr/bin/env bash
# make bench: regenerate the big models, convert them, and time ours against
# onnxruntime 1.30 on 1 thread and on 2 threads, alternating the programs
# round by round. Writes bench/results.md: the machine (CPU model, ISA flags,
# the ISA path our benchmark reported, date, git commit), then tables of
# medians with every ratio as the median of the per-round ratios and their
# range (min-max). BENCH_APPEND=1 also appends it to docs/performance.md.
#
# Variables: MODELS (onnxruntime tables), FUSION_MODELS (fusion table),
# ROUNDS (>= 5 for a recorded run), LOOPS, FUSION_ROUNDS, THREADS2_MODELS
# (2-thread table; default MODELS), BENCH_ISA=avx2|avx512|portable (run
# everything with GKCONV_CPU_ISA forced), BENCH_APPEND=1, BENCH_EXTRAS=0
# (skip STREAM, the kernel bandwidth table and the conversion time),
# QDQ_MODELS (QDQ table: corpus models timed float32 against their QDQ
# form from scripts/qdq_quantize.py in build/qdq; "" skips it), QDQ_ORT=0
# (no onnxruntime column in the QDQ table), QDQ_LOOPS (its timed runs per
# program per round, default 50), REAL_MODELS (real-model table: cases of
# build/realmodels, from `make realmodels`, timed against the Python
# onnxruntime 1.30 of build/realmodels-venv at 1 and 2 threads on their own
# inputs; "" skips it), REAL_OPT (their opt_level, default 2), REAL_LOOPS
# (timed runs per program per round, default 50), BENCH_ONLY=real (only that
# table: no model export, no node onnxruntime, no other table), OPS_SWEEP=0
# (skip the per-op sweep: scripts/opsweep.py, single-op models against
# onnxruntime and STREAM triad), BENCH_ONLY=ops (only STREAM and the sweep).
#
# Best-peer table (issue 34 item 5): ours at opt_level 2 against every peer
# engine of scripts/peers (build/peers-venv from scripts/peers/setup.sh) on
# the same ONNX file at the same thread count, ours and each peer alternating
# within every round; per model and thread count each peer's median, the
# best peer (lowest median) and ours/best as the median of the per-round
# ratios (range); a peer that cannot run a model gets a line saying why.
# PEERS=0 skips it; BENCH_ONLY=peers runs only it (no node onnxruntime, no
# other table); PEERS_LIST (default "onnxruntime openvino iree tvm");
# PEER_MODELS (default MODELS); PEER_THREADS (default "1 2");
# PEER_PREPARE_TIMEOUT (seconds a peer may spend converting and compiling a
# model, default 900; compiled artifacts are cached under build/peers);
# PEER_BUDGET_S (seconds a peer may spend on one round's warm-up and timed
# runs before it stops early, at least 3 timed, default 60; only very slow
# peers, untuned TVM, ever reach it).
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
# Untimed runs first, the same for both programs. 2 were too few on the
# 2-vCPU VM of 2026-11-29: a process started right after onnxruntime's
# (which frees a few hundred MB) ran its first ~20 two-thread mobilenet_v2
# runs 2-3x slower (4.5-6.5 ms against 2.2; twice the context switches,
# the pool's worker found parked at every loop), so some rounds timed that
# start-up instead of the model; with 10 the slow start no longer showed.
WARMUP=${WARMUP:-10}
MODELS=${MODELS-"resnet50 mobilenet_v2 efficientnet_b0 bert_base gpt_small"}   # "" skips the onnxruntime tables
FUSION_MODELS=${FUSION_MODELS-"bert_base gpt_small efficientnet_b0"}
THREADS2_MODELS=${THREADS2_MODELS-$MODELS}
FUSION_ROUNDS=${FUSION_ROUNDS:-9}
QDQ_MODELS=${QDQ_MODELS-"resnet18_bn bert_tiny"}
QDQ_ORT=${QDQ_ORT:-1}
QDQ_LOOPS=${QDQ_LOOPS:-50}   # timed runs per program per round in the QDQ table
REAL_MODELS=${REAL_MODELS-"unet_synth_dynq ocr_det_tiny_dynq ocr_det_tiny_fp16 unet_synth_fp16 ocr_det_tiny"}
REAL_OPT=${REAL_OPT:-2}
REAL_LOOPS=${REAL_LOOPS:-50}
REAL_DIR=${REAL_DIR:-build/realmodels}
REAL_PY=${REAL_PY:-build/realmodels-venv/bin/python}
BENCH_ONLY=${BENCH_ONLY:-}
PEERS=${PEERS:-1}
PEERS_LIST=${PEERS_LIST-"onnxruntime openvino iree tvm"}
PEER_MODELS=${PEER_MODELS-$MODELS}
PEER_THREADS=${PEER_THREADS:-"1 2"}
PEER_PREPARE_TIMEOUT=${PEER_PREPARE_TIMEOUT:-900}
PEER_BUDGET_S=${PEER_BUDGET_S:-60}
PEER_PY=${PEER_PY:-build/peers-venv/bin/python}
[ "$PEERS" = 0 ] && PEER_MODELS=
OUT=bench/results.md
mkdir -p "$MODELS_DIR" bench/out
if [ -n "${BENCH_ISA:-}" ]; then
  export GKCONV_CPU_ISA=$BENCH_ISA   # the converter refuses a level this CPU lacks
else
  unset GKCONV_CPU_ISA
fi

if [ "$BENCH_ONLY" = real ] || [ "$BENCH_ONLY" = ops ] || [ "$BENCH_ONLY" = peers ]; then
  MODELS= FUSION_MODELS= THREADS2_MODELS= QDQ_MODELS=
  [ "$BENCH_ONLY" = real ] || REAL_MODELS=
  [ "$BENCH_ONLY" = peers ] || PEER_MODELS=
fi
if [ "$BENCH_ONLY" = real ] || [ "$BENCH_ONLY" = ops ]; then
  :
elif ! /usr/bin/python3 -c 'import torch, torchvision, onnx' 2>/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-torch python3-torchvision python3-onnx >/dev/null
fi
if [ -z "$BENCH_ONLY" ]; then
  if [ ! -d "$ORT_DIR/node_modules/onnxruntime-node" ]; then
    mkdir -p "$ORT_DIR"
    (cd "$ORT_DIR" && npm init -y >/dev/null && npm install --ignore-scripts onnxruntime-node@1.30.0 protobufjs@7 long >/dev/null)
  fi
  cp "$SHARED/tools/ort/run_ort.js" "$ORT_DIR/run_ort.js"
fi

# resnet50 is needed for the conversion-time line (not with BENCH_EXTRAS=0).
extra_models=resnet50
[ "${BENCH_EXTRAS:-1}" = 0 ] || [ -n "$BENCH_ONLY" ] && extra_models=
for m in $(printf '%s\n' $MODELS $FUSION_MODELS $THREADS2_MODELS $PEER_MODELS $extra_models | sort -u); do
  [ -f "$MODELS_DIR/$m/model.onnx" ] || /usr/bin/python3 "$SHARED/tools/export_models.py" "$MODELS_DIR" "$m"
done

median() { python3 -c 'import sys,statistics; print("%.3f" % statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }
# ratios A B: the per-round ratios A[i]/B[i] of two equal-length lists given
# as two quoted strings: "median (min-max)".
ratios() {
  python3 -c '
import sys, statistics
a, b = sys.argv[1].split(), sys.argv[2].split()
r = [float(x) / float(y) for x, y in zip(a, b)]
print("%.2f (%.2f-%.2f)" % (statistics.median(r), min(r), max(r)))' "$1" "$2"
}
jget() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
for k in sys.argv[2:]: d = d[k]
print(d)' "$@"; }
# ours MINDIR THREADS: one timed benchmark run, its median ms.
ours() {
  ./converter benchmark --modelFile="$1" --numThreads="$2" --loopCount="$LOOPS" --warmUpLoopCount="$WARMUP" \
    --resultFile=bench/out/r.json >/dev/null
  jget bench/out/r.json median_ms
}
# ort MODEL THREADS: one timed onnxruntime run, its median ms.
ort() {
  node "$ORT_DIR/run_ort.js" "$1" --random --threads "$2" --opt all --runs "$LOOPS" --warmup "$WARMUP" --json |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["timing"]["median_ms"])'
}

# The machine and the code paths, recorded with every result.
[ -x ./converter ] || go build -o converter ./cmd/converter
cpu=$(awk -F': *' '/^model name/ {print $2; exit}' /proc/cpuinfo)
# (true: a missing last flag must not end the script under set -e)
flags=$(for f in avx2 fma avx512f avx512bw avx512vl avx512_vnni; do grep -qw "$f" /proc/cpuinfo && printf '%s ' "$f"; done; true)
flags=${flags% }
./converter --fmk=ONNX --modelFile=testdata/mlp/model.onnx --outputFile=bench/out/isa_probe --configFile=configs/akg.cfg >/dev/null
./converter benchmark --modelFile=bench/out/isa_probe.mindir --numThreads=1 --loopCount=1 --warmUpLoopCount=0 \
  --resultFile=bench/out/r.json >/dev/null
isa=$(jget bench/out/r.json isa)
commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD 2>/dev/null || commit="$commit (modified)"
{
  echo "## make bench, $(date -u '+%Y-%m-%d %H:%M UTC'), commit $commit"
  echo
  echo "CPU: ${cpu:-unknown}, $(nproc) cores; ISA flags: ${flags:-none}"
  echo "ISA path (converter benchmark): $isa${BENCH_ISA:+ (BENCH_ISA=$BENCH_ISA)}"
  echo "Method: medians over $ROUNDS alternating rounds (fusion: $FUSION_ROUNDS) of $LOOPS timed runs each after $WARMUP untimed;"
  echo "a ratio is the median of the per-round ratios, (min-max) their range."
  echo
} > "$OUT"

# 1 thread against onnxruntime: unfused ("none") and at opt_level 2 ("o2",
# configs/akg.cfg), the form the issue goals are stated in.
# Variants: name|config file ("" = --optimize=none)
VARIANTS=${VARIANTS:-"none| o2|configs/akg.cfg"}
if [ -n "$MODELS" ]; then
  {
    echo "| model (1 thread) | variant | ours median ms | ORT median ms | ours/ORT: median of rounds (range) |"
    echo "|---|---|---|---|---|"
  } >> "$OUT"
fi
for m in $MODELS; do
  src="$MODELS_DIR/$m/model.onnx"
  for v in $VARIANTS; do
    vname=${v%%|*}; cfg=${v#*|}
    mindir="bench/out/${m}_${vname}"
    args=(--fmk=ONNX --modelFile="$src" --outputFile="$mindir")
    if [ -n "$cfg" ]; then args+=(--configFile="$cfg"); else args+=(--optimize=none); fi
    ./converter "${args[@]}" >/dev/null
    o=(); x=()
    for ((r = 0; r < ROUNDS; r++)); do
      o+=("$(ours "$mindir.mindir" 1)")
      x+=("$(ort "$src" 1)")
    done
    echo "| $m | $vname | $(median "${o[@]}") | $(median "${x[@]}") | $(ratios "${o[*]}" "${x[*]}") |" | tee -a "$OUT"
  done
done

# 2 threads: ours at opt_level 2 against onnxruntime --threads 2, and each
# program's 2-thread speedup over its own 1-thread time. A round runs ours
# 1T, ours 2T, ORT 1T, ORT 2T back to back.
if [ -n "$THREADS2_MODELS" ]; then
  {
    echo
    echo "| model (2 threads) | ours O2 median ms | ORT median ms | ours/ORT | ours 2T speedup over 1T | ORT 2T speedup over 1T |"
    echo "|---|---|---|---|---|---|"
  } >> "$OUT"
fi
for m in $THREADS2_MODELS; do
  src="$MODELS_DIR/$m/model.onnx"
  ./converter --fmk=ONNX --modelFile="$src" --outputFile="bench/out/${m}_o2" --configFile=configs/akg.cfg >/dev/null
  o1=(); o2=(); x1=(); x2=()
  for ((r = 0; r < ROUNDS; r++)); do
    o1+=("$(ours "bench/out/${m}_o2.mindir" 1)")
    o2+=("$(ours "bench/out/${m}_o2.mindir" 2)")
    x1+=("$(ort "$src" 1)")
    x2+=("$(ort "$src" 2)")
  done
  echo "| $m | $(median "${o2[@]}") | $(median "${x2[@]}") | $(ratios "${o2[*]}" "${x2[*]}") | $(ratios "${o1[*]}" "${o2[*]}") | $(ratios "${x1[*]}" "${x2[*]}") |" | tee -a "$OUT"
done

# Fusion: the same runtime at opt_level 2 vs --optimize=none (issue target >= 1.25x).
# Accuracy first: both variants against the reference outputs that
# export_models.py saved with the model (PyTorch's; onnxruntime's when
# missing), benchmark --atol=1e-4 --rtol=1e-3; the script stops on failure.
if [ -n "$FUSION_MODELS" ]; then
  {
    echo
    echo "| model (1 thread) | opt_level 0 median ms | opt_level 2 median ms | speedup: median of rounds (range) | nodes after / before | kernels | max abs error vs reference (O0 / O2) |"
    echo "|---|---|---|---|---|---|---|"
  } >> "$OUT"
fi
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
    o0+=("$(ours "bench/out/${m}_none.mindir" 1)")
    o2+=("$(ours "bench/out/${m}_o2.mindir" 1)")
  done
  rep="bench/out/${m}_o2.report.json"
  k=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["kernels"]))' "$rep")
  nodes="$(jget "$rep" graph nodes_after) / $(jget "$rep" graph nodes_before)"
  # The speedup is the median of the per-round ratios: both variants of a
  # round ran back to back, so a slow stretch of the shared machine cancels.
  echo "| $m | $(median "${o0[@]}") | $(median "${o2[@]}") | $(ratios "${o0[*]}" "${o2[*]}") | $nodes | $k | ${errs[0]} / ${errs[1]} |" | tee -a "$OUT"
done

# QDQ: the float32 corpus model and its QDQ form (int8 weights, uint8
# activations; scripts/qdq.sh, generated into build/qdq when
# missing), both at opt_level 2 on 1 thread, alternating round by round;
# onnxruntime on the same QDQ model for scale. Skips a model it cannot get.
qdq_rows=()
qdq_isa=unknown
for m in $QDQ_MODELS; do
  fsrc="$SHARED/corpus/models/$m/model.onnx"
  qsrc="build/qdq/${m}_qdq/model.onnx"
  if [ ! -f "$qsrc" ] && [ -f "$fsrc" ]; then
    SHARED="$SHARED" bash scripts/qdq.sh "$m" >/dev/null || true
  fi
  if [ ! -f "$fsrc" ] || [ ! -f "$qsrc" ]; then
    echo "QDQ $m: skipped (need $fsrc and $qsrc; scripts/qdq_quantize.py makes the latter)" >&2
    continue
  fi
  ./converter --fmk=ONNX --modelFile="$fsrc" --outputFile="bench/out/${m}_f32_o2" --configFile=configs/akg.cfg >/dev/null
  ./converter --fmk=ONNX --modelFile="$qsrc" --outputFile="bench/out/${m}_qdq_o2" --configFile=configs/akg.cfg >/dev/null
  qdq_isa=$(./converter benchmark --modelFile="bench/out/${m}_qdq_o2.mindir" --numThreads=1 --loopCount=1 \
    --warmUpLoopCount=0 2>&1 | sed -n 's/.*int8 GEMM \([^,]*\).*/\1/p' | head -1)
  f=(); q=(); x=()
  for ((r = 0; r < ROUNDS; r++)); do
    f+=("$(LOOPS=$QDQ_LOOPS ours "bench/out/${m}_f32_o2.mindir" 1)")
    q+=("$(LOOPS=$QDQ_LOOPS ours "bench/out/${m}_qdq_o2.mindir" 1)")
    if [ "$QDQ_ORT" = 1 ]; then x+=("$(LOOPS=$QDQ_LOOPS ort "$qsrc" 1)"); fi
  done
  ortcols="- | -"
  if [ "$QDQ_ORT" = 1 ]; then ortcols="$(median "${x[@]}") | $(ratios "${q[*]}" "${x[*]}")"; fi
  qdq_rows+=("| $m | $(median "${f[@]}") | $(median "${q[@]}") | $(ratios "${q[*]}" "${f[*]}") | $ortcols |")
done
if [ ${#qdq_rows[@]} -gt 0 ]; then
  {
    echo
    echo "int8 GEMM path (converter benchmark): $qdq_isa"
    echo
    echo "| model (1 thread, opt_level 2, $QDQ_LOOPS runs a round) | float32 median ms | QDQ median ms | QDQ/float32: median of rounds (range) | ORT QDQ median ms | ours QDQ/ORT QDQ |"
    echo "|---|---|---|---|---|---|"
  } >> "$OUT"
  printf '%s\n' "${qdq_rows[@]}" | tee -a "$OUT"
fi

# Real models (make realmodels): ours at REAL_OPT against the Python
# onnxruntime (ORT_ENABLE_ALL) on the case's own first inputs, 1 and 2
# threads, alternating within each round.
# real_ours MINDIR THREADS INPUT.pb...: one timed benchmark run, its median ms.
real_ours() {
  local f=$1 t=$2
  shift 2
  ./converter benchmark --modelFile="$f" --inDataFile="$(IFS=,; echo "$*")" --numThreads="$t" \
    --loopCount="$REAL_LOOPS" --warmUpLoopCount="$WARMUP" --resultFile=bench/out/r.json >/dev/null
  jget bench/out/r.json median_ms
}
real_table() {
  [ -n "$REAL_MODELS" ] || return 0
  if [ ! -d "$REAL_DIR" ] || ! "$REAL_PY" -c 'import onnxruntime, onnx' 2>/dev/null; then
    echo "real-model table: skipped ($REAL_DIR or onnxruntime in $REAL_PY absent; make realmodels makes both)" | tee -a "$OUT"
    return 0
  fi
  local rows=() m d shape ins cfg=bench/out/real_o$REAL_OPT.cfg
  printf '[graph_kernel_param]\nopt_level=%s\n' "$REAL_OPT" > "$cfg"
  for m in $REAL_MODELS; do
    d=$REAL_DIR/$m
    if [ ! -f "$d/model.onnx" ]; then
      echo "real-model table: $m skipped (no $d/model.onnx)" | tee -a "$OUT"
      continue
    fi
    shape=$(jget "$d/case.json" input_shape)
    ./converter --fmk=ONNX --modelFile="$d/model.onnx" --outputFile="bench/out/real_$m" --configFile="$cfg" \
      ${shape:+--inputShape="$shape"} >/dev/null
    ins=$(ls "$d"/test_data_set_0/input_*.pb | sort -V)
    o1=(); x1=(); o2=(); x2=()
    for ((r = 0; r < ROUNDS; r++)); do
      o1+=("$(real_ours "bench/out/real_$m.mindir" 1 $ins)")
      x1+=("$("$REAL_PY" scripts/realmodels/ort_time.py "$d/model.onnx" 1 "$REAL_LOOPS" "$WARMUP" $ins)")
      o2+=("$(real_ours "bench/out/real_$m.mindir" 2 $ins)")
      x2+=("$("$REAL_PY" scripts/realmodels/ort_time.py "$d/model.onnx" 2 "$REAL_LOOPS" "$WARMUP" $ins)")
    done
    rows+=("| $m | $(median "${o1[@]}") | $(median "${x1[@]}") | $(ratios "${o1[*]}" "${x1[*]}") | $(median "${o2[@]}") | $(median "${x2[@]}") | $(ratios "${o2[*]}" "${x2[*]}") |")
  done
  [ ${#rows[@]} -gt 0 ] || return 0
  {
    echo
    echo "Real models ($REAL_DIR, opt_level $REAL_OPT, $REAL_LOOPS runs a round; onnxruntime $("$REAL_PY" -c 'import onnxruntime; print(onnxruntime.__version__)') from Python, ORT_ENABLE_ALL):"
    echo
    echo "| model | ours 1T median ms | ORT 1T median ms | ours/ORT 1T (range) | ours 2T median ms | ORT 2T median ms | ours/ORT 2T (range) |"
    echo "|---|---|---|---|---|---|---|"
  } >> "$OUT"
  printf '%s\n' "${rows[@]}" | tee -a "$OUT"
}

# Best peer (issue 34 item 5): ours at opt_level 2 against each peer engine
# of PEERS_LIST (scripts/peers/peer_time.py in build/peers-venv) on the same
# ONNX file and thread count. A peer is first prepared and tried once
# (compiles are cached and not timed); in every round ours runs, then each
# peer that worked, so they all share the machine's slow stretches alike.
# peer_json MODEL PEER THREADS [RUNS WARMUP]: peer_time.py's JSON line.
peer_json() {
  local rc=0
  "$PEER_PY" scripts/peers/peer_time.py "$1" "$2" --threads "$3" --runs "${4:-$LOOPS}" --warmup "${5:-$WARMUP}" \
    --prepare-timeout "$PEER_PREPARE_TIMEOUT" --budget-s "$PEER_BUDGET_S" >bench/out/peer.json 2>bench/out/peer.err || rc=$?
  python3 -c '
import json, sys
lines = open("bench/out/peer.json").read().splitlines()
err = [l for l in open("bench/out/peer.err", errors="replace").read().splitlines() if l.strip()]
try:
    d = json.loads(lines[-1])
except (ValueError, IndexError):
    # A crash (a signal in an engine) leaves no JSON: say how it ended.
    d = {"error": "peer_time.py exited with status %s: %s" % (sys.argv[1], err[-1] if err else "no output")}
print(d["median_ms"] if "median_ms" in d else "ERROR: " + d["error"].splitlines()[0])' "$rc"
}
peers_table() {
  [ -n "$PEER_MODELS" ] && [ -n "$PEERS_LIST" ] || return 0
  local setup_rc=0 setup_msg
  setup_msg=$(bash scripts/peers/setup.sh 2>&1) || setup_rc=$?
  if [ "$setup_rc" != 0 ]; then
    echo "best-peer table: skipped (${setup_msg:-scripts/peers/setup.sh failed with $setup_rc})" | tee -a "$OUT"
    return 0
  fi
  local versions="" p v m t src r ms rows=() notes=() tsv
  for p in $PEERS_LIST; do
    v=$("$PEER_PY" -c 'import importlib.metadata as md, sys
name = {"onnxruntime": "onnxruntime", "openvino": "openvino", "iree": "iree-base-runtime", "tvm": "apache-tvm"}[sys.argv[1]]
try: print(md.version(name))
except md.PackageNotFoundError: print("not installed")' "$p")
    versions+="${versions:+, }$p $v"
  done
  {
    echo
    echo "Best peer (scripts/peers/peer_time.py: $versions; same ONNX file and thread count, ours at opt_level 2;"
    echo "$ROUNDS alternating rounds of $LOOPS timed runs after $WARMUP untimed, a peer stopping early after ${PEER_BUDGET_S} s a round;"
    echo "best = the peer with the lowest median, ours/best = median of the per-round ratios (range)):"
    echo
    local header="| model | threads | ours O2 median ms" sep="|---|---|---"
    for p in $PEERS_LIST; do header+=" | $p median ms"; sep+="|---"; done
    echo "$header | best peer | ours/best: median of rounds (range) |"
    echo "$sep|---|---|"
  } >> "$OUT"
  for m in $PEER_MODELS; do
    src="$MODELS_DIR/$m/model.onnx"
    ./converter --fmk=ONNX --modelFile="$src" --outputFile="bench/out/${m}_o2" --configFile=configs/akg.cfg >/dev/null
    for t in $PEER_THREADS; do
      # One line per timing: "round program ms", read back by the row's summary.
      tsv="bench/out/peers_${m}_${t}T.tsv"
      : > "$tsv"
      local working=()
      for p in $PEERS_LIST; do
        ms=$(peer_json "$src" "$p" "$t" 1 1)
        if [ "${ms#ERROR: }" != "$ms" ]; then
          notes+=("- $p on $m, $t thread(s): ${ms#ERROR: }")
          echo "best peer: $p on $m ${t}T: ${ms#ERROR: }" >&2
        else
          working+=("$p")
        fi
      done
      for ((r = 0; r < ROUNDS; r++)); do
        echo "$r ours $(ours "bench/out/${m}_o2.mindir" "$t")" >> "$tsv"
        for p in "${working[@]}"; do
          ms=$(peer_json "$src" "$p" "$t")
          if [ "${ms#ERROR: }" != "$ms" ]; then
            notes+=("- $p on $m, $t thread(s), round $r: ${ms#ERROR: }")
          else
            echo "$r $p $ms" >> "$tsv"
          fi
        done
      done
      rows+=("$(python3 -c '
import statistics, sys
m, t, tsv, peers = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split()
times = {}
for line in open(tsv):
    r, prog, ms = line.split()
    times.setdefault(prog, {})[int(r)] = float(ms)
med = {p: statistics.median(v.values()) for p, v in times.items()}
cells = ["%.2f" % med[p] if p in med else "fails" for p in peers]
ran = [p for p in peers if p in med]
if not ran or "ours" not in med:
    print("| %s | %s | %s | %s | none | - |" % (m, t, "%.2f" % med["ours"] if "ours" in med else "-", " | ".join(cells)))
    sys.exit()
best = min(ran, key=med.get)
# Per-round ratios against the best peer (by median), over the rounds both ran.
ratio = [times["ours"][r] / times[best][r] for r in times[best] if r in times["ours"]]
print("| %s | %s | %.2f | %s | %s | %.2f (%.2f-%.2f) |" % (m, t, med["ours"], " | ".join(cells), best,
      statistics.median(ratio), min(ratio), max(ratio)))' "$m" "$t" "$tsv" "$PEERS_LIST")")
      echo "${rows[-1]}" | tee -a "$OUT"
    done
  done
  {
    if [ ${#notes[@]} -gt 0 ]; then
      echo
      echo "Peers that did not run:"
      echo
      printf '%s\n' "${notes[@]}"
    fi
  } >> "$OUT"
}

finish() {
  echo "wrote $OUT"
  if [ "${BENCH_APPEND:-}" = 1 ]; then
    { echo; cat "$OUT"; } >> docs/performance.md
    echo "appended to docs/performance.md"
  fi
}
# The per-op sweep: single-op models at opt_level 2 against onnxruntime's
# in-session time, 1 thread, and their bandwidth against STREAM triad ($1).
ops_table() {
  [ "${OPS_SWEEP:-1}" != 0 ] || return 0
  if ! "$REAL_PY" -c 'import onnxruntime, onnx' 2>/dev/null; then
    echo "per-op sweep: skipped (no onnxruntime in $REAL_PY; make realmodels sets it up)" | tee -a "$OUT"
    return 0
  fi
  {
    echo
    echo "Per-op sweep (scripts/opsweep.py: opt_level 2, 1 thread, $ROUNDS alternating rounds; onnxruntime $("$REAL_PY" -c 'import onnxruntime; print(onnxruntime.__version__)') in-session, ORT_ENABLE_ALL):"
    echo
    "$REAL_PY" scripts/opsweep.py ./converter bench/out/opsweep --rounds "$ROUNDS" --triad "$1" 2>/dev/null
  } | tee -a "$OUT"
}

real_table
peers_table
if [ "${BENCH_EXTRAS:-1}" = 0 ] || [ "$BENCH_ONLY" = real ] || [ "$BENCH_ONLY" = peers ]; then # smoke runs: no STREAM, kernel bandwidth or conversion time
  finish
  exit 0
fi

# Fused kernel bandwidth against STREAM triad (1 thread).
gcc -O3 -march=native -fopenmp -o bench/out/stream "$SHARED/tools/bench/stream.c"
triad=$(OMP_NUM_THREADS=1 bench/out/stream | awk '/Triad/ {print $2}')
if [ "$BENCH_ONLY" = ops ]; then
  echo "STREAM triad, 1 thread: ${triad} GB/s" | tee -a "$OUT"
  ops_table "$triad"
  finish
  exit 0
fi
ops_table "$triad"
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
finish
