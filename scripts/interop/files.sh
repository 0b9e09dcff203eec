#!/usr/bin/env bash
# Writes every .mindir of the interop matrix into $OUT (default
# build/interop/files) with ./converter, and $OUT/manifest.tsv:
#   file  kind  source  test_data_set  variant  convert_status
# kind: corpus (../shared/corpus/models), testdata (testdata/*), qdq (build/qdq),
# mindspore (../shared/corpus/mindir re-converted with --fmk=MINDIR),
# exported (build/interop/exported: networks MindSpore itself wrote),
# node (ONNX backend node tests, unfused, MindSpore's primitives only).
# variant: none (unfused, converter_lite's primitives), ms (unfused,
# --primitiveSet=mindspore: the file MindSpore itself runs), o1/o2/o3
# (opt_level), fp16, gpu_oriented, ascend_oriented.
# A conversion that fails is listed with its status (never dropped).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-build/interop/files}
SHARED=${SHARED:-../shared}
CONV=${CONV:-./converter}
NODE_TESTS=${NODE_TESTS:-1}
mkdir -p "$OUT"
man=$OUT/manifest.tsv
: > "$man"
cfgdir=$OUT/cfg
mkdir -p "$cfgdir"
for l in 1 2 3; do printf '[graph_kernel_param]\nopt_level=%s\n' "$l" > "$cfgdir/o$l.cfg"; done

# conv NAME KIND SOURCE TDS VARIANT FMK ARGS...
conv() {
  local name=$1 kind=$2 src=$3 tds=$4 variant=$5 fmk=$6; shift 6
  local status=ok
  if ! "$CONV" --fmk="$fmk" --modelFile="$src" --outputFile="$OUT/$name" --progress=off "$@" >"$OUT/$name.log" 2>&1; then
    status="convert_failed: $(grep -m1 '^ERROR' "$OUT/$name.log" | cut -c1-300)"
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name.mindir" "$kind" "$src" "$tds" "$variant" "$status" >> "$man"
}

variants() { # NAME KIND MODEL TDS FMK: the whole variant matrix
  local name=$1 kind=$2 model=$3 tds=$4 fmk=$5
  conv "${name}_none" "$kind" "$model" "$tds" none "$fmk" --optimize=none
  conv "${name}_ms" "$kind" "$model" "$tds" ms "$fmk" --optimize=none --primitiveSet=mindspore
  conv "${name}_o1" "$kind" "$model" "$tds" o1 "$fmk" --configFile="$cfgdir/o1.cfg"
  conv "${name}_o2" "$kind" "$model" "$tds" o2 "$fmk" --configFile="$cfgdir/o2.cfg"
  conv "${name}_o3" "$kind" "$model" "$tds" o3 "$fmk" --configFile="$cfgdir/o3.cfg"
  conv "${name}_fp16" "$kind" "$model" "$tds" fp16 "$fmk" --optimize=none --fp16=on
  conv "${name}_gpu" "$kind" "$model" "$tds" gpu_oriented "$fmk" --configFile="$cfgdir/o2.cfg" --optimize=gpu_oriented
  conv "${name}_ascend" "$kind" "$model" "$tds" ascend_oriented "$fmk" --configFile="$cfgdir/o2.cfg" --optimize=ascend_oriented
}

if [ -d "$SHARED/corpus/models" ]; then
  for d in "$SHARED"/corpus/models/*/; do
    m=$(basename "$d")
    [ -f "$d/model.onnx" ] && variants "$m" corpus "$d/model.onnx" "$d/test_data_set_0" ONNX
  done
else
  echo "files.sh: $SHARED/corpus/models absent: corpus models skipped" >&2
fi
for d in testdata/*/; do
  m=$(basename "$d")
  [ -f "$d/model.onnx" ] || continue
  conv "${m}_none" testdata "$d/model.onnx" "$d/test_data_set_0" none ONNX --optimize=none
  conv "${m}_ms" testdata "$d/model.onnx" "$d/test_data_set_0" ms ONNX --optimize=none --primitiveSet=mindspore
  conv "${m}_o2" testdata "$d/model.onnx" "$d/test_data_set_0" o2 ONNX --configFile="$cfgdir/o2.cfg"
done
# Post-training quantization ([common_quant_param], docs/quantization.md):
# WEIGHT_QUANT files, in MindSpore's own primitives (the int8 weights run
# through Cast and Mul) and in converter_lite's form, and DYNAMIC_QUANT.
printf '[common_quant_param]\nquant_type=WEIGHT_QUANT\nbit_num=8\n' > "$cfgdir/wq.cfg"
printf '[graph_kernel_param]\nopt_level=2\n[common_quant_param]\nquant_type=WEIGHT_QUANT\nbit_num=8\n' > "$cfgdir/wq_o2.cfg"
for m in resnet18_bn mobilenet_v2_bn bert_tiny; do
  d=$SHARED/corpus/models/$m
  [ -f "$d/model.onnx" ] || continue
  conv "${m}_wq_ms" corpus "$d/model.onnx" "$d/test_data_set_0" ms ONNX --optimize=none --primitiveSet=mindspore --configFile="$cfgdir/wq.cfg"
  conv "${m}_wq_o2" corpus "$d/model.onnx" "$d/test_data_set_0" o2 ONNX --configFile="$cfgdir/wq_o2.cfg"
done
printf '[graph_kernel_param]\nopt_level=2\n[common_quant_param]\nquant_type=DYNAMIC_QUANT\n' > "$cfgdir/dq_o2.cfg"
d=$SHARED/corpus/models/bert_tiny
[ -f "$d/model.onnx" ] && conv bert_tiny_dq_o2 corpus "$d/model.onnx" "$d/test_data_set_0" o2 ONNX --configFile="$cfgdir/dq_o2.cfg"
for d in build/qdq/*/; do
  [ -f "$d/model.onnx" ] || continue
  m=$(basename "$d")
  conv "${m}_none" qdq "$d/model.onnx" "$d/test_data_set_0" none ONNX --optimize=none
  conv "${m}_ms" qdq "$d/model.onnx" "$d/test_data_set_0" ms ONNX --optimize=none --primitiveSet=mindspore
  conv "${m}_o2" qdq "$d/model.onnx" "$d/test_data_set_0" o2 ONNX --configFile="$cfgdir/o2.cfg"
done
for f in "$SHARED"/corpus/mindir/*.mindir "$SHARED"/corpus/mindir/mindspore-tests/*.mindir; do
  [ -f "$f" ] || continue
  m=ms_$(basename "$f" .mindir)
  tds=-
  [ "$(basename "$f")" = mnist.mindir ] && tds=$SHARED/corpus/mindir/mnist_equiv/test_data_set_0
  conv "${m}_none" mindspore "$f" "$tds" none MINDIR --optimize=none
  conv "${m}_ms" mindspore "$f" "$tds" ms MINDIR --optimize=none --primitiveSet=mindspore
  conv "${m}_o2" mindspore "$f" "$tds" o2 MINDIR --configFile="$cfgdir/o2.cfg"
done
for d in build/interop/exported/*/; do
  [ -f "$d/model.mindir" ] || continue
  m=exp_$(basename "$d")
  conv "${m}_none" exported "$d/model.mindir" "$d/test_data_set_0" none MINDIR --optimize=none
  conv "${m}_ms" exported "$d/model.mindir" "$d/test_data_set_0" ms MINDIR --optimize=none --primitiveSet=mindspore
  conv "${m}_o2" exported "$d/model.mindir" "$d/test_data_set_0" o2 MINDIR --configFile="$cfgdir/o2.cfg"
done
if [ "$NODE_TESTS" = 1 ] && [ -d "$SHARED/corpus/onnx-backend/node" ]; then
  mkdir -p "$OUT/node"
  # Only the tests onnxruntime passes (the others have no trusted reference).
  awk -F'\t' '$1=="node" && $8=="pass" {print $2}' "$SHARED/corpus/onnx-backend/manifest.tsv" | while read -r t; do
    d=$SHARED/corpus/onnx-backend/node/$t
    [ -f "$d/model.onnx" ] || continue
    conv "node/${t}" node "$d/model.onnx" "$d/test_data_set_0" ms ONNX --optimize=none --primitiveSet=mindspore
  done
fi
echo "files.sh: $(wc -l < "$man") file(s) in $OUT ($(grep -c 'convert_failed' "$man") conversion(s) failed)"
