#!/bin/sh
# setup.sh builds ingress-nginx's controller and lays out the files its
# image has, under $CACHE (default /var/cache/causeway-peer), outside the
# repository, for bench/peer. Nothing in `make test` uses it. See
# bench/PEERS.md for why each step is there.
#
#   LUA_SRC=/path/to/lua-sources sh bench/peer/setup.sh
#
# LUA_SRC holds the sources of five Lua libraries Debian 12 does not
# package, one directory each: lua-resty-balancer and lua-resty-lock
# (openresty), lua-resty-http (ledgetech), lua-resty-global-throttle
# (ElvinEfendi), lua-resty-ipmatcher (api7). They are on no registry this
# project reaches; bring them from their public repositories.
set -eu
CACHE=${CACHE:-/var/cache/causeway-peer}
# controller-v1.11.0 (commit 52c50467d67d), the one release the Go module
# proxy serves for k8s.io/ingress-nginx (as a pseudo-version: the tags
# are controller-vX.Y.Z, not module versions).
VERSION=v0.0.0-20240708192948-52c50467d67d
LUA_SRC=${LUA_SRC:?LUA_SRC: the directory of lua-resty-balancer, -lock, -http, -global-throttle and -ipmatcher}

apt-get install -y nginx libnginx-mod-http-lua libnginx-mod-http-ndk \
	libnginx-mod-http-headers-more-filter libnginx-mod-http-set-misc \
	lua-resty-core lua-resty-lrucache lua-cjson lua-nginx-cookie lua-nginx-dns \
	lua-nginx-string lua-nginx-memcached gcc make

SRC=$(GOFLAGS=-mod=mod go mod download -json k8s.io/ingress-nginx@$VERSION | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
mkdir -p "$CACHE/bin" "$CACHE/src"
rm -rf "$CACHE/src/ingress-nginx"
cp -r "$SRC" "$CACHE/src/ingress-nginx"
chmod -R u+w "$CACHE/src/ingress-nginx"
(cd "$CACHE/src/ingress-nginx" && GOWORK=off go build -trimpath \
	-ldflags "-X k8s.io/ingress-nginx/version.RELEASE=controller-v1.11.0" \
	-o "$CACHE/bin/nginx-ingress-controller" ./cmd/nginx)

R=$CACHE/root
rm -rf "$R"
mkdir -p "$R/etc/nginx" "$R/tmp/nginx" "$R/etc/ingress-controller/ssl" \
	"$R/etc/ingress-controller/auth" "$R/etc/ingress-controller/geoip" \
	"$R/etc/ingress-controller/telemetry"
cp -r "$CACHE/src/ingress-nginx/rootfs/etc/nginx/." "$R/etc/nginx/"
cp "$R/etc/nginx/nginx.conf" "$R/etc/nginx/nginx.conf.image"
# The image's mime.types comes with its nginx build; Debian's is the same list.
cp /etc/nginx/mime.types "$R/etc/nginx/"

# The Lua libraries the image installs under /usr/local/lib/lua, here
# beside ingress-nginx's own (its template's lua_package_path has
# /etc/nginx/lua); Debian's cookie, DNS resolver, string, sha*, memcached
# (lua-nginx-*) under their upstream names, resty.*.
L=$R/etc/nginx/lua
mkdir -p "$L/resty/dns"
cp -r "$LUA_SRC/lua-resty-balancer/lib/resty/." "$L/resty/"
cp "$LUA_SRC/lua-resty-lock/lib/resty/lock.lua" "$L/resty/"
cp -r "$LUA_SRC/lua-resty-http/lib/resty/." "$L/resty/"
cp -r "$LUA_SRC/lua-resty-global-throttle/lib/resty/." "$L/resty/"
cp "$LUA_SRC/lua-resty-ipmatcher/resty/ipmatcher.lua" "$L/resty/"
for f in /usr/share/lua/5.1/nginx/*.lua; do
	test -e "$L/resty/${f##*/}" || ln -s "$f" "$L/resty/${f##*/}"
done
ln -sf /usr/share/lua/5.1/nginx/dns/resolver.lua "$L/resty/dns/resolver.lua"
make -C "$LUA_SRC/lua-resty-balancer" >/dev/null
cp "$LUA_SRC/lua-resty-balancer/librestychash.so" "$L/"

# The template, changed in three places only:
# - load the modules the image compiles in (Debian builds them as
#   dynamic modules, and ingress-nginx's nginx.conf does not include
#   /etc/nginx/modules-enabled);
# - a lua_package_cpath for librestychash.so;
# - the stream block replaced by one server on the stream port that
#   takes the controller's TCP/UDP configuration and drops it: Debian 12
#   has no stream Lua module, and the block is all Lua (TCP/UDP
#   services, which the benchmark does not use). Without a listener
#   there, every sync after the first fails (the controller posts the
#   empty TCP/UDP list once, as it differs from the nil it started with).
#   ssl_preread makes nginx read what the controller writes before it
#   closes: a bare return closes on unread data, the kernel resets the
#   connection, and the controller's second write fails (broken pipe).
T=$R/etc/nginx/template/nginx.tmpl
awk '
/^pid \{\{ \.PID \}\};$/ {
	print
	print "# causeway-peer: modules the image compiles in, dynamic in Debian"
	print "load_module /usr/lib/nginx/modules/ndk_http_module.so;"
	print "load_module /usr/lib/nginx/modules/ngx_http_lua_module.so;"
	print "load_module /usr/lib/nginx/modules/ngx_http_headers_more_filter_module.so;"
	print "load_module /usr/lib/nginx/modules/ngx_http_set_misc_module.so;"
	print "load_module /usr/lib/nginx/modules/ngx_stream_module.so;"
	next
}
/^    lua_package_path "\/etc\/nginx\/lua\/\?\.lua;;";$/ {
	print
	print "    lua_package_cpath \"/etc/nginx/lua/?.so;;\";"
	next
}
/^stream \{$/ {
	skip = 1
	print "# causeway-peer: Debian 12 has no stream Lua module: the stream port only takes"
	print "# the TCP/UDP configuration of the controller (none here) and drops it"
	print "stream {"
	print "    server {"
	print "        listen 127.0.0.1:{{ .StreamPort }};"
	print "        ssl_preread on;"
	print "        return \"\";"
	print "    }"
	print "}"
	next
}
skip && /^\}$/ { skip = 0; next }
skip { next }
{ print }' "$CACHE/src/ingress-nginx/rootfs/etc/nginx/template/nginx.tmpl" >"$T"
test "$(grep -c causeway-peer "$T")" = 2 || { echo "setup.sh: the template did not take the three changes" >&2; exit 1; }
echo "setup.sh: $CACHE/bin/nginx-ingress-controller and $R ready"
