#!/usr/bin/env bash
# build-kube-apiserver.sh builds the Kubernetes binaries the tests run, all
# from the one pinned tools module in hack/kube-apiserver (downloaded through
# the Go module proxy; no container images or git checkouts):
#   kube-apiserver, kubectl            tiers 3 and 4 (test/testenv, test/e2e)
#   kubelet, kube-proxy,
#   kube-controller-manager,
#   kube-scheduler                     tier 5, the single-node cluster
#                                      (hack/cluster, test/cluster)
#
# Every stale binary is compiled by one `go build` of several packages, so the
# packages they share (most of k8s.io/kubernetes) compile once. Each binary
# lands in .cache/bin/<name> with .cache/bin/<name>.stamp recording what was
# built; when every stamp matches the pinned module the script costs well
# under a second, so it runs before every test tier.
#
# Usage: build-kube-apiserver.sh [name...]
#   With no arguments, all six are built.
#
# Environment:
#   FORCE=1   rebuild even when the stamps match.
#   GOFLAGS   passed through to go (e.g. -p=1 on a busy machine).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
module_dir="${repo_root}/hack/kube-apiserver"
bin_dir="${repo_root}/.cache/bin"

# A go.work further up would pull this module into a workspace it does not
# belong to; the tools module must resolve on its own.
export GOWORK=off
# Upstream release builds of these binaries are static.
export CGO_ENABLED=0

log() { printf 'build-kube-apiserver: %s\n' "$*" >&2; }

all=(kube-apiserver kubectl kubelet kube-proxy kube-controller-manager kube-scheduler)
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
	targets=("${all[@]}")
fi
for t in "${targets[@]}"; do
	if [[ " ${all[*]} " != *" ${t} "* ]]; then
		log "unknown binary '${t}' (want one of: ${all[*]})"
		exit 2
	fi
done

cd "${module_dir}"

version="$(go list -m -f '{{.Version}}' k8s.io/kubernetes)"
if [[ ! "${version}" =~ ^v([0-9]+)\.([0-9]+)\.[0-9]+ ]]; then
	log "cannot parse k8s.io/kubernetes version '${version}' from ${module_dir}/go.mod"
	exit 1
fi
major="${BASH_REMATCH[1]}"
minor="${BASH_REMATCH[2]}"

# The stamp names the version and hashes the module files, so editing a
# replace directive or go.sum also triggers a rebuild.
module_sum="$(cat go.mod go.sum | sha256sum | cut -d' ' -f1)"
want_stamp="k8s.io/kubernetes ${version} modules-sha256=${module_sum} $(go env GOOS)/$(go env GOARCH)"

stale=()
for name in "${targets[@]}"; do
	out="${bin_dir}/${name}"
	if [[ "${FORCE:-0}" != "1" && -x "${out}" && -f "${out}.stamp" && "$(cat "${out}.stamp")" == "${want_stamp}" ]]; then
		continue
	fi
	stale+=("${name}")
done
if [[ ${#stale[@]} -eq 0 ]]; then
	log "up to date: ${targets[*]} (${version}) in ${bin_dir}"
	exit 0
fi

# The same version variables the Kubernetes release build sets, so that
# /version, the node's kubeletVersion and client-side version checks see
# v1.33.4 instead of v0.0.0.
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	ldflags+=" -X ${pkg}.gitVersion=${version}"
	ldflags+=" -X ${pkg}.gitMajor=${major}"
	ldflags+=" -X ${pkg}.gitMinor=${minor}"
	ldflags+=" -X ${pkg}.gitTreeState=clean"
	ldflags+=" -X ${pkg}.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
done

# A heartbeat, since go build is silent for minutes at a time.
heartbeat=""
tmp="${bin_dir}/.build.$$"
cleanup() {
	[[ -n "${heartbeat}" ]] && kill "${heartbeat}" 2>/dev/null || true
	rm -rf "${tmp}"
}
trap cleanup EXIT

mkdir -p "${bin_dir}" "${tmp}"
log "downloading modules for k8s.io/kubernetes ${version} via $(go env GOPROXY)"
go mod download
pkgs=()
for name in "${stale[@]}"; do
	pkgs+=("k8s.io/kubernetes/cmd/${name}")
done
start=${SECONDS}
log "compiling ${stale[*]} ${version} in one build (several minutes on 2 cores)"
(
	while sleep 30; do
		log "still compiling ($((SECONDS - start))s elapsed)"
	done
) &
heartbeat=$!
# With several packages and -o naming a directory, go build writes one
# binary per main package into it.
go build -trimpath -ldflags "${ldflags}" -o "${tmp}/" "${pkgs[@]}"
kill "${heartbeat}" 2>/dev/null || true
heartbeat=""
# Rename last, stamp after, so an interrupted build never looks current.
for name in "${stale[@]}"; do
	mv -f "${tmp}/${name}" "${bin_dir}/${name}"
	printf '%s\n' "${want_stamp}" >"${bin_dir}/${name}.stamp"
done
log "built ${stale[*]} (${version}) in $((SECONDS - start))s"
