#!/usr/bin/env bash
# Creates build/interop-venv with the pinned MindSpore of requirements.txt
# (again only when requirements.txt changed). Exit 0 with the venv ready;
# exit 3 with one "interop: SKIP: ..." line when PyPI cannot be reached or
# the wheel does not install here (make interop then reports the skip).
set -uo pipefail
cd "$(dirname "$0")/../.."
venv=build/interop-venv
req=scripts/interop/requirements.txt
stamp=$venv/.requirements.sha256
want=$(sha256sum "$req" | cut -d' ' -f1)
if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  exit 0
fi
py=${PYTHON:-python3}
if ! "$py" -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else 1)' 2>/dev/null; then
  echo "interop: SKIP: MindSpore 2.7.2's CPU wheel is cp311; $py is $("$py" --version 2>&1)"
  exit 3
fi
rm -rf "$venv"
"$py" -m venv "$venv" || { echo "interop: SKIP: python3 -m venv failed"; exit 3; }
log=$(mktemp)
if ! "$venv/bin/pip" install -q --disable-pip-version-check -r "$req" >"$log" 2>&1; then
  echo "interop: SKIP: pip could not install $req: $(grep -E 'ERROR|error' "$log" | tail -1)"
  rm -f "$log"; rm -rf "$venv"
  exit 3
fi
rm -f "$log"
echo "$want" > "$stamp"
