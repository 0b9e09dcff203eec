#!/usr/bin/env bash
# Runs every fuzz target (each `func FuzzX(f *testing.F)` in a _test.go
# file) for FUZZTIME each (default 10s), one line per target:
#   ok  	gkconv/internal/mindir	FuzzParse (10.4s)
#   scripts/fuzz.sh [FUZZTIME]
# A failing target's output is printed in full. A time-based run can end
# with "context deadline exceeded" from the Go fuzz coordinator and no
# crasher (golang/go#75804); that is not a failure. A real crasher (a
# "Failing input written to" line, a new file under testdata/fuzz) still
# fails the run.
# FUZZ_STREAM=1 shows go's progress lines as they come (make fuzz-long).
# With TEST_JSON=FILE it also writes one `go test -json` pass/fail event
# per target to FILE, for the summary at the end of `make test`.
set -uo pipefail
cd "$(dirname "$0")/.."
FUZZTIME=${1:-${FUZZTIME:-10s}}
GO=${GO:-go}
module=$(sed -n 's/^module[[:space:]]*//p' go.mod)
json=${TEST_JSON:-/dev/null}
: >"$json"
mapfile -t targets < <(grep -rE --include='*_test.go' --exclude-dir=testdata -o '^func Fuzz[A-Za-z0-9_]*\(' . |
  sed -E 's#^\./(.*)/[^/]*:func (Fuzz[A-Za-z0-9_]*)\($#\1 \2#' | sort)
if ((${#targets[@]} == 0)); then
  echo "fuzz.sh: no fuzz targets found" >&2
  exit 1
fi
status=0
for t in "${targets[@]}"; do
  dir=${t% *} name=${t#* }
  pkg="$module/$dir"
  log=$(mktemp)
  before=$(find "$dir/testdata/fuzz/$name" -type f 2>/dev/null | wc -l)
  start=$(date +%s.%N)
  if [ "${FUZZ_STREAM:-}" = 1 ]; then
    $GO test -run='^$' -fuzz="^$name\$" -fuzzminimizetime=100x -fuzztime="$FUZZTIME" "./$dir/" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
  else
    $GO test -run='^$' -fuzz="^$name\$" -fuzzminimizetime=100x -fuzztime="$FUZZTIME" "./$dir/" >"$log" 2>&1
    rc=$?
  fi
  elapsed=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  after=$(find "$dir/testdata/fuzz/$name" -type f 2>/dev/null | wc -l)
  verdict=pass
  if [ "$rc" -ne 0 ]; then
    if grep -q "context deadline exceeded" "$log" && ! grep -q "Failing input written to" "$log" && [ "$after" -eq "$before" ]; then
      echo "fuzz.sh: $name $pkg: the coordinator ended with 'context deadline exceeded' and no crasher (golang/go#75804); not a failure"
    else
      verdict=fail
    fi
  fi
  if [ "$verdict" = pass ]; then
    printf 'ok  \t%s\t%s (%ss)\n' "$pkg" "$name" "$elapsed"
  else
    [ "${FUZZ_STREAM:-}" = 1 ] || cat "$log"
    printf 'FAIL\t%s\t%s (%ss)\n' "$pkg" "$name" "$elapsed"
    status=1
  fi
  printf '{"Action":"%s","Package":"%s","Test":"%s","Elapsed":%s}\n' "$verdict" "$pkg" "$name" "$elapsed" >>"$json"
  rm -f "$log"
done
exit $status
