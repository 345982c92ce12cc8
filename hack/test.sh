#!/usr/bin/env bash
# test.sh is `make test`: every tier, in order, while the tools the later
# tiers need are built in the background, at a lower priority, from the
# first minute (the Kubernetes binaries, helm, controller-gen, Angie, the
# images). On a machine that has built them before nothing is built again:
# they live in the machine's cache (.cache links to it; see the Makefile).
#
#   1  lint, then the package tests                     (tier 1)
#   2  the integration tier on nginx, then on Angie     (tier 2)
#   3  the package tests that need kube-apiserver, the end-to-end tier
#   4  the tunnel across network namespaces
#   5  the image in podman (beside 3 and 4), then the single-node cluster
#      (the Angie tier runs beside 3, 4 and 5, at a lower priority)
#
# A tier waits only for the tools it needs; a failed build fails the tier
# that waits for it, with the end of its log.
set -euo pipefail
cd "$(dirname "$0")/.."
make="${MAKE:-make} --no-print-directory"

# Per clone (bin/ is git-ignored): .cache is shared by every clone.
logs=bin/test-logs
mkdir -p "${logs}"
rm -f "${logs}"/*.rc
start=${SECONDS}
say() { printf '\n=== test.sh %dm%02ds: %s\n' $(((SECONDS - start) / 60)) $(((SECONDS - start) % 60)) "$*"; }

# Every Debian package first, in one apt run: afterwards no build calls apt
# beside another.
say "installing what is missing"
hack/install-deps.sh all

jobs=()
background() {
	local name=$1
	shift
	(
		set +e
		nice -n 10 "$@" >"${logs}/${name}.log" 2>&1
		echo $? >"${logs}/${name}.rc"
	) &
	jobs+=($!)
}
await() {
	local name=$1
	while [[ ! -f "${logs}/${name}.rc" ]]; do sleep 1; done
	if [[ "$(cat "${logs}/${name}.rc")" != 0 ]]; then
		tail -n 40 "${logs}/${name}.log" >&2
		say "building ${name} failed (${logs}/${name}.log)"
		exit 1
	fi
}
# tier_in_background runs a test tier beside the next ones, at normal
# priority; await_tier prints its output and fails when it failed.
tier_in_background() {
	local name=$1
	shift
	(
		set +e
		"$@" >"${logs}/${name}.log" 2>&1
		echo $? >"${logs}/${name}.rc"
	) &
	jobs+=($!)
}
await_tier() {
	local name=$1 what=$2
	while [[ ! -f "${logs}/${name}.rc" ]]; do sleep 1; done
	say "${what}: its output"
	cat "${logs}/${name}.log"
	if [[ "$(cat "${logs}/${name}.rc")" != 0 ]]; then
		say "${what} failed"
		exit 1
	fi
}
cluster_up=
cleanup() {
	for j in "${jobs[@]}"; do kill "${j}" 2>/dev/null || true; done
	if [[ -n "${cluster_up}" ]]; then ${make} cluster-down >&2 || true; fi
}
trap cleanup EXIT

say "building the tools in the background (logs in ${logs})"
background kube bash -c 'hack/build-kube-apiserver.sh && hack/build-helm.sh && hack/build-controller-gen.sh'
background angie hack/build-angie.sh
background images ${make} cluster-images image gateway-api-images

say "tier 1: lint and package tests"
${make} lint
${make} test-unit-local

say "tier 2: integration on nginx"
${make} test-integration

# Each integration tier alone keeps both cores about 85% busy, so the
# Angie one no longer runs beside the nginx one: it runs beside the later
# tiers, which wait on the kube-apiserver and the cluster (tier 5 keeps
# the cores 44% busy), at a lower priority so that their timings are
# theirs. Its output is printed whole when it ends.
say "tier 2: integration on Angie, in the background once Angie is built (${logs}/angie-tier.log)"
tier_in_background angie-tier nice -n 10 bash -c "while [[ ! -f ${logs}/angie.rc ]]; do sleep 1; done
	if [[ \$(cat ${logs}/angie.rc) != 0 ]]; then tail -n 40 ${logs}/angie.log; echo 'building angie failed'; exit 1; fi
	exec ${make} test-integration-angie"

# The image tier runs podman containers and waits on them far more than
# it computes: it runs beside the tiers 3 and 4 too, once the images are
# built.
say "the image, in the background once it is built (${logs}/image-tier.log)"
tier_in_background image-tier bash -c "while [[ ! -f ${logs}/images.rc ]]; do sleep 1; done
	if [[ \$(cat ${logs}/images.rc) != 0 ]]; then tail -n 40 ${logs}/images.log; echo 'building the images failed'; exit 1; fi
	exec ${make} test-image"

await kube
say "tier 1: package tests that need kube-apiserver"
${make} test-unit-kube
say "tier 3: end-to-end"
${make} test-e2e
say "tier 4: network namespaces"
${make} test-netns

await_tier image-tier "the image"
# Tier 5 and the conformance suite share one cluster (each attaches to a
# running one), which saves a start and a stop; make cluster-down fails
# when anything is left on the host, as tier 5's own stop does. When
# cluster-up cannot start one (one runs already, say), each suite uses
# that one or starts its own, as they do alone.
say "tier 5: the single-node cluster, for tier 5 and the conformance suite"
if ${make} cluster-up; then cluster_up=1; else say "make cluster-up failed: each suite attaches to a running cluster or starts its own"; fi
say "tier 5: a real node"
${make} test-cluster
say "tier 5: the Gateway API conformance suite"
${make} test-gateway-conformance CONFORMANCE_FLAGS="-report ${logs}/gateway-api-conformance-report.yaml"
if [[ -n "${cluster_up}" ]]; then
	cluster_up=
	say "tier 5: the cluster down"
	${make} cluster-down
fi

await_tier angie-tier "tier 2: integration on Angie"

say "all test tiers passed"
