#!/usr/bin/env bash
# Creates build/realmodels-venv with the pinned packages of requirements.txt
# (again only when requirements.txt changed). Exit 0 with the venv ready;
# exit 3 with one "realmodels: SKIP: ..." line when PyPI cannot be reached
# (SETUP_LABEL names the caller in that line: scripts/qdq.sh uses it too).
set -uo pipefail
label=${SETUP_LABEL:-realmodels}
cd "$(dirname "$0")/../.."
venv=build/realmodels-venv
req=scripts/realmodels/requirements.txt
stamp=$venv/.requirements.sha256
want=$(sha256sum "$req" | cut -d' ' -f1)
if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  exit 0
fi
py=${PYTHON:-python3}
rm -rf "$venv"
"$py" -m venv "$venv" || { echo "$label: SKIP: $py -m venv failed"; exit 3; }
log=$(mktemp)
if ! "$venv/bin/pip" install -q --disable-pip-version-check -r "$req" >"$log" 2>&1; then
  echo "$label: SKIP: pip could not install $req: $(grep -E 'ERROR|error' "$log" | tail -1)"
  rm -f "$log"; rm -rf "$venv"
  exit 3
fi
rm -f "$log"
echo "$want" > "$stamp"
