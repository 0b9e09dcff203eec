#!/usr/bin/env bash
# Prints the sha256 of every file a converter binary writes for the corpus
# models (unfused, opt_level 2 on CPU, gpu_oriented, ascend_oriented), so a
# refactoring can show that converted files stay byte-identical:
#   scripts/corpus_hashes.sh ./converter > before.txt   (old binary)
#   scripts/corpus_hashes.sh ./converter > after.txt    (new binary)
#   diff before.txt after.txt
set -euo pipefail
bin=$(realpath "${1:?usage: corpus_hashes.sh CONVERTER [SHARED]}")
shared=$(realpath "${2:-$(dirname "$0")/../../shared}")
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cache="$out/cache"
for m in "$shared"/corpus/models/*/model.onnx "$root"/testdata/*/model.onnx; do
  name=$(basename "$(dirname "$m")")
  for v in none:general o2:general gpu:gpu_oriented ascend:ascend_oriented; do
    tag=${v%%:*} opt=${v#*:}
    args=(--fmk=ONNX --modelFile="$m" --outputFile="$out/$name.$tag" --kernelCacheDir="$cache")
    if [ "$tag" = none ]; then args+=(--optimize=none); else args+=(--configFile="$root/configs/akg.cfg" --optimize="$opt"); fi
    "$bin" "${args[@]}" >/dev/null 2>&1 || { echo "FAILED $name.$tag"; continue; }
    (cd "$out" && sha256sum "$name.$tag.mindir")
  done
done
