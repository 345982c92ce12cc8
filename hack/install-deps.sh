#!/usr/bin/env bash
# Installs the Debian packages Causeway's demo and tests need, only those
# missing. Safe to run repeatedly; needs root (or sudo) when something is
# missing. With arguments, it installs those packages instead (as
# hack/build-angie.sh does for its build dependencies).
set -euo pipefail

packages=(nginx libnginx-mod-http-lua lua-resty-core libnginx-mod-stream libnginx-mod-http-brotli-filter libnginx-mod-http-headers-more-filter etcd-server iptables iproute2 curl ca-certificates procps)
if [ $# -gt 0 ]; then
  packages=("$@")
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "installing: ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
# Debian's nginx package starts a system nginx on port 80 where init allows;
# policy-rc.d 101 keeps services from starting during the install.
policy=/usr/sbin/policy-rc.d
created_policy=""
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
  $sudo chmod +x "$policy"
  created_policy=1
fi
trap '[ -n "$created_policy" ] && $sudo rm -f "$policy"' EXIT
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "installed: ${missing[*]}"
