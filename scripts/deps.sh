#!/usr/bin/env bash
# The system packages this project needs, installed with apt-get (sudo when
# not root) only when missing; it prints each package it installs and why.
# Used by the Makefile's build/test/demo targets and by .ci/run alike.
#   scripts/deps.sh          build needs: libopenblas-dev (cblas.h), a C compiler (gcc)
#   scripts/deps.sh test     also graphviz (dot: SVG dumps), clang (CUDA PTX
#                            tests), g++ (kernel emulation tests); make test runs this
#   scripts/deps.sh nginx    nginx, for one test only: cmd/converter's remote
#                            kernel cache test (TestRemoteKernelCacheNginx), which starts
#                            its own nginx on 127.0.0.1 and skips without it.
#                            .ci/run installs it; make test does not. Debian's
#                            package would start and enable a system service on
#                            port 80: this mode keeps it from starting during the
#                            install (policy-rc.d) and disables it afterwards.
set -euo pipefail
mode=${1:-build}
need=() why=()
want() { need+=("$1"); why+=("$1: $2"); }
case "$mode" in
build | test)
  [ -e /usr/include/x86_64-linux-gnu/cblas.h ] || [ -e /usr/include/cblas.h ] || [ -e /usr/include/aarch64-linux-gnu/cblas.h ] ||
    want libopenblas-dev "cblas.h and the BLAS the CPU runtime links"
  command -v "${CC:-cc}" >/dev/null || want gcc "the C compiler cgo and the fused CPU kernels need"
  if [ "$mode" = test ]; then
    command -v dot >/dev/null || want graphviz "dot, for the tests of the SVG graph dumps"
    command -v clang >/dev/null || want clang "clang, for the CUDA kernel tests (PTX)"
    command -v g++ >/dev/null || want g++ "g++, for the Ascend/CUDA kernel emulation tests"
  fi
  ;;
nginx)
  command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] ||
    want nginx "the WebDAV server of cmd/converter's remote kernel cache test (the test runs its own instance on 127.0.0.1)"
  ;;
*)
  echo "usage: scripts/deps.sh [test|nginx]" >&2
  exit 2
  ;;
esac
((${#need[@]})) || exit 0
for w in "${why[@]}"; do echo "scripts/deps.sh: installing $w" >&2; done
sudo=()
[ "$(id -u)" = 0 ] || sudo=(sudo)
if ! command -v apt-get >/dev/null; then
  echo "scripts/deps.sh: missing ${need[*]} and no apt-get; install them with your package manager" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive

if [ "$mode" != nginx ]; then
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq "${need[@]}" >/dev/null
  exit 0
fi

# nginx: no system service may start during the install (policy-rc.d exit
# 101 tells invoke-rc.d and deb-systemd-invoke "not now"), nor stay enabled
# after it.
policy=/usr/sbin/policy-rc.d
ours=
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\n# scripts/deps.sh nginx: no service starts while it installs nginx\nexit 101\n' | "${sudo[@]}" tee "$policy" >/dev/null
  "${sudo[@]}" chmod 755 "$policy"
  ours=1
fi
cleanup() { [ -z "$ours" ] || "${sudo[@]}" rm -f "$policy"; }
trap cleanup EXIT
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq nginx >/dev/null
cleanup
ours=
if [ -d /run/systemd/system ]; then
  "${sudo[@]}" systemctl disable --now nginx.service >/dev/null 2>&1 || true
else
  # No systemd running (a container): remove the boot-time links the
  # postinst made, and stop a daemon an existing policy-rc.d let start.
  if command -v deb-systemd-helper >/dev/null; then "${sudo[@]}" deb-systemd-helper disable nginx.service >/dev/null 2>&1 || true; fi
  if command -v update-rc.d >/dev/null; then "${sudo[@]}" update-rc.d nginx disable >/dev/null 2>&1 || true; fi
  if [ -s /run/nginx.pid ]; then "${sudo[@]}" kill "$(cat /run/nginx.pid)" 2>/dev/null || true; fi
fi
echo "scripts/deps.sh: nginx installed; its system service is disabled and not running (the test starts its own)" >&2
