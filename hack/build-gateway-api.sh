#!/usr/bin/env bash
# build-gateway-api.sh builds the backends of the Gateway API conformance
# suite from the pinned tools modules (through the Go module proxy; no image
# is pulled) and packs them into the images the suite's manifests name:
#
#   .cache/bin/echo-basic   sigs.k8s.io/gateway-api/conformance/echo-basic,
#                           from hack/gateway-api (the suite's own module)
#   .cache/bin/coredns      CoreDNS (github.com/coredns/coredns's server) with
#                           the plugins the suite's Corefile uses, from
#                           hack/coredns (main.go says why not all of them)
#
#   bin/echo-basic-image.tar  one image under every registry.k8s.io/
#                             gateway-api/echo-basic:TAG the pinned suite's
#                             manifests use (found by grep in the module, so
#                             a new suite's new tags come along)
#   bin/coredns-image.tar     registry.k8s.io/coredns/coredns:vX.Y.Z, which
#                             must be the version hack/coredns pins
#
# Both are static (CGO off) in scratch images (hack/scratchimage), with the
# upstream images' entrypoint and user: /echo-basic and /coredns as 65532,
# CoreDNS with cap_net_bind_service on its file as the upstream Dockerfile
# sets with setcap. Each binary is rebuilt only when its stamp (the pinned
# module files, and a main.go of the tools module's own) changes; the images only when an archive is older than a
# binary, the pinned modules or this script and hack/scratchimage.
#
# Usage: build-gateway-api.sh [echo-basic|coredns|images]...
#   With no arguments, both binaries and both images.
#
# Environment:
#   FORCE=1   rebuild the binaries even when the stamps match.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin_dir="${repo_root}/.cache/bin"
export GOWORK=off CGO_ENABLED=0

log() { printf 'build-gateway-api: %s\n' "$*" >&2; }

# build NAME MODULE_DIR PINNED_MODULE PACKAGE LDFLAGS: one binary, stamped.
build() {
	local name="$1" module_dir="$2" pinned="$3" pkg="$4" ldflags="$5"
	local out="${bin_dir}/${name}" version want_stamp start
	version="$(cd "${module_dir}" && go list -m -f '{{.Version}}' "${pinned}")"
	want_stamp="${pinned} ${version} modules-sha256=$(cat "${module_dir}/go.mod" "${module_dir}/go.sum" $(ls "${module_dir}/main.go" 2>/dev/null) | sha256sum | cut -d' ' -f1) $(go env GOOS)/$(go env GOARCH)"
	if [[ "${FORCE:-0}" != 1 && -x "${out}" && -f "${out}.stamp" && "$(cat "${out}.stamp")" == "${want_stamp}" ]]; then
		return 0
	fi
	mkdir -p "${bin_dir}"
	start=${SECONDS}
	log "compiling ${pkg} ${version}"
	(cd "${module_dir}" && nice -n 10 go build -trimpath -ldflags "${ldflags}" -o "${out}.tmp" "${pkg}")
	mv -f "${out}.tmp" "${out}"
	printf '%s\n' "${want_stamp}" >"${out}.stamp"
	log "built ${out} (${version}) in $((SECONDS - start))s"
}

# module_dir PINNED: where the pinned module sits in the module cache.
module_dir() {
	(cd "${repo_root}/hack/gateway-api" && go mod download "$1" && go list -m -f '{{.Dir}}' "$1")
}

images() {
	local conformance refs=() coredns_refs coredns_version stale=0
	for archive in "${repo_root}/bin/echo-basic-image.tar" "${repo_root}/bin/coredns-image.tar"; do
		for input in "${bin_dir}/echo-basic" "${bin_dir}/coredns" "${repo_root}/hack/gateway-api/go.sum" \
			"${repo_root}/hack/coredns/go.sum" "${repo_root}/hack/coredns/main.go" "${BASH_SOURCE[0]}" "${repo_root}/hack/scratchimage/main.go"; do
			[[ -f "${archive}" && ! "${input}" -nt "${archive}" ]] || stale=1
		done
	done
	if [[ "${FORCE:-0}" != 1 && ${stale} == 0 ]]; then
		return 0
	fi
	conformance="$(module_dir sigs.k8s.io/gateway-api/conformance)"
	mapfile -t refs < <(grep -rhoE 'registry\.k8s\.io/gateway-api/echo-basic:[^"[:space:]]+' "${conformance}" --include='*.yaml' | sort -u)
	if [[ ${#refs[@]} -eq 0 ]]; then
		log "no echo-basic image named in ${conformance}"
		exit 1
	fi
	mapfile -t coredns_refs < <(grep -rhoE 'registry\.k8s\.io/coredns/coredns:[^"[:space:]]+' "${conformance}" --include='*.yaml' | sort -u)
	coredns_version="$(cd "${repo_root}/hack/coredns" && go list -m -f '{{.Version}}' github.com/coredns/coredns)"
	if [[ "${coredns_refs[*]}" != "registry.k8s.io/coredns/coredns:${coredns_version}" ]]; then
		log "the suite's manifests name ${coredns_refs[*]:-no CoreDNS}, hack/coredns pins ${coredns_version}: pin the same version"
		exit 1
	fi
	mkdir -p "${repo_root}/bin"
	local args=()
	for r in "${refs[@]}"; do args+=(-ref "${r}"); done
	(cd "${repo_root}" && go run ./hack/scratchimage -o bin/echo-basic-image.tar "${args[@]}" \
		-entrypoint /echo-basic -port 3000/tcp -port 3001/tcp -port 8443/tcp \
		"${bin_dir}/echo-basic=/echo-basic" >/dev/null)
	(cd "${repo_root}" && go run ./hack/scratchimage -o bin/coredns-image.tar -ref "${coredns_refs[0]}" \
		-entrypoint /coredns -cap /coredns=net_bind_service -port 53/tcp -port 53/udp \
		"${bin_dir}/coredns=/coredns" >/dev/null)
	log "images: bin/echo-basic-image.tar (${refs[*]}), bin/coredns-image.tar (${coredns_refs[0]})"
}

targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
	targets=(echo-basic coredns images)
fi
for t in "${targets[@]}"; do
	case "${t}" in
	echo-basic)
		# The upstream image's flags (docker/Dockerfile.echo-basic).
		build echo-basic "${repo_root}/hack/gateway-api" sigs.k8s.io/gateway-api/conformance \
			sigs.k8s.io/gateway-api/conformance/echo-basic "-buildid= -s -w"
		;;
	coredns)
		build coredns "${repo_root}/hack/coredns" github.com/coredns/coredns \
			github.com/causeway/causeway/hack/coredns "-s -w"
		;;
	images) images ;;
	*)
		log "unknown target '${t}' (want echo-basic, coredns or images)"
		exit 2
		;;
	esac
done
