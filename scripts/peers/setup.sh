#!/usr/bin/env bash
# Creates build/peers-venv with the pinned packages of requirements.txt
# (again only when requirements.txt changed). The "base" group must install;
# each peer's group (onnxruntime, openvino, iree, tvm) is installed by its
# own pip call, and one that fails is recorded in
# build/peers-venv/.failed-<peer> (its last pip error line, which
# peer_time.py reports as that peer's reason) without stopping the others.
# Exit 0 with the venv ready (some peers possibly missing); exit 3 with one
# "peers: SKIP: ..." line when the base cannot be installed (PyPI
# unreachable), like scripts/realmodels/setup.sh.
set -uo pipefail
label=${SETUP_LABEL:-peers}
cd "$(dirname "$0")/../.."
venv=build/peers-venv
req=scripts/peers/requirements.txt
stamp=$venv/.requirements.sha256
want=$(sha256sum "$req" | cut -d' ' -f1)
if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  exit 0
fi
# group NAME: the pins of requirements.txt tagged "# NAME".
group() { sed -n "s/^\([^#[:space:]]\+\)[[:space:]]*#[[:space:]]*$1[[:space:]]*\$/\1/p" "$req"; }
py=${PYTHON:-python3}
rm -rf "$venv"
"$py" -m venv "$venv" || { echo "$label: SKIP: $py -m venv failed"; exit 3; }
pipi() { "$venv/bin/pip" install -q --disable-pip-version-check "$@"; }
log=$(mktemp)
# shellcheck disable=SC2046  # one pin per word
if ! pipi $(group base) >"$log" 2>&1; then
  echo "$label: SKIP: pip could not install the base of $req: $(grep -E 'ERROR|error' "$log" | tail -1)"
  rm -f "$log"; rm -rf "$venv"
  exit 3
fi
for peer in onnxruntime openvino iree tvm; do
  # shellcheck disable=SC2046
  if ! pipi $(group base) $(group "$peer") >"$log" 2>&1; then
    why=$(grep -E 'ERROR|error' "$log" | tail -1)
    echo "pip could not install ${peer}'s pins: ${why:-see pip}" > "$venv/.failed-$peer"
    echo "$label: $peer not installed: ${why:-pip failed}" >&2
  fi
done
rm -f "$log"
echo "$want" > "$stamp"
