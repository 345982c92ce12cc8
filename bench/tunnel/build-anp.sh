#!/bin/sh
# build-anp.sh builds apiserver-network-proxy's proxy-server and
# proxy-agent from their public source, fetched through the Go module
# proxy, into $CACHE (default .cache/anp in the repository, which is not
# committed), for bench/tunnel's side-by-side section. Nothing in
# `make test` uses it.
#
#   sh bench/tunnel/build-anp.sh && go run ./bench/tunnel -anp .cache/anp
set -eu
CACHE=${CACHE:-.cache/anp}
# v0.30.3 is the newest release the module proxy served on 2026-11-29
# (v0.31.x and v0.32.x were refused).
VERSION=v0.30.3
SRC=$(GOFLAGS=-mod=mod go mod download -json sigs.k8s.io/apiserver-network-proxy@$VERSION | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
mkdir -p "$CACHE"
CACHE=$(cd "$CACHE" && pwd)
rm -rf "$CACHE/src"
cp -r "$SRC" "$CACHE/src"
chmod -R u+w "$CACHE/src"
cd "$CACHE/src"
# The release's go.mod points its client module at a directory the module
# zip leaves out, and its vendor directory is partial: take the client
# module of the same version from the proxy instead.
rm -rf vendor
go mod edit -dropreplace sigs.k8s.io/apiserver-network-proxy/konnectivity-client \
	-require sigs.k8s.io/apiserver-network-proxy/konnectivity-client@$VERSION
GOWORK=off GOFLAGS=-mod=mod go mod tidy
GOWORK=off go build -trimpath -o "$CACHE/proxy-server" ./cmd/server
GOWORK=off go build -trimpath -o "$CACHE/proxy-agent" ./cmd/agent
echo "built $CACHE/proxy-server and $CACHE/proxy-agent ($VERSION)"
