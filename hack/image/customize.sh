#!/bin/sh
# customize.sh ROOT turns a Debian root filesystem with hack/image/packages
# installed into the image's layout. hack/build-image.sh runs it as
# mmdebstrap's customize hook (ROOT is the chroot); the Dockerfile runs it
# with ROOT=/ in its last stage. It must be deterministic: no timestamps,
# no random names, nothing read from the build machine.
set -eu
root="${1:?usage: customize.sh ROOT}"
cd "${root}"

# The user deploy/deployment.yaml runs as. Written directly instead of with
# useradd, which would stamp today's date into /etc/shadow.
for f in etc/passwd etc/group; do
	if cut -d: -f3 "${f}" | grep -qx 101; then
		echo "customize.sh: id 101 is taken in /${f}" >&2
		exit 1
	fi
done
echo 'causeway:x:101:101:Causeway:/var/lib/causeway:/usr/sbin/nologin' >>etc/passwd
echo 'causeway:x:101:' >>etc/group
echo 'causeway:*::0:99999:7:::' >>etc/shadow
echo 'causeway:*::' >>etc/gshadow

# What the controller and a non-root nginx write to: the state directory
# (--state-dir, a volume in deploy/), and the temporary paths compiled into
# Debian's nginx, which nginx creates at start for a configuration that
# does not set them (Causeway's sets them under the state directory), and
# which uid 101 cannot create on a read-only root.
install -d -o 101 -g 101 -m 0700 var/lib/causeway
for d in body fastcgi proxy scgi uwsgi; do
	install -d -o 101 -g 101 -m 0700 "var/lib/nginx/${d}"
done
# A copy of nginx carrying the file capability cap_net_bind_service, for
# ports below 1024 as uid 101 (the chart runs it on the host network: the
# node's ports 80 and 443). A non-root process gains a capability on exec
# only from its file, only within the bounding set and only when it may
# gain privileges; /usr/sbin/nginx itself stays without one, so a
# container that drops every capability still runs it.
cp -p usr/sbin/nginx usr/sbin/nginx-net-bind-service
setcap cap_net_bind_service=+ep usr/sbin/nginx-net-bind-service

# Debian's compiled-in access log, for any configuration that does not
# name one: to the container's output, as the official nginx image does.
ln -sfn /dev/stdout var/log/nginx/access.log
ln -sfn /dev/stderr var/log/nginx/error.log

# Not needed at run time. Copyright files stay.
rm -rf usr/share/man usr/share/info usr/share/locale usr/share/lintian usr/share/linda \
	usr/share/bug usr/share/menu
if [ -d usr/share/doc ]; then
	find usr/share/doc -mindepth 1 ! -type d ! -name copyright -delete
	find usr/share/doc -mindepth 1 -type d -empty -delete
fi
# The default site of Debian's package; Causeway writes its own
# configuration under the state directory.
rm -f etc/nginx/sites-enabled/default
# Build-time state: logs, backups and caches that differ between builds.
rm -f var/log/*.log var/log/apt/* var/cache/ldconfig/aux-cache \
	var/cache/debconf/*-old var/lib/dpkg/*-old
# The build host's name and resolver, which mmdebstrap copies in (the
# runtime mounts its own). In a Dockerfile's RUN they are mounts: left alone.
if [ "$(cd "${root}" && pwd -P)" != / ]; then
	rm -f etc/resolv.conf etc/hostname
fi
rm -rf var/lib/apt/lists/* var/cache/apt/*
if [ -e etc/machine-id ]; then : >etc/machine-id; fi
