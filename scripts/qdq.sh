#!/usr/bin/env bash
# make qdq: the QDQ-quantized models TestQDQModels (internal/convert) and
# `make bench` read, in build/qdq/<model>_qdq. scripts/qdq_quantize.py makes
# them from ../shared's corpus models with onnxruntime in the pinned venv of
# scripts/realmodels (build/realmodels-venv: onnxruntime 1.30.0, onnx
# 1.23.2, numpy 1.26.4).
#   scripts/qdq.sh [MODEL...]   (default: the models of qdqCases in
#                                internal/convert/qdq_test.go)
# Regenerates only what is missing or was made by another version of the
# script or the requirements. Prints one "qdq: SKIP: ..." line and exits 0
# when ../shared's models are absent or PyPI cannot be reached (the test
# then skips, saying so).
set -uo pipefail
cd "$(dirname "$0")/.."
shared=${SHARED:-../shared}
models=("$@")
((${#models[@]})) || models=(resnet18_bn mobilenet_v2_bn squeezenet1_1 bert_tiny)
out=build/qdq
stamp_of() { cat scripts/qdq_quantize.py scripts/realmodels/requirements.txt "$shared/corpus/models/$1/model.onnx" | sha256sum | cut -d' ' -f1; }

todo=()
for m in "${models[@]}"; do
  if [ ! -f "$shared/corpus/models/$m/model.onnx" ]; then
    echo "qdq: SKIP: $shared/corpus/models/$m absent (../shared is not checked out beside the repo); TestQDQModels skips"
    exit 0
  fi
  if [ -f "$out/${m}_qdq/model.onnx" ] && [ "$(cat "$out/${m}_qdq/.stamp" 2>/dev/null)" = "$(stamp_of "$m")" ]; then
    continue
  fi
  todo+=("$m")
done
if ((${#todo[@]} == 0)); then
  echo "qdq: up to date: ${models[*]} in $out"
  exit 0
fi

setup=$(SETUP_LABEL=qdq bash scripts/realmodels/setup.sh)
rc=$?
if [ $rc -eq 3 ]; then
  echo "$setup"
  exit 0
elif [ $rc -ne 0 ]; then
  echo "$setup"; echo "qdq: FAILED: scripts/realmodels/setup.sh exit $rc"
  exit 1
fi
py=build/realmodels-venv/bin/python
for m in "${todo[@]}"; do
  if ! "$py" -W ignore scripts/qdq_quantize.py "$shared/corpus/models/$m" --out "$out"; then
    echo "qdq: FAILED: scripts/qdq_quantize.py $shared/corpus/models/$m"
    exit 1
  fi
  stamp_of "$m" >"$out/${m}_qdq/.stamp"
done
