#!/usr/bin/env bash
# build-kube-apiserver.sh builds the Kubernetes binaries the tests run:
# kube-apiserver (for test/testenv) and kubectl (for the end-to-end tier's
# `kubectl apply --dry-run=server -k deploy/`).
#
# It compiles k8s.io/kubernetes/cmd/<name> from the pinned tools module in
# hack/kube-apiserver (downloaded through the Go module proxy; no container
# images or git checkouts) into .cache/bin/<name>, and writes
# .cache/bin/<name>.stamp recording what was built. When the stamp already
# matches the pinned module, that build is skipped, so running this on every
# `make testenv` or test run costs well under a second.
#
# Usage: build-kube-apiserver.sh [kube-apiserver] [kubectl]
#   With no arguments, both are built.
#
# Environment:
#   FORCE=1   rebuild even when the stamp matches.
#   GOFLAGS   passed through to go (e.g. -p=1 on a busy machine).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
module_dir="${repo_root}/hack/kube-apiserver"
bin_dir="${repo_root}/.cache/bin"

# A go.work further up would pull this module into a workspace it does not
# belong to; the tools module must resolve on its own.
export GOWORK=off
# Upstream release builds of kube-apiserver and kubectl are static.
export CGO_ENABLED=0

log() { printf 'build-kube-apiserver: %s\n' "$*" >&2; }

targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
	targets=(kube-apiserver kubectl)
fi
for t in "${targets[@]}"; do
	case "${t}" in
	kube-apiserver | kubectl) ;;
	*)
		log "unknown binary '${t}' (want kube-apiserver or kubectl)"
		exit 2
		;;
	esac
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

# The same version variables the Kubernetes release build sets, so that
# /version and client-side version checks see v1.33.4 instead of v0.0.0.
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
cleanup() {
	[[ -n "${heartbeat}" ]] && kill "${heartbeat}" 2>/dev/null || true
	rm -f "${bin_dir}"/*.tmp
}
trap cleanup EXIT

downloaded=0
for name in "${targets[@]}"; do
	out="${bin_dir}/${name}"
	stamp="${out}.stamp"
	if [[ "${FORCE:-0}" != "1" && -x "${out}" && -f "${stamp}" && "$(cat "${stamp}")" == "${want_stamp}" ]]; then
		log "up to date: ${out} (${version})"
		continue
	fi
	mkdir -p "${bin_dir}"
	if [[ "${downloaded}" == 0 ]]; then
		log "downloading modules for k8s.io/kubernetes ${version} via $(go env GOPROXY)"
		go mod download
		downloaded=1
	fi
	start=${SECONDS}
	log "compiling k8s.io/kubernetes/cmd/${name} ${version} (several minutes on 2 cores)"
	(
		while sleep 30; do
			log "still compiling ${name} ($((SECONDS - start))s elapsed)"
		done
	) &
	heartbeat=$!
	go build -trimpath -ldflags "${ldflags}" -o "${out}.tmp" "k8s.io/kubernetes/cmd/${name}"
	kill "${heartbeat}" 2>/dev/null || true
	heartbeat=""
	# Rename last, stamp after, so an interrupted build never looks current.
	mv -f "${out}.tmp" "${out}"
	printf '%s\n' "${want_stamp}" >"${stamp}"
	log "built ${out} (${version}) in $((SECONDS - start))s"
done
