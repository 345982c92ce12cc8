#!/usr/bin/env bash
# Installs the Debian packages Causeway's demo and tests need, only those
# missing. Safe to run repeatedly; needs root (or sudo) when something is
# missing. With arguments, it installs those packages instead (as
# hack/build-angie.sh does for its build dependencies).
set -euo pipefail

packages=(nginx libnginx-mod-http-lua lua-resty-core libnginx-mod-stream libnginx-mod-http-brotli-filter libnginx-mod-http-headers-more-filter libnginx-mod-http-geoip2 libnginx-mod-http-modsecurity modsecurity-crs etcd-server iptables iproute2 curl ca-certificates procps)
# What the later tiers add: Angie's build (hack/build-angie.sh), the image
# (hack/build-image.sh) and podman to run it, the single-node cluster.
# `install-deps.sh all` installs everything at once, as make test does
# first, so that no tier's own install runs apt while another build runs.
angie_build=(build-essential libluajit2-5.1-dev libpcre2-dev libssl-dev zlib1g-dev)
image_build=(mmdebstrap umoci libcap2-bin)
image_run=(podman runc)
cluster=(containerd runc containernetworking-plugins conntrack iptables iproute2)
if [ "${1:-}" = all ]; then
  packages+=("${angie_build[@]}" "${image_build[@]}" "${image_run[@]}" "${cluster[@]}")
elif [ $# -gt 0 ]; then
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
