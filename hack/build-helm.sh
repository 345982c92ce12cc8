#!/usr/bin/env bash
# build-helm.sh builds the Helm that the end-to-end tier uses to lint and
# render charts/causeway, from the pinned module in hack/helm (through the
# Go module proxy; no release download), into .cache/bin/helm, with a stamp
# recording what was built. When the stamp matches, it does nothing.
#
# Environment:
#   FORCE=1   rebuild even when the stamp matches.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
module_dir="${repo_root}/hack/helm"
out="${repo_root}/.cache/bin/helm"
export GOWORK=off CGO_ENABLED=0

log() { printf 'build-helm: %s\n' "$*" >&2; }

cd "${module_dir}"
version="$(go list -m -f '{{.Version}}' helm.sh/helm/v3)"
want_stamp="helm.sh/helm/v3 ${version} modules-sha256=$(cat go.mod go.sum | sha256sum | cut -d' ' -f1) $(go env GOOS)/$(go env GOARCH)"
if [[ "${FORCE:-0}" != 1 && -x "${out}" && -f "${out}.stamp" && "$(cat "${out}.stamp")" == "${want_stamp}" ]]; then
	exit 0
fi
mkdir -p "$(dirname "${out}")"
trap 'rm -f "${out}.tmp"' EXIT
start=${SECONDS}
log "compiling helm.sh/helm/v3/cmd/helm ${version} (a few minutes on 2 cores)"
go build -trimpath -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=${version}" -o "${out}.tmp" helm.sh/helm/v3/cmd/helm
mv -f "${out}.tmp" "${out}"
printf '%s\n' "${want_stamp}" >"${out}.stamp"
log "built ${out} (${version}) in $((SECONDS - start))s"
