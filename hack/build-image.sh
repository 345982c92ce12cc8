#!/usr/bin/env bash
# build-image.sh builds Causeway's container image without pulling any base
# image: a Debian bookworm root filesystem made by mmdebstrap from this
# machine's Debian mirror, plus the static causeway binary, packed by umoci
# as an OCI image and written as an OCI archive (docs/install.md).
#
# Layers, each a sorted tarball with fixed times and owners:
#   1. the root filesystem: Debian's Essential set, hack/image/packages and
#      hack/image/customize.sh (merged /usr as debootstrap makes it, user 101, writable directories, pruning).
#      Cached in .cache/image/rootfs.tar with a stamp; its times are the
#      commit time of the last change to hack/image, so the layer's digest
#      changes only when its recipe or Debian's packages do.
#   2. /usr/bin/causeway, built with CGO_ENABLED=0 and -trimpath; its time
#      and the image's creation time are HEAD's commit time.
#
# Same inputs (source tree, recipe, Debian package versions, Go toolchain),
# same digest. The package versions in the image are listed in
# .cache/image/packages.txt; FORCE=1 rebuilds the root filesystem (for
# Debian's updates, or to prove the build reproducible).
#
# Output: bin/causeway-image.tar; the last line printed is the tag.
#
# Environment:
#   FORCE=1                 rebuild the root filesystem even when the stamp matches
#   VERSION, COMMIT         as the Makefile sets them (default: from git)
#   CAUSEWAY_IMAGE_CACHE    cache directory (default .cache/image)
#   CAUSEWAY_IMAGE_OUT      the archive (default bin/causeway-image.tar)
#   CAUSEWAY_IMAGE_SOURCES  the apt sources for mmdebstrap (default: this
#                           machine's Debian sources file)
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${repo_root}"
recipe="hack/image"
cache="${CAUSEWAY_IMAGE_CACHE:-${repo_root}/.cache/image}"
out="${CAUSEWAY_IMAGE_OUT:-${repo_root}/bin/causeway-image.tar}"
version="${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}"
commit="${COMMIT:-$(git rev-parse --verify -q HEAD 2>/dev/null || echo unknown)}"
name="causeway"
tag="${name}:${version}"

log() { printf 'build-image: %s\n' "$*" >&2; }

if [[ "$(id -u)" -ne 0 ]]; then
	log "needs root: mmdebstrap makes the root filesystem with real owners (uid 101)"
	exit 1
fi
"${repo_root}/hack/install-deps.sh" mmdebstrap umoci libcap2-bin

# HEAD's commit time, for the binary layer and the image's creation time.
image_epoch="$(git log -1 --format=%ct 2>/dev/null || echo 0)"
# The last commit that changed the recipe, for the root filesystem.
rootfs_epoch="$(git log -1 --format=%ct -- "${recipe}" 2>/dev/null)"
rootfs_epoch="${rootfs_epoch:-${image_epoch}}"

sources="${CAUSEWAY_IMAGE_SOURCES:-}"
if [[ -z "${sources}" ]]; then
	for f in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; do
		if [[ -s "${f}" ]]; then
			sources="${f}"
			break
		fi
	done
fi
if [[ -z "${sources}" ]]; then
	log "no Debian apt sources found; set CAUSEWAY_IMAGE_SOURCES to a sources.list or .sources file"
	exit 1
fi

mapfile -t packages < <(grep -v '^\s*\(#\|$\)' "${recipe}/packages")
include="$(
	IFS=,
	echo "${packages[*]}"
)"
mmdebstrap_args=(
	--mode=root --variant=essential --arch="$(dpkg --print-architecture)"
	--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr
	--include="${include}"
	--aptopt='APT::Install-Recommends "false"'
	--dpkgopt='path-exclude=/usr/share/man/*'
	--dpkgopt='path-exclude=/usr/share/info/*'
	--dpkgopt='path-exclude=/usr/share/locale/*'
	--dpkgopt='path-exclude=/usr/share/doc/*'
	--dpkgopt='path-include=/usr/share/doc/*/copyright'
	--customize-hook="${repo_root}/${recipe}/customize.sh"
	--customize-hook='chroot "$1" dpkg-query -W -f="\${Package} \${Version}\n" > "$1/../packages.txt" || true'
)

mkdir -p "${cache}" "$(dirname "${out}")"
work="$(mktemp -d "${TMPDIR:-/tmp}/causeway-image.XXXXXX")"
trap 'rm -rf "${work}"' EXIT

# Layer 1: the root filesystem, rebuilt when the recipe, the sources or
# mmdebstrap's arguments change. The arguments name the customize hook by
# its absolute path, which is the clone's: the stamp leaves the clone's
# directory out, or every fresh clone (as CI's) would rebuild the root
# filesystem, about four minutes, though nothing in it changed.
want_stamp="$(
	cat "${recipe}/packages" "${recipe}/customize.sh" "${sources}"
	echo "${mmdebstrap_args[*]//"${repo_root}"\//}" "epoch=${rootfs_epoch}"
	dpkg-query -W -f='${Version}\n' mmdebstrap
)"
want_stamp="$(sha256sum <<<"${want_stamp}" | cut -d' ' -f1)"
rootfs="${cache}/rootfs.tar"
if [[ "${FORCE:-0}" == 1 || ! -f "${rootfs}" || ! -f "${rootfs}.stamp" || "$(cat "${rootfs}.stamp")" != "${want_stamp}" ]]; then
	start=${SECONDS}
	log "making the root filesystem with mmdebstrap (${#packages[@]} packages from ${sources})"
	mkdir -p "${work}/mm"
	# The hook writes the package list next to the chroot, in work/mm.
	if ! SOURCE_DATE_EPOCH="${rootfs_epoch}" TMPDIR="${work}/mm" \
		mmdebstrap --quiet "${mmdebstrap_args[@]}" bookworm "${work}/rootfs-dev.tar" "${sources}" \
		>"${cache}/mmdebstrap.log" 2>&1; then
		tail -n 40 "${cache}/mmdebstrap.log" >&2
		log "mmdebstrap failed; its log is ${cache}/mmdebstrap.log"
		exit 1
	fi
	# The device nodes mmdebstrap adds: the runtime mounts its own /dev.
	mmtarfilter '--path-exclude=/dev/*' <"${work}/rootfs-dev.tar" >"${rootfs}.tmp"
	mv -f "${work}"/mm/packages.txt "${cache}/packages.txt" 2>/dev/null || true
	mv -f "${rootfs}.tmp" "${rootfs}"
	printf '%s\n' "${want_stamp}" >"${rootfs}.stamp"
	log "root filesystem built in $((SECONDS - start))s"
else
	log "root filesystem up to date: ${rootfs}"
fi

# The archive again, unless it is already that of this commit: make test's
# tiers each ask for the image (make cluster-up, test-cluster,
# test-gateway-conformance, test-image), and building it is a link of the
# binary and a compression of both layers, about 7 s each time. The stamp
# holds what the archive is made of: a clean work tree's commit (which
# fixes the sources and the image's times), the version strings, the Go
# toolchain, this script and the root filesystem. A tree with changes is
# always built; so is FORCE=1.
image_stamp=
if [[ -z "$(git status --porcelain 2>/dev/null || echo unknown)" ]]; then
	image_stamp="$(
		git rev-parse HEAD
		echo "${version} ${commit}"
		go env GOVERSION GOARCH GOAMD64 GOFLAGS
		sha256sum "${BASH_SOURCE[0]}" | cut -d' ' -f1
		echo "${want_stamp}"
		stat -c '%s %Y' "${rootfs}"
	)"
	image_stamp="$(sha256sum <<<"${image_stamp}" | cut -d' ' -f1)"
fi
if [[ "${FORCE:-0}" != 1 && -n "${image_stamp}" && -f "${out}" && -f "${out}.stamp" && "$(cat "${out}.stamp")" == "${image_stamp}" ]]; then
	log "image up to date: ${out#"${repo_root}"/} (commit ${commit})"
	echo "${tag}"
	exit 0
fi
rm -f "${out}.stamp"

# Layer 2: the static binary, without the symbol table and DWARF (-s -w:
# a third smaller; panics still print file:line).
mkdir -p "${work}/app/usr/bin"
log "building causeway ${version}"
CGO_ENABLED=0 go build -trimpath \
	-ldflags "-s -w -X github.com/causeway/causeway/internal/version.Version=${version} -X github.com/causeway/causeway/internal/version.Commit=${commit}" \
	-o "${work}/app/usr/bin/causeway" ./cmd/causeway
chmod 0755 "${work}/app/usr/bin/causeway"
tar_args=(--sort=name --mtime="@${image_epoch}" --owner=0 --group=0 --numeric-owner
	--format=posix --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime)
tar "${tar_args[@]}" -C "${work}/app" -cf "${work}/app.tar" usr/bin/causeway

# Pack: umoci adds the two tarballs as they are (gzip-compressed), so the
# layers are exactly the sorted tarballs above.
created="$(date -u -d "@${image_epoch}" +%Y-%m-%dT%H:%M:%SZ)"
rootfs_created="$(date -u -d "@${rootfs_epoch}" +%Y-%m-%dT%H:%M:%SZ)"
layout="${work}/oci"
ref="${layout}:${version}"
umoci init --layout "${layout}"
umoci new --image "${ref}"
umoci raw add-layer --image "${ref}" --history.created="${rootfs_created}" \
	--history.created_by="mmdebstrap --variant=essential bookworm + ${recipe}" "${rootfs}"
umoci raw add-layer --image "${ref}" --history.created="${created}" \
	--history.created_by="go build ./cmd/causeway (${version})" "${work}/app.tar"
umoci config --image "${ref}" --no-history --created="${created}" \
	--author="Causeway" --architecture="$(go env GOARCH)" --os=linux \
	--config.user=101:101 \
	--config.entrypoint=/usr/bin/tini --config.entrypoint=-- --config.entrypoint=/usr/bin/causeway \
	--config.cmd=controller \
	--config.workingdir=/ \
	--clear=config.env \
	--config.env=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	--config.exposedports=80/tcp --config.exposedports=443/tcp \
	--config.exposedports=8081/tcp --config.exposedports=9113/tcp \
	--config.volume=/var/lib/causeway \
	--config.label="org.opencontainers.image.title=causeway" \
	--config.label="org.opencontainers.image.version=${version}" \
	--config.label="org.opencontainers.image.revision=${commit}" \
	--config.label="org.opencontainers.image.created=${created}" \
	--manifest.annotation="org.opencontainers.image.version=${version}" \
	--manifest.annotation="org.opencontainers.image.revision=${commit}" \
	--manifest.annotation="org.opencontainers.image.created=${created}"
umoci gc --layout "${layout}"
# The name podman gives the image on load.
tmp_index="$(mktemp "${work}/index.XXXXXX")"
python3 - "${layout}/index.json" "${tag}" >"${tmp_index}" <<'PY'
import json, sys
index = json.load(open(sys.argv[1]))
for m in index["manifests"]:
    m.setdefault("annotations", {})["org.opencontainers.image.ref.name"] = sys.argv[2]
json.dump(index, sys.stdout, sort_keys=True, separators=(",", ":"))
PY
mv -f "${tmp_index}" "${layout}/index.json"
chmod 0644 "${layout}/index.json"

# The archive itself is deterministic too: sorted, fixed times and owners.
tar "${tar_args[@]}" --mode='u=rwX,go=rX' -C "${layout}" -cf "${out}.tmp" oci-layout index.json blobs
mv -f "${out}.tmp" "${out}"
if [[ -n "${image_stamp}" ]]; then printf '%s\n' "${image_stamp}" >"${out}.stamp"; fi

manifest_digest="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["manifests"][0]["digest"])' "${layout}/index.json")"
compressed="$(du -b --apparent-size -c "${layout}"/blobs/sha256/* | tail -1 | cut -f1)"
uncompressed=$(($(stat -c %s "${rootfs}") + $(stat -c %s "${work}/app.tar")))
log "wrote ${out#"${repo_root}"/}: manifest ${manifest_digest}"
log "size: $((compressed / 1024 / 1024)) MiB compressed (blobs), $((uncompressed / 1024 / 1024)) MiB uncompressed (layer tarballs)"
echo "${tag}"
