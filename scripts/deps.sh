#!/usr/bin/env bash
# The system packages this project needs, installed only when missing (used
# by the Makefile's build/test/demo targets and by .ci/run alike).
#   scripts/deps.sh          build needs: libopenblas-dev (cblas.h), a C compiler
#   scripts/deps.sh test     also graphviz (SVG dumps), clang (PTX), g++ (kernel emulation),
#                            nginx (WebDAV server of the remote kernel cache test; the test
#                            runs its own instance; Debian's package also enables the system
#                            service on port 80, which `systemctl disable --now nginx` undoes)
set -euo pipefail
need=()
[ -e /usr/include/x86_64-linux-gnu/cblas.h ] || [ -e /usr/include/cblas.h ] || [ -e /usr/include/aarch64-linux-gnu/cblas.h ] || need+=(libopenblas-dev)
command -v "${CC:-cc}" >/dev/null || need+=(gcc)
if [ "${1:-}" = test ]; then
  command -v dot >/dev/null || need+=(graphviz)
  command -v clang >/dev/null || need+=(clang)
  command -v g++ >/dev/null || need+=(g++)
  command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need+=(nginx)
fi
((${#need[@]})) || exit 0
echo "scripts/deps.sh: installing ${need[*]}" >&2
sudo=()
[ "$(id -u)" = 0 ] || sudo=(sudo)
if ! command -v apt-get >/dev/null; then
  echo "scripts/deps.sh: missing ${need[*]} and no apt-get; install them with your package manager" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq "${need[@]}" >/dev/null
