#!/usr/bin/env bash
# build-angie.sh builds Angie with the Lua module from the vendored source
# tarballs, for the integration tier's second run and for anyone who wants
# to try Causeway on Angie without Angie's package repository.
#
# Inputs: the tarballs and SHA256SUMS in ../shared/vendor (relative to the
# repository root), or in $CAUSEWAY_VENDOR. They are checked against
# SHA256SUMS before anything is unpacked.
#
# Output, in .cache/angie (git-ignored):
#   sbin/angie                         the binary
#   modules/ndk_http_module.so         ngx_devel_kit, dynamic
#   modules/ngx_http_lua_module.so     lua-nginx-module, dynamic
#   lualib/                            lua-resty-core and lua-resty-lrucache
#   stamp                              what was built; a match skips the build
#
# Run the controller on it with
#   --nginx-binary .cache/angie/sbin/angie
#   --nginx-modules-dir .cache/angie/modules
#   --lua-package-path '.cache/angie/lualib/?.lua;;'
#
# Environment:
#   CAUSEWAY_VENDOR   directory holding the tarballs (default ../shared/vendor)
#   FORCE=1           rebuild even when the stamp matches
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
vendor="${CAUSEWAY_VENDOR:-${repo_root}/../shared/vendor}"
out="${repo_root}/.cache/angie"

log() { printf 'build-angie: %s\n' "$*" >&2; }

angie=angie-1.12.1
lua=lua-nginx-module-0.10.28
ndk=ngx_devel_kit-0.3.4
core=lua-resty-core-0.1.31
lrucache=lua-resty-lrucache-0.15

if [[ ! -f "${vendor}/SHA256SUMS" ]]; then
	log "no ${vendor}/SHA256SUMS: the Angie and Lua module source tarballs are needed"
	log "(they are in ../shared/vendor next to the repository on CI; set CAUSEWAY_VENDOR to another copy)"
	exit 1
fi
vendor="$(cd "${vendor}" && pwd)"
for t in "${angie}" "${lua}" "${ndk}" "${core}" "${lrucache}"; do
	if ! grep -q " ${t}.tar.gz\$" "${vendor}/SHA256SUMS"; then
		log "${vendor}/SHA256SUMS does not list ${t}.tar.gz"
		exit 1
	fi
done
if ! (cd "${vendor}" && sha256sum --quiet -c SHA256SUMS); then
	log "the tarballs in ${vendor} do not match SHA256SUMS"
	exit 1
fi

configure_args=(--with-compat --with-http_ssl_module --with-http_v2_module
	--with-http_realip_module --with-http_auth_request_module --with-http_stub_status_module
	--with-stream --with-stream_ssl_module --with-stream_ssl_preread_module)

# The stamp names the sources (their checksums), this script and the
# configure arguments: any change rebuilds.
want_stamp="$(
	cat "${vendor}/SHA256SUMS"
	sha256sum "${BASH_SOURCE[0]}" | cut -d' ' -f1
	echo "${configure_args[*]}"
	uname -m
)"
if [[ "${FORCE:-}" != 1 && -x "${out}/sbin/angie" && -f "${out}/stamp" && "$(cat "${out}/stamp")" == "${want_stamp}" ]]; then
	exit 0
fi

"${repo_root}/hack/install-deps.sh" build-essential libluajit2-5.1-dev libpcre2-dev libssl-dev zlib1g-dev

work="$(mktemp -d "${TMPDIR:-/tmp}/causeway-angie.XXXXXX")"
trap 'rm -rf "${work}"' EXIT
for t in "${angie}" "${lua}" "${ndk}" "${core}" "${lrucache}"; do
	mkdir -p "${work}/${t}"
	tar -xzf "${vendor}/${t}.tar.gz" -C "${work}/${t}" --strip-components=1
done

log "building ${angie} with ${lua} and ${ndk} (about half a minute on 2 cores)"
start=${SECONDS}
(
	cd "${work}/${angie}"
	export LUAJIT_LIB=/usr/lib/$(gcc -print-multiarch) LUAJIT_INC=/usr/include/luajit-2.1
	# The prefix is where nothing is: Causeway passes -p and names every
	# path in its configuration, so no compiled-in default is ever used.
	./configure --prefix=/nonexistent/angie "${configure_args[@]}" \
		--add-dynamic-module="${work}/${ndk}" --add-dynamic-module="${work}/${lua}" >"${work}/configure.log" 2>&1 ||
		{
			tail -n 30 "${work}/configure.log" >&2
			exit 1
		}
	make -j"$(nproc)" >"${work}/make.log" 2>&1 || {
		tail -n 30 "${work}/make.log" >&2
		exit 1
	}
)

rm -rf "${out}.new"
mkdir -p "${out}.new/sbin" "${out}.new/modules" "${out}.new/lualib"
cp "${work}/${angie}/objs/angie" "${out}.new/sbin/angie"
cp "${work}/${angie}/objs/ndk_http_module.so" "${work}/${angie}/objs/ngx_http_lua_module.so" "${out}.new/modules/"
cp -r "${work}/${core}/lib/." "${work}/${lrucache}/lib/." "${out}.new/lualib/"
printf '%s\n' "${want_stamp}" >"${out}.new/stamp"
rm -rf "${out}"
mv "${out}.new" "${out}"
log "built ${out}/sbin/angie in $((SECONDS - start)) s: $("${out}/sbin/angie" -v 2>&1 | head -n 1)"
